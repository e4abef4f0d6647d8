//! Executable pages are never writable and executable at once: while
//! generated code is live, /proc/self/maps shows its pages r-x, and no
//! mapping of the process is both writable and executable.

use std::collections::BTreeMap;
use std::path::Path;
use yamba_lang::{Instance, Isa, Program};

#[test]
fn generated_code_pages_are_read_execute_only() {
    if Isa::host() != Some(Isa::X86_64) {
        println!(
            "SKIPPED: the example class is x86-64; this host is {}",
            std::env::consts::ARCH
        );
        return;
    }
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let (prog, _) = Program::load(&[examples.join("pagefault_x86_64.yamba")]).unwrap();
    let mut inst = Instance::new(
        &prog,
        "Y_pagefault_x86_64",
        &BTreeMap::new(),
        std::env::temp_dir(),
    )
    .unwrap();
    let codes: Vec<_> = (1..=8)
        .map(|m| inst.generate("pagefault_func", &[m]).unwrap())
        .collect();
    // The code runs: 8 touches of a page-strided buffer.
    let buf = vec![7u8; 8 * 4096];
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
