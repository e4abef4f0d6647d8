//! Decides, once for the whole crate, which platform adapters are compiled:
//! `cfg(linux_adapters)` on Linux unless the `no-adapters` feature asks for
//! the build a platform without adapters gets (yamba-suite's `no-adapters`
//! turns this crate's on). Each module's `mod.rs` selects its
//! implementation file from this (see docs/writing-benchmarks.md).

fn main() {
    println!("cargo::rustc-check-cfg=cfg(linux_adapters)");
    println!("cargo::rerun-if-changed=build.rs");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    let off = std::env::var_os("CARGO_FEATURE_NO_ADAPTERS").is_some();
    if linux && !off {
        println!("cargo::rustc-cfg=linux_adapters");
    }
}
