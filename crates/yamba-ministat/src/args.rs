//! The ministat command line: glibc `getopt` semantics, files, exit codes.
//!
//! The original parses with glibc's `getopt("AC:c:d:snw:")`, which permutes
//! (options may follow file names unless `POSIXLY_CORRECT` is set), takes
//! an option's argument from the rest of its word or the next word
//! whatever it looks like (`-d -` is fine), stops at `--`, and prints its
//! own complaint before ministat's usage text. Option values go through
//! `strtol`/`strtod` with their quirks (`-w ''` is 0, `-C 4294967297` is
//! column 1, `-c 9.5e1` is 95). All of it is reproduced so that any
//! command line is accepted or refused exactly as the original does.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};

use super::cparse::{atoi, strtod, strtol};
use super::{Confidence, Dataset, InputFormat, MinistatError, MinistatOptions, MAX_DATASETS};

/// The options, with `-q` from newer FreeBSD; `true` takes an argument.
const OPTIONS: &[(u8, bool)] = &[
    (b'A', false),
    (b'C', true),
    (b'c', true),
    (b'd', true),
    (b'n', false),
    (b'q', false),
    (b's', false),
    (b'w', true),
];

/// What the original reads from its environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Environment {
    /// The width before `-w`: 74, or for a terminal `$COLUMNS` (through
    /// `atoi`) or its width minus 2.
    pub default_width: i32,
    /// `POSIXLY_CORRECT` is set: options end at the first file name.
    pub posixly_correct: bool,
}

impl Default for Environment {
    fn default() -> Self {
        Environment {
            default_width: super::DEFAULT_WIDTH,
            posixly_correct: false,
        }
    }
}

impl Environment {
    /// The original's width rule: 74 unless standard output is a terminal;
    /// then `$COLUMNS` when set and not empty (through `atoi`, so `80x` is
    /// 80 and `abc` is 0), else the terminal's width minus 2 when known.
    pub fn plot_width(
        stdout_is_tty: bool,
        columns: Option<&OsStr>,
        terminal_columns: Option<u16>,
    ) -> i32 {
        if !stdout_is_tty {
            return super::DEFAULT_WIDTH;
        }
        match (columns.map(bytes), terminal_columns) {
            (Some(columns), _) if !columns.is_empty() => atoi(&columns),
            (_, Some(cols)) if cols > 0 => i32::from(cols) - 2,
            _ => super::DEFAULT_WIDTH,
        }
    }
}

/// What glibc's `getopt` says before returning `?`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GetoptComplaint {
    InvalidOption(u8),
    MissingArgument(u8),
}

impl GetoptComplaint {
    /// The message, as printed with the program called `ministat`.
    pub fn message(&self) -> Vec<u8> {
        let (text, option) = match *self {
            GetoptComplaint::InvalidOption(c) => ("invalid option", c),
            GetoptComplaint::MissingArgument(c) => ("option requires an argument", c),
        };
        let mut out = format!("ministat: {text} -- '").into_bytes();
        out.extend_from_slice(&[option, b'\'', b'\n']);
        out
    }
}

/// A parsed command line.
#[derive(Clone, Debug, PartialEq)]
pub struct Invocation {
    pub options: MinistatOptions,
    pub format: InputFormat,
    /// The data files in order; none means standard input, and `-` is
    /// standard input too.
    pub files: Vec<OsString>,
}

/// Parses ministat's arguments (without the program name) as the original
/// does, stopping at the first mistake as its `usage()` exits there.
pub fn parse_args(args: &[OsString], env: &Environment) -> Result<Invocation, MinistatError> {
    let mut state = OptionState {
        invocation: Invocation {
            options: MinistatOptions {
                width: env.default_width,
                ..MinistatOptions::default()
            },
            format: InputFormat::default(),
            files: Vec::new(),
        },
        confidence: None,
    };
    let mut i = 0;
    while i < args.len() {
        let word = bytes(&args[i]);
        if word == b"--" {
            state.invocation.files.extend_from_slice(&args[i + 1..]);
            break;
        }
        if word.len() < 2 || word[0] != b'-' {
            if env.posixly_correct {
                state.invocation.files.extend_from_slice(&args[i..]);
                break;
            }
            state.invocation.files.push(args[i].clone());
            i += 1;
            continue;
        }
        i += cluster(&word[1..], &args[i + 1..], &mut state)?;
    }
    let mut invocation = state.invocation;
    invocation.options.confidence = state.confidence.unwrap_or_default();
    Ok(invocation)
}

/// Options as they accumulate. The confidence stays unset until a valid
/// `-c`, and a later invalid `-c` does not unset it (the original's loop
/// only ever assigns a match).
struct OptionState {
    invocation: Invocation,
    confidence: Option<Confidence>,
}

/// Handles one word of options (`-qs`, `-w80`, `-w`): returns how many
/// words it used (1, or 2 when the argument is the next word).
fn cluster(
    letters: &[u8],
    rest: &[OsString],
    state: &mut OptionState,
) -> Result<usize, MinistatError> {
    for (k, &letter) in letters.iter().enumerate() {
        let Some(&(_, takes_argument)) = OPTIONS.iter().find(|(c, _)| *c == letter) else {
            return Err(getopt_error(GetoptComplaint::InvalidOption(letter)));
        };
        if !takes_argument {
            apply(letter, b"", state)?;
            continue;
        }
        if k + 1 < letters.len() {
            apply(letter, &letters[k + 1..], state)?;
            return Ok(1);
        }
        let Some(next) = rest.first() else {
            return Err(getopt_error(GetoptComplaint::MissingArgument(letter)));
        };
        apply(letter, &bytes(next), state)?;
        return Ok(2);
    }
    Ok(1)
}

fn getopt_error(complaint: GetoptComplaint) -> MinistatError {
    MinistatError::Usage {
        getopt: Some(complaint),
        complaint: "Unknown option",
    }
}

fn usage(complaint: &'static str) -> MinistatError {
    MinistatError::Usage {
        getopt: None,
        complaint,
    }
}

/// One option, checked as the original's `switch` does.
fn apply(letter: u8, value: &[u8], state: &mut OptionState) -> Result<(), MinistatError> {
    let opts = &mut state.invocation.options;
    match letter {
        b'A' => opts.suppress_plot = true,
        b'n' => opts.summary_only = true,
        b'q' => opts.quiet = true,
        b's' => opts.separate_bars = true,
        b'C' => {
            let column = c_int_option(value).ok_or(usage("Invalid column number."))?;
            if column <= 0 {
                return Err(usage("Column number should be positive."));
            }
            state.invocation.format.column = column as usize;
        }
        b'c' => {
            let (percent, used) = strtod(value);
            if used != value.len() {
                return Err(usage("Not a floating point number"));
            }
            if let Some(level) = Confidence::from_percent(percent) {
                state.confidence = Some(level);
            }
            if state.confidence.is_none() {
                return Err(usage("No support for confidence level"));
            }
        }
        b'd' => {
            if value.is_empty() {
                return Err(usage("Can't use empty delimiter string"));
            }
            state.invocation.format.delimiters = value.to_vec();
        }
        b'w' => {
            let width = c_int_option(value).ok_or(usage("Invalid width, not a number."))?;
            if width < 0 {
                return Err(usage("Unable to move beyond left margin."));
            }
            opts.width = width;
        }
        _ => unreachable!("only letters from OPTIONS get here"),
    }
    Ok(())
}

/// `(int)strtol(value, &end, 10)` when it consumes all of `value` (an
/// empty value counts, as 0), the `long` wrapping into `int`.
fn c_int_option(value: &[u8]) -> Option<i32> {
    let (number, used) = strtol(value);
    (used == value.len()).then_some(number as i32)
}

#[cfg(unix)]
fn bytes(s: &OsStr) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    s.as_bytes().to_vec()
}

#[cfg(not(unix))]
fn bytes(s: &OsStr) -> Vec<u8> {
    s.to_string_lossy().into_owned().into_bytes()
}

/// The whole `ministat` command: parses `args` (without the program name),
/// reads the files (or `stdin`) in order, and writes the report to
/// `stdout` or the original's error message to `stderr`. Returns the exit
/// status.
pub fn run_command(
    args: &[OsString],
    env: &Environment,
    stdin: &mut dyn BufRead,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> i32 {
    let result = parse_args(args, env).and_then(|invocation| {
        let datasets = read_datasets(&invocation, stdin)?;
        super::render(&invocation.options, &datasets)
    });
    let (stream, bytes, code): (&mut dyn Write, _, _) = match result {
        Ok(report) => (stdout, report, 0),
        Err(e) => (stderr, e.stderr_bytes(), e.exit_code()),
    };
    match stream.write_all(&bytes).and_then(|()| stream.flush()) {
        Ok(()) => code,
        // A closed pipe (`ministat ... | head`) is the reader's choice.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => code,
        Err(_) => 1,
    }
}

/// Reads every data set, one after the other, stopping at the first that
/// fails as the original does.
fn read_datasets(
    invocation: &Invocation,
    stdin: &mut dyn BufRead,
) -> Result<Vec<Dataset>, MinistatError> {
    if invocation.files.len() > MAX_DATASETS {
        return Err(usage("Too many datasets."));
    }
    if invocation.files.is_empty() {
        return Ok(vec![read_stdin(stdin, &invocation.format)?]);
    }
    invocation
        .files
        .iter()
        .map(|file| {
            let name = bytes(file);
            if name == b"-" {
                return read_stdin(stdin, &invocation.format);
            }
            let opened = File::open(file).map_err(|e| MinistatError::CannotOpen {
                name: name.clone(),
                reason: strerror(&e),
            })?;
            // A device need never end (/dev/zero): refused before a byte
            // is read (the original spins forever on /dev/zero). Regular
            // files, FIFOs, pipes and even directories (whose reading
            // fails at once) behave as in the original.
            if let Ok(m) = opened.metadata() {
                use std::os::unix::fs::FileTypeExt;
                let t = m.file_type();
                if t.is_char_device() || t.is_block_device() {
                    let kind = if t.is_char_device() {
                        "a character device"
                    } else {
                        "a block device"
                    };
                    return Err(MinistatError::CannotOpen {
                        name: name.clone(),
                        reason: format!("is {kind}, not a file of numbers"),
                    });
                }
            }
            Dataset::read_named(name, &mut BufReader::new(opened), &invocation.format)
        })
        .collect()
}

fn read_stdin(stdin: &mut dyn BufRead, format: &InputFormat) -> Result<Dataset, MinistatError> {
    Dataset::read_named(b"<stdin>".to_vec(), stdin, format)
}

/// The C library's `strerror` text: Rust's message for an OS error is that
/// text plus " (os error N)".
fn strerror(e: &io::Error) -> String {
    let text = e.to_string();
    match e.raw_os_error() {
        Some(code) => text
            .strip_suffix(&format!(" (os error {code})"))
            .unwrap_or(&text)
            .to_string(),
        None => text,
    }
}
