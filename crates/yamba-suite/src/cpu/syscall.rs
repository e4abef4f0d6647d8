//! P = a system call, in the three shapes a caller may have.
//!
//! `cpu.syscall.getppid` is the null system call: getppid does no work.
//! `cpu.syscall.read_devzero` is a cheap real one: a 1-byte read of
//! /dev/zero. Each is measured as
//! - the raw instruction inline (the unsuffixed id): the kernel crossing
//!   and nothing else; libc can neither cache nor wrap it;
//! - `.call`: a call to a function whose body is the instruction and `ret`
//!   (`adapter::shapes`), the shape of every libc wrapper;
//! - `.libc`: libc's own `getppid()` / `read()`, what lmbench's lat_syscall
//!   and most programs measure;
//! - `.vdso`, only where the platform has a vDSO system-call entry (32-bit
//!   x86: `__kernel_vsyscall`, what glibc's i386 wrappers call; there the
//!   inline shape is `int 0x80`): a call through that entry.
//!
//! The shapes differ by more than a call: where the kernel's mitigations
//! clear or stuff the return-stack buffer on the way in or out, the `ret`
//! whose return address was pushed before the crossing mispredicts. A
//! control — a call to a function that only returns — shows what the call
//! itself costs without a crossing. The three are reported side by side in
//! one table, next to what /sys/devices/system/cpu/vulnerabilities says.
//!
//! On 32-bit x86 in a guest, `int 0x80` (the inline and call shapes) may
//! cost a VM exit the vDSO's entry does not: Linux ≥ 6.7 reads the local
//! APIC on every `int 0x80`. The inline result then carries CPUID's time
//! (`vm_exit_ns`: CPUID always exits to the hypervisor), the gap counted
//! in exits (evidence, not gating) and, at about one, a warning
//! (`Int80`).
//!
//! Test only: `--set cpu.syscall.getppid.extra_muls=N` plants a slowdown
//! of known size — P becomes the call followed by N dependent multiplies
//! on its result, N read at run time, and a fence that holds the next call
//! until they are done, so they add nearly N multiply latencies — for the tests
//! of `compare`'s gate.
//! Set, even to 0, every N runs the same machine code, so a baseline with
//! 0 and a run with N differ by the multiplies alone: on an AMD EPYC
//! (Zen 4) guest the loop with work between the calls measured getppid
//! 7% cheaper than back-to-back calls, and a planted +5% against the
//! plain loop came out −7%. Unset, P is the call alone, measured by the
//! very loop it always was.

use super::adapter::{self, opaque::Opaque, order, shapes};
use serde_json::json;
use yamba_core::{BenchResult, Benchmark, Cold, Ctx, Kind, Machine, Measured, Mode, Setting, Unit};

/// `--set cpu.syscall.getppid.extra_muls=N` (test only): N dependent
/// 64-bit multiplies after each getppid call, in every shape.
pub const EXTRA_MULS: Setting = Setting {
    key: "cpu.syscall.getppid.extra_muls",
    kind: Kind::Integer {
        min: 0,
        max: 1_000_000,
    },
    default: "0",
    help: "test only: N dependent multiplies after each getppid call, a planted slowdown of known size (for testing compare's gate)",
    aliases: &[],
};

pub static GETPPID: Benchmark = Benchmark {
    id: "cpu.syscall.getppid",
    area: "cpu",
    unit: Unit::Nanoseconds,
    description: "null system call getppid(2): raw instruction inline; .call through a `syscall; ret` function; .libc through libc's wrapper",
    cold: Cold::Measured,
    adapter: adapter::NAME,
    run: run_getppid,
    settings: &[EXTRA_MULS],
    ..Benchmark::TEMPLATE
};

pub static READ_DEVZERO: Benchmark = Benchmark {
    id: "cpu.syscall.read_devzero",
    area: "cpu",
    unit: Unit::Nanoseconds,
    description: "cheap real system call: read(2) of 1 byte from /dev/zero; raw instruction inline, .call, .libc",
    cold: Cold::Measured,
    adapter: adapter::NAME,
    run: run_read_devzero,
    ..Benchmark::TEMPLATE
};

/// How the caller reaches the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Inline,
    Call,
    Libc,
    Vdso,
}

impl Shape {
    pub const ALL: [Shape; 4] = [Shape::Inline, Shape::Call, Shape::Libc, Shape::Vdso];

    /// The shapes this platform has: `.vdso` only with a vDSO entry.
    pub fn here() -> Vec<Shape> {
        Shape::ALL
            .into_iter()
            .filter(|&s| s != Shape::Vdso || shapes::has_vdso_entry())
            .collect()
    }

    pub fn name(self) -> &'static str {
        match self {
            Shape::Inline => "inline",
            Shape::Call => "call",
            Shape::Libc => "libc",
            Shape::Vdso => "vdso",
        }
    }

    /// The result id's suffix: none for the raw instruction.
    pub fn suffix(self) -> Option<&'static str> {
        match self {
            Shape::Inline => None,
            s => Some(s.name()),
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Shape::Inline => "the raw instruction inline in the loop",
            Shape::Call => "a call to a function whose body is the instruction and `ret`",
            Shape::Libc => "libc's wrapper",
            Shape::Vdso => "a call through the vDSO's system-call entry (__kernel_vsyscall)",
        }
    }
}

/// The mitigation lines that bear on a `ret` after a kernel crossing,
/// as the machine states them.
pub const RETURN_MITIGATIONS: &[&str] = &[
    "spectre_v2",
    "spec_rstack_overflow",
    "retbleed",
    "indirect_target_selection",
];

fn run_getppid(ctx: &mut Ctx) -> Result<(), String> {
    // SAFETY: getppid has no preconditions.
    let expected = unsafe { libc::getppid() } as i64;
    let extra = ctx.integer(EXTRA_MULS.key)?;
    let mut results = Vec::new();
    for shape in Shape::here() {
        let (mut calls, mut wrong) = (0u64, 0u64);
        let mut check = |got: i64| {
            calls += 1;
            wrong += u64::from(got != expected);
        };
        let m = match shape {
            Shape::Inline => planted(ctx, extra, shapes::getppid_inline, &mut check),
            Shape::Call => planted(ctx, extra, shapes::getppid_call, &mut check),
            Shape::Libc => planted(ctx, extra, shapes::getppid_libc, &mut check),
            Shape::Vdso => planted(ctx, extra, shapes::getppid_vdso, &mut check),
        };
        let mut r = shaped(ctx, shape, m, "getppid(2)");
        if let Some(extra) = extra {
            r.param("extra_muls", extra);
            r.warn(format!(
                "test only: a planted slowdown — {extra} dependent multiplies after each call, counted at run time (--set {})",
                EXTRA_MULS.key
            ));
        }
        r.add_evidence(
            "every call entered the kernel and returned the parent's pid",
            format!("{expected} from all {calls} calls"),
            format!("{wrong} wrong"),
            wrong == 0 && calls > 0,
        );
        results.push(r);
    }
    finish(ctx, "getppid", results);
    Ok(())
}

/// P = `call`, checked; with `extra` set (test only), P = `call` followed
/// by `extra` dependent multiplies on its result — a count the compiler
/// cannot know, so every value runs one loop — each through `opaque` so
/// that none is folded, then [`order::wait_for_earlier`] so that the next
/// call starts after the last multiply — and the result checked unchanged.
fn planted(
    ctx: &mut Ctx,
    extra: Option<u64>,
    call: impl Fn() -> i64,
    check: &mut impl FnMut(i64),
) -> Measured {
    let Some(extra) = extra else {
        return ctx.measure(|| check(call()));
    };
    let extra = extra.opaque();
    let zero = 0u64.opaque();
    ctx.measure(|| {
        let got = call();
        let mut x = got as u64;
        for _ in 0..extra {
            x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15).opaque();
        }
        // The next call waits for the chain's end, so the multiplies add
        // nearly their latencies: on an AMD EPYC (Zen 4) guest 8 added
        // 4.0 ns and 16 added 11.2 (latency 0.81 ns each); without the fence
        // 8 added 1.9, the rest hidden behind the next kernel entry.
        order::wait_for_earlier();
        // The chain's end joins what is checked (plus zero, which the
        // compiler cannot know), so it cannot be skipped.
        check(got + (x & zero) as i64);
    })
}

fn run_read_devzero(ctx: &mut Ctx) -> Result<(), String> {
    let file =
        std::fs::File::open("/dev/zero").map_err(|e| format!("cannot open /dev/zero: {e}"))?;
    let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
    let mut results = Vec::new();
    for shape in Shape::here() {
        let mut byte = [1u8; 1];
        let (mut calls, mut short) = (0u64, 0u64);
        let m = {
            let mut check = |got: i64| {
                calls += 1;
                short += u64::from(got != 1);
            };
            match shape {
                Shape::Inline => ctx.measure(|| check(shapes::read_inline(fd, &mut byte))),
                Shape::Call => ctx.measure(|| check(shapes::read_call(fd, &mut byte))),
                Shape::Libc => ctx.measure(|| check(shapes::read_libc(fd, &mut byte))),
                Shape::Vdso => ctx.measure(|| check(shapes::read_vdso(fd, &mut byte))),
            }
        };
        let mut r = shaped(ctx, shape, m, "read(2) of 1 byte from /dev/zero");
        r.add_evidence(
            "every read returned exactly one byte, a zero",
            format!("1 byte × {calls} reads"),
            format!("{short} short or failed; last byte {}", byte[0]),
            short == 0 && calls > 0 && byte[0] == 0,
        );
        results.push(r);
    }
    finish(ctx, "read_devzero", results);
    Ok(())
}

fn shaped(ctx: &Ctx, shape: Shape, m: Measured, what: &str) -> BenchResult {
    let mut r = ctx.measured_result(shape.suffix(), m);
    r.description = format!("{what} through {}", shape.describe());
    r.param("shape", shape.name());
    if shape == Shape::Libc {
        if let Some(single) = shapes::libc_single_threaded() {
            r.param("libc_single_threaded", single);
            r.add_note_evidence(
                "libc saw a single-threaded process (its fast paths; a process that ever had a second thread pays for cancellation points in read())",
                "single-threaded",
                if single { "single-threaded" } else { "multi-threaded: libc's slower paths were measured" },
                single,
            );
        }
    }
    r
}

/// Attaches the side-by-side table and the gap's evidence to the inline
/// result, then records all three.
fn finish(ctx: &mut Ctx, call: &str, mut results: Vec<BenchResult>) {
    for r in &mut results {
        r.apply_evidence();
    }
    let control = call_control(ctx);
    let medians: Vec<Option<f64>> = results
        .iter()
        .map(|r| {
            (r.status == yamba_core::Status::Ok)
                .then(|| r.median())
                .flatten()
        })
        .collect();
    let rows: Vec<serde_json::Value> = Shape::here()
        .iter()
        .zip(&results)
        .map(|(shape, r)| {
            json!({
                "id": r.id, "row": call, "column": shape.name(),
                "median_ns": r.median(), "status": r.status, "reason": r.reason,
            })
        })
        .collect();
    let lines = mitigation_lines(ctx.machine());
    let head = &mut results[0];
    head.extra.insert("comparison".into(), json!(rows));
    head.extra.insert(
        "comparison_table".into(),
        json!("system call by caller's shape (each result's headline value; inline: raw instruction, call: `syscall; ret` function, libc: libc's wrapper; vdso, where present: a call through the vDSO's system-call entry)"),
    );
    head.extra
        .insert("comparison_rows".into(), json!("syscall"));
    head.extra.insert("mitigations".into(), json!(lines));
    if let [Some(inline), Some(called), Some(libc), ..] = medians[..] {
        let gap = called - inline;
        let machine_says = if lines.is_empty() {
            "the kernel does not say (no /sys/devices/system/cpu/vulnerabilities)".to_string()
        } else {
            lines.join("; ")
        };
        let control_txt = control.map_or("not measured".into(), |c| format!("{c:.2} ns"));
        let surplus = gap - control.unwrap_or(0.0);
        head.add_note_evidence(
            "the call-wrapped shape costs the inline one plus a call and return, within 5% (a surplus is the `ret` after the kernel crossing, mispredicted where the kernel's return-stack mitigations clear or stuff the return-stack buffer)",
            format!(
                "a call and return without a crossing: {control_txt}; what the machine says: {machine_says}"
            ),
            format!(
                "call − inline = {gap:+.1} ns ({:+.0}%), surplus beyond the call {surplus:+.1} ns; libc − inline = {:+.1} ns ({:+.0}%)",
                gap / inline * 100.0,
                libc - inline,
                (libc - inline) / inline * 100.0
            ),
            surplus <= (0.05 * inline).max(2.0),
        );
        head.extra.insert(
            "gap".into(),
            json!({
                "call_minus_inline_ns": gap,
                "libc_minus_inline_ns": libc - inline,
                "call_without_crossing_ns": control,
                "surplus_ns": surplus,
                "mitigations": lines,
                "mitigations_cmdline": ctx.machine().mitigations,
            }),
        );
    }
    let here = Shape::here();
    let median_of = |s: Shape| here.iter().position(|&x| x == s).and_then(|i| medians[i]);
    if let (Some(inline), Some(vdso), Some(_)) = (
        median_of(Shape::Inline),
        median_of(Shape::Vdso),
        &ctx.machine().hypervisor,
    ) {
        if let Some(exit_ns) = exit_cost(ctx) {
            let v = Int80::judge(inline, vdso, exit_ns);
            results[0].param("vm_exit_ns", exit_ns);
            results[0].add_note_evidence(
                "int 0x80 costs what the vDSO's entry costs, within half a VM exit (in a guest, Linux ≥ 6.7 reads the local APIC's in-service register on every int 0x80 — int80_is_external, the CVE-2024-25744 fix — and a hypervisor that does not virtualise the APIC traps that read)",
                format!("int 0x80 − vDSO ≤ {:.0} ns (half of CPUID's {exit_ns:.0} ns: CPUID always exits to the hypervisor)", exit_ns / 2.0),
                format!("int 0x80 − vDSO = {:+.0} ns ({:.2} VM exits)", v.gap_ns, v.exits()),
                v.within(),
            );
            if let Some(w) = v.warning() {
                for (shape, r) in here.iter().zip(&mut results) {
                    if matches!(shape, Shape::Inline | Shape::Call) {
                        r.warn(w.clone());
                    }
                }
            }
        }
    }
    for r in results {
        ctx.push(r);
    }
}

/// The time of one VM exit and return, where the platform has an
/// instruction every hypervisor traps (CPUID on x86): None elsewhere.
fn exit_cost(ctx: &mut Ctx) -> Option<f64> {
    time_alone(ctx, adapter::exit::cpuid()?)
}

/// `int 0x80` (i686's inline and call shapes) against the vDSO's entry,
/// in a guest, counted in VM exits. On an AMD EPYC (Zen 4) KVM guest,
/// Linux 6.18: int 0x80 took 4030 ns, the vDSO's entry 170 ns and CPUID
/// 3506 ns — one exit per int 0x80, the APIC read the kernel makes on
/// that path only.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Int80 {
    gap_ns: f64,
    exit_ns: f64,
}

impl Int80 {
    fn judge(inline: f64, vdso: f64, exit_ns: f64) -> Int80 {
        Int80 {
            gap_ns: inline - vdso,
            exit_ns,
        }
    }

    /// The gap over one exit's time.
    fn exits(&self) -> f64 {
        self.gap_ns / self.exit_ns
    }

    /// The gap is under half an exit: no exit per call.
    fn within(&self) -> bool {
        self.exits() <= 0.5
    }

    /// Said on the int 0x80 results when the gap is about one exit (½ to
    /// 1½): the number is the hypervisor's, not the kernel's entry path.
    fn warning(&self) -> Option<String> {
        (0.5..=1.5).contains(&self.exits()).then(|| {
            format!(
                "int 0x80 costs about one VM exit here: {:.0} ns more than the vDSO's entry, and CPUID, which always exits, takes {:.0} ns. In a guest, Linux ≥ 6.7 reads the local APIC's in-service register on every int 0x80 (int80_is_external, the CVE-2024-25744 fix), and this hypervisor traps the read; bare metal, or a hypervisor that virtualises the APIC, does not pay it",
                self.gap_ns, self.exit_ns
            )
        })
    }
}

/// The cost of a call to a function that only returns (hot: loop method
/// against an empty F; cold: a single call).
fn call_control(ctx: &mut Ctx) -> Option<f64> {
    time_alone(ctx, shapes::just_call)
}

/// The median time of `op` in the context's mode: hot, the loop method
/// against an empty F; cold, a single call.
fn time_alone(ctx: &mut Ctx, op: fn()) -> Option<f64> {
    let m = match ctx.mode {
        Mode::Hot => ctx.measure_loop(op, || {}),
        Mode::Cold => ctx.measure_single(|| {}, op),
    };
    m.summary().map(|s| s.median)
}

/// "name: line" for each mitigation that bears on returns, as recorded.
pub fn mitigation_lines(m: &Machine) -> Vec<String> {
    let mut out: Vec<String> = RETURN_MITIGATIONS
        .iter()
        .filter_map(|k| m.vulnerabilities.get(*k).map(|v| format!("{k}: {v}")))
        .collect();
    if let Some(c) = &m.mitigations {
        out.push(format!("mitigations={c}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::Int80;

    /// The AMD EPYC guest's numbers are one exit per int 0x80, said in a
    /// warning; a gap of a few ns (an APIC the hypervisor virtualises) is
    /// within; a gap of two exits is not called one.
    #[test]
    fn int80_is_counted_in_vm_exits() {
        let amd = Int80::judge(4030.0, 170.0, 3506.0);
        assert!(!amd.within());
        assert!((amd.exits() - 1.10).abs() < 0.01, "{amd:?}");
        let w = amd.warning().unwrap();
        assert!(
            w.contains("about one VM exit") && w.contains("3860 ns more"),
            "{w}"
        );
        let virtualised = Int80::judge(182.0, 170.0, 1500.0);
        assert!(virtualised.within() && virtualised.warning().is_none());
        let two = Int80::judge(3170.0, 170.0, 1500.0);
        assert!(!two.within() && two.warning().is_none(), "{two:?}");
    }
}
