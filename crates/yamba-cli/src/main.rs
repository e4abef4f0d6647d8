//! The yamba command. Thin by design: every subcommand parses its options
//! and calls the libraries, where the tests can call the same code.

// Every print of this crate goes through `out`: control characters
// escaped, a broken pipe ended quietly (see out.rs). These shadow std's
// macros of the same names for every module below.
macro_rules! print {
    ($($t:tt)*) => { $crate::out::print(false, format_args!($($t)*)) };
}
macro_rules! println {
    () => { $crate::out::print(false, format_args!("\n")) };
    ($($t:tt)*) => { $crate::out::print(false, format_args!("{}\n", format_args!($($t)*))) };
}
macro_rules! eprint {
    ($($t:tt)*) => { $crate::out::print(true, format_args!($($t)*)) };
}
macro_rules! eprintln {
    () => { $crate::out::print(true, format_args!("\n")) };
    ($($t:tt)*) => { $crate::out::print(true, format_args!("{}\n", format_args!($($t)*))) };
}

mod cmd;
mod out;
mod term;

use clap::{CommandFactory, Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "yamba",
    version,
    about = "yet another micro-benchmark architecture: what OS and hardware primitives really cost",
    long_about = "yamba measures what operating-system and hardware primitives really cost \
(a system call, a fork, a context switch, a page fault, a cache miss, a byte read from a file \
or a socket) and keeps, with every number, its raw observations, its statistics and the \
evidence that it measured what it claims.\n\nStart with `yamba list` (what can run here), then \
`yamba run --quick`. The words the output uses are explained in docs/glossary.md.",
    propagate_version = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run benchmarks (all of the default suite when none are named).
    Run(cmd::run::Args),
    /// List every benchmark, its platform adapter, and whether it can run here.
    List(cmd::list::Args),
    /// Runs one benchmark for a parent `yamba run` (internal).
    #[command(name = "__bench", hide = true)]
    Bench(cmd::bench_child::Args),
    /// Compare columns of numbers with Student's t: FreeBSD's ministat, byte for byte.
    Ministat(cmd::ministat::Args),
    /// Plot observations (series or histogram) or a curve, in the terminal or to SVG/PNG.
    Plot(cmd::plot::Args),
    /// Print a benchmark's raw observations, one per line (to pipe into ministat, plot, …).
    Obs(cmd::obs::Args),
    /// Write a smaller results file holding only the named benchmarks.
    Select(cmd::select::Args),
    /// Compare two results files (or stored runs, @ID): change, confidence interval, p-value, verdict.
    Compare(cmd::compare::Args),
    /// The runs remembered: list them, show one, follow a result across them, import files.
    History(cmd::history::Args),
    /// One self-contained HTML report of results files: machine, predictions, tables, figures, comparison.
    Report(cmd::report::Args),
    /// Describe this machine (CPU, clock, caches, memory, disks, network, OS), as text or JSON.
    Machine(cmd::machine::Args),
    /// Export a results file as csv, Go benchmark text (benchstat), ministat columns or lmbench's results format.
    Export(cmd::export::Args),
    /// lmbench's summary tables (`make see`), one row per results file.
    Summary(cmd::summary::Args),
    /// Run the remote-measurement agent (loopback unless told otherwise; token required).
    Serve(cmd::serve::Args),
    /// Stress the OS: random creation and destruction of primitives, error
    /// tests with invalid arguments, invariants checked, and the latency cost
    /// of the stress on a chosen benchmark.
    Stress(cmd::stress::Args),
    /// Time whole commands: runs, relative speed, cycles, wall, CPU time, peak memory.
    Stone(cmd::stone::Args),
    /// Sum the TIME_BLOCK lines a program printed: time per call site, share, cumulative share.
    Blocks(cmd::blocks::Args),
    /// Print CPU states (user, system, idle, iowait, steal) at an interval.
    Top(cmd::top::Args),
    /// The Yamba language: check, run and list benchmark classes.
    Lang(cmd::lang::Args),
    /// Measure instruction sequences (generated code, dependent chains), side by side.
    Asm(cmd::asm::Args),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(cmd::completions::CompletionArgs),
    /// Print the manual page (roff), or write one per subcommand with --out-dir.
    Man(cmd::completions::ManArgs),
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(a) => cmd::run::run(a),
        Command::List(a) => cmd::list::run(a),
        Command::Bench(a) => cmd::bench_child::run(a),
        Command::Ministat(a) if a.wants_help() => print_help("ministat"),
        Command::Ministat(a) => cmd::ministat::run(a),
        Command::Plot(a) => cmd::plot::run(a),
        Command::Obs(a) => cmd::obs::run(a),
        Command::Select(a) => cmd::select::run(a),
        Command::Compare(a) => cmd::compare::run(a),
        Command::History(a) => cmd::history::run(a),
        Command::Report(a) => cmd::report::run(a),
        Command::Machine(a) => cmd::machine::run(a),
        Command::Export(a) => cmd::export::run(a),
        Command::Summary(a) => cmd::summary::run(a),
        Command::Serve(a) => cmd::serve::run(a),
        Command::Stone(a) => cmd::stone::run(a),
        Command::Stress(a) => cmd::stress::run(a),
        Command::Blocks(a) => cmd::blocks::run(a),
        Command::Top(a) => cmd::top::run(a),
        Command::Lang(a) => cmd::lang::run(a),
        Command::Asm(a) => cmd::asm::run(a),
        Command::Completions(a) => cmd::completions::completions(a, Cli::command()),
        Command::Man(a) => cmd::completions::man(a, Cli::command()),
    };
    out::flush();
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("yamba: {e:#}");
            std::process::exit(2);
        }
    }
}

/// Prints a subcommand's help (for those that parse their own options).
fn print_help(name: &str) -> anyhow::Result<i32> {
    let mut cli = Cli::command();
    cli.build();
    let sub = cli
        .find_subcommand_mut(name)
        .ok_or_else(|| anyhow::anyhow!("no subcommand {name}"))?;
    sub.print_long_help()?;
    Ok(0)
}
