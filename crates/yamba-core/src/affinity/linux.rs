//! Linux: sched_{get,set}affinity, sched_getcpu, SCHED_FIFO.

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
