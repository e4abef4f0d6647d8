//! Executable pages are never writable and executable at once: while
//! generated code is live, /proc/self/maps shows its pages r-x, and no
//! mapping of the process is both writable and executable.

use std::collections::BTreeMap;
use std::path::Path;
use yamba_lang::{Instance, Isa, Program};

#[test]
fn generated_code_pages_are_read_execute_only() {
    // The host's own platform class, so the generated code really runs
    // (the aarch64 one in CI's emulated arm64 system).
    let (file, class) = match Isa::host() {
        Some(Isa::X86_64) => ("pagefault_x86_64.yamba", "Y_pagefault_x86_64"),
        Some(Isa::Aarch64) => ("pagefault_aarch64.yamba", "Y_pagefault_aarch64"),
        _ => yamba_testkit::skip!(
            "no example class for this host's instruction set ({})",
            std::env::consts::ARCH
        ),
    };
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let (prog, _) = Program::load(&[examples.join(file)]).unwrap();
    let mut inst = Instance::new(&prog, class, &BTreeMap::new(), std::env::temp_dir()).unwrap();
    let codes: Vec<_> = (1..=8)
        .map(|m| inst.generate("pagefault_func", &[m]).unwrap())
        .collect();
    // The code runs: 8 touches of a page-strided buffer (pages of up to
    // 64 KiB, as arm64 kernels may have).
    let buf = vec![7u8; 8 * 65536];
    codes[7].call(&[buf.as_ptr() as u64]).unwrap();
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    for c in &codes {
        let p = yamba_lang::exec::permissions_of(c.addr()).unwrap();
        assert_eq!(&p[..3], "r-x", "{} at {:x}: {p}", c.label, c.addr());
    }
    let wx: Vec<&str> = maps
        .lines()
        .filter(|l| {
            l.split_whitespace()
                .nth(1)
                .is_some_and(|p| p.contains('w') && p.contains('x'))
        })
        .collect();
    assert!(wx.is_empty(), "writable and executable mappings: {wx:?}");
}
