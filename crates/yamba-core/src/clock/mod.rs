//! The cheapest stable clock this host offers, behind one seam.
//!
//! A counter adapter (`x86_64`: invariant TSC; `aarch64`: the virtual
//! counter) is used when the platform guarantees it ticks at a constant rate;
//! otherwise CLOCK_MONOTONIC_RAW. A counter's frequency is calibrated against
//! CLOCK_MONOTONIC_RAW and the calibration's uncertainty is kept, so every
//! number converted from ticks says how far it can be trusted.

#[cfg(target_arch = "aarch64")]
mod aarch64;
mod monotonic;
#[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
mod x86_64;

pub use monotonic::{monotonic_ns, monotonic_raw_ns};

pub use yamba_results::clock::{Calibration, ClockInfo, ClockKind};

/// A calibrated clock. `start()` and `stop()` bracket the timed code with the
/// ordering barriers the counter needs; `ticks_to_ns` converts a difference.
#[derive(Debug, Clone)]
pub struct Clock {
    kind: ClockKind,
    ns_per_tick: f64,
    info: ClockInfo,
}

impl Clock {
    /// Chooses and calibrates the best clock. `calibration_ms` is the total
    /// time spent calibrating (split into windows).
    pub fn detect(calibration_ms: u64) -> Clock {
        let (kind, reason) = choose_kind();
        Self::with_kind(kind, reason, calibration_ms)
    }

    /// CLOCK_MONOTONIC_RAW regardless of the counters available.
    pub fn monotonic_raw() -> Clock {
        Self::with_kind(ClockKind::MonotonicRaw, "requested".into(), 0)
    }

    fn with_kind(kind: ClockKind, reason: String, calibration_ms: u64) -> Clock {
        let calibration = match kind {
            ClockKind::MonotonicRaw => Calibration {
                frequency_hz: 1e9,
                relative_uncertainty: 0.0,
                reference: "nanoseconds by definition".into(),
                windows: 0,
                window_ms: 0.0,
            },
            _ => calibrate(kind, calibration_ms),
        };
        let ns_per_tick = 1e9 / calibration.frequency_hz;
        let mut clock = Clock {
            kind,
            ns_per_tick,
            info: ClockInfo {
                kind,
                reason,
                tick_ns: ns_per_tick,
                resolution_ns: 0.0,
                calibration,
            },
        };
        clock.info.resolution_ns = clock.ticks_to_ns(clock.min_step_ticks());
        clock
    }

    /// The clock a calibration describes: how a child process gets the
    /// session's clock without calibrating again.
    pub fn from_info(info: ClockInfo) -> Clock {
        Clock {
            kind: info.kind,
            ns_per_tick: info.tick_ns,
            info,
        }
    }

    pub fn kind(&self) -> ClockKind {
        self.kind
    }

    pub fn info(&self) -> &ClockInfo {
        &self.info
    }

    /// Timestamp taken before the timed code: no earlier instruction may
    /// still be executing, no later one may have started.
    #[inline(always)]
    pub fn start(&self) -> u64 {
        match self.kind {
            #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
            ClockKind::Tsc => x86_64::tsc_start(),
            #[cfg(target_arch = "aarch64")]
            ClockKind::ArmVirtualCounter => aarch64::cntvct_ordered(),
            _ => monotonic_raw_ns(),
        }
    }

    /// Timestamp taken after the timed code: waits for it to finish.
    #[inline(always)]
    pub fn stop(&self) -> u64 {
        match self.kind {
            #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
            ClockKind::Tsc => x86_64::tsc_stop(),
            #[cfg(target_arch = "aarch64")]
            ClockKind::ArmVirtualCounter => aarch64::cntvct_ordered(),
            _ => monotonic_raw_ns(),
        }
    }

    #[inline(always)]
    pub fn ticks_to_ns(&self, ticks: u64) -> f64 {
        ticks as f64 * self.ns_per_tick
    }

    pub fn ns_to_ticks(&self, ns: f64) -> u64 {
        (ns / self.ns_per_tick).round().max(0.0) as u64
    }

    /// Busy-waits `ns` nanoseconds on this clock: the known delay the
    /// ground-truth tests and peers use.
    pub fn spin_ns(&self, ns: f64) {
        let ticks = self.ns_to_ticks(ns);
        let t0 = self.start();
        while self.stop().wrapping_sub(t0) < ticks {
            std::hint::spin_loop();
        }
    }

    /// Smallest non-zero step between consecutive reads.
    fn min_step_ticks(&self) -> u64 {
        let mut best = u64::MAX;
        for _ in 0..2000 {
            let a = self.stop();
            let mut b = self.stop();
            while b == a {
                b = self.stop();
            }
            best = best.min(b.wrapping_sub(a));
        }
        best
    }
}

/// The architecture's counter frequency as firmware set it, where there is
/// one to read from user space (arm64: CNTFRQ_EL0).
pub fn counter_frequency_hz() -> Option<u64> {
    #[cfg(target_arch = "aarch64")]
    {
        Some(aarch64::cntfrq())
    }
    #[cfg(not(target_arch = "aarch64"))]
    {
        None
    }
}

fn choose_kind() -> (ClockKind, String) {
    #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
    {
        match x86_64::invariant_tsc() {
            Ok(()) => (
                ClockKind::Tsc,
                "invariant TSC (constant_tsc, nonstop_tsc)".into(),
            ),
            Err(why) => (
                ClockKind::MonotonicRaw,
                format!("TSC not usable: {why}; using CLOCK_MONOTONIC_RAW"),
            ),
        }
    }
    #[cfg(target_arch = "aarch64")]
    {
        (
            ClockKind::ArmVirtualCounter,
            "aarch64 generic timer (CNTVCT_EL0) ticks at a constant rate by architecture".into(),
        )
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "x86", target_arch = "aarch64")))]
    {
        (
            ClockKind::MonotonicRaw,
            "no counter adapter for this architecture; using CLOCK_MONOTONIC_RAW".into(),
        )
    }
}

/// Counts counter ticks over windows of CLOCK_MONOTONIC_RAW time. Each
/// window's endpoints are read as tight (counter, raw, counter) triples so
/// the reference read's own cost is bracketed.
fn calibrate(kind: ClockKind, total_ms: u64) -> Calibration {
    let probe = Clock {
        kind,
        ns_per_tick: 1.0,
        info: ClockInfo {
            kind,
            reason: String::new(),
            tick_ns: 1.0,
            resolution_ns: 0.0,
            calibration: Calibration {
                frequency_hz: 1e9,
                relative_uncertainty: 0.0,
                reference: String::new(),
                windows: 0,
                window_ms: 0.0,
            },
        },
    };
    let windows = 5usize;
    let window_ns = (total_ms.max(5) * 1_000_000 / windows as u64) as f64;
    let pair = || {
        // Keep the tightest of a few triples: least disturbed by interrupts.
        (0..5)
            .map(|_| {
                let c0 = probe.start();
                let r = monotonic_raw_ns();
                let c1 = probe.stop();
                (c1 - c0, c0 / 2 + c1 / 2 + (c0 % 2 + c1 % 2) / 2, r)
            })
            .min_by_key(|t| t.0)
            .map(|(_, c, r)| (c, r))
            .unwrap()
    };
    let mut freqs = Vec::with_capacity(windows);
    for _ in 0..windows {
        let (c0, r0) = pair();
        while (monotonic_raw_ns() - r0) as f64 <= window_ns {
            std::hint::spin_loop();
        }
        let (c1, r1) = pair();
        freqs.push((c1 - c0) as f64 * 1e9 / (r1 - r0) as f64);
    }
    freqs.sort_by(|a, b| a.total_cmp(b));
    let median = freqs[windows / 2];
    let spread = (freqs[windows - 1] - freqs[0]) / 2.0 / median;
    Calibration {
        frequency_hz: median,
        relative_uncertainty: spread,
        reference: "CLOCK_MONOTONIC_RAW".into(),
        windows,
        window_ms: window_ns / 1e6,
    }
}
