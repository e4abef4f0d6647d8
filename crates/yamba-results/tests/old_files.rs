//! Results files written by yamba 0.1.0 (before the types moved to this
//! crate) still read, and read identically: parsing and writing one back
//! gives the same bytes. The files in `files/` are real output of that
//! version (`yamba run --quick … --format json`, `yamba stone`), with the
//! longest observation lists cut to a few values by deleting lines, so that
//! what is left is still exactly what serde_json printed.

use std::path::Path;
use yamba_results::{MethodKind, Mode, ResultsFile, Status, Unit};

fn text(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/files")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn round_trip(name: &str) -> (ResultsFile, String, String) {
    let before = text(name);
    let file = ResultsFile::from_json(&before).unwrap_or_else(|e| panic!("{name}: {e}"));
    let after = serde_json::to_string_pretty(&file).unwrap();
    (file, before, after)
}

#[test]
fn a_run_file_reads_back_byte_for_byte() {
    let (file, before, after) = round_trip("run-v0.1.0.json");
    assert_eq!(before, after, "writing the file back changed it");
    assert_eq!(file.tool.version, "0.1.0");
    assert!(file.complete);
    let r = file
        .results
        .iter()
        .find(|r| r.id == "cpu.syscall.getppid" && r.mode == Mode::Hot)
        .unwrap();
    assert_eq!(r.status, Status::Ok);
    assert_eq!(r.unit, Unit::Nanoseconds);
    assert_eq!(r.method.as_ref().unwrap().kind, MethodKind::Loop);
    let cold = file
        .results
        .iter()
        .find(|r| r.id == "cpu.syscall.getppid" && r.mode == Mode::Cold)
        .unwrap();
    assert_eq!(cold.method.as_ref().unwrap().kind, MethodKind::Single);
    assert!(file.results.iter().any(|r| r.status == Status::Withheld));
    assert!(file.results.iter().any(|r| r.status == Status::Skipped));
    assert!(file.results.iter().any(|r| r.series.is_some()));
    assert!(file
        .results
        .iter()
        .filter_map(|r| r.method.as_ref())
        .any(|m| m.kind == MethodKind::Direct));
}

#[test]
fn a_stone_file_reads_back_byte_for_byte() {
    let (file, before, after) = round_trip("stone-v0.1.0.json");
    assert_eq!(before, after, "writing the file back changed it");
    assert_eq!(file.results.len(), 1);
    assert!(file.results[0].extra.contains_key("runs"));
}

/// yamba 0.1.0 wrote free text into `method.kind` for the cold round trips
/// of `ipc` ("single (cold: evict, …)"): such a file still reads, as the
/// single method, and nothing else in it changes when written back.
#[test]
fn free_text_method_kinds_of_0_1_0_read_as_their_first_word() {
    let (file, before, after) = round_trip("legacy-method-kind-v0.1.0.json");
    let kinds: Vec<MethodKind> = file
        .results
        .iter()
        .filter_map(|r| r.method.as_ref().map(|m| m.kind))
        .collect();
    assert!(!kinds.is_empty());
    assert!(kinds.iter().all(|&k| k == MethodKind::Single), "{kinds:?}");
    let legacy = "\"kind\": \"single (cold: evict, disturb branches, sched_yield, then time one)\"";
    assert!(before.contains(legacy));
    assert_eq!(before.replace(legacy, "\"kind\": \"single\""), after);
}

#[test]
fn an_unknown_method_kind_is_an_error_naming_the_known_ones() {
    let e = serde_json::from_str::<MethodKind>("\"guess\"").unwrap_err();
    assert!(e.to_string().contains("loop"), "{e}");
    for k in [MethodKind::Loop, MethodKind::Single, MethodKind::Direct] {
        let s = serde_json::to_string(&k).unwrap();
        assert_eq!(s, format!("\"{}\"", k.as_str()));
        assert_eq!(serde_json::from_str::<MethodKind>(&s).unwrap(), k);
    }
}

#[test]
fn status_names_are_the_files_names() {
    for s in [
        Status::Ok,
        Status::Withheld,
        Status::Skipped,
        Status::Failed,
    ] {
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            format!("\"{}\"", s.as_str())
        );
    }
}

/// A result written before the best reading was stored: its shared-core
/// blocks were judged against its highest reading (6.55 adds per cycle,
/// one process of a Zen 5 guest's run whose clock read slow), and it still
/// reads as consistent by that rule, though today's rule — the best other
/// readings confirm, 4.8 — would name fewer of its processes shared.
#[test]
fn shared_core_blocks_judged_by_the_highest_reading_still_check() {
    use yamba_results::results::shared_core_blocks;
    let r: yamba_results::BenchResult =
        serde_json::from_str(&text("shared-core-by-highest-reading.json")).unwrap();
    yamba_results::check_result(&r).unwrap();
    let c = r.certainty.as_ref().unwrap();
    assert_eq!(c.core_adds_best, None);
    assert_eq!(c.adds_best(), Some(c.core_adds_per_cycle[0]));
    assert_eq!(c.shared_core, vec![1, 2, 3, 4, 5, 6]);
    assert_eq!(
        shared_core_blocks(&c.core_adds_per_cycle, c.core_adds_reference),
        vec![1, 2, 4, 5]
    );
    // Stored with today's best, the same blocks are inconsistent: the
    // check judges by what the file says it judged against.
    let mut now = r.clone();
    now.certainty.as_mut().unwrap().core_adds_best = Some(4.8);
    assert!(yamba_results::check_result(&now).is_err());
}
