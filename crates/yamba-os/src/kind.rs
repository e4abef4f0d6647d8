//! The primitives yamba creates: the `space` area measures the first eight
//! (its `Batch` makes them) and times making and destroying the
//! descriptor kinds, a mapping and a file (`space.create_destroy.*`); the
//! stress churns them all. What each does with a kind is its own: how the
//! space area holds one is in [`crate::space`], how a churn worker uses
//! one is in yamba-stress.

/// One kind of primitive. The order is the stress's report order (and its
/// operation codes); the names are those of its `--stressors` and results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "kebab-case")
)]
pub enum Kind {
    /// A child process (space: blocked in read(2); stress: waiting for
    /// signals).
    Process,
    /// A thread, blocked reading an fd.
    Thread,
    Pipe,
    /// AF_UNIX socket pair: no network.
    Socketpair,
    Eventfd,
    /// An epoll instance.
    Epoll,
    Timerfd,
    /// An anonymous private mapping, every page written (space: one page,
    /// its own VMA; stress: a few pages).
    MmapAnon,
    /// A shared mapping of a slice of a file.
    MmapFile,
    /// A file, written and read back.
    File,
    /// A queued signal.
    Signal,
    /// No object: CPU time (a stressor that spins, no system calls).
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

    /// File descriptors one object holds.
    pub fn fds(self) -> u64 {
        match self {
            Kind::Pipe | Kind::Socketpair => 2,
            Kind::Eventfd | Kind::Epoll | Kind::Timerfd | Kind::File => 1,
            Kind::Process
            | Kind::Thread
            | Kind::MmapAnon
            | Kind::MmapFile
            | Kind::Signal
            | Kind::Cpu => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for k in Kind::ALL {
            assert_eq!(Kind::parse(k.name()), Some(k));
        }
        assert_eq!(Kind::parse("mapping"), None);
    }
}
