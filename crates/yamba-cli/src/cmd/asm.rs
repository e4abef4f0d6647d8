//! `yamba asm 'imul rax, rax' ['add rax, rax' …]`: instruction sequences
//! measured as Yamba classes (yamba_lang::asm), interleaved in one run.

use anyhow::bail;
use std::path::{Path, PathBuf};
use yamba_core::RunConfig;
use yamba_lang::asm::{asm_benchmark, AsmSpec};
use yamba_results::output::Output;

#[derive(clap::Args)]
pub struct Args {
    /// Instruction sequences, ';' between instructions; each is measured.
    #[arg(required = true)]
    seqs: Vec<String>,
    /// Instructions run once per call before the copies (e.g. 'mov rax, 1').
    #[arg(long)]
    init: Option<String>,
    /// Copies per call: auto (chosen at run time) or a number.
    #[arg(long, default_value = "auto")]
    unroll: String,
    /// Instruction set (default: this host's).
    #[arg(long)]
    isa: Option<String>,
    /// Measure every sequence N times, interleaved, each time in a fresh process.
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    /// A rough pass: short budgets.
    #[arg(long)]
    quick: bool,
    /// Results file to write (default: results/asm-<time>.json).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Print the generated code instead of measuring it.
    #[arg(long)]
    disasm: bool,
    #[command(flatten)]
    history: super::history::RecordArgs,
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    let unroll = match args.unroll.as_str() {
        "auto" => None,
        n => match n.parse::<u32>() {
            Ok(v) if (1..=1 << 20).contains(&v) => Some(v),
            _ => bail!("--unroll {n}: expected auto or a number of copies from 1 to 1048576"),
        },
    };
    let isa = match args.isa.as_deref() {
        None => yamba_lang::Isa::host().ok_or_else(|| {
            anyhow::anyhow!("this host's instruction set is not supported; give --isa")
        })?,
        Some(name) => yamba_lang::Isa::from_name(name).ok_or_else(|| {
            let all: Vec<&str> = yamba_lang::Isa::ALL.iter().map(|i| i.name()).collect();
            anyhow::anyhow!("--isa {name}: expected one of {}", all.join(", "))
        })?,
    };
    let specs: Vec<AsmSpec> = args
        .seqs
        .iter()
        .map(|s| AsmSpec {
            seq: s.clone(),
            init: args.init.clone(),
            unroll,
            isa,
        })
        .collect();
    if args.disasm {
        for s in &specs {
            let prog = yamba_lang::asm::program(s)?;
            let n = s.unroll.unwrap_or(4) as i64;
            for f in ["benchmark", "benchmark_dummy"] {
                let t =
                    yamba_lang::disasm(&prog, "asm_sequence", f, &[n], &Default::default(), false)?;
                println!("{t}");
            }
        }
        return Ok(0);
    }
    let benches = specs
        .iter()
        .enumerate()
        .map(|(i, s)| asm_benchmark(s, i + 1))
        .collect::<Result<Vec<_>, _>>()?;
    let mut config = if args.quick {
        RunConfig::quick()
    } else {
        RunConfig {
            budget_s: 0.5,
            ..RunConfig::default()
        }
    };
    if !(1..=100).contains(&args.repeat) {
        bail!("--repeat {}: must be between 1 and 100", args.repeat);
    }
    config.repetitions = args.repeat;
    config.max_blocks = args.repeat;
    let output = Output::new(args.out.as_deref(), Path::new("results"), "asm")
        .map_err(anyhow::Error::msg)?;
    let recorder = args.history.start()?;
    let (file, saved) = yamba_lang::session::run_saving(
        config,
        &benches,
        std::env::args().collect(),
        Some(&output),
    )?;
    let saved = saved.expect("a file was asked for");
    print!("{}", yamba_report::table::render(&file.results));
    let first = file.results.first().and_then(|r| r.value());
    for (r, s) in file.results.iter().zip(&specs) {
        let unroll = r.params.get("unroll_degree").cloned().unwrap_or_default();
        match (r.value(), first) {
            (Some(m), Some(f)) => println!(
                "{}: '{}' {:.3} ns per copy ({:.2}× the first), {unroll} copies per call",
                r.id,
                s.seq,
                m,
                m / f
            ),
            _ => println!(
                "{}: '{}' not measured: {}",
                r.id,
                s.seq,
                r.reason.as_deref().unwrap_or("")
            ),
        }
    }
    let ending = super::saved::conclude(
        &saved,
        recorder.as_ref(),
        &file,
        yamba_history::OriginKind::Run,
        format!("asm {}", args.seqs.join(" | ")),
    );
    Ok(ending.exit_code(false))
}
