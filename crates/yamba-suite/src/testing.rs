//! Test-only benchmarks that misbehave on purpose, to prove the runner
//! isolates them. Hidden unless YAMBA_TEST_BENCHMARKS=1.

use yamba_core::{Benchmark, Unit};

pub static CRASH: Benchmark = Benchmark {
    id: "testing.crash",
    area: "testing",
    unit: Unit::Nanoseconds,
    description: "test only: dies of SIGSEGV",
    default: false,
    hidden: true,
    run: |_| {
        // A real invalid access (not raise(): std's SIGSEGV handler would
        // return from a raised one). SAFETY: deliberately ends this child process.
        let v = unsafe { std::ptr::read_volatile(16 as *const u8) };
        Err(format!("survived reading address 16: {v}"))
    },
    ..Benchmark::TEMPLATE
};

pub static HANG: Benchmark = Benchmark {
    id: "testing.hang",
    area: "testing",
    description: "test only: never returns",
    default: false,
    hidden: true,
    timeout_s: 2,
    run: |_| loop {
        std::thread::sleep(std::time::Duration::from_secs(1));
    },
    ..Benchmark::TEMPLATE
};

pub static BENCHMARKS: &[&Benchmark] = &[&CRASH, &HANG];
