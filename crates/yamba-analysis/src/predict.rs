//! Predictions in the 9front study's manner (seed 002, section 3): for a
//! result, a *hardware guess* from the machine's facts (cycles at the
//! measured core clock, cache and memory latencies, memory channels ×
//! speed, the disk's kind), times a *software multiplier* for what the
//! operating system and the benchmark add, gives a *prediction* to set
//! against the measured value. A result far from its prediction is
//! flagged: either the model or the machine is not what we think, and
//! both are worth knowing.
//!
//! Every model lives in [`MODELS`], keyed by result id, with its reasons;
//! docs/predictions.md lists them. Guesses are ranges, not points, because
//! the facts that pin them down (the exact microarchitecture, how many
//! memory channels the modules populate) are rarely all known. Models
//! describe the best case, so only hot results are predicted.

use std::collections::BTreeMap;
use yamba_results::units::format_sig;
use yamba_results::{BenchResult, Disk, Machine, Mode, ResultsFile, Status, Unit};

/// A range of values, `lo ≤ hi`, in a result's unit (or a pure factor).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Range {
    pub lo: f64,
    pub hi: f64,
}

impl Range {
    pub fn new(a: f64, b: f64) -> Range {
        Range {
            lo: a.min(b),
            hi: a.max(b),
        }
    }

    pub fn point(v: f64) -> Range {
        Range { lo: v, hi: v }
    }

    pub fn times(self, k: Range) -> Range {
        Range::new(self.lo * k.lo, self.hi * k.hi)
    }

    /// The geometric middle: what a ratio is taken against.
    pub fn middle(self) -> f64 {
        (self.lo * self.hi).sqrt()
    }

    pub fn min(self, other: Range) -> Range {
        Range::new(self.lo.min(other.lo), self.hi.min(other.hi))
    }
}

/// One factor of a prediction and where it came from, in words.
#[derive(Debug, Clone, PartialEq)]
pub struct Term {
    pub range: Range,
    pub how: String,
}

/// What a model knows of the machine and the run.
#[derive(Debug, Clone)]
pub struct Facts<'a> {
    pub machine: &'a Machine,
    /// The core clock in MHz and where it came from.
    pub core_mhz: Option<(f64, String)>,
    /// Headline values of the run's clean hot results, by id: models may
    /// build on a measured fact (the memory latency) and say so.
    pub measured: BTreeMap<String, f64>,
}

impl<'a> Facts<'a> {
    /// Facts of a machine alone, as `yamba machine` describes it.
    pub fn of_machine(machine: &'a Machine) -> Facts<'a> {
        let core_mhz = machine
            .core_mhz
            .map(|m| (m, "measured core clock".to_string()))
            .or_else(|| {
                machine
                    .cpu_mhz
                    .map(|m| (m, "nominal clock (core clock not measured)".to_string()))
            });
        Facts {
            machine,
            core_mhz,
            measured: BTreeMap::new(),
        }
    }

    /// Facts of a run: its machine, the core clock its benchmarks measured
    /// (the median of their `method.core_mhz`), and its clean results.
    pub fn of_run(file: &'a ResultsFile) -> Facts<'a> {
        let mut f = Facts::of_machine(&file.machine);
        let mut clocks: Vec<f64> = file
            .results
            .iter()
            .filter_map(|r| r.method.as_ref()?.core_mhz)
            .filter(|m| m.is_finite() && *m > 0.0)
            .collect();
        if !clocks.is_empty() {
            clocks.sort_by(f64::total_cmp);
            let mid = clocks[clocks.len() / 2];
            f.core_mhz = Some((
                mid,
                format!(
                    "core clock measured during the run (median of {} benchmarks)",
                    clocks.len()
                ),
            ));
        }
        for r in &file.results {
            if r.mode == Mode::Hot && r.status == Status::Ok {
                if let Some(v) = r.value() {
                    f.measured.insert(r.id.clone(), v);
                }
            }
        }
        f
    }

    /// A building block: the first of `ids` this run measured (clean, hot),
    /// with its value; or why there is none.
    pub fn block(&self, ids: &[&'static str]) -> Result<(f64, &'static str), String> {
        ids.iter()
            .find_map(|id| self.measured.get(*id).map(|v| (*v, *id)))
            .ok_or_else(|| format!("{} not measured in this run", ids.join(" or ")))
    }

    /// `cycles` core cycles as nanoseconds at the core clock.
    pub fn cycles(&self, lo: f64, hi: f64, what: &str) -> Result<Term, String> {
        let (mhz, src) = self
            .core_mhz
            .as_ref()
            .ok_or("core clock unknown: cannot turn cycles into time")?;
        Ok(Term {
            range: Range::new(lo * 1e3 / mhz, hi * 1e3 / mhz),
            how: format!(
                "{what}: {} cycles at {} MHz ({src})",
                span(lo, hi),
                format_sig(*mhz)
            ),
        })
    }

    /// Data (or unified) cache levels the machine reports.
    pub fn cache_levels(&self) -> u32 {
        self.machine
            .caches
            .iter()
            .filter(|c| c.kind != "Instruction")
            .map(|c| c.level)
            .max()
            .unwrap_or(0)
    }

    /// Peak memory bandwidth in GB/s from the modules' channels × speed ×
    /// width: from ⌈n/2⌉ channels (two modules per channel) to n (one each).
    pub fn memory_peak(&self) -> Option<Term> {
        let mods = &self.machine.memory_modules;
        let mts = mods.iter().filter_map(|m| m.mts()).min()?;
        let bytes = mods
            .iter()
            .filter_map(|m| m.data_width_bits)
            .min()
            .unwrap_or(64) as f64
            / 8.0;
        let per_channel = mts as f64 * 1e6 * bytes / 1e9;
        let n = mods.len() as f64;
        let kind = mods
            .first()
            .map(|m| m.kind.clone())
            .unwrap_or_else(|| "?".into());
        Some(Term {
            range: Range::new(per_channel * (n / 2.0).ceil(), per_channel * n),
            how: format!(
                "{} {kind}-{mts} modules in {}–{} channels × {} GB/s each",
                mods.len(),
                (n / 2.0).ceil(),
                n,
                format_sig(per_channel)
            ),
        })
    }

    /// The memory latency in ns: measured in this run (with huge pages,
    /// so page walks are not in it) where available, else typical DRAM.
    pub fn memory_latency(&self) -> (Range, String) {
        let levels = self.cache_levels();
        let measured = ["mem.latency.huge", "mem.latency"].iter().find_map(|base| {
            [format!("{base}.memory"), format!("{base}.L{}", levels + 1)]
                .into_iter()
                .find_map(|id| self.measured.get(&id).map(|v| (*v, id)))
        });
        match measured {
            Some((v, id)) => (
                Range::point(v),
                format!("{} ns measured ({id})", format_sig(v)),
            ),
            None => (
                Range::new(80.0, 120.0),
                "80–120 ns, typical DRAM (not measured in this run)".into(),
            ),
        }
    }

    /// What one core can stream from memory: 12–32 cache lines in flight
    /// (line fill buffers plus L2 prefetch streams) per memory latency
    /// (Little's law), and never more than the channels' peak.
    pub fn core_bandwidth(&self) -> Term {
        let line = self
            .machine
            .caches
            .iter()
            .find_map(|c| c.line_bytes)
            .unwrap_or(64) as f64;
        let (lat, lat_how) = self.memory_latency();
        let little = Range::new(
            LINES_IN_FLIGHT.0 * line / lat.hi,
            LINES_IN_FLIGHT.1 * line / lat.lo,
        );
        let mut how = format!(
            "one core: {}–{} lines of {line} B in flight per memory latency ({lat_how})",
            LINES_IN_FLIGHT.0, LINES_IN_FLIGHT.1
        );
        let mut range = little;
        if let Some(peak) = self.memory_peak() {
            range = little.min(peak.range);
            how += &format!(", at most the peak: {}", peak.how);
        }
        Term { range, how }
    }

    /// The storage behind the files: the kinds of the machine's real
    /// disks, or why it is unknown.
    pub fn storage(&self) -> Result<Vec<StorageKind>, String> {
        let disks: Vec<&Disk> = self.machine.disks.iter().collect();
        if disks.is_empty() {
            return Err("no disk described".into());
        }
        let real: Vec<StorageKind> = disks
            .iter()
            .filter(|d| !d.is_virtual())
            .map(|d| StorageKind::of(d))
            .collect();
        if real.is_empty() {
            return Err(format!(
                "virtual disk ({}): the host's storage behind it is unknown",
                disks
                    .iter()
                    .map(|d| format!("{} {}", d.name, d.driver.as_deref().unwrap_or("?")))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        let mut kinds = real;
        kinds.sort_by_key(|k| *k as u8);
        kinds.dedup();
        Ok(kinds)
    }

    /// A storage figure over the machine's kinds of disk: the union of
    /// each kind's range.
    fn by_storage(
        &self,
        what: &str,
        unit: &str,
        f: fn(StorageKind) -> Range,
    ) -> Result<Term, String> {
        let kinds = self.storage()?;
        let range = kinds
            .iter()
            .map(|k| f(*k))
            .reduce(|a, b| Range::new(a.lo.min(b.lo), a.hi.max(b.hi)))
            .ok_or("no disk")?;
        Ok(Term {
            range,
            how: format!(
                "{what} of {}: {} {unit}",
                kinds
                    .iter()
                    .map(|k| k.name())
                    .collect::<Vec<_>>()
                    .join(" or "),
                span(range.lo, range.hi)
            ),
        })
    }
}

/// Cache lines one core keeps in flight to memory: the L1's fill buffers
/// (12–24) and the L2 prefetchers' streams ahead of them (up to 64).
const LINES_IN_FLIGHT: (f64, f64) = (16.0, 64.0);

/// Kinds of storage device, each with its typical figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageKind {
    Nvme,
    SolidState,
    Rotating,
}

impl StorageKind {
    pub fn of(d: &Disk) -> StorageKind {
        if d.driver.as_deref() == Some("nvme") || d.name.starts_with("nvme") {
            StorageKind::Nvme
        } else if d.rotational == Some(true) {
            StorageKind::Rotating
        } else {
            StorageKind::SolidState
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            StorageKind::Nvme => "an NVMe SSD",
            StorageKind::SolidState => "a SATA/SAS SSD",
            StorageKind::Rotating => "a rotating disk",
        }
    }

    /// Time to read one 4–16 KiB block at queue depth 1, in ns.
    pub fn read_latency_ns(self) -> Range {
        match self {
            StorageKind::Nvme => Range::new(10e3, 100e3),
            StorageKind::SolidState => Range::new(50e3, 200e3),
            // A seek plus half a rotation at 7200–5400 rpm.
            StorageKind::Rotating => Range::new(2e6, 15e6),
        }
    }

    /// Sequential read bandwidth in GB/s.
    pub fn sequential_gbps(self) -> Range {
        match self {
            StorageKind::Nvme => Range::new(1.5, 7.0),
            StorageKind::SolidState => Range::new(0.4, 0.55),
            StorageKind::Rotating => Range::new(0.08, 0.25),
        }
    }

    /// A cache flush with one small write, in ns.
    pub fn flush_ns(self) -> Range {
        match self {
            StorageKind::Nvme => Range::new(20e3, 2e6),
            StorageKind::SolidState => Range::new(100e3, 5e6),
            StorageKind::Rotating => Range::new(5e6, 30e6),
        }
    }
}

type HardwareFn = fn(&Facts, &BenchResult) -> Result<Term, String>;
type SoftwareFn = fn(&Facts, &BenchResult) -> Term;
/// A prediction from building blocks this run measured: the block (a
/// point, what the machine and its system take for the part) and what the
/// composite adds to it as a factor; or why the blocks are missing.
type CompositeFn = fn(&Facts, &BenchResult) -> Result<(Term, Term), String>;

/// A result's model: its hardware guess and software multiplier.
pub struct Model {
    /// A result id; `*` stands for one dot-separated part, `L*` for one
    /// starting with L.
    pub pattern: &'static str,
    /// Why the guess and the multiplier are what they are.
    pub rationale: &'static str,
    pub hardware: HardwareFn,
    pub software: SoftwareFn,
    /// The prediction from this run's building blocks, tried first; the
    /// facts-only `hardware` × `software` (wider) when the blocks were not
    /// measured.
    pub composite: Option<CompositeFn>,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("pattern", &self.pattern)
            .finish_non_exhaustive()
    }
}

impl Model {
    /// Whether the pattern covers `id`: the same number of dot-separated
    /// parts, each equal, or `*` (any part), or `L*` (a part starting with L).
    pub fn matches(&self, id: &str) -> bool {
        let (p, i): (Vec<&str>, Vec<&str>) =
            (self.pattern.split('.').collect(), id.split('.').collect());
        p.len() == i.len()
            && p.iter().zip(&i).all(|(p, i)| match p.strip_suffix('*') {
                Some(prefix) => i.starts_with(prefix) && i.len() > prefix.len(),
                None => p == i,
            })
    }
}

fn factor(lo: f64, hi: f64, how: &str) -> Term {
    Term {
        range: Range::new(lo, hi),
        how: how.to_string(),
    }
}

/// Under a hypervisor, faults and page walks can cost a second level of
/// translation (nested paging / EPT): the multiplier's top is doubled.
fn virtualised(f: &Facts, t: Term) -> Term {
    match f.machine.hypervisor_name() {
        Some(h) => Term {
            range: Range::new(t.range.lo, t.range.hi * 2.0),
            how: format!(
                "{}; ×2 at most under a hypervisor ({h}): nested paging",
                t.how
            ),
        },
        None => t,
    }
}

/// One basis of a composite prediction: the building block (the first
/// of `ids` measured), the factor the composite takes it times, and why.
struct Basis {
    ids: &'static [&'static str],
    unit: &'static str,
    lo: f64,
    hi: f64,
    why: &'static str,
}

/// The prediction from the first basis whose block this run measured:
/// the block as a point, the composite's factor as the multiplier.
fn from_blocks(f: &Facts, bases: &[Basis]) -> Result<(Term, Term), String> {
    let mut missing = Vec::new();
    for b in bases {
        match f.block(b.ids) {
            Ok((v, id)) => {
                return Ok((
                    Term {
                        range: Range::point(v),
                        how: format!(
                            "building block {id}, measured in this run: {} {}",
                            format_sig(v),
                            b.unit
                        ),
                    },
                    factor(b.lo, b.hi, b.why),
                ))
            }
            Err(e) => missing.push(e),
        }
    }
    Err(missing.join("; "))
}

/// For a composite with no facts-only model: the blocks are all it has.
fn blocks_only(_: &Facts, _: &BenchResult) -> Result<Term, String> {
    Err("no facts-only guess".into())
}

/// The raw system call, the block most kernel paths build on.
const NULL_CALL: &[&str] = &["cpu.syscall.getppid"];

const SYSCALL_CYCLES: (f64, f64) = (70.0, 150.0);

fn syscall_hw(f: &Facts, n: f64) -> Result<Term, String> {
    let what = if n == 1.0 {
        "user→kernel→user transition (syscall/sysret or svc/eret)".to_string()
    } else {
        format!("{n} user→kernel→user transitions")
    };
    f.cycles(SYSCALL_CYCLES.0 * n, SYSCALL_CYCLES.1 * n, &what)
}

/// A cache level's load-to-use latency in cycles.
fn cache_cycles(level: u32) -> Option<(f64, f64)> {
    match level {
        1 => Some((3.8, 5.5)),
        2 => Some((12.0, 18.0)),
        3 => Some((35.0, 70.0)),
        _ => None,
    }
}

/// mem.latency[.huge].Ln: level n of the curve. Levels beyond the
/// machine's caches are memory.
fn latency_level_hw(f: &Facts, r: &BenchResult) -> Result<Term, String> {
    let n: u32 =
        r.id.rsplit('.')
            .next()
            .and_then(|l| l.strip_prefix('L'))
            .and_then(|n| n.parse().ok())
            .ok_or("not a level")?;
    let levels = f.cache_levels();
    if n <= levels {
        let (lo, hi) = cache_cycles(n).ok_or(format!("no typical latency for an L{n} cache"))?;
        f.cycles(lo, hi, &format!("L{n} cache hit"))
    } else {
        Ok(memory_hw())
    }
}

fn memory_hw() -> Term {
    factor(
        70.0,
        120.0,
        "DRAM access: 70–120 ns (row activation, controller and interconnect) on current DDR4/DDR5 machines",
    )
}

fn latency_level_sw(f: &Facts, r: &BenchResult) -> Term {
    let beyond =
        r.id.rsplit('.')
            .next()
            .and_then(|l| l.strip_prefix('L'))
            .and_then(|n| n.parse::<u32>().ok())
            .is_some_and(|n| n > f.cache_levels());
    match (beyond, r.id.contains(".huge")) {
        (false, _) => factor(1.0, 1.0, "none: a pointer chase is the hardware alone"),
        (true, true) => virtualised(
            f,
            factor(
                1.0,
                1.3,
                "2 MiB pages: a page walk now and then, mostly cached",
            ),
        ),
        (true, false) => virtualised(
            f,
            factor(
                1.0,
                2.0,
                "4 KiB pages: nearly every load misses the TLB and walks the page tables",
            ),
        ),
    }
}

fn bandwidth_hw(f: &Facts, r: &BenchResult) -> Result<Term, String> {
    let core = f.core_bandwidth();
    if !r.id.ends_with(".all_cpus") {
        return Ok(core);
    }
    let cores = f.machine.cores.unwrap_or(f.machine.online_cpus).max(1) as f64;
    let mut range = Range::new(core.range.lo * cores, core.range.hi * cores);
    let mut how = format!("{cores} cores × ({})", core.how);
    if let Some(peak) = f.memory_peak() {
        range = range.min(peak.range);
        how += ", at most the channels' peak";
    }
    Ok(Term { range, how })
}

fn bandwidth_sw(_: &Facts, r: &BenchResult) -> Term {
    let kernel =
        r.id.strip_prefix("mem.bandwidth.")
            .unwrap_or("")
            .trim_end_matches(".all_cpus");
    match kernel {
        "read" => factor(0.9, 1.0, "a vectorised sum: the loop keeps up with memory"),
        "write" => factor(
            0.5,
            1.0,
            "each written line is first read (write-allocate), and that read is not counted",
        ),
        "copy" => factor(
            0.5,
            0.9,
            "read + write counted; the write-allocate read of the destination is not",
        ),
        "triad" => factor(
            0.6,
            1.0,
            "three arrays counted, one written (write-allocate)",
        ),
        "write_nt" | "copy_nt" => {
            factor(0.8, 1.0, "non-temporal stores skip the write-allocate read")
        }
        _ => factor(0.5, 1.0, "a memory kernel"),
    }
}

/// A switch between two processes on one CPU, each a pipe (or futex)
/// write, a wake-up and a read: 8–16 null calls (two calls, the
/// scheduler's dequeue, pick and enqueue, the address-space switch and
/// the mitigations on it, which scale with the entry's).
fn ctxsw_composite(f: &Facts, _: &BenchResult) -> Result<(Term, Term), String> {
    from_blocks(
        f,
        &[Basis {
            ids: NULL_CALL,
            unit: "ns",
            lo: 8.0,
            hi: 16.0,
            why: "a write and a read, the wake-up, the scheduler and the address-space switch",
        }],
    )
}

/// A page-cache read is a copy from kernel memory to the user's buffer:
/// the memory copy this run measured, less a system call and a page
/// lookup per block, up to a little faster when part of the file stays
/// in the last-level cache.
fn cached_read_composite(f: &Facts, _: &BenchResult) -> Result<(Term, Term), String> {
    from_blocks(
        f,
        &[Basis {
            ids: &["mem.bandwidth.copy"],
            unit: "GB/s",
            lo: 0.4,
            hi: 1.2,
            why: "copy_to_user at memory-copy speed, less a system call and a page lookup per block; more where the file stays in cache",
        }],
    )
}

/// Memory on 4 KiB pages: this run's memory latency on 2 MiB pages plus
/// the page walks (their upper levels cached: up to 1.5×).
fn memory_4k_composite(f: &Facts, _: &BenchResult) -> Result<(Term, Term), String> {
    from_blocks(
        f,
        &[Basis {
            ids: &["mem.latency.huge.memory"],
            unit: "ns",
            lo: 1.0,
            hi: 1.5,
            why: "4 KiB pages: a page walk per load, its upper levels in cache",
        }],
    )
}

/// Every model, in the order the report lists them.
pub static MODELS: &[Model] = &[
    Model {
        pattern: "cpu.base",
        rationale: "Two serialised timestamp reads back to back (rdtsc/rdtscp with a fence, or cntvct with isb) take 25–45 cycles; the harness adds a store or two.",
        hardware: |f, _| f.cycles(25.0, 45.0, "two serialised timestamp reads"),
        software: |_, _| factor(1.0, 1.5, "the harness's loop and stores around the reads"),
        composite: None,
    },
    Model {
        pattern: "cpu.clock_gettime",
        rationale: "The vDSO reads the timestamp counter under a sequence lock and scales it: 40–80 cycles; no kernel entry.",
        hardware: |f, _| f.cycles(40.0, 80.0, "timestamp read, seqlock and scaling in the vDSO"),
        software: |_, _| factor(1.0, 1.5, "libc's wrapper; a paravirtual clock adds a few loads"),
        composite: None,
    },
    Model {
        pattern: "cpu.loop",
        rationale: "An empty counted loop: increment, compare and branch, one loop-carried add per iteration.",
        hardware: |f, _| f.cycles(1.0, 2.0, "increment, compare and predicted branch"),
        software: |_, _| factor(1.0, 1.0, "none"),
        composite: None,
    },
    Model {
        pattern: "cpu.call.*",
        rationale: "A call and return predicted by the return-stack buffer, arguments in registers (SysV x86-64, AAPCS64): 2–5 cycles.",
        hardware: |f, _| f.cycles(2.0, 5.0, "call and return, arguments in registers"),
        software: |_, _| factor(1.0, 2.0, "the frame the compiler sets up"),
        composite: None,
    },
    Model {
        pattern: "cpu.syscall.getppid",
        rationale: "The building block of the kernel paths: entering and leaving the kernel costs 70–150 cycles of mode switches; the kernel's entry code (register save, speculation mitigations such as page-table isolation, IBRS and return-stack stuffing, dispatch) multiplies it 2–4×. A hypervisor does not intercept system calls, so no allowance for it.",
        hardware: |f, _| syscall_hw(f, 1.0),
        software: |_, _| factor(2.0, 4.0, "kernel entry/exit code and speculation mitigations"),
        composite: None,
    },
    Model {
        pattern: "cpu.syscall.getppid.libc",
        rationale: "The same call through libc's wrapper: a call, the register moves and the errno check, a few cycles beside the kernel's entry.",
        hardware: |f, _| syscall_hw(f, 1.0),
        software: |_, _| factor(2.0, 4.0, "kernel entry/exit code and speculation mitigations"),
        composite: Some(|f, _| from_blocks(f, &[Basis { ids: NULL_CALL, unit: "ns", lo: 1.0, hi: 1.3, why: "libc's wrapper: a call and the errno check" }])),
    },
    Model {
        pattern: "cpu.syscall.read_devzero",
        rationale: "The null call plus a little work: file-descriptor lookup, the VFS read path, a 1-byte clear to user space (tens of cycles beside the entry's hundreds).",
        hardware: |f, _| syscall_hw(f, 1.0),
        software: |f, _| virtualised(f, factor(3.0, 10.0, "entry/exit, fd lookup, VFS read path, copy_to_user")),
        composite: Some(|f, _| from_blocks(f, &[Basis { ids: NULL_CALL, unit: "ns", lo: 1.0, hi: 1.5, why: "the null call plus fd lookup, the VFS read path and a 1-byte clear_user" }])),
    },
    Model {
        pattern: "cpu.syscall.read_devzero.libc",
        rationale: "read(2) of /dev/zero through libc: the libc null call plus the read path's work.",
        hardware: |f, _| syscall_hw(f, 1.0),
        software: |f, _| virtualised(f, factor(3.0, 10.0, "entry/exit, fd lookup, VFS read path, copy_to_user")),
        composite: Some(|f, _| from_blocks(f, &[
            Basis { ids: &["cpu.syscall.getppid.libc"], unit: "ns", lo: 1.0, hi: 1.5, why: "the libc null call plus fd lookup, the VFS read path and a 1-byte clear_user" },
            Basis { ids: NULL_CALL, unit: "ns", lo: 1.0, hi: 1.6, why: "the null call plus libc's wrapper, fd lookup, the VFS read path and a 1-byte clear_user" },
        ])),
    },
    Model {
        pattern: "cpu.syscall.write_devnull",
        rationale: "write(2) to /dev/null: the null call plus descriptor lookup and the VFS write path, which discards the byte.",
        hardware: blocks_only,
        software: |_, _| factor(1.0, 1.0, "none"),
        composite: Some(|f, _| from_blocks(f, &[Basis { ids: NULL_CALL, unit: "ns", lo: 1.0, hi: 1.5, why: "the null call plus fd lookup and the VFS write path" }])),
    },
    Model {
        pattern: "cpu.syscall.fstat",
        rationale: "fstat(2): the null call plus descriptor lookup, the inode's attributes gathered and a 144-byte struct copied to user space (with the user-access checks).",
        hardware: blocks_only,
        software: |_, _| factor(1.0, 1.0, "none"),
        composite: Some(|f, _| from_blocks(f, &[Basis { ids: NULL_CALL, unit: "ns", lo: 1.5, hi: 3.0, why: "the null call plus fd lookup, getattr and copying struct stat out" }])),
    },
    Model {
        pattern: "signal.self",
        rationale: "A signal to oneself: kill(2), then delivery (a signal frame with the FPU and vector state saved), the handler, and rt_sigreturn restoring it: two kernel entries and the extended state saved and restored twice, 10–20 null calls.",
        hardware: blocks_only,
        software: |_, _| factor(1.0, 1.0, "none"),
        composite: Some(|f, _| from_blocks(f, &[Basis { ids: NULL_CALL, unit: "ns", lo: 10.0, hi: 20.0, why: "kill and rt_sigreturn (two entries), the signal frame, the extended state saved and restored" }])),
    },
    Model {
        pattern: "proc.fork.light",
        rationale: "fork copies a small process's page tables and kernel structures (20–60 thousand cycles, the study's estimate), then two context switches and a wait.",
        hardware: |f, _| f.cycles(20e3, 60e3, "copying a small process's page tables and task structures"),
        software: |f, _| virtualised(f, factor(1.0, 2.0, "exit, reaping and the scheduler")),
        composite: Some(|f, _| from_blocks(f, &[Basis { ids: &["proc.vfork"], unit: "ns", lo: 5.0, hi: 9.0, why: "vfork's task creation, exit, reaping and switches, plus copying the address space (VMAs, page tables) and the copy-on-write faults after" }])),
    },
    Model {
        pattern: "proc.fork_exec",
        rationale: "fork then exec: the exec (loading the program, mapping it, the dynamic loader, the first faults) dominates; posix_spawn does the same exec after a vfork, so the difference is fork's copy of the parent.",
        hardware: blocks_only,
        software: |_, _| factor(1.0, 1.0, "none"),
        composite: Some(|f, _| from_blocks(f, &[Basis { ids: &["proc.posix_spawn"], unit: "ns", lo: 1.0, hi: 1.4, why: "the same exec, after a fork instead of a vfork" }])),
    },
    Model {
        pattern: "proc.shell",
        rationale: "sh -c: fork and exec of the shell, which starts and runs the command (a builtin or one more exec).",
        hardware: blocks_only,
        software: |_, _| factor(1.0, 1.0, "none"),
        composite: Some(|f, _| from_blocks(f, &[Basis { ids: &["proc.fork_exec"], unit: "ns", lo: 1.0, hi: 2.0, why: "fork and exec of the shell, its start-up, and the command" }])),
    },
    Model {
        pattern: "proc.thread",
        rationale: "clone without an address-space copy, a stack mapping, two context switches and a join: 5–15 thousand cycles.",
        hardware: |f, _| f.cycles(5e3, 15e3, "clone, stack mapping, two switches"),
        software: |_, _| factor(1.0, 3.0, "pthread bookkeeping, futex wake on join"),
        composite: None,
    },
    Model {
        pattern: "ipc.ctxsw.*",
        rationale: "A switch between two tasks on one CPU: save and restore registers, switch page tables, refill a small working set (500–1500 cycles); the scheduler adds its bookkeeping.",
        hardware: |f, _| f.cycles(500.0, 1500.0, "register save/restore, page-table switch, cache refill"),
        software: |f, _| virtualised(f, factor(1.0, 3.0, "scheduler: dequeue, pick, wake-up")),
        composite: Some(ctxsw_composite),
    },
    Model {
        pattern: "ipc.ctxsw.sweep.*",
        rationale: "A hop of a token around a ring of processes, each switch a pipe write, a wake-up and a read: as ipc.ctxsw.*.",
        hardware: |f, _| f.cycles(500.0, 1500.0, "register save/restore, page-table switch, cache refill"),
        software: |f, _| virtualised(f, factor(1.0, 3.0, "scheduler: dequeue, pick, wake-up")),
        composite: Some(ctxsw_composite),
    },
    Model {
        pattern: "ipc.rtt.pipe.same_cpu",
        rationale: "A round trip through two pipes on one CPU is two switches, each with its write and read: 2.2–3.3 times the measured switch through a pipe (the switch's own write and read, plus the second pipe's buffers).",
        hardware: blocks_only,
        software: |_, _| factor(1.0, 1.0, "none"),
        composite: Some(|f, _| from_blocks(f, &[
            Basis { ids: &["ipc.ctxsw.pipe"], unit: "ns", lo: 2.2, hi: 3.3, why: "two switches, each with a pipe write and read" },
            Basis { ids: &["ipc.ctxsw.sweep.0k"], unit: "ns", lo: 1.8, hi: 3.3, why: "two switches of the ring's kind" },
            Basis { ids: NULL_CALL, unit: "ns", lo: 18.0, hi: 45.0, why: "four calls, two wake-ups and two switches" },
        ])),
    },
    Model {
        pattern: "ipc.rtt.unix_stream.same_cpu",
        rationale: "A UNIX stream socket's round trip is a pipe's plus the socket layer (skb allocation, the peer's queue, credentials): 1.5–2.5 times the pipe's.",
        hardware: blocks_only,
        software: |_, _| factor(1.0, 1.0, "none"),
        composite: Some(|f, _| from_blocks(f, &[Basis { ids: &["ipc.rtt.pipe.same_cpu"], unit: "ns", lo: 1.5, hi: 2.5, why: "the pipe's round trip plus an skb per message and the socket layer" }])),
    },
    Model {
        pattern: "net.tcp.rtt",
        rationale: "A loopback TCP round trip with the peer thread on the other CPU: the cross-CPU round trip's two wake-ups (inter-processor interrupts, costly under a hypervisor) plus the TCP/IP stack twice each way (headers, softirq, ACKs). Without a cross-CPU block, from the same-CPU socket round trip, wide.",
        hardware: blocks_only,
        software: |_, _| factor(1.0, 1.0, "none"),
        composite: Some(|f, _| from_blocks(f, &[
            Basis { ids: &["ipc.rtt.unix_dgram.cross_cpu", "ipc.rtt.unix_stream.cross_cpu", "ipc.rtt.futex.cross_cpu"], unit: "ns", lo: 1.0, hi: 1.6, why: "the peer thread is on the other CPU: a cross-CPU round trip's two wake-ups, plus the TCP/IP stack twice each way" },
            Basis { ids: &["ipc.rtt.unix_stream.same_cpu"], unit: "ns", lo: 3.0, hi: 10.0, why: "the socket round trip plus the TCP/IP stack, softirq and the peer's wake-up on the other CPU (no cross-CPU round trip measured cleanly in this run)" },
        ])),
    },
    Model {
        pattern: "mem.latency.L*",
        rationale: "Load-to-use latency of a cache level in cycles at the core clock (L1 4–5, L2 12–16, L3 35–70 across current Intel, AMD and Arm cores); levels past the machine's caches are memory (70–120 ns). With 4 KiB pages most memory loads also walk the page tables.",
        hardware: latency_level_hw,
        software: latency_level_sw,
        composite: None,
    },
    Model {
        pattern: "mem.latency.huge.L*",
        rationale: "As mem.latency.L*, on 2 MiB pages: TLB reach covers far more, so memory loads rarely walk the page tables.",
        hardware: latency_level_hw,
        software: latency_level_sw,
        composite: None,
    },
    Model {
        pattern: "mem.latency.memory",
        rationale: "The curve's memory level on 4 KiB pages: the huge-page memory latency measured in the same run plus the page walks 4 KiB pages add (their upper levels mostly cached).",
        hardware: |_, _| Ok(memory_hw()),
        software: |f, _| virtualised(f, factor(1.0, 2.0, "4 KiB pages: a page walk per load")),
        composite: Some(memory_4k_composite),
    },
    Model {
        pattern: "mem.latency.huge.memory",
        rationale: "The huge-page curve's memory level: a memory access, page walks mostly gone.",
        hardware: |_, _| Ok(memory_hw()),
        software: |f, _| virtualised(f, factor(1.0, 1.3, "2 MiB pages: rare page walks")),
        composite: None,
    },
    Model {
        pattern: "mem.latency",
        rationale: "The curve's headline is its largest working set, far past the last-level cache: a memory access, with a page walk per load on 4 KiB pages.",
        hardware: |_, _| Ok(memory_hw()),
        software: |f, _| virtualised(f, factor(1.0, 2.0, "4 KiB pages: a page walk per load")),
        composite: Some(memory_4k_composite),
    },
    Model {
        pattern: "mem.latency.huge",
        rationale: "The huge-page curve's largest working set: a memory access, page walks mostly gone.",
        hardware: |_, _| Ok(memory_hw()),
        software: |f, _| virtualised(f, factor(1.0, 1.3, "2 MiB pages: rare page walks")),
        composite: None,
    },
    Model {
        pattern: "mem.bandwidth.bcopy",
        rationale: "libc's memcpy over the same large buffers as the suite's copy loop: the same traffic, with rep movsb or non-temporal stores where libc chooses them.",
        hardware: bandwidth_hw,
        software: bandwidth_sw,
        composite: Some(|f, _| from_blocks(f, &[Basis { ids: &["mem.bandwidth.copy"], unit: "GB/s", lo: 0.6, hi: 1.2, why: "the same copy through libc: its strategy (rep movsb, non-temporal stores) may gain or lose" }])),
    },
    Model {
        pattern: "mem.bandwidth.*",
        rationale: "One core streams 12–32 cache lines in flight per memory latency (Little's law), at most the channels × speed × 8 bytes of the modules where SMBIOS tells them. The multiplier is what the kernel counts: write-allocate reads are traffic it does not count.",
        hardware: bandwidth_hw,
        software: bandwidth_sw,
        composite: None,
    },
    Model {
        pattern: "mem.bandwidth.*.all_cpus",
        rationale: "Every core streaming at once, together at most the channels' peak.",
        hardware: bandwidth_hw,
        software: bandwidth_sw,
        composite: None,
    },
    Model {
        pattern: "mem.pagefault.anon",
        rationale: "A fault is an exception into the kernel and back (100–300 cycles) plus zeroing 4 KiB (100–300 cycles); allocating the page, charging it and updating the page table multiply it.",
        hardware: |f, _| f.cycles(200.0, 600.0, "exception entry/exit and zeroing 4 KiB"),
        software: |f, _| virtualised(f, factor(3.0, 10.0, "page allocation, memcg charge, page-table update, LRU")),
        composite: None,
    },
    Model {
        pattern: "mem.pagefault.cached",
        rationale: "An exception into the kernel and back, mapping pages already in the page cache (fault-around maps up to 16 at once).",
        hardware: |f, _| f.cycles(200.0, 400.0, "exception entry/exit"),
        software: |f, _| virtualised(f, factor(3.0, 10.0, "page-cache lookup, fault-around mapping, rmap")),
        composite: Some(|f, _| from_blocks(f, &[Basis { ids: NULL_CALL, unit: "ns", lo: 12.0, hi: 22.0, why: "an exception entry and exit (a null call's mitigations), the page-cache lookup, fault-around mapping, rmap and the TLB refill" }])),
    },
    Model {
        pattern: "mem.pagefault.major",
        rationale: "A major fault with readahead off reads one page from the device: the device's latency at queue depth 1 dominates (the study: 3 µs guessed for an SSD, 2.4 µs measured, multiplier 1).",
        hardware: |f, _| f.by_storage("one 4 KiB read", "ns", StorageKind::read_latency_ns),
        software: |_, _| factor(1.0, 1.5, "fault handling and the block layer, small beside the device"),
        composite: None,
    },
    Model {
        pattern: "fs.read.seq.cached",
        rationale: "A page-cache read is a copy from kernel memory to the user's buffer: the study's \"within a magnitude of our RAM bandwidth\".",
        hardware: |f, _| Ok(f.core_bandwidth()),
        software: |_, _| factor(0.5, 1.0, "copy_to_user reads and writes each byte; a system call per block"),
        composite: Some(cached_read_composite),
    },
    Model {
        pattern: "fs.read.random.cached",
        rationale: "As the sequential cached read, at random block offsets.",
        hardware: |f, _| Ok(f.core_bandwidth()),
        software: |_, _| factor(0.4, 1.0, "copy_to_user, a system call and a page-cache lookup per block"),
        composite: Some(cached_read_composite),
    },
    Model {
        pattern: "fs.reread.read",
        rationale: "lmbench's file reread: read(2) of a cached file in blocks, each summed: a page-cache copy as fs.read.seq.cached.",
        hardware: |f, _| Ok(f.core_bandwidth()),
        software: |_, _| factor(0.5, 1.0, "copy_to_user reads and writes each byte; a system call per block"),
        composite: Some(cached_read_composite),
    },
    Model {
        pattern: "fs.read.seq.uncached",
        rationale: "Reading a file not in the page cache streams from the device at its sequential bandwidth.",
        hardware: |f, _| f.by_storage("sequential bandwidth", "GB/s", StorageKind::sequential_gbps),
        software: |_, _| factor(0.5, 1.0, "page-cache fill and copy; readahead keeps the device busy"),
        composite: None,
    },
    Model {
        pattern: "fs.read.random.uncached",
        rationale: "Random 16 KiB reads at queue depth 1: one block per device latency.",
        hardware: |f, r| {
            let block = r.params.get("block_bytes").and_then(|b| b.as_f64()).unwrap_or(16384.0);
            let t = f.by_storage("one block read", "ns", StorageKind::read_latency_ns)?;
            Ok(Term {
                range: Range::new(block / t.range.hi, block / t.range.lo),
                how: format!("{} B per block read; {}", block, t.how),
            })
        },
        software: |_, _| factor(0.5, 1.0, "page-cache fill and copy, a system call per block"),
        composite: None,
    },
    Model {
        pattern: "fs.cache_size",
        rationale: "Linux lets the page cache take most of the memory nothing else uses: 50–90% of it.",
        hardware: |f, _| {
            let m = f.machine.memory_bytes as f64;
            (m > 0.0)
                .then(|| Term {
                    range: Range::new(0.5 * m, 0.9 * m),
                    how: format!("50–90% of {} of memory", yamba_results::units::format_size(m as u64)),
                })
                .ok_or("memory size unknown".into())
        },
        software: |_, _| factor(1.0, 1.0, "none: the kernel's choice is the hardware guess"),
        composite: None,
    },
    Model {
        pattern: "fs.meta.stat",
        rationale: "One system call with a path walk through the dentry cache and a copy of the attributes.",
        hardware: |f, _| syscall_hw(f, 1.0),
        software: |f, _| virtualised(f, factor(5.0, 20.0, "path walk, dentry cache, attribute copy")),
        composite: None,
    },
    Model {
        pattern: "fs.meta.open_close",
        rationale: "Two system calls: a path walk, a file structure allocated and freed, a descriptor installed and released.",
        hardware: |f, _| syscall_hw(f, 2.0),
        software: |f, _| virtualised(f, factor(5.0, 20.0, "path walk, file allocation, descriptor table")),
        composite: None,
    },
    Model {
        pattern: "fs.meta.create",
        rationale: "Creating a file is a system call that allocates an inode and a directory entry and records both in the journal.",
        hardware: |f, _| syscall_hw(f, 2.0),
        software: |f, _| virtualised(f, factor(20.0, 100.0, "inode and dentry allocation, journalling")),
        composite: None,
    },
    Model {
        pattern: "fs.meta.unlink",
        rationale: "Removing a file: directory update, inode release, journalling.",
        hardware: |f, _| syscall_hw(f, 1.0),
        software: |f, _| virtualised(f, factor(20.0, 100.0, "directory update, inode release, journalling")),
        composite: None,
    },
    Model {
        pattern: "fs.meta.fsync",
        rationale: "fsync after a small write waits for the device to write and flush its cache.",
        hardware: |f, _| f.by_storage("a write and cache flush", "ns", StorageKind::flush_ns),
        software: |_, _| factor(1.0, 3.0, "journal commit: two or three ordered writes"),
        composite: None,
    },
];

/// The model for a result id, if any.
pub fn model_for(id: &str) -> Option<&'static Model> {
    MODELS.iter().find(|m| m.matches(id))
}

/// How a measured value stands against its prediction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agreement {
    /// Inside the predicted range.
    Within,
    /// Outside, by less than [`FAR`] times.
    Near,
    /// More than [`FAR`] times outside the range: flagged.
    Far,
    /// The measured value is a lower bound and does not exceed the prediction.
    LowerBound,
    /// No prediction (the hardware guess is unknown) or no measurement.
    Unknown,
}

impl Agreement {
    pub fn as_str(self) -> &'static str {
        match self {
            Agreement::Within => "within",
            Agreement::Near => "near",
            Agreement::Far => "far",
            Agreement::LowerBound => "lower bound",
            Agreement::Unknown => "—",
        }
    }
}

/// How many times outside the predicted range a result must be to be flagged.
pub const FAR: f64 = 1.25;

/// One row of the predictions table.
#[derive(Debug, Clone)]
pub struct Prediction {
    pub id: String,
    pub unit: Unit,
    pub status: Status,
    pub model: &'static Model,
    /// The hardware guess, or why it is unknown.
    pub hardware: Result<Term, String>,
    pub software: Term,
    pub predicted: Option<Range>,
    pub measured: Option<f64>,
    /// Standard deviation of the observations.
    pub stddev: Option<f64>,
    /// measured / the prediction's geometric middle.
    pub ratio: Option<f64>,
    pub agreement: Agreement,
}

/// Predicts one result, if a model covers it (hot results only).
pub fn predict_one(facts: &Facts, r: &BenchResult) -> Option<Prediction> {
    if r.mode != Mode::Hot {
        return None;
    }
    let model = model_for(&r.id)?;
    let (hardware, software) = match model.composite.map(|c| c(facts, r)) {
        Some(Ok((h, s))) => (Ok(h), s),
        // The blocks were not run: the facts-only guess, saying so.
        Some(Err(why)) => (
            (model.hardware)(facts, r)
                .map(|t| Term {
                    how: format!("facts only ({why}): {}", t.how),
                    ..t
                })
                .map_err(|e| format!("{why}; {e}")),
            (model.software)(facts, r),
        ),
        None => ((model.hardware)(facts, r), (model.software)(facts, r)),
    };
    let predicted = hardware
        .as_ref()
        .ok()
        .map(|h| h.range.times(software.range));
    let measured = r.value().filter(|v| v.is_finite());
    let lower_bound = r
        .extra
        .get("at_least")
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    let agreement = match (predicted, measured) {
        (Some(p), Some(m)) => agreement(p, m, lower_bound),
        _ => Agreement::Unknown,
    };
    Some(Prediction {
        id: r.id.clone(),
        unit: r.unit,
        status: r.status,
        model,
        ratio: predicted.zip(measured).map(|(p, m)| m / p.middle()),
        hardware,
        software,
        predicted,
        measured,
        stddev: r.summary.as_ref().map(|s| s.stddev),
        agreement,
    })
}

fn agreement(p: Range, m: f64, lower_bound: bool) -> Agreement {
    if lower_bound {
        return if m > p.hi * FAR {
            Agreement::Far
        } else {
            Agreement::LowerBound
        };
    }
    if m >= p.lo && m <= p.hi {
        Agreement::Within
    } else if m < p.lo / FAR || m > p.hi * FAR {
        Agreement::Far
    } else {
        Agreement::Near
    }
}

/// Every prediction a run's results allow, in the results' order.
pub fn predict(file: &ResultsFile) -> Vec<Prediction> {
    let facts = Facts::of_run(file);
    file.results
        .iter()
        .filter_map(|r| predict_one(&facts, r))
        .collect()
}

/// "4–5" or "4" when both ends agree.
pub fn span(lo: f64, hi: f64) -> String {
    if (hi - lo).abs() <= 1e-9 * hi.abs().max(1.0) {
        format_sig(lo)
    } else {
        format!("{}–{}", format_sig(lo), format_sig(hi))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use yamba_results::{CacheLevel, MemoryModule};

    /// A described machine with round numbers: 4000 MHz measured, L1d/L2/L3,
    /// two DDR4-3200 modules, an NVMe SSD, 32 GiB.
    pub fn test_machine() -> Machine {
        let cache = |level, kind: &str, size| CacheLevel {
            level,
            kind: kind.into(),
            size_bytes: size,
            line_bytes: Some(64),
            ways: Some(8),
            shared_by_cpus: Some(1),
        };
        Machine {
            online_cpus: 8,
            cores: Some(4),
            memory_bytes: 32 << 30,
            core_mhz: Some(4000.0),
            cpu_mhz: Some(3000.0),
            caches: vec![
                cache(1, "Data", 32 << 10),
                cache(1, "Instruction", 32 << 10),
                cache(2, "Unified", 1 << 20),
                cache(3, "Unified", 16 << 20),
            ],
            memory_modules: (0..2)
                .map(|i| MemoryModule {
                    locator: format!("DIMM{i}"),
                    size_bytes: 16 << 30,
                    kind: "DDR4".into(),
                    speed_mts: Some(3200),
                    data_width_bits: Some(64),
                    ..Default::default()
                })
                .collect(),
            disks: vec![Disk {
                name: "nvme0n1".into(),
                driver: Some("nvme".into()),
                size_bytes: 1 << 40,
                rotational: Some(false),
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    fn result(id: &str) -> BenchResult {
        BenchResult::new(id, id, "t", Unit::Nanoseconds, Mode::Hot, "test")
    }

    fn hw(f: &Facts, id: &str) -> Range {
        let m = model_for(id).unwrap_or_else(|| panic!("no model for {id}"));
        (m.hardware)(f, &result(id)).unwrap().range
    }

    fn close(a: Range, lo: f64, hi: f64) -> bool {
        (a.lo - lo).abs() < 1e-9 * lo.abs().max(1.0) && (a.hi - hi).abs() < 1e-9 * hi.abs().max(1.0)
    }

    #[test]
    fn documented_guesses_for_a_test_machine() {
        let m = test_machine();
        let f = Facts::of_machine(&m);
        // L1: 3.8–5.5 cycles at 4000 MHz = 0.95–1.375 ns.
        assert!(close(hw(&f, "mem.latency.L1"), 0.95, 1.375));
        assert!(close(hw(&f, "mem.latency.huge.L2"), 3.0, 4.5));
        assert!(close(hw(&f, "mem.latency.L3"), 8.75, 17.5));
        // Past the three cache levels: memory.
        assert!(close(hw(&f, "mem.latency.L4"), 70.0, 120.0));
        // Peak: 2 modules, 1–2 channels × 3200 MT/s × 8 B = 25.6–51.2 GB/s.
        assert!(close(f.memory_peak().unwrap().range, 25.6, 51.2));
        // One core: 16–64 lines of 64 B per 120–80 ns = 8.53–51.2 GB/s (the
        // peak's top is 51.2).
        assert!(close(
            hw(&f, "mem.bandwidth.read"),
            16.0 * 64.0 / 120.0,
            51.2
        ));
        // All 4 cores: 25.6–102.4, capped by the peak 25.6–51.2.
        assert!(close(hw(&f, "mem.bandwidth.read.all_cpus"), 25.6, 51.2));
        // A system call: 70–150 cycles = 17.5–37.5 ns.
        assert!(close(hw(&f, "cpu.syscall.getppid"), 17.5, 37.5));
        assert!(close(hw(&f, "fs.meta.open_close"), 35.0, 75.0));
        // NVMe: one 4 KiB read in 10–100 µs; 16 KiB blocks at QD1: 0.16384–1.6384 GB/s.
        assert!(close(hw(&f, "mem.pagefault.major"), 10e3, 100e3));
        assert!(close(
            hw(&f, "fs.read.random.uncached"),
            16384.0 / 100e3,
            16384.0 / 10e3
        ));
        // Page cache: 50–90% of 32 GiB.
        assert!(close(
            hw(&f, "fs.cache_size"),
            0.5 * 32.0 * (1u64 << 30) as f64,
            0.9 * 32.0 * (1u64 << 30) as f64
        ));
        // The page-cache read's guess is one core's memory bandwidth.
        assert!(close(
            hw(&f, "fs.read.seq.cached"),
            16.0 * 64.0 / 120.0,
            51.2
        ));
    }

    #[test]
    fn measured_memory_latency_and_run_clock_take_precedence() {
        let m = test_machine();
        let mut f = Facts::of_machine(&m);
        f.measured.insert("mem.latency.huge.L4".into(), 100.0);
        // 16×64/100 = 10.24 to 64×64/100 = 40.96 GB/s.
        assert!(close(hw(&f, "mem.bandwidth.read"), 10.24, 40.96));
        f.core_mhz = Some((2000.0, "test".into()));
        assert!(close(hw(&f, "mem.latency.L1"), 1.9, 2.75));
    }

    /// A composite takes its block from the run and names it; without the
    /// block it falls back to the facts-only guess and says which block
    /// was missing.
    #[test]
    fn composites_use_the_runs_blocks_and_fall_back_saying_so() {
        let m = test_machine();
        let mut f = Facts::of_machine(&m);
        let read = result("cpu.syscall.read_devzero");
        let fallback = predict_one(&f, &read).unwrap();
        let how = &fallback.hardware.as_ref().unwrap().how;
        assert!(
            how.starts_with("facts only (cpu.syscall.getppid not measured"),
            "{how}"
        );
        // The facts-only range: 70–150 cycles × 3–10 at 4 GHz.
        assert!(close(fallback.predicted.unwrap(), 52.5, 375.0));
        f.measured.insert("cpu.syscall.getppid".into(), 100.0);
        let built = predict_one(&f, &read).unwrap();
        let how = &built.hardware.as_ref().unwrap().how;
        assert!(how.contains("building block cpu.syscall.getppid"), "{how}");
        assert!(close(built.predicted.unwrap(), 100.0, 150.0));
    }

    #[test]
    fn unknowns_say_why() {
        let mut m = test_machine();
        m.disks = vec![Disk {
            name: "vda".into(),
            driver: Some("virtio_blk".into()),
            rotational: Some(true),
            ..Default::default()
        }];
        m.core_mhz = None;
        m.cpu_mhz = None;
        let f = Facts::of_machine(&m);
        let why =
            (model_for("mem.pagefault.major").unwrap().hardware)(&f, &result("x")).unwrap_err();
        assert!(why.contains("virtual disk"), "{why}");
        let why =
            (model_for("cpu.syscall.getppid").unwrap().hardware)(&f, &result("x")).unwrap_err();
        assert!(why.contains("core clock unknown"), "{why}");
    }

    #[test]
    fn flags_far_results_and_respects_lower_bounds() {
        let p = Range::new(10.0, 20.0);
        assert_eq!(agreement(p, 15.0, false), Agreement::Within);
        assert_eq!(agreement(p, 24.0, false), Agreement::Near);
        assert_eq!(agreement(p, 26.0, false), Agreement::Far);
        assert_eq!(agreement(p, 8.5, false), Agreement::Near);
        assert_eq!(agreement(p, 7.9, false), Agreement::Far);
        assert_eq!(agreement(p, 1.0, true), Agreement::LowerBound);
        assert_eq!(agreement(p, 26.0, true), Agreement::Far);
    }

    #[test]
    fn patterns_match_one_level() {
        let m = model_for("mem.bandwidth.read").unwrap();
        assert_eq!(m.pattern, "mem.bandwidth.*");
        assert_eq!(
            model_for("mem.bandwidth.read.all_cpus").unwrap().pattern,
            "mem.bandwidth.*.all_cpus"
        );
        assert_eq!(
            model_for("mem.latency.huge.L2").unwrap().pattern,
            "mem.latency.huge.L*"
        );
        assert_eq!(
            model_for("mem.latency.L2").unwrap().pattern,
            "mem.latency.L*"
        );
        assert!(model_for("mem.pagefault.major.k16").is_none());
        assert!(model_for("cpu.call.3").is_some());
    }

    #[test]
    fn every_model_is_documented() {
        let doc = include_str!("../../../docs/predictions.md");
        for m in MODELS {
            assert!(
                doc.contains(&format!("`{}`", m.pattern)),
                "docs/predictions.md does not list {}",
                m.pattern
            );
        }
    }
}
