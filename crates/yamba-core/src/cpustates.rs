//! CPU states from /proc/stat: the line `top` prints, and the run's check
//! that nothing else was using the machine while a benchmark ran.

/// Cumulative CPU time counters (in USER_HZ ticks) for all CPUs together.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

impl CpuTimes {
    /// Reads the aggregate `cpu` line of /proc/stat.
    pub fn read() -> std::io::Result<CpuTimes> {
        let text = std::fs::read_to_string("/proc/stat")?;
        Self::parse(&text).ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidData, "no cpu line in /proc/stat")
        })
    }

    /// Parses the first (`cpu `) line of /proc/stat text.
    pub fn parse(text: &str) -> Option<CpuTimes> {
        let line = text.lines().find(|l| l.starts_with("cpu "))?;
        let v: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .map(|f| f.parse().unwrap_or(0))
            .collect();
        let get = |i: usize| v.get(i).copied().unwrap_or(0);
        Some(CpuTimes {
            user: get(0),
            nice: get(1),
            system: get(2),
            idle: get(3),
            iowait: get(4),
            irq: get(5),
            softirq: get(6),
            steal: get(7),
        })
    }

    fn total(&self) -> u64 {
        self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait
            + self.irq
            + self.softirq
            + self.steal
    }

    /// Shares of each state between `self` (earlier) and `later`.
    pub fn states_until(&self, later: &CpuTimes) -> CpuStates {
        let d = |a: u64, b: u64| b.saturating_sub(a) as f64;
        let total = d(self.total(), later.total()).max(1.0);
        let pct = |x: f64| 100.0 * x / total;
        CpuStates {
            user: pct(d(self.user, later.user) + d(self.nice, later.nice)),
            system: pct(d(self.system, later.system)
                + d(self.irq, later.irq)
                + d(self.softirq, later.softirq)),
            idle: pct(d(self.idle, later.idle)),
            iowait: pct(d(self.iowait, later.iowait)),
            steal: pct(d(self.steal, later.steal)),
            ticks: total as u64,
        }
    }
}

pub use yamba_results::cpustates::CpuStates;

/// Ticks per second of /proc/stat's counters.
pub fn user_hz() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let v = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if v > 0 {
        v as f64
    } else {
        100.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_computes_shares() {
        let a = CpuTimes::parse("cpu  100 0 50 800 10 0 0 0 0 0\ncpu0 1 2 3\n").unwrap();
        let b = CpuTimes::parse("cpu  130 0 60 850 10 0 0 10 0 0\n").unwrap();
        let s = a.states_until(&b);
        assert_eq!(s.ticks, 100);
        assert!((s.user - 30.0).abs() < 1e-9);
        assert!((s.system - 10.0).abs() < 1e-9);
        assert!((s.idle - 50.0).abs() < 1e-9);
        assert!((s.steal - 10.0).abs() < 1e-9);
        assert!(s
            .line()
            .starts_with("CPU states: 30.00% user, 10.00% system, 50.00% idle"));
        assert!(CpuTimes::parse("intr 1 2").is_none());
    }

    #[test]
    fn reads_this_machine() {
        let t = CpuTimes::read().unwrap();
        assert!(t.total() > 0);
    }
}
