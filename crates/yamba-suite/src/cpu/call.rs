//! P = a procedure call with 0 to 7 integer arguments and its return.
//!
//! The callees are `#[inline(never)]`, `extern "C"` and `#[no_mangle]`, so
//! the call really happens with the C calling convention and the generated
//! code can be checked (the tests disassemble the binary and find the
//! `call` instructions). Arguments and the result pass through `black_box`,
//! in F as in P'', so only the call, the argument moves and the return are
//! left after subtraction.

use std::hint::black_box;
use yamba_core::{Benchmark, Ctx, Mode, Unit};

pub static CALL: Benchmark = Benchmark {
    id: "cpu.call",
    area: "cpu",
    unit: Unit::Nanoseconds,
    description: "procedure call and return with 0 to 7 integer arguments (cpu.call.N)",
    modes: &[Mode::Hot, Mode::Cold],
    adapter: "extern-C",
    run: run_calls,
    ..Benchmark::TEMPLATE
};

#[no_mangle]
#[inline(never)]
pub extern "C" fn yamba_call0() -> u64 {
    1
}
#[no_mangle]
#[inline(never)]
pub extern "C" fn yamba_call1(a: u64) -> u64 {
    a
}
#[no_mangle]
#[inline(never)]
pub extern "C" fn yamba_call2(a: u64, b: u64) -> u64 {
    a ^ b
}
#[no_mangle]
#[inline(never)]
pub extern "C" fn yamba_call3(a: u64, b: u64, c: u64) -> u64 {
    a ^ b ^ c
}
#[no_mangle]
#[inline(never)]
pub extern "C" fn yamba_call4(a: u64, b: u64, c: u64, d: u64) -> u64 {
    a ^ b ^ c ^ d
}
#[no_mangle]
#[inline(never)]
pub extern "C" fn yamba_call5(a: u64, b: u64, c: u64, d: u64, e: u64) -> u64 {
    a ^ b ^ c ^ d ^ e
}
#[no_mangle]
#[inline(never)]
pub extern "C" fn yamba_call6(a: u64, b: u64, c: u64, d: u64, e: u64, f: u64) -> u64 {
    a ^ b ^ c ^ d ^ e ^ f
}
#[no_mangle]
#[inline(never)]
pub extern "C" fn yamba_call7(a: u64, b: u64, c: u64, d: u64, e: u64, f: u64, g: u64) -> u64 {
    a ^ b ^ c ^ d ^ e ^ f ^ g
}

/// Measures a call with `$n` arguments: P'' calls, F only moves the same
/// values through `black_box`.
macro_rules! measure_call {
    ($ctx:expr, $f:ident $(, $arg:ident)*) => {{
        $( let $arg: u64 = black_box(7); )*
        match $ctx.mode {
            Mode::Hot => $ctx.measure_loop(
                || { black_box($f($(black_box($arg)),*)); },
                || { $( black_box($arg); )* black_box(0u64); },
            ),
            Mode::Cold => $ctx.measure_single(|| {}, || { black_box($f($(black_box($arg)),*)); }),
        }
    }};
}

fn run_calls(ctx: &mut Ctx) -> Result<(), String> {
    for n in 0..=7u32 {
        let m = match n {
            0 => measure_call!(ctx, yamba_call0),
            1 => measure_call!(ctx, yamba_call1, a),
            2 => measure_call!(ctx, yamba_call2, a, b),
            3 => measure_call!(ctx, yamba_call3, a, b, c),
            4 => measure_call!(ctx, yamba_call4, a, b, c, d),
            5 => measure_call!(ctx, yamba_call5, a, b, c, d, e),
            6 => measure_call!(ctx, yamba_call6, a, b, c, d, e, f),
            _ => measure_call!(ctx, yamba_call7, a, b, c, d, e, f, g),
        };
        let mut r = ctx.measured_result(Some(&n.to_string()), m);
        r.description = format!("procedure call and return with {n} integer argument(s)");
        r.param("args", n);
        r.param("callee", format!("yamba_call{n}"));
        ctx.push(r);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The callees exist as real functions in the binary and are reached by
    /// `call` instructions: nothing was inlined or folded away.
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
            assert!(out.contains(&format!("{sym}:")), "{sym} is not a function in the binary");
            assert!(
                out.lines().any(|l| l.contains("call") && l.contains(&sym)),
                "no call instruction reaches {sym}"
            );
        }
    }
}
