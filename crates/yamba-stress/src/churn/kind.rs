//! The primitives a churn worker creates and destroys.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// A forked child that waits for signals (queued real-time signals, counted).
    Process,
    /// A pthread on a stack we map ourselves, blocked reading its eventfd.
    Thread,
    Pipe,
    /// AF_UNIX socket pair (stream, datagram or seqpacket): no network.
    Socketpair,
    Eventfd,
    /// An epoll instance watching a few of the worker's other fds.
    Epoll,
    /// A one-shot timerfd armed for a few microseconds.
    Timerfd,
    /// An anonymous private mapping of a few pages, every page written.
    MmapAnon,
    /// A shared mapping of a slice of the worker's backing file.
    MmapFile,
    /// A file in the worker's scratch directory, written and read back.
    File,
    /// A queued signal, to the worker itself or to one of its child processes.
    Signal,
    /// A CPU-bound stressor: spins ~100 µs per operation, no system calls.
    Cpu,
}

impl Kind {
    pub const ALL: [Kind; 12] = [
        Kind::Process,
        Kind::Thread,
        Kind::Pipe,
        Kind::Socketpair,
        Kind::Eventfd,
        Kind::Epoll,
        Kind::Timerfd,
        Kind::MmapAnon,
        Kind::MmapFile,
        Kind::File,
        Kind::Signal,
        Kind::Cpu,
    ];

    /// What `yamba stress` churns unless told otherwise (all but `cpu`).
    pub fn default_set() -> Vec<Kind> {
        Kind::ALL.into_iter().filter(|&k| k != Kind::Cpu).collect()
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Process => "process",
            Kind::Thread => "thread",
            Kind::Pipe => "pipe",
            Kind::Socketpair => "socketpair",
            Kind::Eventfd => "eventfd",
            Kind::Epoll => "epoll",
            Kind::Timerfd => "timerfd",
            Kind::MmapAnon => "mmap-anon",
            Kind::MmapFile => "mmap-file",
            Kind::File => "file",
            Kind::Signal => "signal",
            Kind::Cpu => "cpu",
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == s)
    }

    /// Whether objects of this kind live in the pool (created now, destroyed later).
    pub fn pooled(self) -> bool {
        !matches!(self, Kind::Signal | Kind::Cpu)
    }

    /// Most objects of this kind one worker holds at once.
    pub fn cap(self) -> usize {
        match self {
            Kind::Process | Kind::Thread => 8,
            Kind::MmapFile => super::objects::FILE_SLOTS,
            _ => 32,
        }
    }

    pub fn index(self) -> u64 {
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
pub fn parse_list(s: &str) -> Result<Vec<Kind>, String> {
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
        let k = Kind::parse(part).ok_or_else(|| {
            format!(
                "unknown stressor '{part}' (one of: all, none, {})",
                Kind::ALL.map(Kind::name).join(", ")
            )
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
            .contains("unknown stressor 'pipes'"));
    }
}
