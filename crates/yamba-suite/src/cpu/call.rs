//! P = a procedure call with 0 to 7 integer arguments and its return.
//!
//! The callees are `extern "C"` and `#[no_mangle]`; the adapter calls them
//! from machine code (`adapter::calls`), so the call really happens, directly,
//! with the C calling convention, whatever the optimiser knows about the
//! callee — the tests disassemble the binary and find the `call`
//! instructions. On Linux x86-64 the adapter also writes the callees
//! (`adapter::callees`), each at the start of a 64-byte line: one that a
//! build left across a line cost three cycles more per call.
//!
//! The headline `cpu.call.N` is the **latency** of a call: a chain of
//! calls where every argument of a call is the previous call's result and
//! the callee's result depends on every argument (`yamba_callN` returns
//! their sum plus one), so nothing of one call can start before the
//! previous call's data has gone through the callee and back. One
//! operation is [`CHAIN`] such calls with the value in a register
//! throughout; F is the empty loop: the value is the whole time per call
//! on the chain, the callee's adds included. `cpu.call.0` has no argument to chain
//! through: its callee carries the chain through memory instead (it loads
//! a counter the previous call stored, adds one, stores it back), so it
//! measures a call plus a store-to-load forwarding. With 7 arguments the
//! 7th goes through the stack on x86-64 (a push before the call, a load in
//! the callee): forwarding joins that chain too. docs/writing-benchmarks.md
//! ("What cpu.call measures") has the critical path and Zen 4's numbers.
//!
//! `cpu.call.N.throughput` is independent calls (F places the same
//! arguments without the call), where one call's argument moves overlap
//! the others: more arguments can then measure less.

use super::adapter::{self, calls};
use std::sync::atomic::{AtomicU64, Ordering};
use yamba_core::{Benchmark, Cold, Ctx, Mode, Unit};

pub static CALL: Benchmark = Benchmark {
    id: "cpu.call",
    area: "cpu",
    unit: Unit::Nanoseconds,
    description: "procedure call and return with 0 to 7 integer arguments, latency: each call's arguments are the previous call's result (cpu.call.N; 0 arguments: a chain through memory); cpu.call.N.throughput: independent calls",
    cold: Cold::Measured,
    adapter: adapter::NAME,
    run: run_calls,
    ..Benchmark::TEMPLATE
};
/// The counter `yamba_call0_carry` carries from call to call.
pub(crate) static CARRIED: AtomicU64 = AtomicU64::new(0);

/// The callees. On Linux x86-64 the adapter writes them in assembly, each
/// at the start of a 64-byte line (`adapter::callees`: a callee across a
/// line costs cycles of its own); elsewhere they are compiled from Rust.
#[cfg(all(linux_adapters, target_arch = "x86_64"))]
pub use adapter::callees::*;
#[cfg(not(all(linux_adapters, target_arch = "x86_64")))]
pub use compiled::*;

#[cfg(not(all(linux_adapters, target_arch = "x86_64")))]
mod compiled {
    use std::sync::atomic::Ordering;

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

    /// No argument, but a result that depends on the previous call: a load of
    /// the counter the previous call stored, an add, a store (relaxed: plain
    /// moves, no locked instruction).
    #[no_mangle]
    #[inline(never)]
    pub extern "C" fn yamba_call0_carry() -> u64 {
        let v = super::CARRIED.load(Ordering::Relaxed).wrapping_add(1);
        super::CARRIED.store(v, Ordering::Relaxed);
        v
    }

    /// `x` unchanged, but the compiler can no longer see how it was computed:
    /// the adds around it are not reassociated into a tree.
    #[cfg(target_pointer_width = "64")]
    #[inline(always)]
    fn barrier(mut x: u64) -> u64 {
        // SAFETY: an empty asm block that leaves its register as it is.
        unsafe {
            std::arch::asm!("/* {0} */", inout(reg) x, options(pure, nomem, nostack, preserves_flags))
        };
        x
    }

    /// On 32-bit targets a `u64` is two registers, both hidden.
    #[cfg(target_pointer_width = "32")]
    #[inline(always)]
    fn barrier(x: u64) -> u64 {
        let (mut lo, mut hi) = (x as u32, (x >> 32) as u32);
        // SAFETY: an empty asm block that leaves its registers as they are.
        unsafe {
            std::arch::asm!("/* {0} {1} */", inout(reg) lo, inout(reg) hi,
                options(pure, nomem, nostack, preserves_flags))
        };
        u64::from(hi) << 32 | u64::from(lo)
    }

    macro_rules! callee {
        ($name:ident, $last:ident $(, $a:ident)*) => {
            /// Returns one plus the sum of its arguments, added one after
            /// another from the last argument (the stack's, for 7 on x86-64):
            /// the result depends on every argument, through N dependent adds.
            #[no_mangle]
            #[inline(never)]
            pub extern "C" fn $name($($a: u64,)* $last: u64) -> u64 {
                opaque();
                let x = barrier($last.wrapping_add(1));
                $(let x = barrier(x.wrapping_add($a));)*
                x
            }
        };
    }
    callee!(yamba_call1, a);
    callee!(yamba_call2, b, a);
    callee!(yamba_call3, c, a, b);
    callee!(yamba_call4, d, a, b, c);
    callee!(yamba_call5, e, a, b, c, d);
    callee!(yamba_call6, f, a, b, c, d, e);
    callee!(yamba_call7, g, a, b, c, d, e, f);
}

fn run_calls(ctx: &mut Ctx) -> Result<(), String> {
    let mut chained: Vec<Option<f64>> = Vec::new();
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

/// The chain's value after `calls` calls of `yamba_callN` from `x`, every
/// argument the previous result: x ← N·x + 1, composed by squaring.
pub fn chain_value(n: u64, x: u64, calls: u64) -> u64 {
    // (a, b) is the map x ↦ a·x + b; `step` is applied once per bit.
    let (mut a, mut b) = (1u64, 0u64);
    let (mut sa, mut sb) = (n, 1u64);
    let mut k = calls;
    while k > 0 {
        if k & 1 == 1 {
            // (step ∘ acc)(x) = sa·(a·x + b) + sb
            a = sa.wrapping_mul(a);
            b = sa.wrapping_mul(b).wrapping_add(sb);
        }
        (sa, sb) = (sa.wrapping_mul(sa), sa.wrapping_mul(sb).wrapping_add(sb));
        k >>= 1;
    }
    a.wrapping_mul(x).wrapping_add(b)
}

/// N is a constant, so P'' and F compile to straight runs of N-argument
/// calls (or of the bare argument moves), with no dispatch in the loop.
///
/// Hot: `cpu.call.N` is the latency of a chain of calls (every argument
/// the previous result; for N = 0 the chain goes through the callee's
/// counter in memory); `cpu.call.N.throughput` is independent calls, where
/// the argument moves and the calls overlap. Cold: one call. `chained`
/// collects the chained medians for the next N's evidence.
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

    // Each operation is CHAIN calls in a row, the value in a register
    // throughout: between operations the closure's state goes through
    // memory (the unrolled loop stores it), and a store-to-load forwarding
    // on the chain at every operation would be counted as the call's.
    let mut p = [1u64, 0];
    let mut f = 0u64;
    let carried_before = CARRIED.load(Ordering::Relaxed);
    let mut m = ctx.measure_loop(
        || {
            let mut x = p[0];
            for _ in 0..CHAIN {
                x = if N == 0 {
                    calls::call_carried()
                } else {
                    calls::call_chained(N, x)
                };
            }
            p[0] = x;
            p[1] += CHAIN;
        },
        || f += 1,
    );
    std::hint::black_box(f);
    per_call(&mut m);
    let [x, calls_made] = p;
    let mut r = ctx.measured_result(Some(&N.to_string()), m);
    if N == 0 {
        r.description = "procedure call and return without arguments, latency: the callee loads the counter the previous call stored, adds one and stores it".into();
        describe::<N>(
            &mut r,
            "chained through memory: each call loads what the previous one stored (latency)",
        );
        r.param("callee", "yamba_call0_carry");
        let carried = CARRIED.load(Ordering::Relaxed).wrapping_sub(carried_before);
        r.add_evidence(
            "every call carried the counter to the next (it grew by one per call made, and the last call returned it)",
            format!("{calls_made} calls, last result {}", carried_before.wrapping_add(calls_made)),
            format!("grew by {carried}, last result {x}"),
            carried == calls_made && x == carried_before.wrapping_add(calls_made) && calls_made > 0,
        );
    } else {
        r.description = format!(
            "procedure call and return with {N} integer argument(s), latency: every argument is the previous call's result, which depends on every argument"
        );
        describe::<N>(
            &mut r,
            "chained: every argument is the previous call's result (latency)",
        );
        let want = chain_value(N as u64, 1, calls_made);
        r.add_evidence(
            "every call's result was fed to the next call's arguments (the chain's final value is what the calls compute)",
            format!("{want} after {calls_made} calls"),
            x.to_string(),
            x == want && calls_made > 0,
        );
    }
    let median = r.median();
    let mhz = r.method.as_ref().and_then(|m| m.core_mhz);
    if let (Some(ns), Some(mhz)) = (median, mhz) {
        let cycles = ns * mhz / 1e3;
        r.add_evidence(
            "a chained call lasts at least one core cycle (its callee's add or store-forwarded load is on the chain)",
            "≥ 1 cycle",
            format!("{cycles:.2} cycles at {mhz:.0} MHz"),
            cycles >= 1.0,
        );
        r.param("cycles_per_call", cycles);
    }
    r.param("calls_per_operation", CHAIN);
    if let (Some(c), Some(t)) = (gross(&r), throughput) {
        r.add_note_evidence(
            format!(
                "a chained call costs at least an independent one, the loop's own instructions included ({:.0}% noise allowed)",
                NOISE * 100.0
            ),
            format!("≥ {t:.3} ns per iteration (cpu.call.{N}.throughput)"),
            format!("{c:.3} ns per iteration"),
            c >= t * (1.0 - NOISE),
        );
        r.param("per_iteration_ns", c);
    }
    // From 2 arguments on, one more argument is one more register on the
    // chain and one more add in the callee: never cheaper. (0 → 1 changes
    // the chain's kind, memory to registers, and need not rise.) A note,
    // not a gate: under the call's own floor (N up to 4 on Zen 4, up to 5
    // on Golden Cove-class cores) the adds are hidden and the unrolled
    // loop's placement moves the value by more than an add.
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

/// Calls per operation of the chained loop.
pub const CHAIN: u64 = 32;

/// From one observation per operation of [`CHAIN`] calls to one per call.
fn per_call(m: &mut yamba_core::harness::Measured) {
    for o in &mut m.observations {
        *o /= CHAIN as f64;
    }
    m.method.iterations *= CHAIN;
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
    #[cfg_attr(
        debug_assertions,
        ignore = "reads the optimised build's code (the unrolled loops): run with --release"
    )]
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
        assert!(
            out.lines()
                .any(|l| l.contains("call") && l.contains("<yamba_call0_carry>")),
            "no call instruction reaches yamba_call0_carry"
        );
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

    /// The closed form agrees with calling the callees one after another.
    #[test]
    fn chain_value_is_the_callees_composed() {
        let callees: [fn(u64) -> u64; 7] = [
            |x| yamba_call1(x),
            |x| yamba_call2(x, x),
            |x| yamba_call3(x, x, x),
            |x| yamba_call4(x, x, x, x),
            |x| yamba_call5(x, x, x, x, x),
            |x| yamba_call6(x, x, x, x, x, x),
            |x| yamba_call7(x, x, x, x, x, x, x),
        ];
        for (i, f) in callees.iter().enumerate() {
            let mut x = 1u64;
            for k in 0..200u64 {
                assert_eq!(
                    chain_value(i as u64 + 1, 1, k),
                    x,
                    "N = {}, {k} calls",
                    i + 1
                );
                x = f(x);
            }
        }
    }
}
