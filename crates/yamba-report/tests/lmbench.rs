//! lmbench's view of a constructed results file: each figure lands in
//! lmbench's column, in lmbench's unit, and a missing or withheld figure is
//! an explained blank. The export is read by lmbench's own getsummary
//! (taken from the peers' lmbench source beside the checkout: it is never
//! copied into the project) and
//! must put the same figures in the same columns.

mod support;

use support::{blocked, file, result};
use yamba_report::lmbench::{export, num, summary};
use yamba_results::results::{Mode, ResultsFile, Status};
use yamba_results::units::Unit;

/// A run with known medians: ns for times, GB/s for bandwidths.
fn constructed() -> ResultsFile {
    let ns = |id: &str, v: f64| result(id, Mode::Hot, Unit::Nanoseconds, vec![v, v, v]);
    let params = |id: &str, v: f64, k: &str, p: &str| {
        let mut r = ns(id, v);
        r.param(k, p);
        r
    };
    let mut withheld = ns("signal.sigaction", 350.0);
    withheld.add_evidence("the handler ran", "1", "0", false);
    withheld.apply_evidence();
    let mut skipped = result("net.tcp.rtt", Mode::Hot, Unit::Nanoseconds, vec![]);
    skipped.status = Status::Skipped;
    skipped.reason = Some("no network namespace".into());
    let bw = |id: &str, v: f64| result(id, Mode::Hot, Unit::GigabytesPerSecond, vec![v, v, v]);
    file(vec![
        // The raw instruction must not be taken for lmbench's null call.
        ns("cpu.syscall.getppid", 80.0),
        ns("cpu.syscall.getppid.libc", 170.0),
        // Cold mode is never lmbench's figure.
        result(
            "cpu.syscall.getppid.libc",
            Mode::Cold,
            Unit::Nanoseconds,
            vec![3000.0; 3],
        ),
        ns("cpu.syscall.read_devzero.libc", 200.0),
        // Through libc, as lmbench: the only shape write is measured in.
        ns("cpu.syscall.write_devnull", 160.0),
        ns("fs.meta.stat", 450.0),
        ns("cpu.syscall.select.tcp.100", 3_800.0),
        ns("proc.fork.light", 120_000.0),
        withheld,
        skipped,
        ns("ipc.rtt.pipe.same_cpu", 4_200.0),
        ns("ipc.rtt.pipe.cross_cpu", 9_900.0),
        params(
            "net.udp.rtt",
            21_000.0,
            "endpoint",
            "loopback (peer thread)",
        ),
        // Against a remote agent: not lmbench's *local* TCP connection.
        params(
            "net.tcp.connect",
            55_000.0,
            "endpoint",
            "agent at 10.0.0.2:7077",
        ),
        ns("mem.pagefault.cached", 95.0),
        bw("mem.bandwidth.read", 12.5),
        bw("mem.bandwidth.copy", 16.0),
        bw("fs.reread.mmap", 9.5),
        ns("mem.latency.L1", 1.25),
        ns("mem.latency.L2", 4.5),
        params("mem.latency.memory", 110.0, "order", "random"),
        ns("mem.latency.sequential", 6.5),
    ])
}

/// The cells of the data row(s) of the table titled `title`, cut at the
/// header's column boundaries: header word → cell text.
fn row(text: &str, title: &str, row: usize) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let at = lines.iter().position(|l| l.starts_with(title)).unwrap();
    let rule = lines[at + 4];
    let data = lines[at + 5 + row];
    let mut cells = Vec::new();
    let mut start = 0;
    for dashes in rule.split(' ') {
        let end = start + dashes.len();
        cells.push(
            data.get(start..end.min(data.len()))
                .unwrap_or("")
                .trim()
                .to_string(),
        );
        start = end + 1;
    }
    cells
}

#[test]
fn figures_land_in_lmbenchs_columns_in_its_units() {
    let f = constructed();
    let text = summary(&[("a.json".into(), f.clone()), ("b.json".into(), f)]);
    eprintln!("{text}");
    let p = row(&text, "Processor, Processes", 0);
    // Host, OS, Mhz, null call, null I/O, stat, open clos, slct TCP, sig inst, sig hndl, fork, exec, sh
    assert_eq!(p[0], "testhost");
    assert_eq!(p[2], "", "no cpu.mhz: blank");
    assert_eq!(p[3], "0.17", "null call is libc's getppid, in µs");
    assert_eq!(p[4], "0.18", "null I/O is the mean of read and write");
    assert_eq!(p[5], "0.45");
    assert_eq!(p[6], "", "open/close absent");
    assert_eq!(p[8], "", "withheld sigaction is blank");
    assert_eq!(p[10], "120.");
    // One row per file.
    assert_eq!(row(&text, "Processor, Processes", 1)[3], "0.17");
    assert!(
        text.contains(
            "blank sig inst: signal.sigaction withheld: the handler ran: expected 1, observed 0"
        ),
        "{text}"
    );
    assert_eq!(p[7], "3.80", "select on 100 TCP sockets, in µs");

    let l = row(&text, "*Local* Communication latencies", 0);
    // Host, OS, 2p/0K, Pipe, AF UNIX, UDP, RPC/UDP, TCP, RPC/TCP, TCP conn
    assert_eq!(l[3], "4.200", "pipe: same-CPU round trip in µs");
    assert_eq!(l[5], "21.0");
    assert_eq!(l[7], "", "skipped TCP is blank");
    assert_eq!(l[9], "", "a remote connection is not the local column");
    assert!(
        text.contains("blank TCP: net.tcp.rtt skipped: no network namespace"),
        "{text}"
    );

    let v = row(&text, "File & VM system latencies", 0);
    assert_eq!(v[8], "0.09500", "page fault in µs, 7 wide");

    let b = row(&text, "*Local* Communication bandwidths", 0);
    // Host, OS, Pipe, AF UNIX, TCP, File reread, Mmap reread, Bcopy libc, Bcopy hand, Mem read, Mem write
    assert_eq!(b[5], "", "no fs.read.seq.cached: File reread blank");
    assert_eq!(b[6], "9500.0", "Mmap reread: fs.reread.mmap, MB = 10^6");
    assert_eq!(b[8], "8000.0", "hand copy: bytes copied once, MB = 10^6");
    assert_eq!(
        b[9], "12.K",
        "read: 12 500 MB/s, cut to 4 columns as lmbench does"
    );
    assert_eq!(b[10], "");

    let m = row(&text, "Memory latencies", 0);
    // Host, OS, Mhz, L1, L2, Main mem, Rand mem
    assert_eq!(m[3], "1.2500");
    assert_eq!(m[4], "4.5000");
    assert_eq!(
        m[5], "6.5000",
        "main mem is the sequential chase, 128 bytes apart"
    );
    assert_eq!(m[6], "110.0", "the random chase is lmbench's Rand mem");
}

/// A precise run's figure is its headline — the mean of its processes'
/// medians, what `yamba run`'s table, the CSV and `compare` show — not the
/// median of every observation pooled, which leans to the process that
/// took the most observations.
#[test]
fn a_precise_run_s_figure_is_its_headline_not_the_pooled_median() {
    // Processes at 100, 120 and 170 ns: headline 130; pooled, the eleven
    // observations' median is 120.
    let r = blocked(
        "cpu.syscall.getppid.libc",
        Mode::Hot,
        Unit::Nanoseconds,
        vec![vec![100.0; 5], vec![120.0; 5], vec![170.0]],
    );
    assert_eq!(r.median(), Some(120.0));
    assert!((r.value().unwrap() - 130.0).abs() < 1e-9, "{:?}", r.value());
    let f = file(vec![r]);
    let text = summary(&[("a.json".into(), f.clone())]);
    assert_eq!(row(&text, "Processor, Processes", 0)[3], "0.13", "{text}");
    assert!(
        export(&f).contains("Simple syscall: 0.1300"),
        "{}",
        export(&f)
    );
}

#[test]
fn lmbench_number_format() {
    assert_eq!(num(Some(0.0881), 4), "0.09");
    assert_eq!(num(Some(4.2), 5), "4.200");
    assert_eq!(num(Some(12_500.0), 4), "12.K");
    assert_eq!(num(Some(12_500.0), 6), " 12.5K");
}

/// lmbench 3's own scripts/getsummary, taken from the peers' source
/// tarball beside the checkout when it is there. lmbench is a peer to
/// measure against, never copied into the project (GPL v2 with lmbench's
/// own restrictions), so a machine without the tarball skips this test —
/// listed, with that reason, in .ci/skips.
fn getsummary(dir: &std::path::Path) -> Result<std::path::PathBuf, String> {
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let tarball = ["../../../shared/peers/lmbench-src.tar.gz", "/work/shared/peers/lmbench-src.tar.gz"]
        .iter()
        .map(|p| manifest.join(p))
        .find(|p| p.is_file())
        .ok_or("no lmbench-src.tar.gz beside the checkout (../shared/peers) to take lmbench's getsummary from")?;
    let out = std::process::Command::new("tar")
        .arg("-xzf")
        .arg(&tarball)
        .arg("-C")
        .arg(dir)
        .arg("--wildcards")
        .arg("*scripts/getsummary")
        .output()
        .map_err(|e| format!("cannot run tar: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "tar could not extract scripts/getsummary from {}: {}",
            tarball.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let found = std::process::Command::new("find")
        .arg(dir)
        .args(["-path", "*scripts/getsummary"])
        .output()
        .map_err(|e| format!("cannot run find: {e}"))?;
    let path = String::from_utf8_lossy(&found.stdout)
        .lines()
        .next()
        .map(std::path::PathBuf::from);
    path.ok_or_else(|| format!("no scripts/getsummary in {}", tarball.display()))
}

#[test]
fn lmbenchs_own_getsummary_reads_the_export() {
    let dir = tempfile::tempdir().unwrap();
    let script = match getsummary(dir.path()) {
        Ok(p) => p,
        Err(why) => yamba_testkit::skip!("{why}"),
    };
    let f = constructed();
    let results = dir.path().join("linux/testhost.0");
    std::fs::create_dir_all(results.parent().unwrap()).unwrap();
    std::fs::write(&results, export(&f)).unwrap();
    let out = std::process::Command::new("perl")
        .arg(&script)
        .arg(&results)
        .output()
        .expect("perl runs lmbench's scripts");
    let theirs = String::from_utf8_lossy(&out.stdout);
    eprintln!("{theirs}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success());
    // Their tables, our figures, in the same columns as our summary.
    let ours = summary(&[("testhost.0".into(), f)]);
    for (title, cols) in [
        ("Processor, Processes", vec![3, 4, 5, 10]),
        ("*Local* Communication latencies", vec![3, 5]),
        ("File & VM system latencies", vec![8]),
        ("*Local* Communication bandwidths", vec![6, 8, 9]),
    ] {
        let (a, b) = (row(&theirs, title, 0), row(&ours, title, 0));
        for c in cols {
            assert_eq!(a.get(c), b.get(c), "{title}, column {c}:\n{theirs}\n{ours}");
            assert!(!b[c].is_empty(), "{title} column {c} empty");
        }
    }
    // Their memory table's rule does not line up with its numbers: compare
    // the figures in order (their blank Mhz prints as -1).
    let figures = |text: &str| -> Vec<String> {
        let lines: Vec<&str> = text.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.starts_with("Memory latencies"))
            .unwrap();
        let data = lines[at..]
            .iter()
            .find(|l| l.starts_with("testhost"))
            .unwrap();
        data.split_whitespace()
            .skip(3)
            .filter(|t| *t != "-1" && t.parse::<f64>().is_ok())
            .map(str::to_string)
            .collect()
    };
    assert_eq!(
        figures(&theirs),
        ["1.2500", "4.5000", "6.5000", "110.0"],
        "{theirs}"
    );
    assert_eq!(figures(&theirs), figures(&ours));
}
