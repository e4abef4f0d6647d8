//! Linux: /proc/PID/schedstat (a process's main thread) or
//! /proc/thread-self/schedstat (the calling thread) — its first two fields
//! are the time on a CPU and the time runnable but waiting, in ns. The
//! file exists when the kernel keeps schedstats (CONFIG_SCHEDSTATS or
//! CONFIG_SCHED_INFO).

use super::SchedTimes;

/// [`SchedTimes`] of process `pid`'s main thread, or of the calling thread
/// when `pid` is None; None when the task is gone or the kernel keeps no
/// schedstats.
pub fn sched_times(pid: Option<i32>) -> Option<SchedTimes> {
    let path = match pid {
        Some(p) => format!("/proc/{p}/schedstat"),
        None => "/proc/thread-self/schedstat".into(),
    };
    parse(&std::fs::read_to_string(path).ok()?)
}

fn parse(text: &str) -> Option<SchedTimes> {
    let mut f = text.split_whitespace().map(|x| x.parse::<u64>().ok());
    Some(SchedTimes {
        ran_ns: f.next()??,
        waited_ns: f.next()??,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_two_fields_are_ran_and_waited() {
        assert_eq!(
            parse("1234 56 7\n"),
            Some(SchedTimes {
                ran_ns: 1234,
                waited_ns: 56
            })
        );
        assert_eq!(parse("1234\n"), None);
        assert_eq!(parse("x 5 6\n"), None);
    }

    #[test]
    fn a_thread_that_spins_has_run_that_long() {
        let Some(before) = sched_times(None) else {
            // The kernel keeps no schedstats: what the callers then report.
            assert!(!std::path::Path::new("/proc/thread-self/schedstat").exists());
            return;
        };
        let t = std::time::Instant::now();
        while t.elapsed() < std::time::Duration::from_millis(50) {
            std::hint::spin_loop();
        }
        let d = sched_times(None).unwrap().since(before);
        // 50 ms of spinning is 50 ms on a CPU or waiting for one.
        assert!(d.ran_ns + d.waited_ns >= 45_000_000, "{d:?}");
        assert!(d.ran_ns > 0, "{d:?}");
    }

    #[test]
    fn another_process_is_read_by_pid_and_a_gone_one_is_none() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let read = sched_times(Some(pid));
        child.kill().unwrap();
        child.wait().unwrap();
        if std::path::Path::new("/proc/self/schedstat").exists() {
            assert!(read.is_some());
        }
        assert_eq!(sched_times(Some(pid)), None);
    }
}
