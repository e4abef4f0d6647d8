//! Area `cpu`: the system call shapes' table and evidence. (The ground
//! truth — C loops of the same three shapes — runs against the `yamba`
//! binary in yamba-cli's tests/syscall_shapes.rs: a fork of this
//! multi-threaded test process would measure glibc's multi-threaded read().)

mod support;

use support::{find, quick_session};
use yamba_core::Mode;
use yamba_suite::cpu::syscall::GETPPID;

/// The shapes' table is attached to the inline result, names every shape,
/// and the gap's evidence quotes what the machine says.
#[test]
fn the_shapes_are_tabled_with_the_machines_mitigations() {
    let (s, _guard) = quick_session(false);
    let rs = support::run_logged(s, &GETPPID, Mode::Hot);
    let head = find(&rs, "cpu.syscall.getppid");
    let rows = head.extra["comparison"].as_array().unwrap();
    let shapes: Vec<&str> = rows.iter().map(|r| r["column"].as_str().unwrap()).collect();
    assert_eq!(shapes, ["inline", "call", "libc"]);
    assert!(rows.iter().all(|r| r["median_ns"].as_f64().unwrap() > 0.0));
    let gap = head
        .evidence
        .iter()
        .find(|e| e.check.contains("call-wrapped"))
        .expect("the gap's evidence");
    assert!(!gap.gating);
    for (name, line) in &s.machine.vulnerabilities {
        if yamba_suite::cpu::syscall::RETURN_MITIGATIONS.contains(&name.as_str()) {
            assert!(gap.expected.contains(line.as_str()), "{gap:?}");
        }
    }
    assert!(rows.iter().all(|r| r["row"] == "getppid"));
}
