//! The machine and environment a run measured: what a reader needs to know
//! before comparing two results files. (Reading them from the host is
//! `yamba_core::machine`'s job.)

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
    #[serde(deserialize_with = "crate::limits::list")]
    pub caches: Vec<CacheLevel>,
    pub page_size: u64,
    pub transparent_hugepages: Option<String>,
    pub clocksource: Option<String>,
    pub perf_event_paranoid: Option<i32>,
    pub is_root: bool,
    // The rest of the 9front study's machine description (section 2):
    // optional, so files written before them still read.
    /// CPU family, model and stepping numbers as the CPU reports them
    /// (x86 CPUID; on Arm: architecture, part and revision).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_family: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_model_id: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_stepping: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub microcode: Option<String>,
    /// Physical cores and sockets among the online CPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sockets: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa_nodes: Option<usize>,
    /// The core clock measured when the machine was described, in MHz
    /// (a dependent multiply chain: `yamba_core::coreclock`), as opposed
    /// to the nominal `cpu_mhz`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_mhz: Option<f64>,
    /// The distribution, as /etc/os-release names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os_release: Option<String>,
    /// The kernel's build string (`uname -v`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_build: Option<String>,
    /// Installed memory modules (SMBIOS type 17), where readable.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(deserialize_with = "crate::limits::list")]
    pub memory_modules: Vec<MemoryModule>,
    /// Why memory type and speed are missing, when they are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_note: Option<String>,
    /// Block devices backed by hardware (or a hypervisor's virtual disk).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(deserialize_with = "crate::limits::list")]
    pub disks: Vec<Disk>,
    /// Network interfaces backed by a device (no loopback, bridges, tunnels).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[serde(deserialize_with = "crate::limits::list")]
    pub nics: Vec<Nic>,
    /// The kernel's speculative-execution mitigations: every file of
    /// /sys/devices/system/cpu/vulnerabilities (name → its line). They
    /// move system-call and context-switch costs by themselves (e.g.
    /// "RSB filling" makes a `ret` after a kernel crossing dear).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[serde(deserialize_with = "crate::limits::string_map")]
    pub vulnerabilities: BTreeMap<String, String>,
    /// `mitigations=` from the kernel command line, when given there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mitigations: Option<String>,
}

/// One memory module, from the firmware's SMBIOS tables.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryModule {
    /// Where it sits, e.g. "DIMM_A1" or "ChannelA-DIMM0".
    pub locator: String,
    pub size_bytes: u64,
    /// "DDR4", "DDR5", "LPDDR5", …
    pub kind: String,
    /// Rated and configured speed, in MT/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_mts: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configured_mts: Option<u32>,
    /// Data width in bits (64 for a DDR4 DIMM, 32 per DDR5 subchannel pair…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_width_bits: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manufacturer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<String>,
}

impl MemoryModule {
    /// The speed it runs at: the configured speed, else the rated one.
    pub fn mts(&self) -> Option<u32> {
        self.configured_mts.or(self.speed_mts).filter(|s| *s > 0)
    }
}

/// One block device.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Disk {
    /// Kernel name: "nvme0n1", "sda", "vda".
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    pub size_bytes: u64,
    /// What the kernel says (`queue/rotational`); virtual disks often
    /// claim to rotate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotational: Option<bool>,
    /// The I/O scheduler in use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<String>,
    /// The driver: "nvme", "sd" (SCSI/SATA), "virtio_blk", …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
}

impl Disk {
    /// A hypervisor's paravirtual disk: the storage behind it is unknown.
    pub fn is_virtual(&self) -> bool {
        self.driver
            .as_deref()
            .is_some_and(|d| d.starts_with("virtio") || d.starts_with("xen") || d == "vmw_pvscsi")
    }
}

/// One network interface.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Nic {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// Link speed in Mb/s, when the driver reports one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_mbps: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u32>,
    /// "up", "down", …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
}

impl Machine {
    /// The hypervisor as people name it ("KVM" for the signature
    /// "KVMKVMKVM"); `None` on bare metal.
    pub fn hypervisor_name(&self) -> Option<String> {
        self.hypervisor.as_deref().map(hypervisor_name)
    }

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

/// A hypervisor's vendor signature (CPUID 0x40000000) as people name it.
pub fn hypervisor_name(signature: &str) -> String {
    let s = signature.trim_matches(|c: char| c == '\0' || c.is_whitespace());
    let known = [
        ("KVMKVMKVM", "KVM"),
        ("Microsoft Hv", "Hyper-V"),
        ("VMwareVMware", "VMware"),
        ("XenVMMXenVMM", "Xen"),
        ("TCGTCGTCGTCG", "QEMU (TCG)"),
        ("bhyve bhyve", "bhyve"),
        ("ACRNACRNACRN", "ACRN"),
        ("QNXQVMBSQG", "QNX"),
        ("VBoxVBoxVBox", "VirtualBox"),
        ("lrpepyh  vr", "Parallels"),
        ("Linux KVM Hv", "KVM (Hyper-V enlightenments)"),
    ];
    known
        .iter()
        .find(|(sig, _)| s == *sig || s.starts_with(sig))
        .map(|(_, name)| name.to_string())
        .unwrap_or_else(|| s.to_string())
}

#[cfg(test)]
mod hypervisor_tests {
    use super::hypervisor_name;

    #[test]
    fn signatures_read_as_names() {
        assert_eq!(hypervisor_name("KVMKVMKVM"), "KVM");
        assert_eq!(hypervisor_name("KVMKVMKVM\0\0\0"), "KVM");
        assert_eq!(hypervisor_name("Microsoft Hv"), "Hyper-V");
        assert_eq!(hypervisor_name("SomethingNew"), "SomethingNew");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A machine as files written before the section-2 fields recorded it.
    const OLD: &str = r#"{"hostname":"h","os":"Linux","kernel":"6.1","arch":"x86_64","cpu_vendor":"GenuineIntel","cpu_model":"Xeon","online_cpus":2,"memory_bytes":1024,"cpu_mhz":2600.0,"governor":null,"boost":null,"hypervisor":null,"caches":[{"level":1,"kind":"Data","size_bytes":49152,"line_bytes":64,"ways":12,"shared_by_cpus":1}],"page_size":4096,"transparent_hugepages":null,"clocksource":"tsc","perf_event_paranoid":2,"is_root":true}"#;

    #[test]
    fn old_files_read_and_write_back_unchanged() {
        let m: Machine = serde_json::from_str(OLD).unwrap();
        assert!(m.disks.is_empty() && m.memory_modules.is_empty() && m.core_mhz.is_none());
        assert_eq!(serde_json::to_string(&m).unwrap(), OLD);
    }

    #[test]
    fn new_fields_round_trip() {
        let mut m: Machine = serde_json::from_str(OLD).unwrap();
        m.cpu_family = Some(6);
        m.core_mhz = Some(3500.0);
        m.memory_modules.push(MemoryModule {
            locator: "DIMM_A1".into(),
            size_bytes: 16 << 30,
            kind: "DDR4".into(),
            speed_mts: Some(3200),
            configured_mts: Some(2933),
            ..Default::default()
        });
        m.disks.push(Disk {
            name: "vda".into(),
            driver: Some("virtio_blk".into()),
            ..Default::default()
        });
        let back: Machine = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        assert_eq!(back, m);
        assert_eq!(back.memory_modules[0].mts(), Some(2933));
        assert!(back.disks[0].is_virtual());
    }
}
