//! The effective last-level cache, and the working-set sizes it implies.
//!
//! sysfs gives the LLC the hardware (or the hypervisor) claims: 480 MiB on
//! an Intel VM whose chase leaves the LLC near 16 MiB, 32 MiB on a Zen 4
//! tenant that gets 4–6 MiB of it. A curve that goes to 8× sysfs's figure
//! and bandwidth arrays of 8× it (3.8 GiB each there) measure nothing
//! more and cost memory and minutes. [`probe`] finds the effective LLC
//! with a short chase on huge pages (base pages visited page by page where
//! there are none, so TLB misses stay rare): the working set where the
//! latency crosses the midpoint between the LLC's and memory's, as the
//! curve does (`plateau::capacity`), up to 2× sysfs's LLC or 256 MiB. [`Sizing`] bounds the defaults by it
//! and by MemAvailable, and says how in the results' params.

use super::adapter::{self, Pages};
use super::chase::{Chain, Order};
use super::plateau::capacity;
use serde_json::json;
use std::time::Duration;
use yamba_core::harness::Plan;
use yamba_core::{Clock, Machine};

/// What the probe found.
#[derive(Debug, Clone)]
pub struct Probe {
    /// Working set where half the loads still hit the LLC, in bytes.
    pub effective_bytes: Option<f64>,
    /// (bytes, ns) of every size probed.
    pub points: Vec<[f64; 2]>,
    pub pages: &'static str,
}

/// The largest working set the probe looks at: twice sysfs's LLC, at most
/// 512 MiB and an eighth of the memory available.
fn probe_ceiling(machine: &Machine) -> usize {
    let llc = machine.llc_bytes() as usize;
    (2 * llc)
        .min(256 << 20)
        .min(mem_available(machine) / 8)
        .max(8 << 20)
}

/// MemAvailable, or the machine's memory when the kernel does not say.
pub fn mem_available(machine: &Machine) -> usize {
    yamba_core::machine::meminfo_kib("MemAvailable")
        .map(|k| k * 1024)
        .unwrap_or(machine.memory_bytes) as usize
}

/// A short chase from past the level below the LLC to [`probe_ceiling`],
/// doubling, each size warmed by a trip round its cycle (bounded); about a
/// second.
pub fn probe(clock: &Clock, machine: &Machine) -> Probe {
    let huge = adapter::thp_unavailable(machine.transparent_hugepages.as_deref()).is_none();
    let (pages, order, name) = if huge {
        (Pages::Huge, Order::Random, "2 MiB pages, random order")
    } else {
        (Pages::Base, Order::Page, "base pages, page by page")
    };
    let llc_level = machine
        .caches
        .iter()
        .filter(|c| c.kind != "Instruction")
        .map(|c| c.level)
        .max()
        .unwrap_or(0);
    let below = llc_level
        .checked_sub(1)
        .and_then(|l| machine.cache_bytes(l))
        .unwrap_or(256 << 10) as usize;
    let mut plan = Plan::quick();
    plan.budget = Duration::from_millis(8);
    plan.min_observation_ns = 50_000.0;
    plan.min_observations = 3;
    let mut points = Vec::new();
    let mut bytes = (2 * below).max(1 << 20);
    let ceiling = probe_ceiling(machine);
    while bytes <= ceiling {
        let Ok(chain) = Chain::new(bytes, 64, order, pages, 0x11C + bytes as u64) else {
            break;
        };
        // Warm: the caches must hold what they can of this working set.
        plan.warmup_ns = (chain.elements as f64 * 200.0).clamp(2e6, 40e6);
        if let Some(s) = chain.measure(clock, &plan).summary() {
            points.push([bytes as f64, s.median]);
        }
        bytes *= 2;
    }
    Probe {
        effective_bytes: effective(&points),
        points,
        pages: name,
    }
}

/// Where a probe curve crosses the midpoint between its first point (the
/// LLC) and its last (memory), when the last is clearly memory (≥ 2× the
/// first); `None` when the curve never left the LLC.
pub fn effective(points: &[[f64; 2]]) -> Option<f64> {
    let (first, last) = (points.first()?[1], points.last()?[1]);
    if points.len() < 3 || last < 2.0 * first {
        return None;
    }
    capacity(points, 0, first, last)
}

/// Default working-set sizes for a run, bounded by the effective LLC and
/// MemAvailable.
#[derive(Debug, Clone)]
pub struct Sizing {
    pub sysfs_llc: u64,
    pub probe: Probe,
    /// The LLC the defaults are scaled from: the effective one when the
    /// probe found it, sysfs's otherwise.
    pub llc: usize,
    pub mem_available: usize,
}

impl Sizing {
    pub fn new(clock: &Clock, machine: &Machine) -> Sizing {
        let probe = probe(clock, machine);
        let sysfs_llc = machine.llc_bytes();
        let llc = probe
            .effective_bytes
            .map_or(sysfs_llc as usize, |e| (e as usize).min(sysfs_llc as usize));
        Sizing {
            sysfs_llc,
            llc,
            mem_available: mem_available(machine),
            probe,
        }
    }

    /// `times` × the LLC, at least `floor`, at most `share` of MemAvailable.
    pub fn bounded(&self, times: usize, floor: usize, share: f64) -> usize {
        (times * self.llc)
            .max(floor)
            .min((self.mem_available as f64 * share) as usize)
            .max(1 << 20)
    }

    /// What the sizes were scaled from, for a result's params.
    pub fn describe(&self, rule: &str) -> serde_json::Value {
        json!({
            "rule": rule,
            "llc_bytes_used": self.llc,
            "llc_basis": if self.probe.effective_bytes.is_some() {
                "effective: where a short chase crosses halfway from the LLC's latency to memory's (measured, not the hardware's size)"
            } else {
                "sysfs: the probe's chase never left the LLC"
            },
            "sysfs_llc_bytes": self.sysfs_llc,
            "mem_available_bytes": self.mem_available,
            "probe": { "pages": self.probe.pages, "points": self.probe.points },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effective_is_the_midpoint_crossing_or_nothing() {
        let m = 1048576.0;
        let curve = [
            [4.0 * m, 30.0],
            [8.0 * m, 32.0],
            [16.0 * m, 60.0],
            [32.0 * m, 120.0],
            [64.0 * m, 150.0],
        ];
        let e = effective(&curve).unwrap();
        assert!(e > 16.0 * m && e < 32.0 * m, "{e}");
        // Never left the LLC: no figure, not a guess.
        let flat = [[4.0 * m, 30.0], [8.0 * m, 31.0], [16.0 * m, 33.0]];
        assert_eq!(effective(&flat), None);
    }
}
