//! A byte-for-byte clone of FreeBSD's `ministat`.
//!
//! `ministat` compares data sets (columns of numbers, typically benchmark
//! timings) with Student's t: it prints each set's count, min, max, median,
//! mean and standard deviation, an ASCII plot of them all, and whether each
//! set's mean differs from the first's at a chosen confidence level.
//!
//! The output here is the original's to the byte (checked against the
//! Debian `ministat` 20150715 build by `tests/ministat_vs_original.rs`, on
//! x86-64 and on arm64): C's `%g` formatting, its fixed t table, glibc's
//! sort order for ties, the plot's quirks, and where C leaves arithmetic to
//! the machine, the reference binary's machine code (`machine`). Scripts
//! written for the original read ours.
//!
//! Two entry points:
//! - [`compare`] (or [`run`] with [`Dataset`]s): named lists of numbers in,
//!   the report out, for other yamba tools;
//! - [`run_command`]: the whole command line (options, files, stdin, error
//!   messages, exit codes), for `yamba ministat`.
//!
//! Deliberate differences from the original: `-q` (from newer FreeBSD)
//! leaves out the set names and the table header; and where the original
//! crashes (on x86-64: `-w 1`, infinite or NaN data that reach the plot; a
//! negative width from `COLUMNS`), this returns [`MinistatError::Plot`]
//! instead.
//!
//! A crate of its own: it needs nothing of yamba's (no results file, no
//! statistics crate: its arithmetic is the original's, down to the t
//! table), so `yamba ministat`, `yamba stone`'s comparison and any other
//! program use the same code, built and tested without the rest of yamba.

mod args;
mod cfmt;
mod cparse;
mod machine;
mod plot;
mod read;
mod sort;
mod ttable;

use std::borrow::Cow;
use std::fmt;
use std::io::BufRead;

pub use args::{parse_args, run_command, Environment, GetoptComplaint, Invocation};
pub use cfmt::{format_g, format_g_width};
pub use plot::PlotError;
pub use read::InputFormat;

/// At most this many data sets: one per plot symbol.
pub const MAX_DATASETS: usize = 7;

/// The plot width when standard output is not a terminal.
pub const DEFAULT_WIDTH: i32 = 74;

/// Index 0 is an empty cell; set `i` is drawn with symbol `i + 1`. A cell
/// shared by sets shows the symbol of their bitwise OR (so `x` and `+`
/// make `*`), as in the original.
const SYMBOLS: &[u8; 8] = b" x+*%#@O";

/// A confidence level ministat has a t column for (`-c`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Confidence {
    P80,
    P90,
    #[default]
    P95,
    P98,
    P99,
    P99_5,
}

impl Confidence {
    /// Every level, in the t table's column order.
    pub const ALL: [Confidence; 6] = [
        Confidence::P80,
        Confidence::P90,
        Confidence::P95,
        Confidence::P98,
        Confidence::P99,
        Confidence::P99_5,
    ];

    /// The level in percent: 80, 90, 95, 98, 99 or 99.5.
    pub fn percent(self) -> f64 {
        [80.0, 90.0, 95.0, 98.0, 99.0, 99.5][self.column()]
    }

    /// The level whose percentage is exactly `percent`, as `-c` matches.
    pub fn from_percent(percent: f64) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.percent() == percent)
    }

    fn column(self) -> usize {
        self as usize
    }

    /// `printf("%.1f", percent)`.
    fn label(self) -> &'static str {
        ["80.0", "90.0", "95.0", "98.0", "99.0", "99.5"][self.column()]
    }
}

/// What to print (the options that are not about reading input).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MinistatOptions {
    /// `-c`: the confidence level of the t tests.
    pub confidence: Confidence,
    /// `-w`: the plot's width inside its frame. ministat itself accepts 0
    /// and up; see [`MinistatError::Plot`] for widths it cannot draw.
    pub width: i32,
    /// `-s`: one bar line per set instead of all on one.
    pub separate_bars: bool,
    /// `-A`: no plot, but statistics and comparisons.
    pub suppress_plot: bool,
    /// `-n`: statistics only, no plot and no comparisons.
    pub summary_only: bool,
    /// `-q`: no set names and no table header (newer FreeBSD).
    pub quiet: bool,
}

impl Default for MinistatOptions {
    fn default() -> Self {
        MinistatOptions {
            confidence: Confidence::default(),
            width: DEFAULT_WIDTH,
            separate_bars: false,
            suppress_plot: false,
            summary_only: false,
            quiet: false,
        }
    }
}

/// Why ministat stops. [`MinistatError::stderr_bytes`] gives the
/// original's exact message, [`MinistatError::exit_code`] its exit status.
#[derive(Clone, Debug, PartialEq)]
pub enum MinistatError {
    /// A bad command line: getopt's own complaint if it had one, then
    /// ministat's, then the usage text. Also too many data sets.
    Usage {
        getopt: Option<GetoptComplaint>,
        complaint: &'static str,
    },
    /// A file that cannot be opened, with the system's reason.
    CannotOpen { name: Vec<u8>, reason: String },
    /// A line whose chosen column is not a number (1-based; lines longer
    /// than 8191 bytes count as several, as in the original).
    InvalidData { name: Vec<u8>, line: usize },
    /// Fewer than 3 values: no variance to speak of.
    TooFewPoints { name: Vec<u8> },
    /// No data set at all (only through the library API).
    NoDatasets,
    /// The plot cannot be drawn; the original crashes here.
    Plot(PlotError),
}

const USAGE: &str = "\
Usage: ministat [-C column] [-c confidence] [-d delimiter(s)] [-Ans] [-w width] [file [file ...]]
\tconfidence = {80%, 90%, 95%, 98%, 99%, 99.5%}
\t-A : print statistics only. suppress the graph.
\t-C : column number to extract (starts and defaults to 1)
\t-d : delimiter(s) string, default to \" \\t\"
\t-n : print summary statistics only, no graph/test
\t-s : print avg/median/stddev bars on separate lines
\t-w : width of graph/test output (default 74 or terminal width)
";

impl MinistatError {
    /// The exit status the original uses (and a crash becomes 2).
    pub fn exit_code(&self) -> i32 {
        match self {
            MinistatError::CannotOpen { .. } => 1,
            _ => 2,
        }
    }

    /// What the original prints on standard error, byte for byte.
    pub fn stderr_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            MinistatError::Usage { getopt, complaint } => {
                if let Some(getopt) = getopt {
                    out.extend(getopt.message());
                }
                out.extend_from_slice(complaint.as_bytes());
                out.push(b'\n');
                out.extend_from_slice(USAGE.as_bytes());
            }
            MinistatError::CannotOpen { name, reason } => {
                out.extend_from_slice(b"ministat: Cannot open ");
                out.extend_from_slice(name);
                out.extend_from_slice(format!(": {reason}\n").as_bytes());
            }
            MinistatError::InvalidData { name, line } => {
                out.extend_from_slice(
                    format!("ministat: Invalid data on line {line} in ").as_bytes(),
                );
                out.extend_from_slice(name);
                out.push(b'\n');
            }
            MinistatError::TooFewPoints { name } => {
                out.extend_from_slice(b"Dataset ");
                out.extend_from_slice(name);
                out.extend_from_slice(b" must contain at least 3 data points\n");
            }
            MinistatError::NoDatasets | MinistatError::Plot(_) => {
                out.extend_from_slice(format!("ministat: {self}\n").as_bytes());
            }
        }
        out
    }
}

impl fmt::Display for MinistatError {
    /// One line, for callers that wrap the error (the exact multi-line
    /// text is [`MinistatError::stderr_bytes`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lossy = |name: &[u8]| String::from_utf8_lossy(name).into_owned();
        match self {
            MinistatError::Usage {
                getopt: Some(g),
                complaint,
            } => {
                let message = String::from_utf8_lossy(&g.message()).into_owned();
                write!(f, "{} ({complaint})", message.trim_end())
            }
            MinistatError::Usage {
                getopt: None,
                complaint,
            } => f.write_str(complaint),
            MinistatError::CannotOpen { name, reason } => {
                write!(f, "Cannot open {}: {reason}", lossy(name))
            }
            MinistatError::InvalidData { name, line } => {
                write!(f, "Invalid data on line {line} in {}", lossy(name))
            }
            MinistatError::TooFewPoints { name } => {
                write!(
                    f,
                    "Dataset {} must contain at least 3 data points",
                    lossy(name)
                )
            }
            MinistatError::NoDatasets => f.write_str("no data set to report on"),
            MinistatError::Plot(PlotError(why)) => write!(
                f,
                "cannot draw the plot: {why}; the original ministat crashes here \
                 (-A or -n leave the plot out)"
            ),
        }
    }
}

impl std::error::Error for MinistatError {}

/// One data set: its name and values, with ministat's running sums.
#[derive(Clone, Debug, PartialEq)]
pub struct Dataset {
    name: Vec<u8>,
    points: Vec<f64>,
    sum: f64,
    sum_of_squares: f64,
}

impl Dataset {
    /// A set from values in input order (the order matters, to the last
    /// bit, for the sums behind the mean and variance). Needs 3 values.
    pub fn new(name: &str, values: Vec<f64>) -> Result<Self, MinistatError> {
        Self::from_name_bytes(name.as_bytes().to_vec(), values)
    }

    /// Reads a set as the ministat command does: one value per line, or
    /// the chosen column; see [`InputFormat`].
    pub fn read(
        name: &str,
        reader: &mut dyn BufRead,
        format: &InputFormat,
    ) -> Result<Self, MinistatError> {
        Self::read_named(name.as_bytes().to_vec(), reader, format)
    }

    /// [`Dataset::read`] with a name that need not be UTF-8 (a file name).
    fn read_named(
        name: Vec<u8>,
        reader: &mut dyn BufRead,
        format: &InputFormat,
    ) -> Result<Self, MinistatError> {
        match read::read_values(reader, format) {
            Ok(values) => Self::from_name_bytes(name, values),
            Err(line) => Err(MinistatError::InvalidData { name, line }),
        }
    }

    fn from_name_bytes(name: Vec<u8>, mut points: Vec<f64>) -> Result<Self, MinistatError> {
        if points.len() < 3 {
            return Err(MinistatError::TooFewPoints { name });
        }
        let (mut sum, mut sum_of_squares) = (0.0, 0.0);
        for &a in &points {
            // As the original's machine code adds (NaN signs, rounding).
            (sum, sum_of_squares) = machine::add_point(sum, sum_of_squares, a);
        }
        sort::glibc_qsort(&mut points);
        Ok(Dataset {
            name,
            points,
            sum,
            sum_of_squares,
        })
    }

    /// The name, as printed in the legend.
    pub fn name(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.name)
    }

    /// The values, sorted.
    pub fn points(&self) -> &[f64] {
        &self.points
    }

    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// Never true: a set has at least 3 values.
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    pub fn min(&self) -> f64 {
        self.points[0]
    }

    pub fn max(&self) -> f64 {
        self.points[self.points.len() - 1]
    }

    /// The upper median for an even count, as ministat takes it.
    pub fn median(&self) -> f64 {
        self.points[self.points.len() / 2]
    }

    pub fn mean(&self) -> f64 {
        self.sum / self.n()
    }

    /// The sample variance by ministat's one-pass formula, rounding and all
    /// (it can come out slightly negative, making the deviation NaN).
    pub fn variance(&self) -> f64 {
        (self.sum_of_squares - self.sum * self.sum / self.n()) / (self.n() - 1.0)
    }

    pub fn stddev(&self) -> f64 {
        self.variance().sqrt()
    }

    fn n(&self) -> f64 {
        self.points.len() as f64
    }
}

/// The report on named lists of numbers, as the ministat command would
/// print it for files of those names holding those values.
///
/// ```
/// use yamba_ministat::{compare, MinistatOptions};
/// let before = vec![10.0, 11.0, 10.5, 10.2];
/// let after = vec![8.0, 8.5, 8.1, 8.2];
/// let opts = MinistatOptions { summary_only: true, ..Default::default() };
/// let text = compare(&[("before", before), ("after", after)], &opts).unwrap();
/// assert!(text.starts_with("x before\n+ after\n"));
/// ```
pub fn compare<S: AsRef<str>, V: AsRef<[f64]>>(
    datasets: &[(S, V)],
    opts: &MinistatOptions,
) -> Result<String, MinistatError> {
    let sets = datasets
        .iter()
        .map(|(name, values)| Dataset::new(name.as_ref(), values.as_ref().to_vec()))
        .collect::<Result<Vec<_>, _>>()?;
    run(opts, &sets)
}

/// The report on `datasets` (the first is the baseline the others are
/// compared with), as text.
pub fn run(opts: &MinistatOptions, datasets: &[Dataset]) -> Result<String, MinistatError> {
    render(opts, datasets).map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
}

/// The report as bytes: exact even for names that are not UTF-8.
pub fn render(opts: &MinistatOptions, datasets: &[Dataset]) -> Result<Vec<u8>, MinistatError> {
    if datasets.is_empty() {
        return Err(MinistatError::NoDatasets);
    }
    if datasets.len() > MAX_DATASETS {
        return Err(MinistatError::Usage {
            getopt: None,
            complaint: "Too many datasets.",
        });
    }
    let mut out = Vec::new();
    if !opts.quiet {
        for (symbol, ds) in SYMBOLS[1..].iter().zip(datasets) {
            out.extend_from_slice(&[*symbol, b' ']);
            out.extend_from_slice(&ds.name);
            out.push(b'\n');
        }
    }
    if !opts.summary_only && !opts.suppress_plot {
        plot::render(datasets, opts.width, opts.separate_bars, &mut out)
            .map_err(MinistatError::Plot)?;
    }
    if !opts.quiet {
        out.extend_from_slice(
            b"    N           Min           Max        Median           Avg        Stddev\n",
        );
    }
    let baseline = &datasets[0];
    out.extend(vitals(baseline, SYMBOLS[1]).bytes());
    for (symbol, ds) in SYMBOLS[2..].iter().zip(&datasets[1..]) {
        out.extend(vitals(ds, *symbol).bytes());
        if !opts.summary_only {
            out.extend(relative(ds, baseline, opts.confidence).bytes());
        }
    }
    Ok(out)
}

/// One table row: `%c %3d %13.8g %13.8g %13.8g %13.8g %13.8g`.
fn vitals(ds: &Dataset, symbol: u8) -> String {
    let g = |x: f64| format_g_width(x, 13, 8);
    format!(
        "{} {:>3} {} {} {} {} {}\n",
        char::from(symbol),
        ds.len(),
        g(ds.min()),
        g(ds.max()),
        g(ds.median()),
        g(ds.mean()),
        g(ds.stddev())
    )
}

/// Student's t test of `ds`'s mean against the baseline `rs`'s, with the
/// pooled standard deviation, computed in the original's order of
/// operations so that the verdict and every digit agree.
fn relative(ds: &Dataset, rs: &Dataset, confidence: Confidence) -> String {
    let (n_ds, n_rs) = (ds.len(), rs.len());
    let df = n_ds + n_rs - 2;
    let t = ttable::critical_t(df, confidence.column());
    let mut spool = machine::pooled_sum(
        (n_ds - 1) as f64,
        ds.variance(),
        (n_rs - 1) as f64,
        rs.variance(),
    );
    spool /= df as f64;
    spool = spool.sqrt();
    let s = spool * (1.0 / n_ds as f64 + 1.0 / n_rs as f64).sqrt();
    let d = ds.mean() - rs.mean();
    let e = t * s;
    if d.abs() > e {
        let g = |x: f64| format_g(x, 6);
        format!(
            "Difference at {}% confidence\n\t{} +/- {}\n\t{}% +/- {}%\n\t(Student's t, pooled s = {})\n",
            confidence.label(),
            g(d),
            g(e),
            g(d * 100.0 / rs.mean()),
            g(e * 100.0 / rs.mean()),
            g(spool)
        )
    } else {
        format!(
            "No difference proven at {}% confidence\n",
            confidence.label()
        )
    }
}

#[cfg(test)]
mod tests;
