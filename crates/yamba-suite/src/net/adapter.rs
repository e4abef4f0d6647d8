//! Platform adapter for the `net` area: sockets are std's (BSD sockets
//! everywhere), so what differs is only the name. (The agent's file
//! handling is `crate::remote::adapter`.)

#[cfg(target_os = "linux")]
mod imp {
    pub const NAME: &str = "linux-sockets";
}

#[cfg(all(unix, not(target_os = "linux")))]
mod imp {
    pub const NAME: &str = "unix-sockets";
}

pub use imp::*;
