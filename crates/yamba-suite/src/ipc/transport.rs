//! The transports a null RPC can go over, each as a pair of halves that
//! send and receive one small message (a byte, or a word for the futex and
//! shared-memory ones). The templates in `rtt`, `oneway` and `ctxsw` are
//! written against [`Half`] only.

use super::adapter;
use super::peer::Shared;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// A way to carry a message between two parties.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Pipe,
    /// Two FIFOs (named pipes): lmbench's lat_fifo.
    Fifo,
    UnixStream,
    UnixDgram,
    Eventfd,
    Futex,
    Mqueue,
    /// Shared memory polled by busy-waiting: no kernel at all.
    Spin,
    /// Shared memory polled with sched_yield between polls: the same-CPU
    /// form of `Spin` (a pure spin would hold the CPU for a whole slice).
    SpinYield,
    /// Two process-shared POSIX semaphores (sem_post / sem_wait), the
    /// value in shared memory beside them: `ipc.sem.posix`, not one of
    /// `ipc.rtt`'s transports.
    PosixSem,
}

impl Transport {
    pub const ALL: [Transport; 8] = [
        Transport::Pipe,
        Transport::Fifo,
        Transport::UnixStream,
        Transport::UnixDgram,
        Transport::Eventfd,
        Transport::Futex,
        Transport::Mqueue,
        Transport::Spin,
    ];

    /// The names of [`Transport::ALL`], in order (for `--set ipc.transports`).
    pub const NAMES: [&'static str; 8] = [
        "pipe",
        "fifo",
        "unix_stream",
        "unix_dgram",
        "eventfd",
        "futex",
        "mqueue",
        "shm_spin",
    ];

    pub fn name(self) -> &'static str {
        match self {
            Transport::Pipe => "pipe",
            Transport::Fifo => "fifo",
            Transport::UnixStream => "unix_stream",
            Transport::UnixDgram => "unix_dgram",
            Transport::Eventfd => "eventfd",
            Transport::Futex => "futex",
            Transport::Mqueue => "mqueue",
            Transport::Spin => "shm_spin",
            Transport::SpinYield => "shm_spin",
            Transport::PosixSem => "posix_sem",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Transport::Pipe => "two pipes, one per direction, 1 byte",
            Transport::Fifo => {
                "two FIFOs (named pipes, their names removed once open), one per direction, 1 byte"
            }
            Transport::UnixStream => "AF_UNIX SOCK_STREAM socketpair, 1 byte",
            Transport::UnixDgram => "AF_UNIX SOCK_DGRAM socketpair, 1-byte datagrams",
            Transport::Eventfd => "two eventfds, one per direction, 8-byte counter",
            Transport::Futex => "two shared words, FUTEX_WAIT/FUTEX_WAKE",
            Transport::Mqueue => "two POSIX message queues (unlinked at once), 1-byte messages",
            Transport::Spin => "two shared words polled in a busy loop (no kernel)",
            Transport::SpinYield => {
                "two shared words polled with sched_yield between polls (same CPU: a pure spin would livelock until preempted)"
            }
            Transport::PosixSem => {
                "two process-shared POSIX semaphores (sem_post, sem_wait), the value in a shared word"
            }
        }
    }

    /// Whether a round trip blocks in the kernel (one sleep per party).
    pub fn blocks(self) -> bool {
        !matches!(self, Transport::Spin | Transport::SpinYield)
    }

    /// Parses a name as used in result ids (`pipe`, `futex`, …).
    pub fn parse(s: &str) -> Option<Transport> {
        Transport::ALL.into_iter().find(|t| t.name() == s)
    }
}

/// One end of a bidirectional channel. Values are masked to the transport's
/// width (a byte for the byte transports); consecutive values sent must
/// differ (the futex and shared-memory receivers wait for a change).
pub trait Half: Send {
    fn send(&mut self, v: u32) -> bool;
    /// Waits for the next message; None on error.
    fn recv(&mut self) -> Option<u32>;
}

/// A connected pair of halves: (client, server).
pub type Pair = (Box<dyn Half>, Box<dyn Half>);

/// Creates a connected (client, server) pair.
pub fn open(t: Transport) -> Result<Pair, String> {
    Ok(match t {
        Transport::Pipe | Transport::Fifo => {
            let pipe = match t {
                Transport::Fifo => adapter::fifo,
                _ => adapter::pipe,
            };
            let (r1, w1) = pipe()?;
            let (r2, w2) = pipe()?;
            (
                Box::new(FdHalf::new(r2, w1, 1)),
                Box::new(FdHalf::new(r1, w2, 1)),
            )
        }
        Transport::UnixStream | Transport::UnixDgram => {
            let (a, b) = adapter::socketpair(t == Transport::UnixDgram)?;
            (
                Box::new(FdHalf::new(a, a, 1)),
                Box::new(FdHalf::new(b, b, 1)),
            )
        }
        Transport::Eventfd => {
            let req = adapter::eventfd()?;
            let resp = adapter::eventfd()?;
            // Each half owns its descriptors (dropping one must not close
            // the other's), hence the duplicates.
            let (req2, resp2) = (adapter::dup(req)?, adapter::dup(resp)?);
            (
                Box::new(FdHalf::new(resp, req, 8)),
                Box::new(FdHalf::new(req2, resp2, 8)),
            )
        }
        Transport::Mqueue => {
            let req = adapter::mq_anonymous("req", 1)?;
            let resp = adapter::mq_anonymous("resp", 1)?;
            let (req2, resp2) = (adapter::dup(req)?, adapter::dup(resp)?);
            (
                Box::new(MqHalf::new(resp, req)),
                Box::new(MqHalf::new(req2, resp2)),
            )
        }
        Transport::PosixSem => {
            let sems = Arc::new(adapter::PosixSems::new(2)?);
            let words = Arc::new(Shared::<Words>::new_zeroed()?);
            (
                Box::new(SemHalf {
                    sems: sems.clone(),
                    words: words.clone(),
                    out: 0,
                }),
                Box::new(SemHalf {
                    sems,
                    words,
                    out: 1,
                }),
            )
        }
        Transport::Futex | Transport::Spin | Transport::SpinYield => {
            let words = Arc::new(Shared::<Words>::new_zeroed()?);
            let wait = match t {
                Transport::Futex => Wait::Futex,
                Transport::Spin => Wait::Spin,
                _ => Wait::Yield,
            };
            (
                Box::new(WordHalf {
                    words: words.clone(),
                    out: 0,
                    last_in: 0,
                    wait,
                }),
                Box::new(WordHalf {
                    words,
                    out: 1,
                    last_in: 0,
                    wait,
                }),
            )
        }
    })
}

/// Descriptor-based half: pipes, sockets, eventfd. `width` 1 sends a
/// byte; 8 sends an eventfd counter (never 0, which eventfd cannot carry).
struct FdHalf {
    rfd: i32,
    wfd: i32,
    width: usize,
}

impl FdHalf {
    fn new(rfd: i32, wfd: i32, width: usize) -> FdHalf {
        FdHalf { rfd, wfd, width }
    }
}

impl Half for FdHalf {
    #[inline]
    fn send(&mut self, v: u32) -> bool {
        if self.width == 1 {
            adapter::write_all(self.wfd, &[v as u8])
        } else {
            adapter::write_all(self.wfd, &(v.max(1) as u64).to_ne_bytes())
        }
    }

    #[inline]
    fn recv(&mut self) -> Option<u32> {
        if self.width == 1 {
            let mut b = [0u8; 1];
            adapter::read_exact(self.rfd, &mut b).then_some(b[0] as u32)
        } else {
            let mut b = [0u8; 8];
            adapter::read_exact(self.rfd, &mut b).then(|| u64::from_ne_bytes(b) as u32)
        }
    }
}

impl Drop for FdHalf {
    fn drop(&mut self) {
        adapter::close(self.rfd);
        if self.wfd != self.rfd {
            adapter::close(self.wfd);
        }
    }
}

struct MqHalf {
    rq: i32,
    wq: i32,
    buf: [u8; 8],
}

impl MqHalf {
    fn new(rq: i32, wq: i32) -> MqHalf {
        MqHalf {
            rq,
            wq,
            buf: [0; 8],
        }
    }
}

impl Half for MqHalf {
    #[inline]
    fn send(&mut self, v: u32) -> bool {
        adapter::mq_send(self.wq, v as u8)
    }
    #[inline]
    fn recv(&mut self) -> Option<u32> {
        adapter::mq_receive(self.rq, &mut self.buf).map(u32::from)
    }
}

impl Drop for MqHalf {
    fn drop(&mut self) {
        adapter::close(self.rq);
        adapter::close(self.wq);
    }
}

/// Two words on separate cache lines, one per direction.
#[repr(C, align(64))]
#[derive(Default)]
pub struct Words {
    pub w: [Line; 2],
}

#[repr(C, align(64))]
#[derive(Default)]
pub struct Line {
    pub v: AtomicU32,
}

#[derive(Clone, Copy)]
enum Wait {
    Futex,
    Spin,
    Yield,
}

struct WordHalf {
    words: Arc<Shared<Words>>,
    /// Index of the word this half writes; it reads the other.
    out: usize,
    last_in: u32,
    wait: Wait,
}

impl Half for WordHalf {
    #[inline]
    fn send(&mut self, v: u32) -> bool {
        let w = &self.words.w[self.out].v;
        w.store(v, Ordering::Release);
        if let Wait::Futex = self.wait {
            adapter::futex_wake(w) >= 0
        } else {
            true
        }
    }

    #[inline]
    fn recv(&mut self) -> Option<u32> {
        let w = &self.words.w[1 - self.out].v;
        loop {
            let v = w.load(Ordering::Acquire);
            if v != self.last_in {
                self.last_in = v;
                return Some(v);
            }
            match self.wait {
                Wait::Futex => {
                    adapter::futex_wait(w, v);
                }
                Wait::Spin => std::hint::spin_loop(),
                Wait::Yield => adapter::sched_yield(),
            }
        }
    }
}

/// Semaphore half: the value goes in the shared word of its direction,
/// then the direction's semaphore is posted; the receiver waits on the
/// other's semaphore and reads the other's word (sem_post and sem_wait
/// order memory, so a reply that is not the request + 1 means the
/// semaphores did not alternate the parties).
struct SemHalf {
    sems: Arc<adapter::PosixSems>,
    words: Arc<Shared<Words>>,
    /// The direction this half posts; it waits on the other.
    out: usize,
}

impl Half for SemHalf {
    #[inline]
    fn send(&mut self, v: u32) -> bool {
        self.words.w[self.out].v.store(v, Ordering::Relaxed);
        self.sems.post(self.out)
    }

    #[inline]
    fn recv(&mut self) -> Option<u32> {
        let other = 1 - self.out;
        self.sems
            .wait(other)
            .then(|| self.words.w[other].v.load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod names_tests {
    use super::*;

    #[test]
    fn names_are_the_names_of_all() {
        assert_eq!(Transport::ALL.map(Transport::name), Transport::NAMES);
    }
}
