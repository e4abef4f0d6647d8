//! The machine description in words, as the 9front study's section 2 lays
//! it out: processor, caches, memory, disks, network, operating system.
//! One list of (heading, lines) that `yamba machine` prints as text and
//! the report shows as a table, so both say the same.

use yamba_results::units::format_sig;
use yamba_results::{CacheLevel, Disk, Machine, Nic};

/// One entry of the description: a heading and one or more lines.
#[derive(Debug, Clone, PartialEq)]
pub struct Fact {
    pub heading: &'static str,
    pub lines: Vec<String>,
}

/// A size in the binary unit that suits it: "48 KiB", "2 MiB", "23.5 GiB".
pub use yamba_results::units::format_size as size;

fn cache_name(c: &CacheLevel) -> String {
    match c.kind.as_str() {
        "Data" => format!("L{}d", c.level),
        "Instruction" => format!("L{}i", c.level),
        _ => format!("L{}", c.level),
    }
}

/// One cache as the study writes it: "L1d 48 KiB, 64 B lines, 12-way, per CPU".
pub fn cache_line(c: &CacheLevel) -> String {
    let mut s = format!("{} {}", cache_name(c), size(c.size_bytes));
    if let Some(l) = c.line_bytes {
        s += &format!(", {l} B lines");
    }
    if let Some(w) = c.ways {
        s += &format!(", {w}-way");
        if let Some(l) = c.line_bytes.filter(|l| *l > 0 && w > 0) {
            s += &format!(" ({} sets)", c.size_bytes / (l * w));
        }
    }
    match c.shared_by_cpus {
        Some(1) => s += ", per CPU",
        Some(n) => s += &format!(", shared by {n} CPUs"),
        None => {}
    }
    s
}

/// The description, heading by heading; a heading with nothing to say is
/// left out.
pub fn facts(m: &Machine) -> Vec<Fact> {
    [
        ("Processor", processor_lines(m)),
        ("Core clock", clock_lines(m)),
        ("Caches", m.caches.iter().map(cache_line).collect()),
        ("Memory", memory_lines(m)),
        ("Disks", m.disks.iter().map(disk_line).collect()),
        ("Network", m.nics.iter().map(nic_line).collect()),
        ("Operating system", os_lines(m)),
        ("Mitigations", mitigation_lines(m)),
        (
            "Hypervisor",
            vec![m
                .hypervisor_name()
                .unwrap_or_else(|| "none detected".into())],
        ),
        ("Environment", vec![environment_line(m)]),
    ]
    .into_iter()
    .filter_map(|(heading, lines)| {
        let lines: Vec<String> = lines.into_iter().filter(|l| !l.is_empty()).collect();
        (!lines.is_empty()).then_some(Fact { heading, lines })
    })
    .collect()
}

/// Model, vendor and architecture; family, model, stepping and
/// microcode; the topology.
fn processor_lines(m: &Machine) -> Vec<String> {
    let mut cpu = vec![format!("{} ({}, {})", m.cpu_model, m.cpu_vendor, m.arch)];
    let ids: Vec<String> = [
        ("family", m.cpu_family),
        ("model", m.cpu_model_id),
        ("stepping", m.cpu_stepping),
    ]
    .iter()
    .filter_map(|(k, v)| v.map(|v| format!("{k} {v}")))
    .chain(m.microcode.iter().map(|u| format!("microcode {u}")))
    .collect();
    if !ids.is_empty() {
        cpu.push(ids.join(", "));
    }
    let mut topo = format!("{} CPUs online", m.online_cpus);
    if let Some(c) = m.cores {
        let threads = m.online_cpus / c.max(1);
        topo += &format!(": {c} cores × {threads} thread{}", plural(threads));
    }
    if let Some(s) = m.sockets {
        topo += &format!(", {s} socket{}", plural(s));
    }
    if let Some(n) = m.numa_nodes {
        topo += &format!(", {n} NUMA node{}", plural(n));
    }
    cpu.push(topo);
    cpu
}

/// The measured core clock, then the nominal one with governor and boost.
fn clock_lines(m: &Machine) -> Vec<String> {
    let measured = match m.core_mhz {
        Some(mhz) => format!(
            "{} MHz measured ({:.3} ns per cycle)",
            format_sig(mhz),
            1e3 / mhz
        ),
        None => "not measured".into(),
    };
    let mut nominal = Vec::new();
    if let Some(mhz) = m.cpu_mhz {
        nominal.push(format!("nominal {} MHz", format_sig(mhz)));
    }
    if let Some(g) = &m.governor {
        nominal.push(format!("governor {g}"));
    }
    if let Some(b) = m.boost {
        nominal.push(format!("boost {}", if b { "on" } else { "off" }));
    }
    vec![measured, nominal.join(", ")]
}

/// Usable memory, then a line per module (kind, speed, peak bandwidth,
/// maker), or why the modules are not known.
fn memory_lines(m: &Machine) -> Vec<String> {
    let mut mem = vec![format!("{} usable", size(m.memory_bytes))];
    if m.memory_modules.is_empty() {
        if let Some(n) = &m.memory_note {
            mem.push(n.clone());
        }
    }
    for d in &m.memory_modules {
        let mut s = format!("{}: {} {}", d.locator, size(d.size_bytes), d.kind);
        match (d.speed_mts, d.configured_mts) {
            (Some(r), Some(c)) if r != c => s += &format!("-{r}, running at {c} MT/s"),
            (Some(r), _) | (None, Some(r)) => s += &format!("-{r}"),
            _ => {}
        }
        if let Some(mts) = d.mts() {
            let width = d.data_width_bits.unwrap_or(64) as f64 / 8.0;
            s += &format!(
                " ({} GB/s peak)",
                format_sig(mts as f64 * 1e6 * width / 1e9)
            );
        }
        let who: Vec<&str> = [&d.manufacturer, &d.part]
            .iter()
            .filter_map(|x| x.as_deref())
            .collect();
        if !who.is_empty() {
            s += &format!(", {}", who.join(" "));
        }
        mem.push(s);
    }
    mem
}

fn disk_line(d: &Disk) -> String {
    let mut parts = vec![d.name.clone()];
    if let Some(model) = &d.model {
        parts.push(model.clone());
    }
    parts.push(size(d.size_bytes));
    if let Some(drv) = &d.driver {
        parts.push(format!("driver {drv}"));
    }
    match (d.rotational, d.is_virtual()) {
        (Some(r), true) => parts.push(format!(
            "{} (as the virtual disk claims)",
            if r { "rotational" } else { "solid state" }
        )),
        (Some(true), false) => parts.push("rotational".into()),
        (Some(false), false) => parts.push("solid state".into()),
        (None, _) => {}
    }
    if let Some(s) = &d.scheduler {
        parts.push(format!("scheduler {s}"));
    }
    parts.join(", ")
}

fn nic_line(n: &Nic) -> String {
    let mut parts = vec![n.name.clone()];
    if let Some(d) = &n.driver {
        parts.push(format!("driver {d}"));
    }
    parts.push(match n.speed_mbps {
        Some(s) if s >= 1000 && s % 1000 == 0 => format!("{} Gb/s", s / 1000),
        Some(s) => format!("{s} Mb/s"),
        None => "speed not reported".into(),
    });
    if let Some(mtu) = n.mtu {
        parts.push(format!("MTU {mtu}"));
    }
    if let Some(st) = &n.state {
        parts.push(st.clone());
    }
    parts.join(", ")
}

fn os_lines(m: &Machine) -> Vec<String> {
    let mut os = vec![match &m.os_release {
        Some(r) => format!("{r}; {} {}", m.os, m.kernel),
        None => format!("{} {}", m.os, m.kernel),
    }];
    if let Some(b) = &m.kernel_build {
        os.push(b.clone());
    }
    os
}

/// Page size, huge pages, clocksource, perf's paranoia and who ran it, on
/// one line.
fn environment_line(m: &Machine) -> String {
    let mut env = vec![format!("page size {}", size(m.page_size))];
    if let Some(t) = &m.transparent_hugepages {
        env.push(format!("transparent huge pages: {t}"));
    }
    if let Some(c) = &m.clocksource {
        env.push(format!("clocksource {c}"));
    }
    if let Some(p) = m.perf_event_paranoid {
        env.push(format!("perf_event_paranoid {p}"));
    }
    env.push(
        if m.is_root {
            "run as root"
        } else {
            "run as a user"
        }
        .into(),
    );
    env.join("; ")
}

/// The vulnerabilities the kernel mitigates or leaves open, one a line;
/// those the CPU is not affected by, counted; and `mitigations=` when the
/// kernel command line sets it.
fn mitigation_lines(m: &Machine) -> Vec<String> {
    let mut lines: Vec<String> = m
        .vulnerabilities
        .iter()
        .filter(|(_, state)| state.as_str() != "Not affected")
        .map(|(name, state)| format!("{name}: {state}"))
        .collect();
    let unaffected = m
        .vulnerabilities
        .values()
        .filter(|s| s.as_str() == "Not affected")
        .count();
    if unaffected > 0 {
        lines.push(format!(
            "not affected by {unaffected} other{}",
            plural(unaffected)
        ));
    }
    lines
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The description as text: headings in a column, continuation lines indented.
pub fn text(m: &Machine) -> String {
    let facts = facts(m);
    let w = facts.iter().map(|f| f.heading.len()).max().unwrap_or(0) + 2;
    let mut s = format!("{} ({})\n", m.hostname, m.arch);
    for f in &facts {
        for (i, l) in f.lines.iter().enumerate() {
            let h = if i == 0 { f.heading } else { "" };
            s += &format!("{h:<w$}{l}\n");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use yamba_results::{Disk, MemoryModule, Nic};

    fn machine() -> Machine {
        Machine {
            hostname: "t420".into(),
            os: "Linux".into(),
            kernel: "6.1.0".into(),
            arch: "x86_64".into(),
            cpu_vendor: "GenuineIntel".into(),
            cpu_model: "Intel(R) Core(TM) i5-2520M CPU @ 2.50GHz".into(),
            online_cpus: 4,
            memory_bytes: 8 << 30,
            cpu_family: Some(6),
            cpu_model_id: Some(42),
            cpu_stepping: Some(7),
            cores: Some(2),
            sockets: Some(1),
            core_mhz: Some(2500.0),
            caches: vec![CacheLevel {
                level: 3,
                kind: "Unified".into(),
                size_bytes: 3 << 20,
                line_bytes: Some(64),
                ways: Some(12),
                shared_by_cpus: Some(4),
            }],
            memory_modules: vec![MemoryModule {
                locator: "ChannelA-DIMM0".into(),
                size_bytes: 4 << 30,
                kind: "DDR3".into(),
                speed_mts: Some(1333),
                ..Default::default()
            }],
            disks: vec![Disk {
                name: "sda".into(),
                model: Some("Samsung SSD 860 EVO 500GB".into()),
                size_bytes: 500_107_862_016,
                rotational: Some(false),
                scheduler: Some("mq-deadline".into()),
                driver: Some("sd".into()),
            }],
            nics: vec![Nic {
                name: "eth0".into(),
                driver: Some("e1000e".into()),
                speed_mbps: Some(1000),
                ..Default::default()
            }],
            page_size: 4096,
            vulnerabilities: [
                ("meltdown", "Not affected"),
                ("mds", "Not affected"),
                ("spectre_v2", "Mitigation: Retpolines"),
            ]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn describes_like_the_study() {
        let t = text(&machine());
        for want in [
            "family 6, model 42, stepping 7",
            "4 CPUs online: 2 cores × 2 threads, 1 socket",
            "2500 MHz measured (0.400 ns per cycle)",
            "L3 3 MiB, 64 B lines, 12-way (4096 sets), shared by 4 CPUs",
            "ChannelA-DIMM0: 4 GiB DDR3-1333 (10.66 GB/s peak)",
            "sda, Samsung SSD 860 EVO 500GB, 465.8 GiB, driver sd, solid state, scheduler mq-deadline",
            "eth0, driver e1000e, 1 Gb/s",
            "Hypervisor        none detected",
            "Mitigations       spectre_v2: Mitigation: Retpolines",
            "                  not affected by 2 others",
        ] {
            assert!(t.contains(want), "missing {want:?} in\n{t}");
        }
    }
}
