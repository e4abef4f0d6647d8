//! `yamba lang check|run|disasm`: the Yamba language (docs/language.md).

use anyhow::bail;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use yamba_core::{Mode, RunConfig};
use yamba_results::output::Output;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(clap::Subcommand)]
enum Sub {
    /// Parse and check: every error with file:line:col, the line and a caret.
    Check {
        /// Yamba files (what they include is read too).
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Build a class for this host and measure it through yamba's harness.
    Run {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The (concrete) class to run.
        #[arg(long)]
        class: String,
        /// Set a data member, KEY=VALUE (repeatable); unroll_degree=auto picks it at run time.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        settings: Vec<String>,
        /// Results file to write (default: results/lang-<class>-<time>.json).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// A rough pass: short budgets.
        #[arg(long)]
        quick: bool,
        /// Best case (hot: the loop method), worst case (cold: one call at a
        /// time after caches are evicted and branch history disturbed), or both.
        #[arg(long, value_enum, default_value = "hot")]
        mode: crate::cmd::run::ModeArg,
        /// Sampling budget in seconds.
        #[arg(long, value_name = "SECONDS")]
        budget: Option<f64>,
        /// Measure N times, each in a fresh process, pooled.
        #[arg(long, value_name = "N", default_value_t = 1)]
        repeat: usize,
        /// Folder for scratch files (it decides the file system paged out to).
        #[arg(long, value_name = "DIR")]
        scratch: Option<PathBuf>,
        /// Print the results as JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Run the C parts in the interpreter (the reference) instead of
        /// compiling them to native code.
        #[arg(long)]
        interpret: bool,
        /// Which code generator compiles the C parts: cranelift (x86-64,
        /// aarch64) or cc, the system's C compiler ($CC, else cc; x86-32's
        /// only one, and on x86-64 when asked) [default: the host's].
        #[arg(long, value_parser = parse_backend, value_name = "cranelift|cc")]
        backend: Option<yamba_lang::Backend>,
        /// Stop a measurement that takes longer than this many seconds
        /// (each mode and repetition runs in a process of its own, killed
        /// at the limit; its result fails with "timed out") [default: 600].
        #[arg(long, value_name = "SECONDS")]
        timeout: Option<u64>,
        #[command(flatten)]
        history: super::history::RecordArgs,
    },
    /// List the machine code a bitstring function generates, or the C
    /// functions compiled to native code, instruction by instruction.
    Disasm {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[arg(long)]
        class: String,
        /// The bitstring function, or a C function (its compiled code;
        /// A.f: imported class A's); none: every C function of the class
        /// and of the classes it imports, compiled.
        #[arg(long = "fn", value_name = "NAME")]
        func: Option<String>,
        /// Its arguments, in order (repeatable).
        #[arg(long = "arg", value_name = "N", allow_hyphen_values = true)]
        args: Vec<String>,
        #[arg(long = "set", value_name = "KEY=VALUE")]
        settings: Vec<String>,
        /// Show each instruction's offset and bytes too.
        #[arg(long)]
        bytes: bool,
        /// Which code generator compiles the C functions listed (as for
        /// `lang run`) [default: the host's].
        #[arg(long, value_parser = parse_backend, value_name = "cranelift|cc")]
        backend: Option<yamba_lang::Backend>,
    },
}

fn parse_backend(s: &str) -> Result<yamba_lang::Backend, String> {
    yamba_lang::Backend::parse(s).ok_or_else(|| format!("{s}: expected cranelift or cc"))
}

fn settings(items: &[String]) -> anyhow::Result<BTreeMap<String, String>> {
    Ok(yamba_core::settings::parse_pairs(items)?)
}

fn load(files: &[PathBuf]) -> anyhow::Result<yamba_lang::Program> {
    match yamba_lang::check_files(files) {
        Ok((p, warnings)) => {
            eprint!("{warnings}");
            Ok(p)
        }
        Err(e) => {
            eprint!("{}", e.rendered);
            let n = e.diags.iter().filter(|d| !d.warning).count();
            bail!("{n} error(s)")
        }
    }
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    match args.command {
        Sub::Check { files } => match yamba_lang::check_files(&files) {
            Ok((p, warnings)) => {
                print!("{warnings}");
                println!(
                    "ok: {} class(es): {}",
                    p.classes.len(),
                    p.class_names().join(", ")
                );
                Ok(0)
            }
            Err(e) => {
                print!("{}", e.rendered);
                let n = e.diags.iter().filter(|d| !d.warning).count();
                println!("{n} error(s)");
                Ok(1)
            }
        },
        Sub::Disasm {
            files,
            class,
            func,
            args,
            settings: s,
            bytes,
            backend,
        } => {
            let prog = load(&files)?;
            let args: Vec<i64> = args
                .iter()
                .map(|a| {
                    yamba_lang::eval::parse_setting(a)
                        .ok_or_else(|| anyhow::anyhow!("--arg {a}: expected an integer"))
                })
                .collect::<anyhow::Result<_>>()?;
            // `--fn A.f`: imported class A's compiled C function f.
            // No --fn: every compiled C function (disasm_c also says
            // when the class does not exist).
            let bitstring = func.as_ref().filter(|f| {
                !f.contains('.')
                    && !prog.class(&class).is_some_and(|ci| {
                        matches!(
                            prog.members(ci)
                                .get(f.as_str())
                                .map(|&(c, m)| &prog.classes[c].members[m].kind),
                            Some(yamba_lang::ast::MemberKind::Function { .. })
                        )
                    })
            });
            let text = if let Some(func) = bitstring {
                yamba_lang::disasm(&prog, &class, func, &args, &settings(&s)?, bytes)?
            } else {
                yamba_lang::disasm_c(
                    &prog,
                    &class,
                    func.as_deref(),
                    &settings(&s)?,
                    bytes,
                    backend.unwrap_or_else(yamba_lang::Backend::host),
                )?
            };
            print!("{text}");
            Ok(0)
        }
        Sub::Run {
            files,
            class,
            settings: s,
            out,
            quick,
            mode,
            budget,
            repeat,
            scratch,
            json,
            interpret,
            backend,
            timeout,
            history,
        } => {
            let prog = load(&files)?;
            let mut job = yamba_lang::runner::Job::new(prog, &class, settings(&s)?);
            job.interpret = interpret;
            if let Some(b) = backend {
                if interpret {
                    bail!("--backend and --interpret: the interpreter compiles nothing");
                }
                if let Some(why) = yamba_lang::jit::unavailable(b) {
                    bail!("--backend {}: {why}", b.name());
                }
                job.backend = b;
            }
            let bench = yamba_lang::runner::benchmark(job)?;
            let mut config = if quick {
                RunConfig::quick()
            } else {
                RunConfig::default()
            };
            config.modes = match mode {
                crate::cmd::run::ModeArg::Hot => vec![Mode::Hot],
                crate::cmd::run::ModeArg::Cold => vec![Mode::Cold],
                crate::cmd::run::ModeArg::Both => vec![Mode::Hot, Mode::Cold],
            };
            if let Some(b) = budget {
                if !(b.is_finite() && b > 0.0 && b <= 3600.0) {
                    bail!("--budget {b}: must be a number of seconds in (0, 3600]");
                }
                config.budget_s = b;
            }
            if !(1..=1000).contains(&repeat) {
                bail!("--repeat {repeat}: must be between 1 and 1000");
            }
            if let Some(t) = timeout {
                if !(1..=86_400).contains(&t) {
                    bail!("--timeout {t}: must be between 1 and 86400 seconds");
                }
                config.timeout_s = Some(t);
            }
            config.repetitions = repeat;
            config.max_blocks = repeat;
            if let Some(d) = &scratch {
                if !d.is_dir() {
                    bail!("--scratch {}: not a directory", d.display());
                }
                config.scratch_dir = Some(d.clone());
            }
            let output = Output::new(
                out.as_deref(),
                Path::new("results"),
                &format!("lang-{class}"),
            )
            .map_err(anyhow::Error::msg)?;
            let recorder = history.start()?;
            let (file, saved) = yamba_lang::session::run_saving(
                config,
                &[bench],
                std::env::args().collect(),
                Some(&output),
            )?;
            let saved = saved.expect("a file was asked for");
            if json {
                println!("{}", serde_json::to_string_pretty(&file)?);
            } else {
                print!("{}", yamba_report::table::render(&file.results));
                for r in &file.results {
                    for e in &r.evidence {
                        println!("  [{}] {}: {}", e.verdict(), e.check, e.observed);
                    }
                    if let Some(reason) = &r.reason {
                        println!("  {:?}: {reason}", r.status);
                    }
                }
            }
            let ending = super::saved::conclude(
                &saved,
                recorder.as_ref(),
                &file,
                yamba_history::OriginKind::Run,
                format!("lang {class}"),
            );
            let bad = file
                .results
                .iter()
                .any(|r| !matches!(r.status, yamba_core::Status::Ok));
            Ok(ending.exit_code(bad))
        }
    }
}
