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
    /// FreeBSD ministat: compare columns of numbers with Student's t.
    Ministat(cmd::ministat::Args),
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(a) => cmd::run::run(a),
        Command::List(a) => cmd::list::run(a),
        Command::Ministat(a) => cmd::ministat::run(a),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("yamba: {e:#}");
            std::process::exit(2);
        }
    }
}
