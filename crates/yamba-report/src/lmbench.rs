//! lmbench's view of yamba's results: the tables of lmbench's summary
//! (`make see`, scripts/getsummary) with its column names and units, one
//! row per results file, and the text format lmbench's own scripts read
//! (`yamba export --format lmbench`).
//!
//! Every column is filled from the yamba result that measures what
//! lmbench measured (libc's getppid() for "null call", the random chase
//! for "Rand mem"), converted to lmbench's unit (µs, ns, MB/s with
//! MB = 10^6 bytes). A column is blank, with a note saying why, when the
//! file has no such result, when it was withheld or not measured, or when
//! yamba has no equivalent. Which yamba result fills which column is the
//! one table [`COLUMNS`].

use std::fmt::Write as _;
use yamba_results::units::Unit;
use yamba_results::{BenchResult, Mode, ResultsFile, Status};

/// lmbench's summary tables, in its order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    Processes,
    Context,
    LocalLatency,
    FileVm,
    LocalBandwidth,
    Memory,
}

impl Table {
    pub const ALL: [Table; 6] = [
        Table::Processes,
        Table::Context,
        Table::LocalLatency,
        Table::FileVm,
        Table::LocalBandwidth,
        Table::Memory,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Table::Processes => "Processor, Processes - times in microseconds - smaller is better",
            Table::Context => "Context switching - times in microseconds - smaller is better",
            Table::LocalLatency => {
                "*Local* Communication latencies in microseconds - smaller is better"
            }
            Table::FileVm => "File & VM system latencies in microseconds - smaller is better",
            Table::LocalBandwidth => "*Local* Communication bandwidths in MB/s - bigger is better",
            Table::Memory => "Memory latencies in nanoseconds - smaller is better",
        }
    }

    /// The unit every column of the table is printed in.
    pub fn unit(self) -> Target {
        match self {
            Table::LocalBandwidth => Target::MegabytesPerSecond,
            Table::Memory => Target::Nanoseconds,
            _ => Target::Microseconds,
        }
    }
}

/// lmbench's units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Microseconds,
    Nanoseconds,
    /// MB = 10^6 bytes, as lmbench's `MB`.
    MegabytesPerSecond,
    Megahertz,
}

/// Where a column's figure comes from.
#[derive(Debug, Clone, Copy)]
pub enum Source {
    /// The first of these result ids (hot mode) the file has, times `factor`
    /// after conversion to the table's unit.
    Result {
        ids: &'static [&'static str],
        factor: f64,
        /// Only results measured on this machine (not against a remote agent).
        local: bool,
        /// Only results with this parameter value (e.g. the chase's order).
        param: Option<(&'static str, &'static str)>,
    },
    /// The point at `x` of a result's curve (hot mode), e.g. the context
    /// switch among 8 processes on `ipc.ctxsw.sweep.16k`'s curve.
    Point { id: &'static str, x: f64 },
    /// The mean of two columns' sources (lmbench's "null I/O": read and write).
    Mean(&'static [&'static str], &'static [&'static str]),
    /// lmbench measures it, yamba has no equivalent: always blank.
    None(&'static str),
}

/// One column: its table, lmbench's two header lines, width, and source.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    pub table: Table,
    pub head: [&'static str; 2],
    pub width: usize,
    pub source: Source,
    /// The getsummary key the export writes it under, if any.
    pub key: &'static str,
}

impl Column {
    /// The width its figure is formatted to ([`num`]): getsummary formats
    /// every memory latency with `num(x, 6)`, in fields of 6 and 11.
    pub fn digits(&self) -> usize {
        if self.table == Table::Memory && self.head[0] != "Mhz" {
            6
        } else {
            self.width
        }
    }
}

const fn from(ids: &'static [&'static str]) -> Source {
    Source::Result {
        ids,
        factor: 1.0,
        local: false,
        param: None,
    }
}

const fn point(id: &'static str, x: f64) -> Source {
    Source::Point { id, x }
}

const fn local(ids: &'static [&'static str]) -> Source {
    Source::Result {
        ids,
        factor: 1.0,
        local: true,
        param: None,
    }
}

/// yamba's copy bandwidth counts bytes read plus bytes written (STREAM);
/// lmbench's bcopy counts the bytes copied once.
const COPY_COUNTED_ONCE: f64 = 0.5;

/// Every column of lmbench's summary and the yamba result that fills it.
/// The test `every_column_names_what_the_suite_produces` checks each id
/// against what a quick run of the suite writes.
pub const COLUMNS: &[Column] = &[
    // Processor, Processes
    Column {
        table: Table::Processes,
        head: ["Mhz", ""],
        width: 4,
        source: from(&["cpu.mhz"]),
        key: "mhz",
    }, // (new)
    Column {
        table: Table::Processes,
        head: ["null", "call"],
        width: 4,
        source: from(&["cpu.syscall.getppid.libc"]),
        key: "lat_syscall",
    },
    Column {
        table: Table::Processes,
        head: ["null", "I/O"],
        width: 4,
        source: Source::Mean(
            &["cpu.syscall.read_devzero.libc"],
            &["cpu.syscall.write_devnull"],
        ),
        key: "",
    }, // write: (new)
    Column {
        table: Table::Processes,
        head: ["stat", ""],
        width: 4,
        source: from(&["fs.meta.stat"]),
        key: "lat_stat",
    },
    Column {
        table: Table::Processes,
        head: ["open", "clos"],
        width: 4,
        source: from(&["cpu.syscall.open", "fs.meta.open_close"]),
        key: "lat_openclose",
    }, // cpu.syscall.open: (new)
    Column {
        table: Table::Processes,
        head: ["slct", "TCP"],
        width: 4,
        source: from(&["cpu.syscall.select.tcp.100"]),
        key: "lat_tcp_select",
    },
    Column {
        table: Table::Processes,
        head: ["sig", "inst"],
        width: 4,
        source: from(&["signal.sigaction"]),
        key: "lat_siginstall",
    },
    Column {
        table: Table::Processes,
        head: ["sig", "hndl"],
        width: 4,
        source: from(&["signal.self"]),
        key: "lat_sigcatch",
    },
    Column {
        table: Table::Processes,
        head: ["fork", "proc"],
        width: 4,
        source: from(&["proc.fork.light"]),
        key: "lat_nullproc",
    },
    Column {
        table: Table::Processes,
        head: ["exec", "proc"],
        width: 4,
        source: from(&["proc.fork_exec"]),
        key: "lat_simpleproc",
    },
    Column {
        table: Table::Processes,
        head: ["sh", "proc"],
        width: 4,
        source: from(&["proc.shell"]),
        key: "lat_shproc",
    }, // (new)
    // Context switching (lat_ctx: processes / working set per process)
    Column {
        table: Table::Context,
        head: ["2p/0K", "ctxsw"],
        width: 6,
        source: from(&["ipc.ctxsw.sweep.0k", "ipc.ctxsw.pipe"]),
        key: "lat_ctx0_2",
    }, // sweep: (new)
    Column {
        table: Table::Context,
        head: ["2p/16K", "ctxsw"],
        width: 6,
        source: from(&["ipc.ctxsw.sweep.16k"]),
        key: "lat_ctx16_2",
    },
    Column {
        table: Table::Context,
        head: ["2p/64K", "ctxsw"],
        width: 6,
        source: from(&["ipc.ctxsw.sweep.64k"]),
        key: "lat_ctx64_2",
    },
    Column {
        table: Table::Context,
        head: ["8p/16K", "ctxsw"],
        width: 6,
        source: point("ipc.ctxsw.sweep.16k", 8.0),
        key: "lat_ctx16_8",
    },
    Column {
        table: Table::Context,
        head: ["8p/64K", "ctxsw"],
        width: 6,
        source: point("ipc.ctxsw.sweep.64k", 8.0),
        key: "lat_ctx64_8",
    },
    Column {
        table: Table::Context,
        head: ["16p/16K", "ctxsw"],
        width: 7,
        source: point("ipc.ctxsw.sweep.16k", 16.0),
        key: "lat_ctx16_16",
    },
    Column {
        table: Table::Context,
        head: ["16p/64K", "ctxsw"],
        width: 7,
        source: point("ipc.ctxsw.sweep.64k", 16.0),
        key: "lat_ctx64_16",
    },
    // *Local* Communication latencies
    Column {
        table: Table::LocalLatency,
        head: ["2p/0K", "ctxsw"],
        width: 5,
        source: from(&["ipc.ctxsw.sweep.0k", "ipc.ctxsw.pipe"]),
        key: "",
    },
    Column {
        table: Table::LocalLatency,
        head: ["Pipe", ""],
        width: 5,
        source: from(&["ipc.rtt.pipe.same_cpu"]),
        key: "lat_pipe",
    },
    Column {
        table: Table::LocalLatency,
        head: ["AF", "UNIX"],
        width: 4,
        source: from(&["ipc.rtt.unix_stream.same_cpu"]),
        key: "lat_unix",
    },
    Column {
        table: Table::LocalLatency,
        head: ["UDP", ""],
        width: 5,
        source: local(&["net.udp.rtt"]),
        key: "lat_udp_local",
    },
    Column {
        table: Table::LocalLatency,
        head: ["RPC/", "UDP"],
        width: 5,
        source: Source::None("Sun RPC: no yamba benchmark"),
        key: "",
    },
    Column {
        table: Table::LocalLatency,
        head: ["TCP", ""],
        width: 5,
        source: local(&["net.tcp.rtt"]),
        key: "lat_tcp_local",
    },
    Column {
        table: Table::LocalLatency,
        head: ["RPC/", "TCP"],
        width: 5,
        source: Source::None("Sun RPC: no yamba benchmark"),
        key: "",
    },
    Column {
        table: Table::LocalLatency,
        head: ["TCP", "conn"],
        width: 4,
        source: local(&["net.tcp.connect"]),
        key: "lat_tcp_connect_local",
    },
    // File & VM system latencies
    Column {
        table: Table::FileVm,
        head: ["0K File", "Create"],
        width: 6,
        source: from(&["fs.create_delete.0k.create", "fs.meta.create"]),
        key: "fs_create_0k",
    }, // create_delete: (new)
    Column {
        table: Table::FileVm,
        head: ["", "Delete"],
        width: 6,
        source: from(&["fs.create_delete.0k.delete", "fs.meta.unlink"]),
        key: "fs_delete_0k",
    },
    Column {
        table: Table::FileVm,
        head: ["10K File", "Create"],
        width: 6,
        source: from(&["fs.create_delete.10k.create"]),
        key: "fs_create_10k",
    },
    Column {
        table: Table::FileVm,
        head: ["", "Delete"],
        width: 6,
        source: from(&["fs.create_delete.10k.delete"]),
        key: "fs_delete_10k",
    },
    Column {
        table: Table::FileVm,
        head: ["Mmap", "Latency"],
        width: 7,
        source: from(&["mem.mmap.32m", "mem.mmap.4m", "mem.mmap.512k"]),
        key: "lat_mappings",
    }, // (new)
    Column {
        table: Table::FileVm,
        head: ["Prot", "Fault"],
        width: 5,
        source: from(&["signal.fault"]),
        key: "lat_protfault",
    },
    Column {
        table: Table::FileVm,
        head: ["Page", "Fault"],
        width: 7,
        source: from(&["mem.pagefault.cached"]),
        key: "lat_pagefault",
    },
    Column {
        table: Table::FileVm,
        head: ["100fd", "selct"],
        width: 5,
        source: from(&["cpu.syscall.select.file.100"]),
        key: "lat_fd_select",
    },
    // *Local* Communication bandwidths
    Column {
        table: Table::LocalBandwidth,
        head: ["Pipe", ""],
        width: 4,
        source: from(&["ipc.bw.pipe.same_cpu"]),
        key: "bw_pipe",
    }, // (new)
    Column {
        table: Table::LocalBandwidth,
        head: ["AF", "UNIX"],
        width: 4,
        source: local(&["net.unix.bandwidth"]),
        key: "bw_unix",
    },
    Column {
        table: Table::LocalBandwidth,
        head: ["TCP", ""],
        width: 4,
        source: local(&["net.tcp.bandwidth.1"]),
        key: "bw_tcp_local",
    },
    Column {
        table: Table::LocalBandwidth,
        head: ["File", "reread"],
        width: 6,
        // bw_file_rd io_only: read(2) and sum each block, as fs.reread.read
        // does; older files have only the unsummed cached read.
        source: from(&["fs.reread.read", "fs.read.seq.cached"]),
        key: "bw_reread",
    },
    Column {
        table: Table::LocalBandwidth,
        head: ["Mmap", "reread"],
        width: 6,
        source: from(&["fs.reread.mmap"]),
        key: "bw_mmap",
    },
    Column {
        table: Table::LocalBandwidth,
        head: ["Bcopy", "(libc)"],
        width: 6,
        source: Source::Result {
            ids: &["mem.bandwidth.bcopy"],
            factor: COPY_COUNTED_ONCE,
            local: false,
            param: None,
        },
        key: "bw_bcopy_libc",
    }, // (new)
    Column {
        table: Table::LocalBandwidth,
        head: ["Bcopy", "(hand)"],
        width: 6,
        source: Source::Result {
            ids: &["mem.bandwidth.copy"],
            factor: COPY_COUNTED_ONCE,
            local: false,
            param: None,
        },
        key: "bw_bcopy_unrolled",
    },
    Column {
        table: Table::LocalBandwidth,
        head: ["Mem", "read"],
        width: 4,
        source: from(&["mem.bandwidth.read"]),
        key: "bw_mem_rdsum",
    },
    Column {
        table: Table::LocalBandwidth,
        head: ["Mem", "write"],
        width: 5,
        source: from(&["mem.bandwidth.write"]),
        key: "bw_mem_wr",
    },
    // Memory latencies
    Column {
        table: Table::Memory,
        head: ["Mhz", ""],
        width: 4,
        source: from(&["cpu.mhz"]),
        key: "",
    },
    Column {
        table: Table::Memory,
        head: ["L1 $", ""],
        width: 6,
        source: from(&["mem.latency.L1"]),
        key: "lat_l1",
    },
    Column {
        table: Table::Memory,
        head: ["L2 $", ""],
        width: 6,
        source: from(&["mem.latency.L2"]),
        key: "lat_l2",
    },
    Column {
        table: Table::Memory,
        head: ["Main mem", ""],
        width: 8,
        // getsummary's "Main mem": lat_mem_rd's stride-128 walk at its
        // largest size, which prefetchers follow.
        source: from(&["mem.latency.sequential"]),
        key: "lat_mem",
    },
    Column {
        table: Table::Memory,
        head: ["Rand mem", ""],
        width: 8,
        source: Source::Result {
            ids: &["mem.latency.memory"],
            factor: 1.0,
            local: false,
            param: Some(("order", "random")),
        },
        key: "lat_mem_rand",
    },
];

/// A column's figure for one file, or why it is blank.
pub fn value(file: &ResultsFile, col: &Column) -> Result<f64, String> {
    let unit = if col.head[0] == "Mhz" {
        Target::Megahertz
    } else {
        col.table.unit()
    };
    match col.source {
        Source::None(why) => Err(why.to_string()),
        Source::Result {
            ids,
            factor,
            local,
            param,
        } => find(file, ids, local, param).and_then(|r| convert(r, unit).map(|v| v * factor)),
        Source::Point { id, x } => {
            let r = find(file, &[id], false, None)?;
            let y = r
                .series
                .as_ref()
                .and_then(|s| s.points.iter().find(|p| p[0] == x))
                .map(|p| p[1])
                .ok_or_else(|| format!("{id} has no point at {x} on its curve"))?;
            convert_value(r, y, unit)
        }
        Source::Mean(a, b) => {
            let get = |ids| find(file, ids, false, None).and_then(|r| convert(r, unit));
            match (get(a), get(b)) {
                (Ok(x), Ok(y)) => Ok((x + y) / 2.0),
                (Err(e), _) | (_, Err(e)) => Err(format!("the mean of read and write: {e}")),
            }
        }
    }
}

fn find<'a>(
    file: &'a ResultsFile,
    ids: &[&str],
    local: bool,
    param: Option<(&str, &str)>,
) -> Result<&'a BenchResult, String> {
    let fits = |r: &&BenchResult| {
        r.mode == Mode::Hot
            && (!local
                || r.params
                    .get("endpoint")
                    .and_then(|v| v.as_str())
                    .is_none_or(|e| e.starts_with("loopback")))
            && param.is_none_or(|(k, v)| r.params.get(k).and_then(|p| p.as_str()) == Some(v))
    };
    for id in ids {
        if let Some(r) = file.results.iter().filter(|r| r.id == *id).find(fits) {
            return match r.status {
                Status::Ok => Ok(r),
                s => Err(format!(
                    "{id} {}: {}",
                    s.as_str(),
                    r.reason.as_deref().unwrap_or("no reason given")
                )),
            };
        }
    }
    let with = param
        .map(|(k, v)| format!(" with {k}={v}"))
        .unwrap_or_default();
    Err(format!("no {}{with} in the file", ids.join(" or ")))
}

/// A result's headline value in lmbench's unit: a precise run's is the
/// mean of its processes' medians (what the table, the CSV and `compare`
/// show), not the median of every observation pooled.
fn convert(r: &BenchResult, to: Target) -> Result<f64, String> {
    let v = r
        .value()
        .ok_or_else(|| format!("{} has no observations", r.id))?;
    convert_value(r, v, to)
}

/// `v`, in `r`'s unit, in lmbench's unit.
fn convert_value(r: &BenchResult, v: f64, to: Target) -> Result<f64, String> {
    let bad = || {
        Err(format!(
            "{} is in {}, not convertible to the column's unit",
            r.id,
            r.unit.symbol()
        ))
    };
    Ok(match (r.unit, to) {
        (Unit::Nanoseconds, Target::Microseconds) => v / 1e3,
        (Unit::Nanoseconds, Target::Nanoseconds) => v,
        // A rate of operations: the time of one.
        (Unit::PerSecond, Target::Microseconds) => 1e6 / v,
        (Unit::GigabytesPerSecond, Target::MegabytesPerSecond) => v * 1e3,
        // A clock: cycles per second, or the time of one cycle.
        (Unit::PerSecond, Target::Megahertz) => v / 1e6,
        (Unit::Nanoseconds, Target::Megahertz) => 1e3 / v,
        (Unit::Ratio, Target::Megahertz) => v,
        _ => return bad(),
    })
}

/// lmbench's number format (getsummary's `num`): blank for nothing, one
/// decimal from 10 up, K and M suffixes for large values, `len` columns.
pub fn num(v: Option<f64>, len: usize) -> String {
    let Some(v) = v.filter(|v| v.is_finite() && *v > 0.0) else {
        return " ".repeat(len);
    };
    let cut = |s: String, n: usize| s.chars().take(n).collect::<String>();
    let s = if v >= 10e6 {
        format!("{}M", cut(format!("{:.1}", v / 1e6), len - 1))
    } else if v >= 10e3 {
        format!("{}K", cut(format!("{:.1}", v / 1e3), len - 1))
    } else if v >= 10.0 {
        cut(format!("{v:.1}"), len)
    } else if v < 0.001 {
        cut(format!("{v:.e$e}", e = len.saturating_sub(6)), len)
    } else {
        cut(format!("{v:.d$}", d = len.saturating_sub(2)), len)
    };
    format!("{s:>len$}")
}

/// lmbench's "Host" and "OS" cells: the host name, and the system name
/// with its release (getsummary's `getos`).
fn host_os(file: &ResultsFile) -> (String, String) {
    let m = &file.machine;
    (m.hostname.clone(), format!("{} {}", m.os, m.kernel))
}

/// The summary of `files`, one row per file, as lmbench prints it; blank
/// cells are explained under each table.
pub fn summary(files: &[(String, ResultsFile)]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n                 L M B E N C H  3 . 0   S U M M A R Y  (from yamba results)\n                 ------------------------------------\n"
    );
    for table in Table::ALL {
        let cols: Vec<&Column> = COLUMNS.iter().filter(|c| c.table == table).collect();
        let title = table.title();
        let _ = writeln!(out, "\n{title}");
        let rule_len = 9 + 1 + 13 + cols.iter().map(|c| c.width + 1).sum::<usize>();
        let _ = writeln!(out, "{}", "-".repeat(rule_len.max(title.len())));
        for line in 0..2 {
            let mut l = if line == 0 {
                format!("{:<9} {:>13}", "Host", "OS")
            } else {
                format!("{:<9} {:>13}", "", "")
            };
            let mut i = 0;
            while i < cols.len() {
                let c = cols[i];
                // A heading wider than its column spans the next one when
                // that has none ("0K File" over Create and Delete).
                let spans = line == 0
                    && c.head[0].len() > c.width
                    && cols.get(i + 1).is_some_and(|n| n.head[0].is_empty());
                let w = if spans {
                    c.width + 1 + cols[i + 1].width
                } else {
                    c.width
                };
                let _ = write!(l, " {:^w$}", c.head[line]);
                i += if spans { 2 } else { 1 };
            }
            let _ = writeln!(out, "{}", l.trim_end());
        }
        let mut rule = format!("{} {}", "-".repeat(9), "-".repeat(13));
        for c in &cols {
            let _ = write!(rule, " {}", "-".repeat(c.width));
        }
        let _ = writeln!(out, "{rule}");
        // (column, why) → the files it holds for: said once per reason.
        let mut notes: Vec<(String, String, Vec<&str>)> = Vec::new();
        for (name, f) in files {
            let (host, os) = host_os(f);
            let mut l = format!(
                "{:<9.9} {:>13.13}",
                host,
                os.chars().take(13).collect::<String>()
            );
            for c in &cols {
                let v = value(f, c);
                let figure = num(v.as_ref().ok().copied(), c.digits());
                let _ = write!(l, " {figure:>w$}", w = c.width);
                if let Err(why) = v {
                    let head = c.head.join(" ").trim().to_string();
                    match notes.iter_mut().find(|n| n.0 == head && n.1 == why) {
                        Some(n) => n.2.push(name),
                        None => notes.push((head, why, vec![name])),
                    }
                }
            }
            let _ = writeln!(out, "{}", l.trim_end());
        }
        for (head, why, which) in notes {
            let rows = if which.len() == files.len() {
                String::new()
            } else {
                format!(" [{}]", which.join(", "))
            };
            let _ = writeln!(out, "  blank {head}: {why}{rows}");
        }
    }
    out
}

/// The results as lmbench's own result file (the lmbench script's output,
/// what scripts/getsummary, getlist and the results Makefile read): one
/// line per figure lmbench prints, values in its units. Absent or withheld
/// figures are left out, as lmbench leaves out what it did not run.
pub fn export(file: &ResultsFile) -> String {
    let mut out = String::new();
    export_header(&mut out, file);
    export_latencies(&mut out, file);
    export_bandwidths(&mut out, file);
    export_context_switches(&mut out, file);
    export_file_system(&mut out, file);
    export_memory_latency(&mut out, file);
    out
}

/// A summary column's value in lmbench's unit, if the file has it.
fn column_value(file: &ResultsFile, key: &str) -> Option<f64> {
    let col = COLUMNS.iter().find(|c| c.key == key).unwrap();
    value(file, col).ok()
}

/// The bracketed header lines, with the clock and the line size.
fn export_header(out: &mut String, file: &ResultsFile) {
    let m = &file.machine;
    let _ = writeln!(
        out,
        "[lmbench3.0 results for {} {} {} (yamba {}) {}]",
        m.os, m.hostname, m.kernel, file.tool.version, m.arch
    );
    let _ = writeln!(out, "[LMBENCH_VER: yamba {}]", file.tool.version);
    let _ = writeln!(out, "[HOSTNAME: {}]", m.hostname);
    let _ = writeln!(out, "[RELEASE: {}]", m.kernel);
    let _ = writeln!(out, "[MACHINE: {}]", m.arch);
    let _ = writeln!(out, "[{}]", file.started);
    if let Some(v) = column_value(file, "mhz") {
        let _ = writeln!(out, "[MHZ: {v:.0} MHz, {:.4} nanosec clock]", 1e3 / v);
    }
    if let Some(line) = line_size(file) {
        let _ = writeln!(out, "[LINE_SIZE: {line}]");
    }
}

/// The `Label: V microseconds` lines, then the two `MB/sec` ones.
fn export_latencies(out: &mut String, file: &ResultsFile) {
    let us = |out: &mut String, label: &str, key: &str| {
        if let Some(v) = column_value(file, key) {
            let _ = writeln!(out, "{label}: {v:.4} microseconds");
        }
    };
    // Lines lmbench prints that no summary column reads.
    let us_of = |out: &mut String, label: &str, id: &str| {
        if let Ok(v) = find(file, &[id], false, None).and_then(|r| convert(r, Target::Microseconds))
        {
            let _ = writeln!(out, "{label}: {v:.4} microseconds");
        }
    };
    us(out, "Simple syscall", "lat_syscall");
    us_of(out, "Simple read", "cpu.syscall.read_devzero.libc");
    us_of(out, "Simple write", "cpu.syscall.write_devnull");
    us(out, "Simple stat", "lat_stat");
    us_of(out, "Simple fstat", "cpu.syscall.fstat");
    for (label, key) in [
        ("Simple open/close", "lat_openclose"),
        ("Select on 100 fd's", "lat_fd_select"),
        ("Select on 100 tcp fd's", "lat_tcp_select"),
        ("Signal handler installation", "lat_siginstall"),
        ("Signal handler overhead", "lat_sigcatch"),
        ("Protection fault", "lat_protfault"),
        ("Pipe latency", "lat_pipe"),
        ("AF_UNIX sock stream latency", "lat_unix"),
        ("Process fork+exit", "lat_nullproc"),
        ("Process fork+execve", "lat_simpleproc"),
        ("Process fork+/bin/sh -c", "lat_shproc"),
    ] {
        us(out, label, key);
    }
    if let Some(v) = column_value(file, "lat_pagefault") {
        let _ = writeln!(out, "Pagefaults on yamba: {v:.4} microseconds");
    }
    us(out, "UDP latency using localhost", "lat_udp_local");
    us(out, "TCP latency using localhost", "lat_tcp_local");
    us(
        out,
        "TCP/IP connection cost to localhost",
        "lat_tcp_connect_local",
    );
    for (label, key) in [
        ("Pipe bandwidth", "bw_pipe"),
        ("AF_UNIX sock stream bandwidth", "bw_unix"),
    ] {
        if let Some(v) = column_value(file, key) {
            let _ = writeln!(out, "{label}: {v:.2} MB/sec");
        }
    }
}

/// Size-by-value blocks: getsummary takes the last (largest) line.
fn export_bandwidths(out: &mut String, file: &ResultsFile) {
    for (head, key, size_mb) in [
        ("Socket bandwidth using localhost", "bw_tcp_local", 10.0),
        ("\"read bandwidth", "bw_reread", 8.0),
        ("\"Mmap read bandwidth", "bw_mmap", 8.0),
        ("\"libc bcopy unaligned", "bw_bcopy_libc", 8.0),
        ("\"unrolled bcopy unaligned", "bw_bcopy_unrolled", 8.0),
        ("Memory read bandwidth", "bw_mem_rdsum", 8.0),
        ("Memory write bandwidth", "bw_mem_wr", 8.0),
        ("\"mappings", "lat_mappings", 8.0),
    ] {
        if let Some(v) = column_value(file, key) {
            let _ = writeln!(out, "\n{head}\n{size_mb:.6} {v:.2}\n");
        }
    }
}

/// lat_ctx's blocks: one per working-set size, a line per process count.
fn export_context_switches(out: &mut String, file: &ResultsFile) {
    let ctx: Vec<(u32, u32, f64)> = [
        (0, 2, "lat_ctx0_2"),
        (16, 2, "lat_ctx16_2"),
        (16, 8, "lat_ctx16_8"),
        (16, 16, "lat_ctx16_16"),
        (64, 2, "lat_ctx64_2"),
        (64, 8, "lat_ctx64_8"),
        (64, 16, "lat_ctx64_16"),
    ]
    .iter()
    .filter_map(|&(k, p, key)| column_value(file, key).map(|v| (k, p, v)))
    .collect();
    for size in [0, 16, 64] {
        let rows: Vec<_> = ctx.iter().filter(|(k, _, _)| *k == size).collect();
        if !rows.is_empty() {
            let _ = writeln!(out, "\n\"size={size}k ovr=0.00");
            for (_, p, v) in rows {
                let _ = writeln!(out, "{p} {v:.2}");
            }
        }
    }
}

/// lat_fs's block: files created and deleted per second by size.
fn export_file_system(out: &mut String, file: &ResultsFile) {
    let fs: Vec<(&str, Option<f64>, Option<f64>)> = [
        ("0k", "fs_create_0k", "fs_delete_0k"),
        ("10k", "fs_create_10k", "fs_delete_10k"),
    ]
    .iter()
    .map(|&(s, c, d)| (s, column_value(file, c), column_value(file, d)))
    .filter(|(_, c, d)| c.is_some() || d.is_some())
    .collect();
    if fs.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n\"File system latency");
    // lmbench prints files per second; -1 where not measured.
    let rate = |v: Option<f64>| v.map_or("-1".to_string(), |us| format!("{:.0}", 1e6 / us));
    for (size, c, d) in fs {
        let _ = writeln!(out, "{size}\t1000\t{}\t{}", rate(c), rate(d));
    }
    out.push('\n');
}

/// lat_mem_rd: getsummary reads L1 at 0.00098 MB and L2 at 0.125 MB from
/// the stride-128 block, memory from its last line.
fn export_memory_latency(out: &mut String, file: &ResultsFile) {
    let (l1, l2) = (column_value(file, "lat_l1"), column_value(file, "lat_l2"));
    let main = column_value(file, "lat_mem");
    if l1.is_some() || l2.is_some() || main.is_some() {
        let _ = writeln!(out, "\nMemory load latency\n\"stride=128");
        for (size, v) in [(0.00098, l1), (0.125, l2)] {
            if let Some(v) = v {
                let _ = writeln!(out, "{size:.5} {v:.3}");
            }
        }
        // getsummary takes the block's last line as main memory: -1 (its
        // blank) when yamba did not run mem.latency.sequential.
        let _ = writeln!(out, "8.00000 {:.3}\n", main.unwrap_or(-1.0));
    }
    if let Some(v) = column_value(file, "lat_mem_rand") {
        let _ = writeln!(out, "\nRandom load latency\n\"stride=16\n8.00000 {v:.3}\n");
    }
}

/// The cache line size a yamba run measured (mem.line), if any.
fn line_size(file: &ResultsFile) -> Option<u64> {
    let r = find(file, &["mem.line"], false, None).ok()?;
    r.value().map(|v| v.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_look_like_lmbench() {
        assert_eq!(num(Some(0.0881), 4), "0.09");
        assert_eq!(num(Some(0.1666), 4), "0.17");
        assert_eq!(num(Some(118.43), 4), "118.");
        assert_eq!(num(Some(12345.0), 6), " 12.3K");
        assert_eq!(num(Some(3.5), 6), "3.5000");
        assert_eq!(num(None, 5), "     ");
        assert_eq!(num(Some(-1.0), 4), "    ");
    }

    #[test]
    fn every_column_has_a_unit_it_can_take() {
        for c in COLUMNS {
            if let Source::Result { ids, .. } = c.source {
                assert!(!ids.is_empty(), "{:?}", c.head);
            }
            assert!(c.head[1].chars().count() <= c.width, "{:?}", c.head);
        }
        for pair in COLUMNS.windows(2) {
            let spans = pair[1].head[0].is_empty() && pair[0].table == pair[1].table;
            let room = pair[0].width + if spans { 1 + pair[1].width } else { 0 };
            assert!(
                pair[0].head[0].chars().count() <= room,
                "{:?}",
                pair[0].head
            );
        }
    }
}
