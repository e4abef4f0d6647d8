//! Pinning and scheduling policy: the Linux adapter for keeping a
//! benchmark on one CPU and, when permitted, above ordinary tasks.

/// CPUs this process may run on.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: set is a valid cpu_set_t for sched_getaffinity to fill.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return vec![0];
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// Pins the calling thread to `cpu`.
pub fn pin_current_thread(cpu: usize) -> Result<(), String> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(format!("cannot pin to CPU {cpu}: no such CPU"));
    }
    // SAFETY: set is a valid, zeroed cpu_set_t.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(format!(
                "cannot pin to CPU {cpu}: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    Ok(())
}

/// The CPU the calling thread is running on now.
#[inline]
pub fn current_cpu() -> Option<usize> {
    // SAFETY: sched_getcpu has no preconditions.
    let c = unsafe { libc::sched_getcpu() };
    (c >= 0).then_some(c as usize)
}

/// The CPUs this process was allowed when it first asked — before any
/// benchmark pinned itself to one of them. Every benchmark process is
/// forked after the session asked, so it sees the same set.
pub fn usable_cpus() -> &'static [usize] {
    static USABLE: std::sync::OnceLock<Vec<usize>> = std::sync::OnceLock::new();
    USABLE.get_or_init(allowed_cpus)
}

/// The default CPU to pin to: the last usable one, since CPU 0 usually
/// takes more of the machine's interrupts.
pub fn default_cpu() -> usize {
    *usable_cpus().last().unwrap_or(&0)
}

/// Another usable CPU than `cpu`, for benchmarks across CPUs (works in a
/// process already pinned to `cpu`).
pub fn other_cpu(cpu: usize) -> Option<usize> {
    usable_cpus().iter().rev().copied().find(|&c| c != cpu)
}

/// Asks for SCHED_FIFO at a middle priority. Fails (and changes nothing)
/// without CAP_SYS_NICE or an RLIMIT_RTPRIO allowance.
pub fn set_realtime() -> Result<(), String> {
    // SAFETY: param is a valid sched_param.
    unsafe {
        let param = libc::sched_param { sched_priority: 50 };
        if libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) != 0 {
            return Err(format!(
                "SCHED_FIFO refused: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_cpu_survives_pinning() {
        let cpu = default_cpu();
        let expected = other_cpu(cpu);
        std::thread::spawn(move || {
            pin_current_thread(cpu).unwrap();
            assert_eq!(other_cpu(cpu), expected);
        })
        .join()
        .unwrap();
        if usable_cpus().len() > 1 {
            assert!(expected.is_some_and(|c| c != cpu));
        }
    }

    #[test]
    fn pinning_moves_the_thread() {
        let cpu = default_cpu();
        std::thread::spawn(move || {
            pin_current_thread(cpu).unwrap();
            assert_eq!(current_cpu(), Some(cpu));
        })
        .join()
        .unwrap();
        assert!(pin_current_thread(100_000).is_err());
    }
}
