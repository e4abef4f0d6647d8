//! Linux: std's sockets; only the name differs.

pub const NAME: &str = "linux-sockets";
