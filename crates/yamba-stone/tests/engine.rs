//! The engine called as a library, without the `yamba` binary: plans made
//! into series of real runs of small commands, what the progress callback
//! is told, and the errors that stop a series. Nothing here asserts a
//! time (that is tests/measure_*.rs's part, in yamba-cli): counts, order
//! and messages only.

use yamba_core::Clock;
use yamba_stone::{plan, run, Error, Event, Options, Parameter, Series};

fn options(commands: &[&str]) -> Options {
    Options {
        commands: commands.iter().map(|c| c.to_string()).collect(),
        ..Options::default()
    }
}

/// What the callback was told, in words.
fn run_logged(options: &Options) -> (Result<Vec<Series>, Error>, Vec<String>) {
    let clock = Clock::detect(20);
    let jobs = plan(options).unwrap();
    let mut events = Vec::new();
    let result = run(&clock, options, &jobs, &mut |e| {
        events.push(match e {
            Event::Started(job) => format!("start {}", job.label),
            Event::Ran { warmup, number, .. } => {
                format!("{}{number}", if warmup { "w" } else { "" })
            }
            Event::Stopped(job) => format!("stop {}", job.label),
            Event::Finished(s) => format!("done {}", s.runs.len()),
        })
    });
    (result, events)
}

#[test]
fn true_planned_for_n_runs_gives_n_values() {
    let mut o = options(&["true"]);
    o.runs = Some(4);
    o.warmup = 2;
    let (result, events) = run_logged(&o);
    let all = result.unwrap();
    assert_eq!(all.len(), 1);
    let s = &all[0];
    assert_eq!(s.runs.len(), 4);
    assert_eq!(s.command, ["true"]);
    assert_eq!((s.warmup, s.shell, s.shell_spawn_ns), (2, false, 0.0));
    assert!(s.runs.iter().all(|r| r.succeeded()), "{:?}", s.runs);
    assert!(s.runs.iter().all(|r| r.ticks > 0 && r.wall_ns > 0.0));
    let seconds = s.seconds();
    assert_eq!(seconds.len(), 4);
    assert!(seconds.iter().all(|&t| t > 0.0), "{seconds:?}");
    assert_eq!(
        events,
        ["start true", "w1", "w2", "1", "2", "3", "4", "done 4"]
    );
}

#[test]
fn an_automatic_count_stays_within_its_bounds() {
    let mut o = options(&["true"]);
    (o.min_runs, o.max_runs) = (2, Some(3));
    let (result, _) = run_logged(&o);
    // `true` takes far less than a second: 3 s of it is more than 3 runs.
    assert_eq!(result.unwrap()[0].runs.len(), 3);
}

#[test]
fn prepare_and_cleanup_run_around_every_run_with_the_parameter() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("order.txt");
    let f = file.display();
    let mut o = options(&["sh", "-c", &format!("echo run {{n}} >> '{f}'")]);
    o.runs = Some(2);
    o.warmup = 1;
    o.setup = Some(format!("echo setup {{n}} >> '{f}'"));
    o.prepare = Some(format!("echo prepare {{n}} >> '{f}'"));
    o.cleanup = Some(format!("echo cleanup {{n}} >> '{f}'"));
    o.parameter = Some(Parameter::list("n", "a,b"));
    let (result, events) = run_logged(&o);
    let all = result.unwrap();
    assert_eq!(all.len(), 2);
    for (s, v) in all.iter().zip(["a", "b"]) {
        assert_eq!(s.parameters, [("n".to_string(), v.to_string())]);
        assert_eq!(s.runs.len(), 2);
        assert_eq!(s.prepare.as_deref(), o.prepare.as_deref(), "as written");
    }
    let per = |v: &str| {
        format!("setup {v}\n") + &format!("prepare {v}\nrun {v}\ncleanup {v}\n").repeat(3)
    };
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        per("a") + &per("b")
    );
    assert_eq!(events.iter().filter(|e| e.starts_with("done")).count(), 2);
}

#[test]
fn a_shell_runs_the_text_and_its_start_up_is_subtracted() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options(&[&format!("echo hi > '{}'", dir.path().join("x").display())]);
    o.shell = true;
    o.runs = Some(1);
    let all = run_logged(&o).0.unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("x")).unwrap(),
        "hi\n"
    );
    assert!(all[0].shell && all[0].shell_spawn_ns > 0.0);
}

#[test]
fn a_failing_run_stops_the_series_unless_failures_are_ignored() {
    let mut o = options(&["false"]);
    o.runs = Some(3);
    let (result, events) = run_logged(&o);
    let err = result.unwrap_err();
    assert_eq!(
        err.to_string(),
        "false: run 1 exited with status 1: stopping \
         (--ignore-failure keeps going; --show-output shows its output)"
    );
    assert_eq!(events, ["start false", "stop false"]);

    o.ignore_failure = true;
    let all = run_logged(&o).0.unwrap();
    let codes: Vec<_> = all[0].runs.iter().map(|r| r.exit_code).collect();
    assert_eq!(codes, [Some(1); 3]);

    let mut o = options(&["true"]);
    o.prepare = Some("exit 3".into());
    let err = run_logged(&o).0.unwrap_err();
    assert!(
        err.to_string()
            .starts_with("--prepare command \"exit 3\" failed (exit status: 3)"),
        "{err}"
    );
}

#[test]
fn a_program_that_cannot_start_is_an_error_with_its_cause() {
    let (result, events) = run_logged(&options(&["/no/such/program"]));
    let err = result.unwrap_err();
    assert_eq!(err.to_string(), "cannot run \"/no/such/program\"");
    let cause = std::error::Error::source(&err).expect("the OS error");
    let io = cause.downcast_ref::<std::io::Error>().unwrap();
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    assert_eq!(events, ["start /no/such/program"]);
}
