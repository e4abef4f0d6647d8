//! The yamba command. Thin by design: every subcommand parses its options
//! and calls the libraries, where the tests can call the same code.

mod cmd;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "yamba",
    version,
    about = "yet another micro-benchmark architecture: what OS and hardware primitives really cost",
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
    /// FreeBSD ministat: compare columns of numbers with Student's t.
    Ministat(cmd::ministat::Args),
    /// Plot observations (series or histogram) or a curve, in the terminal or to SVG/PNG.
    Plot(cmd::plot::Args),
    /// Print a benchmark's raw observations, one per line (the seed's bcut).
    Obs(cmd::obs::Args),
    /// Write a smaller results file with just the named benchmarks (the seed's bgrep).
    Select(cmd::select::Args),
    /// Compare two results files: change, confidence interval, p-value, verdict.
    Compare(cmd::compare::Args),
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
    /// Time a whole command N times (worldstone): cycles, wall, CPU time, peak memory.
    Stone(cmd::stone::Args),
    /// Aggregate TIME_BLOCK lines: totals per site, share and cumulative share.
    Blocks(cmd::blocks::Args),
    /// Print CPU states (user, system, idle, iowait, steal) at an interval.
    Top(cmd::top::Args),
    /// The Yamba language: check, run and list benchmark classes.
    Lang(cmd::lang::Args),
    /// Measure instruction sequences (generated code, dependent chains), side by side.
    Asm(cmd::asm::Args),
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(a) => cmd::run::run(a),
        Command::List(a) => cmd::list::run(a),
        Command::Bench(a) => cmd::bench_child::run(a),
        Command::Ministat(a) => cmd::ministat::run(a),
        Command::Plot(a) => cmd::plot::run(a),
        Command::Obs(a) => cmd::obs::run(a),
        Command::Select(a) => cmd::select::run(a),
        Command::Compare(a) => cmd::compare::run(a),
        Command::Report(a) => cmd::report::run(a),
        Command::Machine(a) => cmd::machine::run(a),
        Command::Export(a) => cmd::export::run(a),
        Command::Summary(a) => cmd::summary::run(a),
        Command::Serve(a) => cmd::serve::run(a),
        Command::Stone(a) => cmd::stone::run(a),
        Command::Blocks(a) => cmd::blocks::run(a),
        Command::Top(a) => cmd::top::run(a),
        Command::Lang(a) => cmd::lang::run(a),
        Command::Asm(a) => cmd::asm::run(a),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("yamba: {e:#}");
            std::process::exit(2);
        }
    }
}
