//! The machine and environment a run measured: what a reader needs to know
//! before comparing two results files.

use std::path::Path;
pub use yamba_results::machine::{CacheLevel, Machine};

/// Reads the host's description (`Machine::describe()` with this trait in
/// scope): the data type lives in `yamba_results`, the reading here.
pub trait Describe {
    fn describe() -> Self;
}

impl Describe for Machine {
    fn describe() -> Machine {
        let cpuinfo = read("/proc/cpuinfo").unwrap_or_default();
        let field = |name: &str| {
            cpuinfo
                .lines()
                .find(|l| l.split(':').next().map(str::trim) == Some(name))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        };
        let flags = field("flags")
            .or_else(|| field("Features"))
            .unwrap_or_default();
        let uname = uname();
        // SAFETY: sysconf has no preconditions.
        let (online, page) = unsafe {
            (
                libc::sysconf(libc::_SC_NPROCESSORS_ONLN).max(1) as usize,
                libc::sysconf(libc::_SC_PAGESIZE).max(1) as u64,
            )
        };
        let cpufreq = "/sys/devices/system/cpu/cpu0/cpufreq";
        let mut m = Machine {
            hostname: uname.1,
            os: uname.0,
            kernel: uname.2,
            arch: std::env::consts::ARCH.to_string(),
            cpu_vendor: field("vendor_id")
                .or_else(|| field("CPU implementer").map(|i| format!("ARM implementer {i}")))
                .unwrap_or_else(|| "unknown".into()),
            cpu_model: field("model name")
                .or_else(|| field("Model"))
                .or_else(|| field("CPU part").map(|p| format!("CPU part {p}")))
                .unwrap_or_else(|| "unknown".into()),
            online_cpus: online,
            memory_bytes: meminfo_kib("MemTotal").unwrap_or(0) * 1024,
            cpu_mhz: read(&format!("{cpufreq}/cpuinfo_max_freq"))
                .and_then(|s| s.trim().parse::<f64>().ok())
                .map(|khz| khz / 1000.0)
                .or_else(|| field("cpu MHz").and_then(|s| s.parse().ok())),
            governor: read(&format!("{cpufreq}/scaling_governor")).map(|s| s.trim().into()),
            boost: read("/sys/devices/system/cpu/cpufreq/boost")
                .map(|s| s.trim() == "1")
                .or_else(|| {
                    read("/sys/devices/system/cpu/intel_pstate/no_turbo").map(|s| s.trim() == "0")
                }),
            hypervisor: Virtualization::read(&flags, &field).describe(),
            caches: caches(Path::new("/sys/devices/system/cpu/cpu0/cache")),
            page_size: page,
            transparent_hugepages: read("/sys/kernel/mm/transparent_hugepage/enabled")
                .map(|s| s.trim().into()),
            clocksource: read("/sys/devices/system/clocksource/clocksource0/current_clocksource")
                .map(|s| s.trim().into()),
            perf_event_paranoid: read("/proc/sys/kernel/perf_event_paranoid")
                .and_then(|s| s.trim().parse().ok()),
            // SAFETY: geteuid has no preconditions.
            is_root: unsafe { libc::geteuid() } == 0,
            vulnerabilities: vulnerabilities(Path::new("/sys/devices/system/cpu/vulnerabilities")),
            mitigations: read("/proc/cmdline").and_then(|c| kernel_arg(&c, "mitigations")),
            ..Default::default()
        };
        crate::host::fill(&mut m);
        m
    }
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// A value from /proc/meminfo, in KiB.
pub fn meminfo_kib(key: &str) -> Option<u64> {
    read("/proc/meminfo")?
        .lines()
        .find(|l| l.split(':').next() == Some(key))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn uname() -> (String, String, String) {
    // SAFETY: u is a valid utsname for uname to fill; fields are NUL-terminated.
    unsafe {
        let mut u: libc::utsname = std::mem::zeroed();
        if libc::uname(&mut u) != 0 {
            return ("unknown".into(), "unknown".into(), "unknown".into());
        }
        let s = |f: &[libc::c_char]| {
            std::ffi::CStr::from_ptr(f.as_ptr())
                .to_string_lossy()
                .into_owned()
        };
        (s(&u.sysname), s(&u.nodename), s(&u.release))
    }
}

/// What the machine says about running under a hypervisor or an emulator.
/// x86 CPUs say it themselves (the `hypervisor` flag, CPUID's vendor
/// leaf); arm64 CPUs do not, so there the firmware tables speak: DMI where
/// ACPI machines have it, the device tree's board (QEMU's `virt` board is
/// `linux,dummy-virt`), the CPU's identity (QEMU's emulated `max` CPU uses
/// implementer 0x00, reserved for software), and the generic timer's
/// frequency (QEMU's is 62.5 MHz before 9.0).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Virtualization {
    /// x86 CPU flag `hypervisor`.
    pub cpu_flag: bool,
    /// CPUID 0x40000000 signature ("KVMKVMKVM", "Microsoft Hv", …).
    pub cpuid_vendor: Option<String>,
    /// /sys/hypervisor/type (Xen).
    pub xen: Option<String>,
    /// DMI sys_vendor, product_name, bios_vendor, board_vendor.
    pub dmi: Vec<String>,
    /// The device tree root's `compatible` strings.
    pub dt_compatible: Vec<String>,
    /// arm64 /proc/cpuinfo "CPU implementer" and "CPU part".
    pub arm_implementer: Option<String>,
    pub arm_part: Option<String>,
    /// The arm64 generic timer's frequency (CNTFRQ_EL0).
    pub counter_hz: Option<u64>,
}

/// DMI strings virtual machines put in their firmware tables (as
/// systemd-detect-virt knows them); matched as substrings.
const DMI_VIRTUAL: &[&str] = &[
    "QEMU",
    "KVM",
    "Amazon EC2",
    "Google Compute Engine",
    "VMware",
    "VMW",
    "innotek GmbH",
    "VirtualBox",
    "Xen",
    "Bochs",
    "Parallels",
    "BHYVE",
    "Hyper-V",
    "Virtual Machine",
    "OpenStack",
    "KubeVirt",
    "Apple Virtualization",
    "Alibaba Cloud ECS",
];

impl Virtualization {
    /// Reads this machine's signals; `cpuinfo_field` looks up a
    /// /proc/cpuinfo field of the first CPU.
    pub fn read(flags: &str, cpuinfo_field: &dyn Fn(&str) -> Option<String>) -> Virtualization {
        let dmi = ["sys_vendor", "product_name", "bios_vendor", "board_vendor"]
            .iter()
            .filter_map(|f| read(&format!("/sys/class/dmi/id/{f}")))
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        let dt = std::fs::read("/sys/firmware/devicetree/base/compatible")
            .or_else(|_| std::fs::read("/proc/device-tree/compatible"))
            .unwrap_or_default();
        Virtualization {
            cpu_flag: flags.split_whitespace().any(|f| f == "hypervisor"),
            cpuid_vendor: cpuid_hypervisor_vendor(),
            xen: read("/sys/hypervisor/type")
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty()),
            dmi,
            dt_compatible: dt
                .split(|&b| b == 0)
                .filter(|s| !s.is_empty())
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect(),
            arm_implementer: cpuinfo_field("CPU implementer"),
            arm_part: cpuinfo_field("CPU part"),
            counter_hz: crate::clock::counter_frequency_hz(),
        }
    }

    /// What runs this machine, and what said so; None when nothing says.
    pub fn describe(&self) -> Option<String> {
        // x86: the CPU says it, and its vendor leaf names the hypervisor.
        if self.cpu_flag {
            let vendor = self
                .cpuid_vendor
                .clone()
                .or_else(|| self.xen.clone())
                .or_else(|| self.dmi.first().cloned());
            return Some(vendor.unwrap_or_else(|| "unknown (CPU flag 'hypervisor' set)".into()));
        }
        let dmi_vm = self
            .dmi
            .iter()
            .find(|s| DMI_VIRTUAL.iter().any(|v| s.contains(v)));
        let qemu_board = self.dt_compatible.iter().any(|c| c == "linux,dummy-virt");
        let emulated_cpu = self
            .arm_implementer
            .as_deref()
            .and_then(parse_hex)
            .is_some_and(|i| i == 0);
        let qemu_counter = self.counter_hz == Some(62_500_000);
        let mut evidence = Vec::new();
        if let Some(x) = &self.xen {
            evidence.push(format!("/sys/hypervisor/type {x}"));
        }
        if let Some(d) = dmi_vm {
            evidence.push(format!("DMI '{d}'"));
        }
        if qemu_board {
            evidence.push("device tree 'linux,dummy-virt': QEMU's virt board".into());
        }
        if emulated_cpu {
            evidence.push(format!(
                "CPU implementer 0x00 (reserved for software), part {}: an emulated CPU such as QEMU's max",
                self.arm_part.as_deref().unwrap_or("unknown")
            ));
        }
        if let Some(hz) = self
            .counter_hz
            .filter(|_| !evidence.is_empty() || qemu_counter)
        {
            evidence.push(format!(
                "generic timer at {} MHz{}",
                hz as f64 / 1e6,
                if qemu_counter { ", QEMU's default" } else { "" }
            ));
        }
        let what = if emulated_cpu {
            if qemu_board {
                format!("QEMU, {CPU_EMULATED} (TCG)")
            } else {
                format!("emulator, {CPU_EMULATED}")
            }
        } else if let Some(x) = &self.xen {
            x.clone()
        } else if let Some(d) = dmi_vm {
            d.clone()
        } else if qemu_board {
            "QEMU virt board (KVM or emulated)".to_string()
        } else if qemu_counter {
            "possibly QEMU".to_string()
        } else {
            return None;
        };
        Some(format!("{what} ({})", evidence.join("; ")))
    }
}

/// How [`Virtualization::describe`] says the CPU itself is emulated.
const CPU_EMULATED: &str = "CPU emulated";

/// Whether a machine's `hypervisor` description says its CPU is emulated
/// in software (then times describe the emulator, not any CPU).
pub fn cpu_emulated(hypervisor: &str) -> bool {
    hypervisor.contains(CPU_EMULATED)
}

fn parse_hex(s: &str) -> Option<u64> {
    u64::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok()
}

/// The hypervisor's vendor signature from CPUID leaf 0x40000000 ("KVMKVMKVM", "Microsoft Hv", …).
#[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
fn cpuid_hypervisor_vendor() -> Option<String> {
    #[cfg(target_arch = "x86")]
    use std::arch::x86::__cpuid;
    #[cfg(target_arch = "x86_64")]
    use std::arch::x86_64::__cpuid;
    // SAFETY: cpuid is available on every x86-64 CPU and every x86 one
    // the i686 target runs on; leaf 0x40000000 is reserved for
    // hypervisors and returns zeros on bare metal.
    let r = __cpuid(0x4000_0000);
    let bytes: Vec<u8> = [r.ebx, r.ecx, r.edx]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .filter(|&b| b != 0)
        .collect();
    let s = String::from_utf8_lossy(&bytes).trim().to_string();
    (!s.is_empty() && s.chars().all(|c| c.is_ascii_graphic() || c == ' ')).then_some(s)
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "x86")))]
fn cpuid_hypervisor_vendor() -> Option<String> {
    None
}

/// Every file of the kernel's vulnerabilities directory, name → its one line.
pub fn vulnerabilities(dir: &Path) -> std::collections::BTreeMap<String, String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Default::default();
    };
    entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let text = std::fs::read_to_string(e.path()).ok()?;
            Some((
                e.file_name().to_string_lossy().into_owned(),
                text.trim().to_string(),
            ))
        })
        .collect()
}

/// The value of `name=` on a kernel command line (the last one wins, as
/// in the kernel).
pub fn kernel_arg(cmdline: &str, name: &str) -> Option<String> {
    cmdline
        .split_whitespace()
        .take_while(|w| *w != "--")
        .filter_map(|w| w.split_once('='))
        .filter(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
        .last()
}

/// Parses sysfs sizes such as "48K", "1024K", "32768K", "2M".
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1024),
        'M' | 'm' => (&s[..s.len() - 1], 1 << 20),
        'G' | 'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.trim().parse::<u64>().ok()?.checked_mul(mult)
}

/// Cache levels from sysfs (`cpu0/cache/index*`).
pub fn caches(dir: &Path) -> Vec<CacheLevel> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<CacheLevel> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("index"))
        .filter_map(|e| {
            let p = e.path();
            let get = |f: &str| std::fs::read_to_string(p.join(f)).ok();
            Some(CacheLevel {
                level: get("level")?.trim().parse().ok()?,
                kind: get("type")?.trim().to_string(),
                size_bytes: parse_size(&get("size")?)?,
                line_bytes: get("coherency_line_size").and_then(|s| s.trim().parse().ok()),
                ways: get("ways_of_associativity").and_then(|s| s.trim().parse().ok()),
                shared_by_cpus: get("shared_cpu_list").map(|s| count_cpu_list(&s)),
            })
        })
        .collect();
    out.sort_by(|a, b| (a.level, &a.kind).cmp(&(b.level, &b.kind)));
    out
}

/// Counts the CPUs in a list such as "0-3,8,10-11".
pub fn count_cpu_list(s: &str) -> usize {
    s.trim()
        .split(',')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('-') {
            Some((a, b)) => {
                b.parse::<usize>().unwrap_or(0) + 1
                    - a.parse::<usize>().unwrap_or(0).min(b.parse().unwrap_or(0))
            }
            None => 1,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sysfs_sizes_and_lists() {
        assert_eq!(parse_size("48K\n"), Some(48 * 1024));
        assert_eq!(parse_size("2M"), Some(2 << 20));
        assert_eq!(parse_size("64"), Some(64));
        assert_eq!(parse_size("x"), None);
        // 2^34 GiB is 2^64 bytes: refused, not wrapped round to 0.
        assert_eq!(parse_size("17179869184G"), None);
        assert_eq!(parse_size("17179869183G"), Some(17_179_869_183 << 30));
        assert_eq!(count_cpu_list("0-3,8,10-11\n"), 7);
        assert_eq!(count_cpu_list("0"), 1);
    }

    fn qemu_tcg_arm64() -> Virtualization {
        Virtualization {
            dt_compatible: vec!["linux,dummy-virt".into()],
            arm_implementer: Some("0x00".into()),
            arm_part: Some("0x051".into()),
            counter_hz: Some(1_000_000_000),
            ..Virtualization::default()
        }
    }

    /// The signals of the machines CI and users meet, as they show them.
    #[test]
    fn names_hypervisors_and_emulators_from_their_signals() {
        let tcg = qemu_tcg_arm64().describe().unwrap();
        assert!(tcg.starts_with("QEMU, CPU emulated (TCG) ("), "{tcg}");
        assert!(cpu_emulated(&tcg));
        assert!(tcg.contains("linux,dummy-virt") && tcg.contains("implementer 0x00"));
        assert!(
            tcg.contains("part 0x051") && tcg.contains("1000 MHz"),
            "{tcg}"
        );
        // QEMU with KVM on an arm64 host: the host's CPU, QEMU's board.
        let kvm = Virtualization {
            arm_implementer: Some("0x41".into()),
            arm_part: Some("0xd0c".into()),
            counter_hz: Some(25_000_000),
            ..qemu_tcg_arm64()
        };
        let kvm = kvm.describe().unwrap();
        assert!(
            kvm.starts_with("QEMU virt board (KVM or emulated)"),
            "{kvm}"
        );
        // A cloud arm64 VM says it in DMI.
        let ec2 = Virtualization {
            dmi: vec!["Amazon EC2".into(), "c7g.large".into()],
            arm_implementer: Some("0x41".into()),
            counter_hz: Some(1_050_000_000),
            ..Virtualization::default()
        };
        assert!(ec2
            .describe()
            .unwrap()
            .starts_with("Amazon EC2 (DMI 'Amazon EC2'"));
        // Bare-metal boards and servers say nothing of the kind.
        let pi = Virtualization {
            dt_compatible: vec!["raspberrypi,4-model-b".into(), "brcm,bcm2711".into()],
            arm_implementer: Some("0x41".into()),
            arm_part: Some("0xd08".into()),
            counter_hz: Some(54_000_000),
            ..Virtualization::default()
        };
        assert_eq!(pi.describe(), None);
        let server = Virtualization {
            dmi: vec!["Ampere(TM)".into(), "Mt.Jade".into()],
            counter_hz: Some(25_000_000),
            ..Virtualization::default()
        };
        assert_eq!(server.describe(), None);
        // QEMU before 9.0 shows itself by its timer alone, but only "possibly".
        let old = Virtualization {
            counter_hz: Some(62_500_000),
            ..Virtualization::default()
        };
        assert!(old.describe().unwrap().starts_with("possibly QEMU ("));
        // x86: the CPU's own word, as before.
        let x86 = Virtualization {
            cpu_flag: true,
            cpuid_vendor: Some("KVMKVMKVM".into()),
            dmi: vec!["QEMU".into()],
            ..Virtualization::default()
        };
        assert_eq!(x86.describe().as_deref(), Some("KVMKVMKVM"));
        // A hypervisor hiding the CPU flag is still seen in DMI.
        let hidden = Virtualization {
            dmi: vec!["QEMU".into(), "Standard PC (Q35 + ICH9, 2009)".into()],
            ..Virtualization::default()
        };
        assert!(hidden.describe().unwrap().starts_with("QEMU (DMI 'QEMU')"));
    }

    #[test]
    fn reads_mitigations() {
        let c = "mitigations=auto,nosmt quiet mitigations=off x=1 -- mitigations=init";
        assert_eq!(kernel_arg(c, "mitigations").as_deref(), Some("off"));
        assert_eq!(kernel_arg("quiet", "mitigations"), None);
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("spectre_v2"),
            "Mitigation: Retpolines; RSB filling\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("meltdown"), "Not affected\n").unwrap();
        let v = vulnerabilities(dir.path());
        assert_eq!(v.len(), 2);
        assert_eq!(v["spectre_v2"], "Mitigation: Retpolines; RSB filling");
        assert!(vulnerabilities(&dir.path().join("none")).is_empty());
    }

    #[test]
    fn describes_this_machine() {
        let m = Machine::describe();
        assert!(m.online_cpus >= 1);
        assert!(m.memory_bytes > 0);
        assert!(m.page_size >= 4096);
        assert!(!m.kernel.is_empty());
        assert!(m.llc_bytes() > 0);
    }
}
