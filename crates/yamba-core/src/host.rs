//! The rest of the machine description the 9front study lists (its section
//! 2): CPU family/model/stepping, cores and sockets, the measured core
//! clock, memory modules with type and speed, disks, network interfaces,
//! and the distribution — read from Linux's /proc and /sys, and from the
//! firmware's SMBIOS tables where readable (root). Anything absent stays
//! empty; where memory type and speed cannot be read, `memory_note` says why.

use crate::machine::Machine;
use std::path::Path;
use yamba_results::machine::{Disk, MemoryModule, Nic};

/// Fills `m`'s section-2 fields from this host.
pub fn fill(m: &mut Machine) {
    let cpuinfo = read("/proc/cpuinfo").unwrap_or_default();
    let (family, model, stepping) = cpu_ids(&cpuinfo);
    m.cpu_family = family;
    m.cpu_model_id = model;
    m.cpu_stepping = stepping;
    m.microcode = cpuinfo_field(&cpuinfo, "microcode");
    let topo = topology(Path::new("/sys/devices/system/cpu"));
    m.cores = topo.map(|t| t.0);
    m.sockets = topo.map(|t| t.1);
    m.numa_nodes = count_dirs(Path::new("/sys/devices/system/node"), "node");
    m.core_mhz = crate::coreclock::probe_mhz().map(|mhz| (mhz * 10.0).round() / 10.0);
    m.os_release = read("/etc/os-release").and_then(|t| os_release(&t));
    m.kernel_build = uname_version();
    match memory_modules(Path::new("/sys/firmware/dmi/entries")) {
        Ok(mods) => m.memory_modules = mods,
        Err(why) => m.memory_note = Some(why),
    }
    m.disks = disks(Path::new("/sys/block"));
    m.nics = nics(Path::new("/sys/class/net"));
}

fn read(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

fn read_trim(path: impl AsRef<Path>) -> Option<String> {
    read(path)
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

fn cpuinfo_field(cpuinfo: &str, name: &str) -> Option<String> {
    cpuinfo
        .lines()
        .find(|l| l.split(':').next().map(str::trim) == Some(name))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

fn parse_num(s: &str) -> Option<u32> {
    let s = s.trim();
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

/// Family, model and stepping: x86's `cpu family`/`model`/`stepping`, or
/// Arm's `CPU architecture`/`CPU part`/`CPU revision`.
pub fn cpu_ids(cpuinfo: &str) -> (Option<u32>, Option<u32>, Option<u32>) {
    let get = |k: &str| cpuinfo_field(cpuinfo, k).and_then(|v| parse_num(&v));
    match get("cpu family") {
        Some(f) => (Some(f), get("model"), get("stepping")),
        None => (
            get("CPU architecture"),
            get("CPU part"),
            get("CPU revision"),
        ),
    }
}

/// Physical cores and sockets among the online CPUs, from sysfs topology.
pub fn topology(cpu_dir: &Path) -> Option<(usize, usize)> {
    let online = read(cpu_dir.join("online"))?;
    let mut cores = std::collections::BTreeSet::new();
    let mut packages = std::collections::BTreeSet::new();
    for cpu in cpu_list(&online) {
        let t = cpu_dir.join(format!("cpu{cpu}/topology"));
        let pkg = read_trim(t.join("physical_package_id")).unwrap_or_default();
        let core = read_trim(t.join("core_id"))?;
        cores.insert((pkg.clone(), core));
        packages.insert(pkg);
    }
    (!cores.is_empty()).then_some((cores.len(), packages.len()))
}

/// The CPUs in a list such as "0-3,8".
fn cpu_list(s: &str) -> Vec<usize> {
    s.trim()
        .split(',')
        .filter(|p| !p.is_empty())
        .flat_map(|p| {
            let (a, b) = p.split_once('-').unwrap_or((p, p));
            let (a, b) = (a.parse().unwrap_or(1), b.parse().unwrap_or(0));
            a..=b
        })
        .collect()
}

fn count_dirs(dir: &Path, prefix: &str) -> Option<usize> {
    let n = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_prefix(prefix)
                .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
        })
        .count();
    (n > 0).then_some(n)
}

/// `PRETTY_NAME` (else `NAME VERSION`) from os-release text.
pub fn os_release(text: &str) -> Option<String> {
    let get = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{key}=")))
            .map(|v| v.trim().trim_matches('"').to_string())
            .filter(|v| !v.is_empty())
    };
    get("PRETTY_NAME").or_else(|| {
        let name = get("NAME")?;
        Some(match get("VERSION") {
            Some(v) => format!("{name} {v}"),
            None => name,
        })
    })
}

fn uname_version() -> Option<String> {
    // SAFETY: u is a valid utsname for uname to fill; fields are NUL-terminated.
    unsafe {
        let mut u: libc::utsname = std::mem::zeroed();
        if libc::uname(&mut u) != 0 {
            return None;
        }
        let v = std::ffi::CStr::from_ptr(u.version.as_ptr()).to_string_lossy();
        Some(v.trim().to_string()).filter(|v| !v.is_empty())
    }
}

/// Memory modules from SMBIOS type-17 entries (`17-*/raw`), or why they
/// cannot be read.
pub fn memory_modules(entries: &Path) -> Result<Vec<MemoryModule>, String> {
    let dir = match std::fs::read_dir(entries) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!(
                "memory type and speed unknown: {} absent (no SMBIOS tables: usual in a virtual machine)",
                entries.display()
            ))
        }
        Err(e) => {
            return Err(format!(
                "memory type and speed unknown: cannot read {}: {e}",
                entries.display()
            ))
        }
    };
    let mut paths: Vec<_> = dir
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("17-"))
        .map(|e| e.path().join("raw"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err("memory type and speed unknown: SMBIOS lists no memory devices".into());
    }
    let mut mods = Vec::new();
    for p in &paths {
        match std::fs::read(p) {
            Ok(raw) => mods.extend(smbios_memory_device(&raw)),
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                return Err(format!(
                    "memory type and speed unknown: reading {} needs root",
                    p.display()
                ))
            }
            Err(e) => return Err(format!("cannot read {}: {e}", p.display())),
        }
    }
    if mods.is_empty() {
        return Err("memory type and speed unknown: SMBIOS lists no installed module".into());
    }
    Ok(mods)
}

/// One SMBIOS "Memory Device" (type 17) structure: its formatted area
/// followed by its strings. `None` for an empty slot or another type.
/// Offsets per DMTF DSP0134 §7.18.
pub fn smbios_memory_device(raw: &[u8]) -> Option<MemoryModule> {
    if raw.len() < 0x15 || raw[0] != 17 {
        return None;
    }
    let len = raw[1] as usize;
    let formatted = raw.get(..len)?;
    let u16_at = |o: usize| {
        formatted
            .get(o..o + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
    };
    let u32_at = |o: usize| {
        formatted
            .get(o..o + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let strings: Vec<String> = raw[len..]
        .split(|b| *b == 0)
        .take_while(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).trim().to_string())
        .collect();
    let string = |o: usize| {
        let i = *formatted.get(o)? as usize;
        strings
            .get(i.checked_sub(1)?)
            .cloned()
            .filter(|s| !s.is_empty() && !s.eq_ignore_ascii_case("unknown"))
    };
    let size_bytes = match u16_at(0x0C)? {
        0 | 0xFFFF => return None,
        0x7FFF => (u32_at(0x1C)? as u64 & 0x7FFF_FFFF) << 20,
        s if s & 0x8000 != 0 => ((s & 0x7FFF) as u64) << 10,
        s => (s as u64) << 20,
    };
    let speed = |short: usize, ext: usize| match u16_at(short) {
        Some(0) | None => None,
        Some(0xFFFF) => u32_at(ext).filter(|s| *s > 0),
        Some(s) => Some(s as u32),
    };
    Some(MemoryModule {
        locator: string(0x10).unwrap_or_else(|| "?".into()),
        size_bytes,
        kind: memory_type(*formatted.get(0x12).unwrap_or(&2)).to_string(),
        speed_mts: speed(0x15, 0x54),
        configured_mts: speed(0x20, 0x58),
        data_width_bits: u16_at(0x0A)
            .filter(|w| *w != 0 && *w != 0xFFFF)
            .map(u32::from),
        manufacturer: string(0x17),
        part: string(0x1A),
    })
}

/// SMBIOS memory type names (DSP0134 table 76).
fn memory_type(code: u8) -> &'static str {
    match code {
        0x03 => "DRAM",
        0x07 => "RAM",
        0x0F => "SDRAM",
        0x12 => "DDR",
        0x13 => "DDR2",
        0x18 => "DDR3",
        0x1A => "DDR4",
        0x1B => "LPDDR",
        0x1C => "LPDDR2",
        0x1D => "LPDDR3",
        0x1E => "LPDDR4",
        0x20 => "HBM",
        0x21 => "HBM2",
        0x22 => "DDR5",
        0x23 => "LPDDR5",
        0x24 => "HBM3",
        _ => "unknown",
    }
}

/// Block devices under `/sys/block` that are not the kernel's own virtual
/// devices (loop, ram, zram, device-mapper, md).
pub fn disks(block: &Path) -> Vec<Disk> {
    let Ok(dir) = std::fs::read_dir(block) else {
        return Vec::new();
    };
    let mut out: Vec<Disk> = dir
        .filter_map(|e| e.ok())
        .filter(|e| {
            let real = std::fs::canonicalize(e.path()).unwrap_or_default();
            !real.to_string_lossy().contains("/devices/virtual/")
        })
        .filter_map(|e| {
            let p = e.path();
            let sectors: u64 = read_trim(p.join("size"))?.parse().ok()?;
            (sectors > 0).then(|| Disk {
                name: e.file_name().to_string_lossy().into_owned(),
                model: read_trim(p.join("device/model")),
                size_bytes: sectors * 512,
                rotational: read_trim(p.join("queue/rotational")).map(|r| r == "1"),
                scheduler: read(p.join("queue/scheduler")).and_then(|s| scheduler(&s)),
                driver: link_name(&p.join("device/driver")),
            })
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// The bracketed entry of a scheduler list: "none [mq-deadline] kyber" → "mq-deadline".
pub fn scheduler(list: &str) -> Option<String> {
    let s = list.trim();
    match (s.find('['), s.find(']')) {
        (Some(a), Some(b)) if b > a => Some(s[a + 1..b].to_string()),
        _ => Some(s.to_string()).filter(|s| !s.is_empty() && !s.contains(' ')),
    }
}

fn link_name(p: &Path) -> Option<String> {
    std::fs::read_link(p)
        .ok()?
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
}

/// Interfaces under `/sys/class/net` backed by a device.
pub fn nics(net: &Path) -> Vec<Nic> {
    let Ok(dir) = std::fs::read_dir(net) else {
        return Vec::new();
    };
    let mut out: Vec<Nic> = dir
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("device").exists())
        .map(|e| {
            let p = e.path();
            Nic {
                name: e.file_name().to_string_lossy().into_owned(),
                driver: link_name(&p.join("device/driver")),
                // -1 or an error when the link is down or the driver does not say.
                speed_mbps: read_trim(p.join("speed"))
                    .and_then(|s| s.parse::<i64>().ok())
                    .filter(|s| *s > 0)
                    .map(|s| s as u64),
                mtu: read_trim(p.join("mtu")).and_then(|s| s.parse().ok()),
                state: read_trim(p.join("operstate")),
            }
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A type-17 structure as a DDR4-3200 16 GiB DIMM running at 2933 MT/s
    /// writes it (SMBIOS 3.2 layout, 0x54 bytes), strings after.
    pub fn ddr4_dimm() -> Vec<u8> {
        let mut f = vec![0u8; 0x54];
        f[0] = 17;
        f[1] = 0x54;
        f[0x08..0x0A].copy_from_slice(&72u16.to_le_bytes()); // total width (ECC)
        f[0x0A..0x0C].copy_from_slice(&64u16.to_le_bytes()); // data width
        f[0x0C..0x0E].copy_from_slice(&16384u16.to_le_bytes()); // 16384 MB
        f[0x10] = 1; // locator: string 1
        f[0x11] = 2; // bank locator
        f[0x12] = 0x1A; // DDR4
        f[0x15..0x17].copy_from_slice(&3200u16.to_le_bytes());
        f[0x17] = 3; // manufacturer
        f[0x1A] = 4; // part
        f[0x20..0x22].copy_from_slice(&2933u16.to_le_bytes());
        f.extend_from_slice(b"DIMM_A1\0BANK 0\0Samsung\0M393A2K43DB3-CWE   \0\0");
        f
    }

    #[test]
    fn reads_an_smbios_memory_device() {
        let m = smbios_memory_device(&ddr4_dimm()).unwrap();
        assert_eq!(m.locator, "DIMM_A1");
        assert_eq!(m.size_bytes, 16 << 30);
        assert_eq!(m.kind, "DDR4");
        assert_eq!(m.speed_mts, Some(3200));
        assert_eq!(m.configured_mts, Some(2933));
        assert_eq!(m.data_width_bits, Some(64));
        assert_eq!(m.manufacturer.as_deref(), Some("Samsung"));
        assert_eq!(m.part.as_deref(), Some("M393A2K43DB3-CWE"));
    }

    #[test]
    fn smbios_sizes_empty_slots_and_extended_fields() {
        let mut empty = ddr4_dimm();
        empty[0x0C..0x0E].copy_from_slice(&0u16.to_le_bytes());
        assert_eq!(smbios_memory_device(&empty), None);
        let mut kib = ddr4_dimm();
        kib[0x0C..0x0E].copy_from_slice(&(0x8000u16 | 512).to_le_bytes());
        assert_eq!(smbios_memory_device(&kib).unwrap().size_bytes, 512 << 10);
        let mut ext = ddr4_dimm();
        ext[0x0C..0x0E].copy_from_slice(&0x7FFFu16.to_le_bytes());
        ext[0x1C..0x20].copy_from_slice(&65536u32.to_le_bytes());
        assert_eq!(smbios_memory_device(&ext).unwrap().size_bytes, 64 << 30);
        // An old SMBIOS 2.3 structure (0x1B bytes) has no configured speed.
        let mut old = ddr4_dimm()[..0x1B].to_vec();
        old[1] = 0x1B;
        old.extend_from_slice(b"DIMM0\0\0");
        let m = smbios_memory_device(&old).unwrap();
        assert_eq!((m.speed_mts, m.configured_mts), (Some(3200), None));
        assert_eq!(m.locator, "DIMM0");
        let mut other = ddr4_dimm();
        other[0] = 16;
        assert_eq!(smbios_memory_device(&other), None);
    }

    #[test]
    fn reads_sysfs_shapes() {
        assert_eq!(
            scheduler("none [mq-deadline] kyber bfq\n").as_deref(),
            Some("mq-deadline")
        );
        assert_eq!(scheduler("none\n").as_deref(), Some("none"));
        assert_eq!(cpu_list("0-3,8"), vec![0, 1, 2, 3, 8]);
        assert_eq!(
            os_release(
                "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n"
            )
            .as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
        assert_eq!(
            os_release("NAME=Alpine\nVERSION=3.19\n").as_deref(),
            Some("Alpine 3.19")
        );
        let x86 = "processor\t: 0\ncpu family\t: 25\nmodel\t\t: 17\nmodel name\t: AMD EPYC\nstepping\t: 1\n";
        assert_eq!(cpu_ids(x86), (Some(25), Some(17), Some(1)));
        let arm = "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0xd0c\nCPU revision\t: 1\n";
        assert_eq!(cpu_ids(arm), (Some(8), Some(0xd0c), Some(1)));
    }

    #[test]
    fn memory_modules_say_why_when_absent() {
        let dir = tempfile::tempdir().unwrap();
        let why = memory_modules(&dir.path().join("none")).unwrap_err();
        assert!(why.contains("absent"), "{why}");
        std::fs::create_dir_all(dir.path().join("17-0")).unwrap();
        std::fs::write(dir.path().join("17-0/raw"), ddr4_dimm()).unwrap();
        std::fs::create_dir_all(dir.path().join("17-1")).unwrap();
        let mut empty = ddr4_dimm();
        empty[0x0C..0x0E].copy_from_slice(&0u16.to_le_bytes());
        std::fs::write(dir.path().join("17-1/raw"), empty).unwrap();
        let mods = memory_modules(dir.path()).unwrap();
        assert_eq!(mods.len(), 1);
        assert_eq!(mods[0].kind, "DDR4");
    }
}
