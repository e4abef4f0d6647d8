//! `yamba history`: the runs remembered (list, show, trend, import, fleet), and
//! the options `run` and `stone` take to store into it.

use std::path::PathBuf;
use yamba_history::{History, Origin, OriginKind, Recorder, Resolver, Saved, StoreSpec};
use yamba_results::ResultsFile;

/// Where runs are remembered: taken by `run`, `stone`, `compare`, `history`.
#[derive(clap::Args, Clone, Default)]
pub struct StoreArg {
    /// The history to use: an SQLite file, or a PostgreSQL URL
    /// (postgres://user@host/db, or postgres:///db?host=/socket/dir)
    /// [default: $YAMBA_HISTORY, else $XDG_DATA_HOME/yamba/history.sqlite
    /// or ~/.local/share/yamba/history.sqlite].
    #[arg(long, global = true, value_name = "FILE|URL")]
    pub store: Option<String>,
}

/// What `run` and `stone` take: where to store the run, or not to.
#[derive(clap::Args, Clone, Default)]
pub struct RecordArgs {
    #[command(flatten)]
    pub store: StoreArg,
    /// Do not store this run in the history (`run` then reads no earlier
    /// runs from it either: no interval for the runs, no between-runs lines).
    #[arg(long, conflicts_with = "store")]
    pub no_history: bool,
}

impl RecordArgs {
    /// Checks the history before anything is measured: an explicit store
    /// that cannot be opened is an error now, not after an hour of work.
    pub fn start(&self) -> anyhow::Result<Option<Recorder>> {
        let (recorder, messages) = Recorder::start(self.no_history, self.store.store.as_deref())?;
        for m in messages {
            eprintln!("yamba: {m}");
        }
        Ok(recorder)
    }
}

/// Stores a finished command's file; returns whether that failed where a
/// store was asked for explicitly.
pub fn record(
    recorder: Option<&Recorder>,
    file: &ResultsFile,
    kind: OriginKind,
    suite: String,
    source: Option<PathBuf>,
) -> bool {
    let Some(r) = recorder else {
        return false;
    };
    let done = r.record(
        file,
        &Origin {
            kind,
            suite: Some(suite),
            source,
        },
    );
    for m in &done.messages {
        eprintln!("yamba: {m}");
    }
    done.failed
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
}

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Option<Sub>,
    #[command(flatten)]
    store: StoreArg,
    /// How many runs to list, newest first.
    #[arg(short = 'n', long, default_value_t = 20, value_name = "N")]
    limit: usize,
    /// List every run.
    #[arg(long, conflicts_with = "limit")]
    all: bool,
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
}

#[derive(clap::Subcommand)]
enum Sub {
    /// One stored run: its machine, notes and table (`--format json`: the results file itself).
    Show {
        /// The run's id (as `history` lists it; `@ID` works too).
        id: String,
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
    /// A result's headline value and 95% interval across stored runs,
    /// oldest first, with changes of machine, kernel or yamba marked.
    Trend {
        /// The result: id@mode, or an id measured in one mode.
        name: String,
        /// Also plot it to this SVG file.
        #[arg(long, value_name = "FILE.svg")]
        output: Option<PathBuf>,
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
    /// The store as a fleet: each machine's newest run, machines of the
    /// same hardware (CPU model, CPUs, memory) side by side for each
    /// headline primitive, and flags for a machine outside its group's
    /// spread or moved since its previous run (with what changed: kernel,
    /// microcode, mitigations).
    Fleet {
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
    /// Remove runs: beyond each machine's newest N, and/or started before
    /// a date (a run goes when either rule selects it). An SQLite file is
    /// then vacuumed; PostgreSQL reuses the space (autovacuum).
    Prune {
        /// Keep each machine's (hostname's) newest N runs.
        #[arg(long, value_name = "N")]
        keep: Option<usize>,
        /// Remove runs started before this UTC date (YYYY-MM-DD) or time
        /// (YYYY-MM-DDTHH:MM:SSZ).
        #[arg(long, value_name = "DATE")]
        before: Option<String>,
        /// Only say which runs would go.
        #[arg(long)]
        dry_run: bool,
    },
    /// Store results files (plain or .json.zst) in the history.
    Import {
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
    },
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    let mut resolver = Resolver::new(args.store.store.as_deref());
    match args.command {
        None => {
            let h = resolver.history()?;
            let limit = (!args.all).then_some(args.limit);
            let runs = h.list(limit)?;
            match args.format {
                Format::Json => println!("{}", serde_json::to_string_pretty(&runs)?),
                Format::Table => {
                    let total = h.count()?;
                    print!("{}", yamba_history::text::list(&runs));
                    if (runs.len() as i64) < total {
                        println!(
                            "({} of {total} runs shown; --all or -n N for more)",
                            runs.len()
                        );
                    }
                    eprintln!("yamba: history {}", h.location());
                }
            }
            Ok(0)
        }
        Some(Sub::Show { id, format }) => {
            let id = parse_id(&id)?;
            let h = resolver.history()?;
            let file = h.load(id)?;
            match format {
                Format::Json => println!("{}", serde_json::to_string_pretty(&file)?),
                Format::Table => {
                    let summary = h.summary(id)?;
                    let table = yamba_report::table::render(&file.results);
                    print!("{}", yamba_history::text::show(&summary, &file, &table));
                }
            }
            Ok(0)
        }
        Some(Sub::Trend {
            name,
            output,
            format,
        }) => {
            if let Some(p) = &output {
                if p.extension().is_none_or(|e| e != "svg") {
                    anyhow::bail!("--output {}: the name must end in .svg", p.display());
                }
            }
            let h = resolver.history()?;
            let trend = h.trend(&name)?;
            match format {
                Format::Json => println!("{}", serde_json::to_string_pretty(&trend)?),
                Format::Table => print!("{}", trend.text()),
            }
            if let Some(p) = output {
                yamba_results::write_atomic(&p, trend.svg(900, 450).as_bytes())
                    .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", p.display()))?;
                eprintln!("yamba: trend plotted to {}", p.display());
            }
            Ok(0)
        }
        Some(Sub::Fleet { format }) => {
            let h = resolver.history()?;
            let fleet = h.fleet()?;
            match format {
                Format::Json => println!("{}", serde_json::to_string_pretty(&fleet)?),
                Format::Table => print!("{}", fleet.text()),
            }
            Ok(0)
        }
        Some(Sub::Prune {
            keep,
            before,
            dry_run,
        }) => {
            let rule = yamba_history::Prune { keep, before };
            let h = resolver.history()?;
            let pruned = h.prune(&rule, dry_run)?;
            print!("{}", yamba_history::text::pruned(&pruned));
            eprintln!("yamba: history {}", h.location());
            Ok(0)
        }
        Some(Sub::Import { files }) => {
            let spec = StoreSpec::or_default(args.store.store.as_deref())?;
            let mut h = History::open(&spec)?;
            let mut failed = 0;
            for f in &files {
                let done = ResultsFile::read(f)
                    .map_err(|e| e.to_string())
                    .and_then(|file| {
                        h.save(
                            &file,
                            &Origin {
                                kind: OriginKind::Import,
                                suite: None,
                                source: Some(f.clone()),
                            },
                        )
                        .map_err(|e| e.to_string())
                    });
                match done {
                    Ok(Saved::New(id)) => println!("{}: stored as @{id}", f.display()),
                    Ok(Saved::Existing(id)) => {
                        println!("{}: already in the history as @{id}", f.display())
                    }
                    Err(e) => {
                        failed += 1;
                        eprintln!("yamba: {}: {e}", f.display());
                    }
                }
            }
            eprintln!("yamba: history {}", h.location());
            Ok(if failed > 0 { 2 } else { 0 })
        }
    }
}

/// `12` or `@12`.
fn parse_id(s: &str) -> anyhow::Result<i64> {
    let with_at = if s.starts_with('@') {
        s.to_string()
    } else {
        format!("@{s}")
    };
    Ok(yamba_history::parse_reference(&with_at).expect("starts with @")?)
}
