//! What to time: the [`Options`] (what `yamba stone`'s command line says,
//! as plain data) and the [`Job`]s they make, one per command and
//! parameter value, with the commands split into words as a shell would.

use crate::{Error, ScanProblem};

/// How to time which commands: `yamba stone`'s options.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// The commands: one command's words (`-- make -j4 all`), or one or
    /// more commands each as one word (`'sleep 0.1' 'sleep 0.2'`), told
    /// apart by whitespace in the first.
    pub commands: Vec<String>,
    /// Timed runs per command; `None`: about 3 seconds' worth, within
    /// `min_runs..=max_runs` ([`crate::auto_runs`]).
    pub runs: Option<usize>,
    pub min_runs: usize,
    pub max_runs: Option<usize>,
    /// Untimed runs first.
    pub warmup: usize,
    /// Run through `sh -c` once before each command's series.
    pub setup: Option<String>,
    /// Run through `sh -c` before every run, warm-ups included.
    pub prepare: Option<String>,
    /// Run through `sh -c` after every run.
    pub cleanup: Option<String>,
    /// Each command run once per value of a parameter.
    pub parameter: Option<Parameter>,
    /// Run the commands through `sh -c` (the shell's own start-up time is
    /// measured and subtracted); else they are executed directly.
    pub shell: bool,
    /// Seconds after which a run is killed (with its process group) and
    /// the series stops.
    pub timeout: Option<f64>,
    /// Keep going when a run exits non-zero (its time is kept).
    pub ignore_failure: bool,
    /// Let the commands (and the helpers) write to this process's
    /// standard output and error, rather than discarding what they write.
    pub show_output: bool,
}

impl Default for Options {
    /// No command yet; an automatic count of at least 10 runs; nothing else.
    fn default() -> Options {
        Options {
            commands: Vec::new(),
            runs: None,
            min_runs: 10,
            max_runs: None,
            warmup: 0,
            setup: None,
            prepare: None,
            cleanup: None,
            parameter: None,
            shell: false,
            timeout: None,
            ignore_failure: false,
            show_output: false,
        }
    }
}

/// A parameter substituted for `{VAR}` in the commands. The values are
/// kept as written, for the messages about them.
#[derive(Debug, Clone, PartialEq)]
pub enum Parameter {
    /// `-P VAR MIN MAX [-D STEP]`: from MIN to MAX by STEP (integers
    /// without a step).
    Scan {
        var: String,
        min: String,
        max: String,
        step: Option<f64>,
    },
    /// `-L VAR A,B,C`: the values in the comma-separated list.
    List { var: String, values: String },
}

impl Parameter {
    /// `-P VAR MIN MAX`, with `-D STEP` if given.
    pub fn scan(var: &str, min: &str, max: &str, step: Option<f64>) -> Parameter {
        let (var, min, max) = (var.to_string(), min.to_string(), max.to_string());
        Parameter::Scan {
            var,
            min,
            max,
            step,
        }
    }

    /// `-L VAR VALUES`.
    pub fn list(var: &str, values: &str) -> Parameter {
        let (var, values) = (var.to_string(), values.to_string());
        Parameter::List { var, values }
    }
}

/// One command to time.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// The program and its arguments (with `shell`: the one text for `sh -c`).
    pub words: Vec<String>,
    /// The command as written, parameters substituted: how it is shown.
    pub label: String,
    /// The parameter's name and value, if any.
    pub parameters: Vec<(String, String)>,
}

/// Checks the options and makes the jobs: the commands, each over the
/// parameter's values. Nothing is run.
pub fn plan(options: &Options) -> Result<Vec<Job>, Error> {
    if let Some(t) = options.timeout {
        if !(t.is_finite() && t > 0.0 && t <= 86_400.0) {
            return Err(Error::Timeout(t));
        }
    }
    if options.runs == Some(0) {
        return Err(Error::NoRuns);
    }
    if options.min_runs == 0 || options.max_runs.is_some_and(|m| m < options.min_runs) {
        return Err(Error::MinRuns);
    }
    let commands = &options.commands;
    let first = commands.first().map(String::as_str).unwrap_or("");
    if first.trim().is_empty() {
        return Err(Error::NoCommand);
    }
    // Quoted commands (hyperfine's way) have spaces in the first word.
    let quoted = commands.len() == 1 || first.contains(char::is_whitespace);
    let templates: Vec<String> = if quoted {
        commands.clone()
    } else {
        vec![commands.join(" ")]
    };
    let params = parameter_values(options.parameter.as_ref())?;
    let mut out = Vec::new();
    for template in &templates {
        let sets: Vec<Vec<(String, String)>> = match &params {
            None => vec![Vec::new()],
            Some((var, values)) => {
                if !template.contains(&format!("{{{var}}}")) {
                    return Err(Error::UnusedParameter {
                        var: var.clone(),
                        command: template.clone(),
                    });
                }
                values
                    .iter()
                    .map(|v| vec![(var.clone(), v.clone())])
                    .collect()
            }
        };
        for set in sets {
            let label = substitute(template, &set);
            let words = if options.shell {
                vec![label.clone()]
            } else if quoted {
                split_words(&label)?
            } else {
                // Words as given (each may hold spaces), parameters substituted.
                commands.iter().map(|w| substitute(w, &set)).collect()
            };
            out.push(Job {
                words,
                label,
                parameters: set,
            });
        }
    }
    Ok(out)
}

/// The parameter's name and values, if there is one.
pub fn parameter_values(
    parameter: Option<&Parameter>,
) -> Result<Option<(String, Vec<String>)>, Error> {
    match parameter {
        None => Ok(None),
        Some(Parameter::Scan {
            var,
            min,
            max,
            step,
        }) => {
            let scan = |problem| Error::Scan {
                var: var.clone(),
                min: min.clone(),
                max: max.clone(),
                problem,
            };
            let num = |s: &str| {
                s.parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| scan(ScanProblem::NotANumber(s.to_string())))
            };
            let (a, b) = (num(min)?, num(max)?);
            if b < a {
                return Err(scan(ScanProblem::Reversed));
            }
            let step = match *step {
                Some(s) if s > 0.0 && s.is_finite() => s,
                Some(s) => return Err(Error::StepSize(s)),
                None if a.fract() == 0.0 && b.fract() == 0.0 => 1.0,
                None => return Err(scan(ScanProblem::NotIntegers)),
            };
            let count = ((b - a) / step + 1e-9).floor() as usize + 1;
            if count > 10_000 {
                return Err(scan(ScanProblem::TooMany(count)));
            }
            let integral = a.fract() == 0.0 && step.fract() == 0.0;
            let values = (0..count)
                .map(|i| {
                    let v = a + step * i as f64;
                    if integral {
                        format!("{}", v as i64)
                    } else {
                        format!("{}", (v * 1e9).round() / 1e9)
                    }
                })
                .collect();
            Ok(Some((var.clone(), values)))
        }
        Some(Parameter::List { var, values: list }) => {
            let values: Vec<String> = list.split(',').map(str::to_string).collect();
            if values.iter().any(String::is_empty) {
                return Err(Error::EmptyListValue {
                    var: var.clone(),
                    list: list.clone(),
                });
            }
            Ok(Some((var.clone(), values)))
        }
    }
}

/// `{VAR}` replaced by its value.
pub fn substitute(text: &str, params: &[(String, String)]) -> String {
    params.iter().fold(text.to_string(), |t, (k, v)| {
        t.replace(&format!("{{{k}}}"), v)
    })
}

/// Splits a quoted command into words as a shell would, refusing what only
/// a shell can do (pipes, redirections, variables) with a pointer to --shell.
pub fn split_words(cmd: &str) -> Result<Vec<String>, Error> {
    if let Some(what) = shell_syntax(cmd) {
        return Err(Error::ShellSyntax {
            command: cmd.to_string(),
            what,
        });
    }
    let words = shlex::split(cmd).ok_or_else(|| Error::UnbalancedQuotes(cmd.to_string()))?;
    if words.is_empty() {
        return Err(Error::EmptyCommand);
    }
    Ok(words)
}

/// The first piece of shell syntax outside quotes in `cmd`, if any (what
/// it is, in words).
pub fn shell_syntax(cmd: &str) -> Option<&'static str> {
    let (mut single, mut double, mut escaped) = (false, false, false);
    let chars: Vec<char> = cmd.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' if !single => escaped = true,
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '$' | '`' if !single => return Some("$ or `: expansion"),
            _ if single || double => {}
            '|' => return Some("|: a pipe or ||"),
            '&' => return Some("&: && or a background job"),
            ';' => return Some(";: a command list"),
            '<' | '>' => return Some("< or >: a redirection"),
            '*' | '?' => return Some("* or ?: a file pattern"),
            '~' if i == 0 || chars[i - 1] == ' ' => return Some("~: the home folder"),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(commands: &[&str]) -> Options {
        Options {
            commands: commands.iter().map(|c| c.to_string()).collect(),
            ..Options::default()
        }
    }

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn shell_syntax_is_recognised_outside_quotes_only() {
        assert!(shell_syntax("ls | wc -l").is_some());
        assert!(shell_syntax("echo $HOME").is_some());
        assert!(shell_syntax("make > log").is_some());
        assert!(shell_syntax("a && b").is_some());
        assert!(shell_syntax("grep 'a|b' file").is_none());
        assert!(shell_syntax("sleep 0.1").is_none());
        assert!(shell_syntax("echo \"a;b\"").is_none());
    }

    #[test]
    fn substitution() {
        let p = vec![("n".to_string(), "4".to_string())];
        assert_eq!(substitute("make -j{n} {m}", &p), "make -j4 {m}");
    }

    #[test]
    fn quoted_commands_are_split_as_a_shell_would() {
        assert_eq!(
            split_words("grep -c 'a b' \"c d\" e\\ f").unwrap(),
            words(&["grep", "-c", "a b", "c d", "e f"])
        );
        assert_eq!(
            split_words("ls | wc -l").unwrap_err().to_string(),
            "\"ls | wc -l\" uses shell syntax (|: a pipe or ||); run it with --shell"
        );
        assert_eq!(
            split_words("echo 'a").unwrap_err().to_string(),
            "\"echo 'a\": unbalanced quotes (or run it with --shell)"
        );
        assert!(matches!(split_words("  "), Err(Error::EmptyCommand)));
    }

    #[test]
    fn words_after_dashes_are_one_command_as_given() {
        let jobs = plan(&options(&["echo", "a b", "$$"])).unwrap();
        assert_eq!(
            jobs,
            vec![Job {
                words: words(&["echo", "a b", "$$"]),
                label: "echo a b $$".into(),
                parameters: Vec::new(),
            }]
        );
    }

    #[test]
    fn quoted_commands_are_one_job_each() {
        let jobs = plan(&options(&["sleep 0.1", "sleep 0.2"])).unwrap();
        let w: Vec<_> = jobs.iter().map(|j| j.words.clone()).collect();
        assert_eq!(w, [words(&["sleep", "0.1"]), words(&["sleep", "0.2"])]);
        // With --shell each is the one text for `sh -c`.
        let mut o = options(&["echo hi > x"]);
        o.shell = true;
        assert_eq!(plan(&o).unwrap()[0].words, words(&["echo hi > x"]));
    }

    #[test]
    fn a_parameter_scan_plans_one_job_per_value() {
        let mut o = options(&["make -j{n}", "gmake -j{n} all"]);
        o.parameter = Some(Parameter::Scan {
            var: "n".into(),
            min: "1".into(),
            max: "3".into(),
            step: None,
        });
        let jobs = plan(&o).unwrap();
        let got: Vec<(&str, Vec<String>, &str)> = jobs
            .iter()
            .map(|j| {
                (
                    j.label.as_str(),
                    j.words.clone(),
                    j.parameters[0].1.as_str(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("make -j1", words(&["make", "-j1"]), "1"),
                ("make -j2", words(&["make", "-j2"]), "2"),
                ("make -j3", words(&["make", "-j3"]), "3"),
                ("gmake -j1 all", words(&["gmake", "-j1", "all"]), "1"),
                ("gmake -j2 all", words(&["gmake", "-j2", "all"]), "2"),
                ("gmake -j3 all", words(&["gmake", "-j3", "all"]), "3"),
            ]
        );
        assert!(jobs.iter().all(|j| j.parameters[0].0 == "n"));
    }

    #[test]
    fn scans_by_a_step_and_lists() {
        let scan = |min: &str, max: &str, step| {
            parameter_values(Some(&Parameter::Scan {
                var: "x".into(),
                min: min.into(),
                max: max.into(),
                step,
            }))
            .map(|v| v.unwrap().1)
        };
        assert_eq!(
            scan("0", "1", Some(0.25)).unwrap(),
            ["0", "0.25", "0.5", "0.75", "1"]
        );
        assert_eq!(scan("2", "8", Some(3.0)).unwrap(), ["2", "5", "8"]);
        let msg = |r: Result<Vec<String>, Error>| r.unwrap_err().to_string();
        assert_eq!(msg(scan("1", "x", None)), "-P x 1 x: \"x\" is not a number");
        assert_eq!(
            msg(scan("3", "1", None)),
            "-P x 3 1: MIN is larger than MAX"
        );
        assert_eq!(
            msg(scan("0.5", "1", None)),
            "-P x 0.5 1: not integers; give --parameter-step-size"
        );
        assert_eq!(
            msg(scan("1", "2", Some(-1.0))),
            "--parameter-step-size -1: must be a positive number"
        );
        assert_eq!(
            msg(scan("0", "20000", None)),
            "-P x 0 20000: 20001 values are too many"
        );
        let list = |values: &str| {
            parameter_values(Some(&Parameter::List {
                var: "level".into(),
                values: values.into(),
            }))
        };
        assert_eq!(list("1,6,9").unwrap().unwrap().1, ["1", "6", "9"]);
        assert_eq!(
            list("1,,9").unwrap_err().to_string(),
            "-L level 1,,9: an empty value in the list"
        );
    }

    #[test]
    fn an_unused_parameter_and_bad_counts_are_refused() {
        let mut o = options(&["make all"]);
        o.parameter = Some(Parameter::List {
            var: "n".into(),
            values: "1,2".into(),
        });
        assert_eq!(
            plan(&o).unwrap_err().to_string(),
            "the parameter n is not used: write {n} in the command \"make all\""
        );
        let refused = |f: fn(&mut Options)| {
            let mut o = options(&["true"]);
            f(&mut o);
            plan(&o).unwrap_err().to_string()
        };
        assert_eq!(refused(|o| o.runs = Some(0)), "-n must be at least 1");
        assert_eq!(
            refused(|o| o.max_runs = Some(5)),
            "--min-runs must be at least 1 and at most --max-runs"
        );
        assert_eq!(
            refused(|o| o.timeout = Some(0.0)),
            "--timeout 0: must be a number of seconds in (0, 86400]"
        );
        assert_eq!(
            refused(|o| o.commands = vec![" ".into()]),
            "no command to run (give it after --)"
        );
    }
}
