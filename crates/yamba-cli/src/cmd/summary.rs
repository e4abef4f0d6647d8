//! `yamba summary FILE...`: lmbench's summary tables (`make see`), one row
//! per results file.

use yamba_report::lmbench;

#[derive(clap::Args)]
pub struct Args {
    /// Results files, one row each (`-` for standard input).
    #[arg(required = true)]
    files: Vec<String>,
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    let mut files = Vec::new();
    for f in &args.files {
        files.push((
            f.clone(),
            yamba_results::read_results(f).map_err(anyhow::Error::msg)?,
        ));
    }
    super::obs::write_stdout(&lmbench::summary(&files))?;
    Ok(0)
}
