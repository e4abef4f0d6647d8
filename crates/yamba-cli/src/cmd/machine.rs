//! `yamba machine`: the machine description every results file carries
//! (the 9front study's section 2), read from this host, as text or JSON.

use yamba_core::machine::{Describe, Machine};

#[derive(Clone, Copy, clap::ValueEnum)]
enum Format {
    Text,
    Json,
}

#[derive(clap::Args)]
pub struct Args {
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    let m = Machine::describe();
    let text = match args.format {
        Format::Text => yamba_report::machine::text(&m),
        Format::Json => serde_json::to_string_pretty(&m)? + "\n",
    };
    super::obs::write_stdout(&text)?;
    Ok(0)
}
