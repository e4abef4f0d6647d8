//! The primitives a churn worker creates and destroys (yamba-os's
//! [`Kind`]): what churning does with each, and the operation codes of the
//! progress slots. A worker's objects (`objects.rs`):
//! - process: a forked child that waits for signals (queued real-time
//!   signals, counted);
//! - thread: a pthread on a stack we map ourselves, blocked reading its
//!   eventfd;
//! - socketpair: AF_UNIX, stream, datagram or seqpacket;
//! - epoll: an instance watching a few of the worker's other fds;
//! - timerfd: one-shot, armed for a few microseconds;
//! - mmap-anon: a few pages, every page written;
//! - mmap-file: a slice of the worker's backing file;
//! - file: in the worker's scratch directory, written and read back;
//! - signal: queued to the worker itself or to one of its child processes;
//! - cpu: spins ~100 µs per operation, no system calls.

pub use yamba_os::Kind;

use crate::StressError;

/// What churning does with each kind (the kinds themselves are yamba-os's,
/// shared with the `space` area).
pub trait Churned {
    /// What `yamba stress` churns unless told otherwise (all but `cpu`).
    fn default_set() -> Vec<Kind>;
    /// Whether objects of this kind live in the pool (created now, destroyed later).
    fn pooled(self) -> bool;
    /// Most objects of this kind one worker holds at once.
    fn cap(self) -> usize;
    /// Its place in [`Kind::ALL`], an operation code's high byte.
    fn index(self) -> u64;
}

impl Churned for Kind {
    fn default_set() -> Vec<Kind> {
        Kind::ALL.into_iter().filter(|&k| k != Kind::Cpu).collect()
    }

    fn pooled(self) -> bool {
        !matches!(self, Kind::Signal | Kind::Cpu)
    }

    fn cap(self) -> usize {
        match self {
            Kind::Process | Kind::Thread => 8,
            Kind::MmapFile => super::objects::FILE_SLOTS,
            _ => 32,
        }
    }

    fn index(self) -> u64 {
        Kind::ALL.iter().position(|&k| k == self).unwrap_or(0) as u64
    }
}

/// What an operation did to its object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Create = 1,
    Destroy = 2,
    Use = 3,
}

impl Action {
    pub fn name(self) -> &'static str {
        match self {
            Action::Create => "create",
            Action::Destroy => "destroy",
            Action::Use => "use",
        }
    }
}

/// An operation as the progress slot carries it.
pub fn op_code(kind: Kind, action: Action) -> u64 {
    (kind.index() << 8) | action as u64
}

/// "eventfd destroy", from an op code.
pub fn op_name(code: u64) -> String {
    let kind = Kind::ALL.get((code >> 8) as usize).copied();
    let action = match code & 0xff {
        1 => "create",
        2 => "destroy",
        3 => "use",
        0 => "setup",
        _ => "?",
    };
    match kind {
        Some(k) => format!("{} {action}", k.name()),
        None => format!("op {code:#x}"),
    }
}

/// Parses a comma-separated list of kinds (`all` for the default set).
pub fn parse_list(s: &str) -> Result<Vec<Kind>, StressError> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if part == "all" {
            for k in Kind::default_set() {
                if !out.contains(&k) {
                    out.push(k);
                }
            }
            continue;
        }
        if part == "none" {
            continue;
        }
        let k = Kind::parse(part).ok_or_else(|| StressError::UnknownStressor {
            name: part.into(),
            known: Kind::ALL.map(Kind::name).join(", "),
        })?;
        if !out.contains(&k) {
            out.push(k);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_lists_parse() {
        for k in Kind::ALL {
            assert_eq!(Kind::parse(k.name()), Some(k));
            let code = op_code(k, Action::Destroy);
            assert_eq!(op_name(code), format!("{} destroy", k.name()));
        }
        assert_eq!(
            parse_list("pipe, cpu,pipe").unwrap(),
            vec![Kind::Pipe, Kind::Cpu]
        );
        assert_eq!(parse_list("all").unwrap(), Kind::default_set());
        assert!(parse_list("pipes")
            .unwrap_err()
            .to_string()
            .contains("unknown stressor 'pipes'"));
    }
}
