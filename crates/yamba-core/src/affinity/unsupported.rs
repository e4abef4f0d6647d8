//! Platforms without an affinity adapter: every CPU the standard library
//! counts is "allowed", nothing can be pinned, and each attempt says why.

fn why() -> String {
    format!("no CPU affinity adapter for {}", std::env::consts::OS)
}

/// CPUs this process may run on, as far as can be told.
pub fn allowed_cpus() -> Vec<usize> {
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    (0..n).collect()
}

pub fn pin_current_thread(cpu: usize) -> Result<(), String> {
    Err(format!("cannot pin to CPU {cpu}: {}", why()))
}

pub fn current_cpu() -> Option<usize> {
    None
}

pub fn set_realtime() -> Result<(), String> {
    Err(format!("SCHED_FIFO unavailable: {}", why()))
}
