//! The machine and environment a run measured: what a reader needs to know
//! before comparing two results files. (Reading them from the host is
//! `yamba_core::machine`'s job.)

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CacheLevel {
    pub level: u32,
    /// "Data", "Instruction" or "Unified".
    pub kind: String,
    pub size_bytes: u64,
    pub line_bytes: Option<u64>,
    pub ways: Option<u64>,
    /// How many CPUs share one instance of this cache.
    pub shared_by_cpus: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    pub hostname: String,
    pub os: String,
    pub kernel: String,
    pub arch: String,
    pub cpu_vendor: String,
    pub cpu_model: String,
    pub online_cpus: usize,
    pub memory_bytes: u64,
    /// Nominal CPU frequency (MHz) as /proc/cpuinfo or cpufreq tell it.
    pub cpu_mhz: Option<f64>,
    /// cpufreq scaling governor, where the kernel exposes one.
    pub governor: Option<String>,
    /// Whether frequency boost (turbo) is on, where the kernel exposes it.
    pub boost: Option<bool>,
    /// The hypervisor or emulator this runs under, and what said so (CPU
    /// flags and CPUID, DMI, the device tree, the CPU's identity); None
    /// when nothing does — which is not proof of bare metal.
    pub hypervisor: Option<String>,
    pub caches: Vec<CacheLevel>,
    pub page_size: u64,
    pub transparent_hugepages: Option<String>,
    pub clocksource: Option<String>,
    pub perf_event_paranoid: Option<i32>,
    pub is_root: bool,
    /// The kernel's speculative-execution mitigations: every file of
    /// /sys/devices/system/cpu/vulnerabilities (name → its line). They
    /// move system-call and context-switch costs by themselves (e.g.
    /// "RSB filling" makes a `ret` after a kernel crossing dear).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub vulnerabilities: BTreeMap<String, String>,
    /// `mitigations=` from the kernel command line, when given there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mitigations: Option<String>,
}

impl Machine {
    /// Size of the last-level cache, or a conservative 32 MiB guess.
    pub fn llc_bytes(&self) -> u64 {
        self.caches
            .iter()
            .filter(|c| c.kind != "Instruction")
            .max_by_key(|c| c.level)
            .map(|c| c.size_bytes)
            .unwrap_or(32 << 20)
    }

    /// Size of the level-`level` data (or unified) cache.
    pub fn cache_bytes(&self, level: u32) -> Option<u64> {
        self.caches
            .iter()
            .find(|c| c.level == level && c.kind != "Instruction")
            .map(|c| c.size_bytes)
    }
}
