//! One benchmark per primitive, all on the template in `measure.rs`:
//! `space.<primitive>` yields `.kernel` and `.user`, bytes per object.

use super::adapter::{self, Kind};
use super::measure::run_space;
use yamba_core::{Benchmark, Cold, Replication, Unit};

macro_rules! primitive {
    ($name:ident, $id:literal, $kind:expr, $desc:literal) => {
        pub static $name: Benchmark = Benchmark {
            id: $id,
            area: "space",
            unit: Unit::Bytes,
            description: $desc,
            cold: Cold::NotMeaningful(
                "a count of bytes from the kernel's accounting, not a time: caches do not change it",
            ),
            adapter: adapter::NAME,
            replication: Replication::OneProcess {
                why: "a count of bytes from the kernel's accounting, not a timing",
            },
            run: |ctx| run_space(ctx, $kind),
            settings: &[super::measure::N, super::measure::REPEATS],
            one_copy_only: Some(crate::shared::one_copy_only::WHOLE_MACHINE),
            ..Benchmark::TEMPLATE
        };
    };
}

primitive!(
    PROCESS,
    "space.process",
    Kind::Process,
    "memory per process: kernel (.kernel) and user (.user), N blocked children"
);
primitive!(
    THREAD,
    "space.thread",
    Kind::Thread,
    "memory per thread: kernel (.kernel) and user (.user), N blocked threads"
);
primitive!(
    PIPE,
    "space.pipe",
    Kind::Pipe,
    "memory per pipe: kernel (.kernel) and user (.user)"
);
primitive!(
    SOCKETPAIR,
    "space.socketpair",
    Kind::Socketpair,
    "memory per AF_UNIX socketpair: kernel (.kernel) and user (.user)"
);
primitive!(
    EVENTFD,
    "space.eventfd",
    Kind::Eventfd,
    "memory per eventfd: kernel (.kernel) and user (.user)"
);
primitive!(
    EPOLL,
    "space.epoll",
    Kind::Epoll,
    "memory per epoll instance: kernel (.kernel) and user (.user)"
);
primitive!(
    TIMERFD,
    "space.timerfd",
    Kind::Timerfd,
    "memory per timerfd: kernel (.kernel) and user (.user)"
);
primitive!(
    MAPPING,
    "space.mapping",
    Kind::MmapAnon,
    "memory per mapped region (one touched page): kernel (.kernel) and user (.user)"
);
