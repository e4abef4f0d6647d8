//! `yamba list`: every benchmark, its adapter, and whether it can run here.

use yamba_core::Describe;
use yamba_core::{Machine, RunConfig};

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
}

#[derive(clap::Args)]
pub struct Args {
    /// Only these benchmarks or areas.
    pub names: Vec<String>,
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    let benches = if args.names.is_empty() {
        yamba_suite::all()
    } else {
        yamba_suite::select(&args.names).map_err(anyhow::Error::msg)?
    };
    let machine = Machine::describe();
    let config = RunConfig::default();
    let rows: Vec<[String; 7]> = benches
        .iter()
        .map(|b| {
            let runnable = match b.runnable(&machine, &config) {
                Ok(()) => "yes".to_string(),
                Err(why) => format!("no: {why}"),
            };
            let modes: Vec<&str> = b.modes.iter().map(|m| m.as_str()).collect();
            [
                b.id.to_string(),
                b.area.to_string(),
                b.unit.symbol().to_string(),
                modes.join("+") + if b.default { "" } else { " (not default)" },
                b.adapter.to_string(),
                runnable,
                b.description.to_string(),
            ]
        })
        .collect();
    match args.format {
        Format::Json => {
            let v: Vec<serde_json::Value> = rows
                .iter()
                .map(|r| {
                    serde_json::json!({"id": r[0], "area": r[1], "unit": r[2], "modes": r[3],
                        "adapter": r[4], "runnable": r[5], "description": r[6]})
                })
                .collect();
            println!("{}", serde_json::to_string_pretty(&v)?);
        }
        Format::Table => {
            let header = [
                "id",
                "area",
                "unit",
                "modes",
                "adapter",
                "runs here",
                "description",
            ];
            let mut widths = header.map(|h| h.chars().count());
            for r in &rows {
                for i in 0..6 {
                    widths[i] = widths[i].max(r[i].chars().count());
                }
            }
            let print = |cells: [&str; 7]| {
                let mut line = String::new();
                for (i, c) in cells.iter().enumerate() {
                    line.push_str(c);
                    if i < 6 {
                        line.push_str(&" ".repeat(widths[i] - c.chars().count() + 2));
                    }
                }
                println!("{}", line.trim_end());
            };
            print(header);
            for r in &rows {
                print([&r[0], &r[1], &r[2], &r[3], &r[4], &r[5], &r[6]]);
            }
        }
    }
    Ok(0)
}
