//! yamba's benchmarks, one module per area.
//!
//! Each benchmark is a small file that reads like the documents' notation:
//! the operation P, the program P'' that repeats it, the dummy F, the
//! assumptions it checks at run time, and its platform adapter (the
//! area's `adapter` folder: `mod.rs` picks `linux.rs` or `unsupported.rs`;
//! see docs/writing-benchmarks.md).

pub mod cpu;
pub mod fs;
pub mod ipc;
pub mod mem;
pub mod net;
pub mod proc;
pub mod remote;
pub mod sched;
pub mod session;
pub mod shared;
pub mod signal;
pub mod space;
pub mod testing;

/// The mapping helpers the areas' Linux adapters share (yamba-os).
#[cfg(linux_adapters)]
use yamba_os::mmap as os;

use yamba_core::Benchmark;

/// Every benchmark, in suite order. Test-only benchmarks are included only
/// when YAMBA_TEST_BENCHMARKS=1.
pub fn all() -> Vec<&'static Benchmark> {
    let show_hidden = std::env::var("YAMBA_TEST_BENCHMARKS").is_ok_and(|v| v == "1");
    registered().filter(|b| show_hidden || !b.hidden).collect()
}

/// Every benchmark registered, test-only ones included.
fn registered() -> impl Iterator<Item = &'static Benchmark> {
    [
        cpu::BENCHMARKS,
        proc::BENCHMARKS,
        ipc::BENCHMARKS,
        signal::BENCHMARKS,
        sched::BENCHMARKS,
        space::BENCHMARKS,
        mem::BENCHMARKS,
        fs::BENCHMARKS,
        net::BENCHMARKS,
        testing::BENCHMARKS,
    ]
    .into_iter()
    .flatten()
    .copied()
}

/// The benchmark with this exact id (test-only ones included when shown).
pub fn find(id: &str) -> Option<&'static Benchmark> {
    all().into_iter().find(|b| b.id == id)
}

/// Selects benchmarks by exact id, area, or dotted prefix (`cpu.syscall`).
/// A name that is a benchmark's id selects that benchmark alone, even where
/// it is also a prefix of others (`mem.latency` is not also
/// `mem.latency.huge`; `mem.bandwidth.read` does not also run its curve).
/// With no names: the default suite. An unknown name is an error naming it.
pub fn select(names: &[String]) -> Result<Vec<&'static Benchmark>, String> {
    let all = all();
    if names.is_empty() {
        return Ok(all.into_iter().filter(|b| b.default).collect());
    }
    let mut chosen: Vec<&'static Benchmark> = Vec::new();
    for name in names {
        let exact = all.iter().any(|b| b.id == name);
        let matched: Vec<&'static Benchmark> = all
            .iter()
            .copied()
            .filter(|b| {
                b.id == name
                    || (!exact && (b.area == name || b.id.starts_with(&format!("{name}."))))
            })
            .collect();
        if matched.is_empty() {
            return Err(format!(
                "unknown benchmark or area '{name}' (see 'yamba list')"
            ));
        }
        for b in matched {
            if !chosen.iter().any(|c| c.id == b.id) {
                chosen.push(b);
            }
        }
    }
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;
    use yamba_core::{Cold, Mode};

    #[test]
    fn ids_are_unique_and_in_their_area() {
        let all = all();
        for (i, b) in all.iter().enumerate() {
            assert!(b.id.starts_with(&format!("{}.", b.area)), "{}", b.id);
            assert!(!b.description.is_empty(), "{} has no description", b.id);
            assert!(
                all[i + 1..].iter().all(|c| c.id != b.id),
                "duplicate {}",
                b.id
            );
        }
    }

    /// One naming scheme: every setting's key starts with its benchmark's
    /// area; a key shared by several benchmarks is declared the same way.
    #[test]
    fn settings_are_area_prefixed_and_declared_once() {
        let all = all();
        for b in &all {
            for s in b.settings {
                assert!(
                    s.key.starts_with(&format!("{}.", b.area)) || s.key == "net.peer_cpu",
                    "{}: setting {} outside its area",
                    b.id,
                    s.key
                );
                assert!(!s.help.is_empty() && !s.default.is_empty(), "{}", s.key);
                for other in all.iter().flat_map(|o| o.settings) {
                    if other.key == s.key {
                        assert_eq!(other, s, "{} declared two ways", s.key);
                    }
                    for alias in s.aliases {
                        assert!(!other.answers_to(alias) || other.key == s.key, "{alias}");
                    }
                }
            }
        }
        // 22 in all; ipc.delay_us belongs to a test-only benchmark, shown
        // only with YAMBA_TEST_BENCHMARKS=1.
        let keys = yamba_core::settings::declared(&all);
        assert!(keys.len() >= 21, "{} settings declared", keys.len());
    }

    /// Every benchmark, test-only ones included, chose: a cold mode, or a
    /// one-line reason why a cold case would not mean something for it —
    /// never the template's unchosen state, never an empty reason.
    #[test]
    fn every_benchmark_measures_cold_or_says_why_not() {
        let mut measured = 0;
        for b in registered() {
            match b.cold {
                Cold::Measured => {
                    measured += 1;
                    assert!(b.supports(Mode::Cold) && b.no_cold().is_none(), "{}", b.id);
                }
                Cold::NotMeaningful(why) => {
                    assert!(!b.supports(Mode::Cold), "{}", b.id);
                    assert!(
                        why.len() >= 20 && !why.contains('\n') && !why.ends_with('.'),
                        "{}: a one-line reason, not {why:?}",
                        b.id
                    );
                }
                Cold::Unchosen => panic!("{} chose neither a cold mode nor a reason", b.id),
            }
            assert!(b.supports(Mode::Hot), "{}", b.id);
        }
        assert!(measured >= 35, "{measured} benchmarks measure cold");
    }

    #[test]
    fn select_by_area_prefix_and_rejects_unknown() {
        let cpu = select(&["cpu".into()]).unwrap();
        assert!(!cpu.is_empty() && cpu.iter().all(|b| b.area == "cpu"));
        let calls = select(&["cpu.syscall".into()]).unwrap();
        assert!(calls.len() > 1, "a prefix selects every benchmark under it");
        // An exact id that is also a prefix of other ids is that one alone.
        for id in ["mem.latency", "mem.bandwidth.read", "cpu.ops"] {
            assert!(all().iter().any(|b| b.id.starts_with(&format!("{id}."))));
            let got: Vec<&str> = select(&[id.into()]).unwrap().iter().map(|b| b.id).collect();
            assert_eq!(got, [id]);
        }
        let err = select(&["nope.such".into()]).unwrap_err();
        assert!(err.contains("nope.such"), "{err}");
    }
}
