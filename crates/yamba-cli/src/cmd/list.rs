//! `yamba list`: every benchmark, its adapter, whether it is in the default
//! suite, whether it has a cold mode (or why one would not mean something
//! for it) and whether it can run here; with `--settings`, the `--set`
//! settings the benchmarks declare.

use yamba_core::settings::declared;
use yamba_core::Describe;
use yamba_core::{Benchmark, Machine, RunConfig};

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
}

#[derive(clap::Args)]
pub struct Args {
    /// Only these benchmarks or areas.
    pub names: Vec<String>,
    /// List the settings (`yamba run --set KEY=VALUE`) instead: key, type,
    /// default, what it changes, and which benchmarks read it.
    #[arg(long)]
    pub settings: bool,
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    let benches = if args.names.is_empty() {
        yamba_suite::all()
    } else {
        yamba_suite::select(&args.names).map_err(anyhow::Error::msg)?
    };
    if args.settings {
        return list_settings(&benches, args.format);
    }
    let machine = Machine::describe();
    let config = RunConfig::default();
    let runs_here: Vec<Result<(), String>> = benches
        .iter()
        .map(|b| b.runnable(&machine, &config))
        .collect();
    match args.format {
        Format::Json => {
            let v: Vec<serde_json::Value> = benches
                .iter()
                .zip(&runs_here)
                .map(|(b, here)| {
                    serde_json::json!({
                        "id": b.id,
                        "area": b.area,
                        "unit": b.unit.symbol(),
                        "modes": b.modes().iter().map(|m| m.as_str()).collect::<Vec<_>>(),
                        "no_cold": b.no_cold(),
                        "default": b.default,
                        "adapter": b.adapter,
                        "runnable": here.is_ok(),
                        "why_not": here.as_ref().err(),
                        "settings": b.settings.iter().map(|s| s.key).collect::<Vec<_>>(),
                        "description": b.description,
                    })
                })
                .collect();
            println!("{}", serde_json::to_string_pretty(&v)?);
        }
        Format::Table => {
            let rows: Vec<Vec<String>> = benches
                .iter()
                .zip(&runs_here)
                .map(|(b, here)| {
                    let modes: Vec<&str> = b.modes().iter().map(|m| m.as_str()).collect();
                    vec![
                        b.id.to_string(),
                        b.area.to_string(),
                        b.unit.symbol().to_string(),
                        modes.join("+"),
                        if b.default { "yes" } else { "no" }.to_string(),
                        b.adapter.to_string(),
                        match here {
                            Ok(()) => "yes".to_string(),
                            Err(why) => format!("no: {why}"),
                        },
                        b.description.to_string(),
                        b.no_cold()
                            .map_or("yes".to_string(), |why| format!("no: {why}")),
                    ]
                })
                .collect();
            let header = [
                "id",
                "area",
                "unit",
                "modes",
                "default",
                "adapter",
                "runs here",
                "description",
                "cold",
            ];
            print!("{}", columns(&header, &rows));
            println!("\ndefault: in the default suite (`yamba run` with no names)");
            println!("cold: a worst case (`--mode cold`: caches evicted and branch history disturbed before each operation), or why one would not mean something for it");
        }
    }
    Ok(0)
}

fn list_settings(benches: &[&'static Benchmark], format: Format) -> anyhow::Result<i32> {
    let settings = declared(benches);
    match format {
        Format::Json => {
            let v: Vec<serde_json::Value> = settings
                .iter()
                .map(|(s, ids)| {
                    serde_json::json!({
                        "key": s.key,
                        "type": s.kind.name(),
                        "accepts": s.kind.describe(),
                        "default": s.default,
                        "help": s.help,
                        "aliases": s.aliases,
                        "benchmarks": ids,
                    })
                })
                .collect();
            println!("{}", serde_json::to_string_pretty(&v)?);
        }
        Format::Table => {
            if settings.is_empty() {
                println!("(none of these benchmarks has settings)");
                return Ok(0);
            }
            for (s, ids) in &settings {
                println!("{}  ({})", s.key, s.kind.name());
                println!("    {}", s.help);
                println!("    accepts: {}", s.kind.describe());
                println!("    default: {}", s.default);
                if !s.aliases.is_empty() {
                    println!(
                        "    old name: {} (still read, with a warning)",
                        s.aliases.join(", ")
                    );
                }
                println!("    read by: {}", ids.join(", "));
            }
        }
    }
    Ok(0)
}

/// Left-aligned columns, two spaces apart; the last column unpadded.
fn columns(header: &[&str], rows: &[Vec<String>]) -> String {
    let n = header.len();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for i in 0..n - 1 {
            widths[i] = widths[i].max(r[i].chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut out = String::new();
        for (i, c) in cells.iter().enumerate() {
            out.push_str(c);
            if i + 1 < n {
                out.push_str(&" ".repeat(widths[i] - c.chars().count() + 2));
            }
        }
        out.trim_end().to_string() + "\n"
    };
    let mut out = line(header.to_vec());
    for r in rows {
        out.push_str(&line(r.iter().map(String::as_str).collect()));
    }
    out
}
