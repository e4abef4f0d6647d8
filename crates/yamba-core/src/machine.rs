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
            hypervisor: hypervisor(&flags),
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

fn hypervisor(flags: &str) -> Option<String> {
    let flagged = flags.split_whitespace().any(|f| f == "hypervisor");
    let vendor = cpuid_hypervisor_vendor()
        .or_else(|| read("/sys/hypervisor/type"))
        .or_else(|| read("/sys/class/dmi/id/sys_vendor"))
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty());
    match (flagged, vendor) {
        (true, Some(v)) => Some(v),
        (true, None) => Some("unknown (CPU flag 'hypervisor' set)".into()),
        (false, _) => None,
    }
}

/// The hypervisor's vendor signature from CPUID leaf 0x40000000 ("KVMKVMKVM", "Microsoft Hv", …).
#[cfg(target_arch = "x86_64")]
fn cpuid_hypervisor_vendor() -> Option<String> {
    // SAFETY: cpuid is available on every x86-64 CPU; leaf 0x40000000 is
    // reserved for hypervisors and returns zeros on bare metal.
    let r = std::arch::x86_64::__cpuid(0x4000_0000);
    let bytes: Vec<u8> = [r.ebx, r.ecx, r.edx]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .filter(|&b| b != 0)
        .collect();
    let s = String::from_utf8_lossy(&bytes).trim().to_string();
    (!s.is_empty() && s.chars().all(|c| c.is_ascii_graphic() || c == ' ')).then_some(s)
}

#[cfg(not(target_arch = "x86_64"))]
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
    num.trim().parse::<u64>().ok().map(|n| n * mult)
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
        assert_eq!(count_cpu_list("0-3,8,10-11\n"), 7);
        assert_eq!(count_cpu_list("0"), 1);
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
