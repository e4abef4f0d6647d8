//! `yamba report`'s page, read as text: self-contained, every section a
//! reader needs, values where the files put them, the comparison's
//! verdicts as `compare` gives them, and every figure holding its points.
//! (tests/report_browser.rs in yamba-cli renders it in Chromium.)

mod support;

use yamba_report::html::{self, Options, Run};
use yamba_results::units::Unit;
use yamba_results::{Mode, ResultsFile};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/quick-both.json");

fn run(label: &str, file: ResultsFile) -> Run {
    Run {
        label: label.into(),
        file,
    }
}

/// A precise run: getppid in 6 processes around `median` ns, plus the
/// sample file's shapes (hot/cold, withheld, skipped, a curve).
fn precise(seed: u64, median: f64) -> ResultsFile {
    let mut f = support::sample_file();
    f.results.retain(|r| r.id != "cpu.syscall.getppid");
    f.results.insert(
        0,
        support::blocked(
            "cpu.syscall.getppid",
            Mode::Hot,
            Unit::Nanoseconds,
            support::processes(seed, 6, 40, median, 0.01, 0.03),
        ),
    );
    f
}

/// Every `<svg class="chart">` on the page: its `data-figure`, the sum of
/// its series' `data-n`, and how many `pt` marks it holds.
fn figures(page: &str) -> Vec<(String, usize, usize)> {
    let mut out = Vec::new();
    for chunk in page.split("<svg class=\"chart\"").skip(1) {
        let svg = &chunk[..chunk.find("</svg>").expect("unclosed svg")];
        let id = svg
            .split("data-figure=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .unwrap_or("")
            .to_string();
        let declared: usize = svg
            .split("<g class=\"series\"")
            .skip(1)
            .map(|g| {
                g.split("data-n=\"")
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap()
                    .parse::<usize>()
                    .unwrap()
            })
            .sum();
        let pts = svg.matches("class=\"pt").count();
        out.push((id, declared, pts));
    }
    out
}

fn assert_self_contained(page: &str) {
    for bad in [
        "src=\"http",
        "href=\"http",
        "<link",
        "@import",
        "<img",
        "<iframe",
        "fetch(",
        "XMLHttpRequest",
    ] {
        assert!(!page.contains(bad), "the page refers outside itself: {bad}");
    }
    // url() only for the page's own clip paths.
    assert_eq!(
        page.matches("url(").count(),
        page.matches("url(#").count(),
        "url() outside the page"
    );
    // The only absolute URL is the SVG namespace, which is a name, not a fetch.
    let urls = page.matches("http://").count() + page.matches("https://").count();
    let ns = page.matches("xmlns=\"http://www.w3.org/2000/svg\"").count();
    assert_eq!(urls, ns, "absolute URLs other than the SVG namespace");
}

#[test]
fn a_real_run_has_every_section_and_figure() {
    let file = yamba_results::read_results(FIXTURE).unwrap();
    let opts = Options {
        histograms: vec!["cpu.syscall.getppid".into()],
        ..Default::default()
    };
    let page = html::render(&[run("quick-both", file.clone())], &opts);
    assert_self_contained(&page);
    for id in [
        "runs",
        "machine",
        "config",
        "withheld",
        "predictions",
        "area-cpu",
        "area-mem",
        "area-fs",
    ] {
        assert!(
            page.contains(&format!("<section id=\"{id}\">")),
            "no section {id}"
        );
    }
    // The machine as the study lists it.
    for want in [
        "Processor",
        "family 6, model 167",
        "Core clock",
        "Caches",
        "L1d 48 KiB",
        "Disks",
        "Operating system",
        "Hypervisor",
    ] {
        assert!(page.contains(want), "machine: no {want:?}");
    }
    // Each withheld result is explained in words, with its reason.
    let withheld: Vec<_> = file
        .results
        .iter()
        .filter(|r| r.status == yamba_results::Status::Withheld)
        .collect();
    assert!(!withheld.is_empty());
    for r in &withheld {
        let reason = r.reason.as_deref().unwrap();
        let reason = reason.trim_start_matches("assumption failed: ");
        let words = html::in_words(r);
        assert!(
            words.contains("withheld") && words.contains(reason),
            "{words}"
        );
        assert!(
            page.contains(&yamba_plot::svg::escape(&words)),
            "{} not explained on the page",
            r.key()
        );
    }
    // Hot and cold side by side with their ratio.
    assert!(page.contains(">best case, hot (") && page.contains(">worst case, cold ("));
    assert!(page.contains(">cold / hot</th>"));
    // Predictions in the study's columns.
    for col in [
        "Hardware guess",
        "Software multiplier",
        "Prediction",
        "Measured",
        "Std dev",
        "measured / predicted",
    ] {
        assert!(
            page.contains(&format!(">{col}</th>")),
            "predictions: no column {col}"
        );
    }
    for area in ["cpu.", "mem.", "fs."] {
        let rows = page
            .split("<tr data-agreement=")
            .skip(1)
            .filter(|row| row.contains(&format!("\">{area}")))
            .count();
        assert!(rows >= 2, "fewer than 2 predictions in {area}");
    }
    // Every figure the issue lists, each with all its points.
    let figs = figures(&page);
    for want in [
        "base-0",
        "mem-latency",
        "mem-pagefault",
        "fs-cache-size",
        "fs-read",
        "fs-contention",
        "bars-cpu-0",
        "hist-0-cpu.syscall.getppid-hot",
    ] {
        assert!(
            figs.iter().any(|f| f.0 == want),
            "no figure {want}: {figs:?}"
        );
    }
    for (id, declared, pts) in &figs {
        assert!(
            *pts > 0 && pts == declared,
            "figure {id}: {pts} points drawn, {declared} declared"
        );
    }
    // The latency figure marks the detected levels and overlays both page sizes.
    let lat = page.split("data-figure=\"mem-latency\"").nth(1).unwrap();
    let lat = &lat[..lat.find("</svg>").unwrap()];
    assert!(
        lat.contains("4 KiB") && lat.contains("2 MiB"),
        "page-size curves"
    );
    assert!(
        lat.matches("class=\"marker").count() >= 2,
        "cache level markers"
    );
    // The page-fault figure shows its fitted line and R².
    let pf = page.split("id=\"fig-mem-pagefault\"").nth(1).unwrap();
    let pf = &pf[..pf.find("</figure>").unwrap()];
    assert!(
        pf.contains("class=\"model\"") && pf.contains("R²"),
        "fit and R²"
    );
}

#[test]
fn several_runs_get_a_column_each_and_compare_verdicts() {
    let a = precise(1, 100.0);
    let b = precise(2, 130.0);
    let page = html::render(
        &[run("before", a.clone()), run("after", b.clone())],
        &Options::default(),
    );
    assert_self_contained(&page);
    assert!(
        page.contains("<th>before</th><th>after</th>"),
        "one column per run"
    );
    assert!(page.contains(">before hot</th>") && page.contains(">after hot</th>"));
    let cmp = page
        .split("<section id=\"comparison\">")
        .nth(1)
        .expect("comparison section");
    // The verdicts are compare's own.
    let c = yamba_report::compare::compare(&a, &b, 0.95);
    let row = c
        .rows
        .iter()
        .find(|r| r.key.starts_with("cpu.syscall.getppid"))
        .unwrap();
    assert_eq!(
        row.verdict,
        yamba_report::compare::Verdict::Slower,
        "{row:?}"
    );
    let tr = cmp
        .split("<tr>")
        .find(|tr| tr.contains(">cpu.syscall.getppid"))
        .unwrap();
    assert!(tr.contains("class=\"slower\">slower<"), "{tr}");
    assert!(cmp.contains("1 slower"), "tally");
    // A run against itself: nothing called.
    let same = html::render(&[run("a", a.clone()), run("b", a)], &Options::default());
    let cmp = same.split("<section id=\"comparison\">").nth(1).unwrap();
    assert!(cmp.contains("0 faster, 0 slower"), "{}", &cmp[..400]);
}

/// A withheld result's reason appears once in the withheld section: the
/// sentence quotes the failed checks, so they are not listed again below it.
#[test]
fn a_withheld_reason_is_said_once() {
    let file = yamba_results::read_results(FIXTURE).unwrap();
    let page = html::render(&[run("quick-both", file.clone())], &Options::default());
    let start = page.find("<section id=\"withheld\">").unwrap();
    let section = &page[start..start + page[start..].find("</section>").unwrap()];
    let failures: Vec<String> = file
        .results
        .iter()
        .filter(|r| r.status == yamba_results::Status::Withheld)
        .flat_map(|r| r.evidence.iter().filter(|e| e.gating && !e.ok))
        .map(|e| yamba_plot::svg::escape(&e.check))
        .collect();
    let mut checked = 0;
    for text in &failures {
        // Once per result it withheld (hot and cold can fail alike).
        let results = failures.iter().filter(|t| *t == text).count();
        assert_eq!(section.matches(text.as_str()).count(), results, "{text}");
        checked += 1;
    }
    assert!(
        checked > 0,
        "the fixture has no withheld result with a failed check"
    );
}

/// The hypervisor is named as people name it, not by its CPUID signature,
/// in the machine section and in the predictions' words.
#[test]
fn the_hypervisor_is_named_in_words() {
    let file = yamba_results::read_results(FIXTURE).unwrap();
    assert_eq!(file.machine.hypervisor.as_deref(), Some("KVMKVMKVM"));
    let page = html::render(&[run("quick-both", file)], &Options::default());
    // (The file's own notes, written by the run, are quoted as they are.)
    for id in ["machine", "predictions"] {
        let start = page.find(&format!("<section id=\"{id}\">")).unwrap();
        let section = &page[start..start + page[start..].find("</section>").unwrap()];
        assert!(!section.contains("KVMKVMKVM"), "{id}: the raw signature");
        assert!(section.contains("KVM"), "{id}: no hypervisor named");
    }
}

/// The page opens with the key numbers: lmbench's headline primitives, a
/// column per run with the value and its interval, and, with several
/// runs, each later run's verdict against the first.
#[test]
fn the_key_numbers_come_first() {
    let file = yamba_results::read_results(FIXTURE).unwrap();
    let page = html::render(&[run("quick-both", file.clone())], &Options::default());
    let key = page.find("<section id=\"key\">").expect("no key numbers");
    for other in ["runs", "machine", "withheld", "predictions", "area-cpu"] {
        let at = page.find(&format!("<section id=\"{other}\">")).unwrap();
        assert!(key < at, "the key numbers come after {other}");
    }
    let section = &page[key..key + page[key..].find("</section>").unwrap()];
    // The fixture's getppid (an older id) fills the system call's row, with
    // the value the area table shows.
    let r = file
        .results
        .iter()
        .find(|r| r.id == "cpu.syscall.getppid" && r.mode == Mode::Hot)
        .unwrap();
    let (v, ci) = r.headline().unwrap();
    let row = section
        .split("<tr>")
        .find(|row| row.contains("null system call"))
        .expect("no system call row");
    let (div, _) = r.unit.scale_for(v);
    assert!(row.contains(&html::num(v / div)), "{row}");
    assert!(row.contains(&html::num(ci.unwrap().lo / div)), "{row}");
    // A row whose results no run has is left out.
    assert!(!section.contains("memory copy bandwidth (libc)"));

    // Two runs: a column each, and the second's verdict against the first.
    let page = html::render(
        &[run("a", precise(1, 100.0)), run("b", precise(2, 120.0))],
        &Options::default(),
    );
    let key = page.find("<section id=\"key\">").unwrap();
    let section = &page[key..key + page[key..].find("</section>").unwrap()];
    assert!(section.contains("<th>b vs a</th>"), "{section}");
    let row = section
        .split("<tr>")
        .find(|row| row.contains("null system call"))
        .unwrap();
    assert!(row.contains("slower (+"), "{row}");
}

/// A time measured at a known core clock shows its value in cycles beside
/// it: blocks of 100 and 102 ns at 3000 MHz are 300 and 306 cycles, mean
/// 303, interval 303 ± 12.706 · 3√2/√2 = [264.9, 341.1]. A time without a
/// clock leaves its cycles cell blank.
#[test]
fn times_show_their_cycles_where_the_clock_was_recorded() {
    use yamba_results::{BlockKind, Certainty};
    let mut known = support::result(
        "cpu.known",
        Mode::Hot,
        Unit::Nanoseconds,
        vec![100.0, 102.0],
    );
    known.certainty = Certainty::from_blocks(
        BlockKind::Process,
        vec![100.0, 102.0],
        vec![1, 1],
        0.0,
        vec![3000.0, 3000.0],
    );
    let bare = support::result(
        "cpu.unclocked",
        Mode::Hot,
        Unit::Nanoseconds,
        vec![50.0; 10],
    );
    let page = html::render(
        &[run("a", support::file(vec![known, bare]))],
        &Options::default(),
    );
    let row = |id: &str| {
        let at = page
            .find(&format!("<td class=\"id\">{id}</td>"))
            .unwrap_or_else(|| panic!("no row {id}"));
        page[at..at + page[at..].find("</tr>").unwrap()].to_string()
    };
    let cells = |row: &str| -> Vec<String> {
        row.split("<td class=\"num cycles\">")
            .skip(1)
            .map(|c| c[..c.find("</td>").unwrap()].to_string())
            .collect()
    };
    assert!(page.contains(">cycles</th>"), "no cycles heading");
    assert_eq!(
        cells(&row("cpu.known")),
        ["303.0<span class=\"ci\">[264.9, 341.1]</span>"]
    );
    assert_eq!(cells(&row("cpu.unclocked")), [""]);
}
