//! Results in other tools' formats: CSV (a row per result), the Go
//! benchmark text format that `benchstat` reads, and ministat columns.

use std::fmt::Write as _;
use yamba_results::units::Unit;
use yamba_results::{BenchResult, ResultsFile, Status};

/// The CSV header: one row per result follows. `n` to `max` describe every
/// observation pooled; `value`, `value_lo` and `value_hi` are the figure the
/// table reports and its 95% interval ([`BenchResult::headline`]): for a
/// precise run, the estimate over its processes, which leaves out the
/// processes a shared core moved, where the pooled median can lean on a
/// shared process's many observations (cpu.ops.parallel.i32.add on an
/// Intel guest: 4.97 against a pooled median of 3.39). Appended last, so
/// that readers of the older columns by position are not broken.
pub const CSV_HEADER: &str =
    "id,mode,unit,status,n,median,ci_lo,ci_hi,min,mean,stddev,cv,p99,max,value,value_lo,value_hi";

/// One CSV row per result, under [`CSV_HEADER`]. Values are in the result's
/// base unit at full precision; a value that is not known (no summary, no
/// interval) is an empty field. `yamba run --format csv` prints the same.
pub fn results_csv(file: &ResultsFile) -> String {
    let mut out = String::from(CSV_HEADER);
    out.push('\n');
    for r in &file.results {
        out.push_str(&csv_row(r));
        out.push('\n');
    }
    out
}

/// One result as a CSV row (no newline).
pub fn csv_row(r: &BenchResult) -> String {
    let num = |v: Option<f64>| v.map(|v| format!("{v:?}")).unwrap_or_default();
    let s = r.summary.as_ref();
    let ci = s.and_then(|s| s.median_ci);
    let (value, value_ci) = r.headline().unzip();
    let value_ci = value_ci.flatten();
    let fields = [
        csv_field(&r.id),
        r.mode.as_str().to_string(),
        csv_field(r.unit.symbol()),
        r.status.as_str().to_string(),
        s.map(|s| s.n.to_string()).unwrap_or_else(|| "0".into()),
        num(s.map(|s| s.median)),
        num(ci.map(|c| c.lo)),
        num(ci.map(|c| c.hi)),
        num(s.map(|s| s.min)),
        num(s.map(|s| s.mean)),
        num(s.map(|s| s.stddev)),
        num(s.and_then(|s| s.cv)),
        num(s.map(|s| s.p99)),
        num(s.map(|s| s.max)),
        num(value),
        num(value_ci.map(|c| c.lo)),
        num(value_ci.map(|c| c.hi)),
    ];
    fields.join(",")
}

/// Quotes a CSV field when it holds a comma, quote or line break (RFC 4180).
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The Go benchmark name for a result: `cpu.syscall.getppid` in hot mode
/// becomes `BenchmarkCpuSyscallGetppid/hot`. Every character that is not a
/// letter or digit separates words, so the name holds no space, and ends
/// in the mode, never in `-N` (which benchstat would read as GOMAXPROCS).
pub fn gobench_name(r: &BenchResult) -> String {
    let mut name = String::from("Benchmark");
    for word in r.id.split(|c: char| !c.is_ascii_alphanumeric()) {
        let mut cs = word.chars();
        if let Some(c) = cs.next() {
            name.push(c.to_ascii_uppercase());
            name.extend(cs);
        }
    }
    name.push('/');
    name.push_str(r.mode.as_str());
    name
}

/// The unit benchstat is shown and the factor from the result's unit to it.
/// GB/s becomes MB/s because benchstat knows MB/s is higher-is-better.
fn gobench_unit(u: Unit) -> (f64, &'static str) {
    match u {
        Unit::Nanoseconds => (1.0, "ns/op"),
        Unit::GigabytesPerSecond => (1000.0, "MB/s"),
        Unit::Bytes => (1.0, "B/op"),
        Unit::Count => (1.0, "count/op"),
        Unit::PerSecond => (1.0, "ops/s"),
        Unit::Ratio => (1.0, "ratio"),
    }
}

/// Go's `GOARCH` for a machine's architecture (`uname -m`).
fn goarch(arch: &str) -> &str {
    match arch {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "i686" | "i386" => "386",
        other => other,
    }
}

/// The Go benchmark text format: `goos`/`goarch`/`cpu` header lines, a
/// `pkg: yamba/<area>` line before each area's results, then the lines
/// benchstat takes as independent samples (`BenchmarkX/hot  N  123.4 ns/op`,
/// N the iterations per observation): for a result measured in fresh
/// processes (a precise run), one line per process its headline stands on,
/// with that process's value — what varies from run to run is between
/// processes, and a process's observations are not independent of each
/// other (its placement, core and page layout hold for all of them), so
/// benchstat over every observation would call a difference between two
/// runs significant that their processes do not show; for a result from
/// one process (a quick run), one line per observation, whose certainty
/// speaks for that process only, as the run's own interval does. Results
/// that are not ok are left out, with a comment line saying why.
pub fn gobench(file: &ResultsFile) -> String {
    let m = &file.machine;
    let mut out = String::new();
    let goos = m.os.to_lowercase();
    let _ = writeln!(
        out,
        "goos: {}",
        if goos.is_empty() { "linux" } else { &goos }
    );
    let _ = writeln!(out, "goarch: {}", goarch(&m.arch));
    let _ = writeln!(out, "cpu: {}", one_line(&m.cpu_model));
    let mut area: Option<&str> = None;
    for r in &file.results {
        if r.status != Status::Ok || r.observations.is_empty() {
            let why = r.reason.as_deref().unwrap_or("no observations");
            let _ = writeln!(
                out,
                "# {} {}: {}",
                gobench_name(r),
                r.status.as_str(),
                one_line(why)
            );
            continue;
        }
        if area != Some(r.area.as_str()) {
            let _ = writeln!(out, "pkg: yamba/{}", one_line(&r.area).replace(' ', "_"));
            area = Some(&r.area);
        }
        let (factor, unit) = gobench_unit(r.unit);
        let n = r.method.as_ref().map_or(1, |m| m.iterations.max(1));
        let name = gobench_name(r);
        // benchstat cannot read inf or NaN; a finite file never holds them.
        for v in gobench_samples(r).into_iter().filter(|v| v.is_finite()) {
            let _ = writeln!(out, "{name} \t{n:>10}\t{:?} {unit}", v * factor);
        }
    }
    out
}

/// The samples [`gobench`] writes for one result: its processes' values
/// where it was measured in processes, else its observations.
fn gobench_samples(r: &BenchResult) -> Vec<f64> {
    match &r.certainty {
        Some(c) if c.block == yamba_results::BlockKind::Process => {
            c.kept_blocks().into_iter().map(|i| c.medians[i]).collect()
        }
        _ => r.observations.clone(),
    }
}

fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

/// A result's raw observations as ministat reads them: one per line.
pub fn ministat_column(r: &BenchResult) -> String {
    crate::select::observations_text(r, None)
}

/// A file name for a result's ministat column: its key with every
/// character that is unsafe in a file name replaced by `_`.
pub fn ministat_file_name(r: &BenchResult) -> String {
    let safe: String = r
        .key()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._@-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{safe}.txt")
}
