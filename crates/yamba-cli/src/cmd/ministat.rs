//! `yamba ministat`: FreeBSD's ministat, byte for byte.
//!
//! The arguments are handed over raw and parsed by the library exactly as
//! the original's glibc `getopt` does (combined flags, `-C2`, options after
//! file names, `--`), so that every command line, good or bad, gives the
//! original's output, messages and exit status.

use std::ffi::OsString;
use std::io::{self, IsTerminal};

use yamba_ministat::{run_command, Environment};

/// FreeBSD ministat: statistics of columns of numbers, and Student's t
/// tests between them.
#[derive(clap::Args)]
#[command(
    disable_help_flag = true,
    disable_version_flag = true,
    override_usage = "yamba ministat [-C column] [-c confidence] [-d delimiter(s)] [-Anqs] [-w width] [file [file ...]]",
    after_help = "\
Options (as in FreeBSD's ministat):
  -A             statistics and comparisons only, no plot
  -C column      the column to read, from 1 (default 1)
  -c confidence  80, 90, 95 (default), 98, 99 or 99.5
  -d delimiters  the characters that separate columns (default space and tab)
  -n             statistics only, no plot and no comparisons
  -q             no data set names and no table header
  -s             average/median/deviation bars on separate lines
  -w width       plot width (default 74, or the terminal's width)

Reads standard input when no file (or `-`) is given. Each file needs at
least 3 numbers; lines and columns starting with # are comments. Each
data set after the first is compared with the first."
)]
pub struct Args {
    /// ministat's options and data files, parsed as the original does.
    #[arg(
        value_name = "ARGS",
        num_args = 0..,
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    args: Vec<OsString>,
}

impl Args {
    /// `--help` among the options (before any `--`) asks for yamba's help;
    /// ministat itself has no long options, so nothing it accepts is lost.
    /// `-h` stays ministat's: an unknown option, its usage and status 2.
    pub fn wants_help(&self) -> bool {
        self.args
            .iter()
            .take_while(|a| *a != "--")
            .any(|a| a == "--help")
    }
}

/// Runs ministat on the real standard streams; returns its exit status
/// (its error messages are printed here, in the original's words).
pub fn run(args: Args) -> anyhow::Result<i32> {
    let stdout = io::stdout();
    let env = Environment {
        default_width: Environment::plot_width(
            stdout.is_terminal(),
            std::env::var_os("COLUMNS").as_deref(),
            crate::term::window_size().map(|(cols, _)| cols),
        ),
        posixly_correct: std::env::var_os("POSIXLY_CORRECT").is_some(),
    };
    let code = run_command(
        &with_leading_double_dash(args.args, std::env::args_os().collect()),
        &env,
        &mut io::stdin().lock(),
        &mut stdout.lock(),
        &mut io::stderr().lock(),
    );
    Ok(code)
}

/// Puts back a `--` that clap took as its own end-of-options marker: when
/// it comes right after the subcommand, clap drops it, but to ministat it
/// matters (`ministat -- -n` reads a file called `-n`). `parsed` is what
/// clap kept, always the tail of the process's `argv`.
fn with_leading_double_dash(parsed: Vec<OsString>, argv: Vec<OsString>) -> Vec<OsString> {
    let start = argv.len().saturating_sub(parsed.len());
    let dropped = start >= 2 && argv[start - 1] == "--" && argv[start - 2] == "ministat";
    if dropped {
        argv[start - 1..].to_vec()
    } else {
        parsed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<OsString> {
        s.split_whitespace().map(OsString::from).collect()
    }

    #[test]
    fn a_leading_double_dash_is_restored() {
        let restored =
            |parsed: &str, argv: &str| with_leading_double_dash(words(parsed), words(argv));
        assert_eq!(restored("-n", "yamba ministat -- -n"), words("-- -n"));
        assert_eq!(restored("-- a", "yamba ministat -- -- a"), words("-- -- a"));
        assert_eq!(
            restored("a -- -n", "yamba ministat a -- -n"),
            words("a -- -n")
        );
        assert_eq!(restored("-n a", "yamba ministat -n a"), words("-n a"));
        assert_eq!(restored("", "yamba ministat"), words(""));
    }
}
