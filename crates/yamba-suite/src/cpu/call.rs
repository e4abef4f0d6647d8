//! P = a procedure call with 0 to 7 integer arguments and its return.
//!
//! The callees are `extern "C"` and `#[no_mangle]`; the adapter calls them
//! from machine code (`adapter::calls`), so the call really happens, directly,
//! with the C calling convention, whatever the optimiser knows about the
//! callee — the tests disassemble the binary and find the `call`
//! instructions. F places the same arguments in the same registers without
//! the call, so only the call, the callee's body and the return are left
//! after subtraction.

use super::adapter::{self, calls};
use yamba_core::{Benchmark, Ctx, Mode, Unit};

pub static CALL: Benchmark = Benchmark {
    id: "cpu.call",
    area: "cpu",
    unit: Unit::Nanoseconds,
    description: "procedure call and return with 0 to 7 integer arguments (cpu.call.N)",
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
    call_with::<0>(ctx);
    call_with::<1>(ctx);
    call_with::<2>(ctx);
    call_with::<3>(ctx);
    call_with::<4>(ctx);
    call_with::<5>(ctx);
    call_with::<6>(ctx);
    call_with::<7>(ctx);
    Ok(())
}

/// N is a constant, so P'' and F compile to straight runs of N-argument
/// calls (or of the bare argument moves), with no dispatch in the loop.
fn call_with<const N: u32>(ctx: &mut Ctx) {
    let args = std::hint::black_box([1u64, 2, 3, 4, 5, 6, 7]);
    let m = match ctx.mode {
        Mode::Hot => ctx.measure_loop(|| calls::call(N, &args), || calls::dummy(N, &args)),
        Mode::Cold => ctx.measure_single(|| {}, || calls::call(N, &args)),
    };
    let mut r = ctx.measured_result(Some(&N.to_string()), m);
    r.description = format!("procedure call and return with {N} integer argument(s)");
    r.param("args", N);
    r.param("callee", format!("yamba_call{N}"));
    ctx.push(r);
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
    }
}
