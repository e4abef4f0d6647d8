//! `yamba completions SHELL` and `yamba man`: shell completions and manual
//! pages generated from the same clap definitions the command parses with,
//! so they can never disagree with it.

use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct CompletionArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

/// Writes the completion script for `args.shell` to standard output.
pub fn completions(args: CompletionArgs, cmd: clap::Command) -> anyhow::Result<i32> {
    // Hidden (internal) subcommands are not offered: the generators would
    // list them, so they are left out of the command handed over.
    let visible: Vec<clap::Command> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .cloned()
        .collect();
    let mut cmd = clap::Command::new("yamba")
        .version(env!("CARGO_PKG_VERSION"))
        .subcommands(visible);
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "yamba", &mut out);
    crate::out::write_raw(false, &out);
    crate::out::flush();
    Ok(0)
}

#[derive(clap::Args)]
pub struct ManArgs {
    /// Write yamba.1 and one yamba-SUBCOMMAND.1 per subcommand into DIR
    /// instead of printing yamba.1 on standard output.
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,
}

/// Prints the manual page (roff), or writes all of them into a folder.
pub fn man(args: ManArgs, cmd: clap::Command) -> anyhow::Result<i32> {
    let Some(dir) = args.out_dir else {
        let mut out = Vec::new();
        clap_mangen::Man::new(cmd).render(&mut out)?;
        std::io::stdout().write_all(&out)?;
        return Ok(0);
    };
    std::fs::create_dir_all(&dir)
        .map_err(|e| anyhow::anyhow!("--out-dir {}: {e}", dir.display()))?;
    clap_mangen::generate_to(cmd, &dir).map_err(|e| {
        anyhow::anyhow!("cannot write the manual pages into {}: {e}", dir.display())
    })?;
    eprintln!("yamba: manual pages written to {}", dir.display());
    Ok(0)
}
