//! P = a procedure call with 0 to 7 integer arguments and its return.
//!
//! The callees are `extern "C"` and `#[no_mangle]`; the adapter calls them
//! from machine code (`adapter::calls`), so the call really happens, directly,
//! with the C calling convention, whatever the optimiser knows about the
//! callee — the tests disassemble the binary and find the `call`
//! instructions. F places the same arguments in the same registers without
//! the call, so only the call, the callee's body and the return are left
//! after subtraction.
//!
//! The headline `cpu.call.N` (N ≥ 1) is a chain: each call's result is the
//! next call's first argument, so calls cannot overlap through their data.
//! `cpu.call.N.throughput` is independent calls, where the argument moves
//! of one call overlap the others (more arguments can then measure less).
//! A call and its return are predicted branches, not data: even chained,
//! what is left after F is a cycle or two of the front end's taken-branch
//! rate and the callee's data path — `per_iteration_ns` keeps the cost
//! before subtracting F.

use super::adapter::{self, calls};
use yamba_core::{Benchmark, Ctx, Mode, Unit};

pub static CALL: Benchmark = Benchmark {
    id: "cpu.call",
    area: "cpu",
    unit: Unit::Nanoseconds,
    description: "procedure call and return with 1 to 7 integer arguments, chained: each result the next call's argument (cpu.call.N, latency); cpu.call.N.throughput: independent calls, 0 to 7 arguments",
    modes: &[Mode::Hot, Mode::Cold],
    adapter: adapter::NAME,
    run: run_calls,
    ..Benchmark::TEMPLATE
};

/// An empty `asm!` block: no instructions, but the compiler must assume a
/// side effect, so it can neither drop a call whose result it could
/// predict nor replace the call by its value.
#[inline(always)]
fn opaque() {
    // SAFETY: an empty asm block does nothing.
    unsafe { std::arch::asm!("", options(nostack, preserves_flags)) };
}

#[no_mangle]
#[inline(never)]
pub extern "C" fn yamba_call0() -> u64 {
    opaque();
    1
}
#[no_mangle]
#[inline(never)]
pub extern "C" fn yamba_call1(a: u64) -> u64 {
    opaque();
    a
}
#[no_mangle]
#[inline(never)]
pub extern "C" fn yamba_call2(a: u64, b: u64) -> u64 {
    opaque();
    a ^ b
}
#[no_mangle]
#[inline(never)]
pub extern "C" fn yamba_call3(a: u64, b: u64, c: u64) -> u64 {
    opaque();
    a ^ b ^ c
}
#[no_mangle]
#[inline(never)]
pub extern "C" fn yamba_call4(a: u64, b: u64, c: u64, d: u64) -> u64 {
    opaque();
    a ^ b ^ c ^ d
}
#[no_mangle]
#[inline(never)]
pub extern "C" fn yamba_call5(a: u64, b: u64, c: u64, d: u64, e: u64) -> u64 {
    opaque();
    a ^ b ^ c ^ d ^ e
}
#[no_mangle]
#[inline(never)]
pub extern "C" fn yamba_call6(a: u64, b: u64, c: u64, d: u64, e: u64, f: u64) -> u64 {
    opaque();
    a ^ b ^ c ^ d ^ e ^ f
}
#[no_mangle]
#[inline(never)]
pub extern "C" fn yamba_call7(a: u64, b: u64, c: u64, d: u64, e: u64, f: u64, g: u64) -> u64 {
    opaque();
    a ^ b ^ c ^ d ^ e ^ f ^ g
}

fn run_calls(ctx: &mut Ctx) -> Result<(), String> {
    let mut chained: Vec<Option<f64>> = vec![None];
    call_with::<0>(ctx, &mut chained);
    call_with::<1>(ctx, &mut chained);
    call_with::<2>(ctx, &mut chained);
    call_with::<3>(ctx, &mut chained);
    call_with::<4>(ctx, &mut chained);
    call_with::<5>(ctx, &mut chained);
    call_with::<6>(ctx, &mut chained);
    call_with::<7>(ctx, &mut chained);
    Ok(())
}

/// Below this relative difference two medians are the same within noise.
pub const NOISE: f64 = 0.05;

/// N is a constant, so P'' and F compile to straight runs of N-argument
/// calls (or of the bare argument moves), with no dispatch in the loop.
///
/// Hot: `cpu.call.N` is the latency of a chain of calls, each call's
/// result the next call's first argument (N ≥ 1: a call with no argument
/// has nothing to chain); `cpu.call.N.throughput` is independent calls,
/// where the argument moves and the calls overlap. Cold: one call.
/// `chained[k]` collects the chained medians for the next N's evidence.
fn call_with<const N: u32>(ctx: &mut Ctx, chained: &mut Vec<Option<f64>>) {
    let args = std::hint::black_box([1u64, 2, 3, 4, 5, 6, 7]);
    if ctx.mode == Mode::Cold {
        let m = ctx.measure_single(|| {}, || calls::call(N, &args));
        let mut r = ctx.measured_result(Some(&N.to_string()), m);
        r.description = format!("procedure call and return with {N} integer argument(s)");
        describe::<N>(&mut r, "single call after eviction");
        ctx.push(r);
        return;
    }
    let m = ctx.measure_loop(|| calls::call(N, &args), || calls::dummy(N, &args));
    let mut thr = ctx.measured_result(Some(&format!("{N}.throughput")), m);
    thr.description = format!(
        "procedure calls with {N} integer argument(s), independent of each other (throughput: argument moves overlap the calls)"
    );
    describe::<N>(&mut thr, "throughput: independent calls");
    let throughput = gross(&thr);
    ctx.push(thr);
    if N == 0 {
        return;
    }
    // The chain's value and the calls made, in one place: two captured
    // variables might alias as far as the optimiser knows, and it would
    // keep the chain in memory (store forwarding would join the chain).
    let (mut p, mut f) = ([1u64, 0], [1u64, 0]);
    let m = ctx.measure_loop(
        || {
            p[0] = calls::call_chained(N, p[0], &args);
            p[1] += 1;
        },
        || {
            f[0] = calls::dummy_chained(N, f[0], &args);
            f[1] += 1;
        },
    );
    std::hint::black_box(f);
    let [x, calls_made] = p;
    let mut r = ctx.measured_result(Some(&N.to_string()), m);
    r.description = format!(
        "procedure call and return with {N} integer argument(s), latency: each call's result is the next call's first argument"
    );
    describe::<N>(
        &mut r,
        "chained: each call's result is the next call's first argument (latency)",
    );
    // yamba_callN returns the xor of its arguments: the chain's value
    // alternates between 1 and 1 ^ (2 ^ … ^ N).
    let others = args[1..N as usize].iter().fold(0, |acc, v| acc ^ v);
    let want = if calls_made % 2 == 0 { 1 } else { 1 ^ others };
    r.add_evidence(
        "every call's result was fed to the next call (the chain's final value is what the calls compute)",
        format!("{want} after {calls_made} calls"),
        x.to_string(),
        x == want && calls_made > 0,
    );
    let median = r.median();
    // Compared before F is subtracted: the two variants' F differ (the
    // chained one moves the result to the next argument), and differences
    // of overlapping sub-nanosecond costs need not keep their order.
    // Informational: where a call and its return are predicted, the chain
    // runs through the callee's data only, and sub-cycle differences of
    // loop shape can reverse the order (seen on an Intel VM for 2 args).
    if let (Some(c), Some(t)) = (gross(&r), throughput) {
        r.add_note_evidence(
            format!(
                "a chained call costs at least an independent one, the loop's own instructions included (the same instructions plus a dependency; {:.0}% noise allowed)",
                NOISE * 100.0
            ),
            format!("≥ {t:.3} ns per iteration (cpu.call.{N}.throughput)"),
            format!("{c:.3} ns per iteration"),
            c >= t * (1.0 - NOISE),
        );
        r.param("per_iteration_ns", c);
    }
    if let (Some(c), Some(Some(prev))) = (median, chained.last().copied().filter(|_| N > 1)) {
        r.add_note_evidence(
            "one more argument does not make the chained call cheaper (within noise)",
            format!("≥ {prev:.3} ns (cpu.call.{})", N - 1),
            format!("{c:.3} ns ({:+.1}%)", (c / prev - 1.0) * 100.0),
            c >= prev * (1.0 - NOISE),
        );
    }
    chained.push(median);
    ctx.push(r);
}

/// The cost per iteration of P'' before F is subtracted: the median plus
/// F's time per operation.
fn gross(r: &yamba_core::BenchResult) -> Option<f64> {
    let m = r.method.as_ref()?;
    Some(r.median()? + m.dummy_ns? / m.iterations.max(1) as f64)
}

fn describe<const N: u32>(r: &mut yamba_core::BenchResult, variant: &str) {
    r.param("args", N);
    r.param("callee", format!("yamba_call{N}"));
    r.param("variant", variant);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The callees exist as real functions in the binary and are reached by
    /// `call` instructions from both the hot loop and the cold path:
    /// nothing was inlined or folded away.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn generated_code_calls_every_callee() {
        // Keep the measuring code in this test binary.
        let _keep = run_calls as fn(&mut Ctx) -> Result<(), String>;
        let exe = std::env::current_exe().unwrap();
        let out = match std::process::Command::new("objdump")
            .args(["-d", "--no-show-raw-insn"])
            .arg(&exe)
            .output()
        {
            Ok(o) => String::from_utf8_lossy(&o.stdout).into_owned(),
            Err(e) => panic!("objdump (binutils) is needed to check the generated code: {e}"),
        };
        for n in 0..=7 {
            let sym = format!("<yamba_call{n}>");
            assert!(
                out.contains(&format!("{sym}:")),
                "{sym} is not a function in the binary"
            );
            let sites = out
                .lines()
                .filter(|l| l.contains("call") && l.contains(&sym))
                .count();
            assert!(
                sites >= 3,
                "{sites} call instruction(s) reach {sym}: expected the unrolled hot loop's copies and the cold path's"
            );
        }
        // The chained variant: somewhere a call's result (rax) becomes the
        // next call's first argument (rdi) before the next call.
        let lines: Vec<&str> = out.lines().collect();
        for n in 1..=7 {
            let sym = format!("<yamba_call{n}>");
            let chained = lines.iter().enumerate().any(|(i, l)| {
                l.contains("call") && l.contains(&sym) && {
                    let next: Vec<&&str> = lines[i + 1..].iter().take(24).collect();
                    let feed = next.iter().position(|l| l.contains("%rax,%rdi"));
                    let again = next
                        .iter()
                        .position(|l| l.contains("call") && l.contains(&sym));
                    matches!((feed, again), (Some(f), Some(c)) if f < c)
                }
            });
            assert!(
                chained,
                "no call to {sym} feeds its result to the next call's rdi"
            );
        }
    }
}
