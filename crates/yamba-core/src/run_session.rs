//! A run session: what `yamba run` does between parsing its options and
//! printing — prepare the session (clock, BASE, machine), start the results
//! file with the run's notes, run the benchmarks, save the file after every
//! benchmark so an interrupted run keeps what finished, pool repetitions
//! and close the file. A library call, so tests make the same run the
//! command does.
//!
//! The file is written through the one writer of results files
//! ([`yamba_results::output::Output`]): nothing measured is lost to a full
//! disk — a save that fails where asked goes to a fallback place, and the
//! place asked is tried again at every save; the outcome says where it
//! went.
//!
//! The noise check that opens a run's notes is the `sched` area's gap
//! recorder, which this crate cannot reach (the suite stands above it): the
//! caller hands it in as a [`NoiseProbe`] (`yamba_suite::session` does).

use crate::bench::{Benchmark, RunConfig, Session};
use crate::runner::{merge_blocks, run_blocks, shared_core_note, Observer};
use std::path::PathBuf;
use yamba_results::output::{Output, OutputError, Saved};
use yamba_results::results::{BenchResult, Mode, ResultsFile, Status};
use yamba_results::RunTimings;

/// Says whether the machine is too noisy to trust small numbers, from a
/// short recording on the benchmarks' CPU: a note, or None when quiet.
pub type NoiseProbe = fn(&Session) -> Option<String>;

/// How a run session is started.
pub struct Start {
    pub config: RunConfig,
    /// Where the results file goes (checked writable already).
    pub output: Output,
    /// The command line recorded in the file.
    pub command: Vec<String>,
    /// An executable that runs one benchmark as `EXE __bench …` (the
    /// `yamba` binary): isolated benchmarks then run in fresh processes.
    /// See [`crate::isolate`].
    pub bench_exe: Option<PathBuf>,
    /// The seed the benchmark order was shuffled with, recorded in the notes.
    pub shuffle_seed: Option<u64>,
    pub noise_probe: Option<NoiseProbe>,
}

/// Why a run could not start: one line.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("cannot record the configuration: {0}")]
    Config(serde_json::Error),
    /// The empty results file could not be written where asked.
    #[error(transparent)]
    Save(#[from] OutputError),
}

/// What a layer above does to a run's finished file before its last save.
pub type BeforeFinish = Box<dyn FnMut(&mut ResultsFile)>;

/// A run in progress: the session, its results file and where it is saved.
pub struct RunSession {
    pub session: Session,
    pub file: ResultsFile,
    pub output: Output,
    /// Called on the finished file before its last save: what a layer
    /// above adds from what this crate cannot reach (`yamba run` gives
    /// each result its interval for the runs, from the history).
    pub before_finish: Option<BeforeFinish>,
}

/// How a run ended.
#[derive(Debug)]
pub struct Outcome {
    /// Stopped by Ctrl-C: the file keeps what finished and says so.
    pub interrupted: bool,
    /// Saves after a benchmark that failed (the run went on).
    pub save_errors: Vec<String>,
    /// Where the final results file went.
    pub saved: Saved,
}

impl RunSession {
    /// Prepares the session and writes the empty results file, so that a
    /// file that cannot be written fails the run before anything is measured.
    pub fn start(start: Start) -> Result<RunSession, SessionError> {
        let t0 = std::time::Instant::now();
        let mut session = Session::prepare(start.config);
        let prepare_s = t0.elapsed().as_secs_f64();
        session.bench_exe = start.bench_exe;
        let config = serde_json::to_value(&session.config).map_err(SessionError::Config)?;
        let mut file = ResultsFile::new(
            start.command,
            config,
            session.machine.clone(),
            session.clock.info().clone(),
            session.base.clone(),
        );
        let t0 = std::time::Instant::now();
        let noise = start.noise_probe.and_then(|probe| probe(&session));
        file.timings = Some(RunTimings {
            prepare_s,
            noise_s: t0.elapsed().as_secs_f64(),
            ..RunTimings::default()
        });
        file.notes = run_notes(&session, noise, start.shuffle_seed);
        let scratch_parent = session
            .config
            .scratch_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from("."));
        let stale = crate::scratch::remove_stale(&scratch_parent);
        if !stale.is_empty() {
            file.notes.push(format!(
                "removed {} scratch folder(s) left by runs that were killed: {}",
                stale.len(),
                stale
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        let run = RunSession {
            session,
            file,
            output: start.output,
            before_finish: None,
        };
        run.save()?;
        Ok(run)
    }

    /// Writes the results file as it stands, atomically.
    pub fn save(&self) -> Result<(), OutputError> {
        self.output.save_here(&self.file)
    }

    /// Runs `benches` (every requested mode and repetition), saving the
    /// file after each; then pools repetitions and closes the file.
    /// `observer` is told of progress as well.
    pub fn run(&mut self, benches: &[&'static Benchmark], observer: &mut dyn Observer) -> Outcome {
        let pilot = self.pilot();
        let mut saving = Saving {
            inner: observer,
            raw: Vec::new(),
            file: &mut self.file,
            output: &self.output,
            errors: Vec::new(),
            pilot,
            last_save: None,
            saving_s: 0.0,
        };
        let (results, blocks) = run_blocks(&self.session, benches, &mut saving);
        let save_errors = saving.errors;
        let t0 = std::time::Instant::now();
        let mut saving_s = saving.saving_s;
        let interrupted = crate::interrupt::interrupted();
        self.file.results = merge_blocks(&results, pilot);
        self.file
            .notes
            .extend(shared_core_note(&results, blocks.shared_not_replaced));
        self.file.finish(interrupted);
        saving_s += t0.elapsed().as_secs_f64();
        let before_finish_s = match self.before_finish.as_mut() {
            Some(f) => {
                let t1 = std::time::Instant::now();
                f(&mut self.file);
                t1.elapsed().as_secs_f64()
            }
            None => 0.0,
        };
        let t = self.file.timings.get_or_insert_with(RunTimings::default);
        t.saving_s = saving_s;
        t.before_finish_s = before_finish_s;
        t.pilot_s = blocks.pilot_s;
        t.extra_s = blocks.extra_s;
        t.blocks = blocks.blocks;
        t.extra_blocks = blocks.extra_blocks;
        Outcome {
            interrupted,
            save_errors,
            saved: self.output.finish(&self.file),
        }
    }

    /// The pilot of the two-stage rule, when the run adapts its block count.
    fn pilot(&self) -> Option<usize> {
        let c = &self.session.config;
        (c.max_blocks > c.repetitions).then_some(c.repetitions)
    }

    /// Results that failed or were withheld.
    pub fn bad_results(&self) -> usize {
        self.file
            .results
            .iter()
            .filter(|r| matches!(r.status, Status::Failed | Status::Withheld))
            .count()
    }
}

/// Forwards progress and saves the file after every benchmark.
struct Saving<'a> {
    inner: &'a mut dyn Observer,
    /// Every result as it came, before repetitions are pooled.
    raw: Vec<BenchResult>,
    file: &'a mut ResultsFile,
    output: &'a Output,
    errors: Vec<String>,
    pilot: Option<usize>,
    /// When the last save started and how long it took.
    last_save: Option<(std::time::Instant, std::time::Duration)>,
    /// Seconds spent pooling and saving so far.
    saving_s: f64,
}

/// The file is saved after a benchmark only once this many times the last
/// save's duration has passed since it began: saving costs at most ~5% of
/// the run (a precise run's file grows to tens of megabytes, and saving it
/// after every block took 18% of the run), and an interruption still
/// keeps everything (the run saves as it ends).
const SAVE_SPACING: u32 = 20;

impl Observer for Saving<'_> {
    fn started(&mut self, index: usize, total: usize, bench: &Benchmark, mode: Mode) {
        self.inner.started(index, total, bench, mode);
    }

    fn finished(&mut self, results: &[BenchResult]) {
        self.raw.extend(results.iter().cloned());
        let due = self
            .last_save
            .is_none_or(|(at, took)| at.elapsed() >= took * SAVE_SPACING);
        if !due {
            self.inner.finished(results);
            return;
        }
        let t0 = std::time::Instant::now();
        self.file.results = merge_blocks(&self.raw, self.pilot);
        let saved = self.output.save(self.file);
        self.last_save = Some((t0, t0.elapsed()));
        self.saving_s += t0.elapsed().as_secs_f64();
        if let Err((why, at)) = saved {
            self.errors.push(match at {
                Some(at) => format!("{why}; saved to {} meanwhile", at.display()),
                None => format!("{why}; and no fallback place could be written"),
            });
        }
        self.inner.finished(results);
    }
}

/// The opt-level yamba-core was compiled at (build.rs): "0" for `cargo
/// build` without `--release`.
pub const OPT_LEVEL: &str = env!("YAMBA_CORE_OPT_LEVEL");

/// The note for a run of an unoptimised build: its harness (and every
/// benchmark written in Rust) runs code no release build runs.
pub fn build_note(opt_level: &str) -> Option<String> {
    (opt_level == "0").then(|| {
        "this yamba is an unoptimised build (opt-level 0, as `cargo build` without --release): \
         the harness and the benchmarks written in Rust run unoptimised code, so times are not \
         a release build's; build with `cargo build --release`"
            .into()
    })
}

/// The run-wide notes: an unoptimised build, hypervisor, noise, counters,
/// order, quick pass, a wide BASE, an uncertain clock.
pub fn run_notes(
    session: &Session,
    noise: Option<String>,
    shuffle_seed: Option<u64>,
) -> Vec<String> {
    let mut notes = Vec::new();
    notes.extend(build_note(OPT_LEVEL));
    let m = &session.machine;
    if let (Some(raw), Some(h)) = (&m.hypervisor, m.hypervisor_name()) {
        notes.push(if crate::machine::cpu_emulated(raw) {
            format!(
                "running under an emulator ({h}): the CPU is emulated in software, so times \
                 describe the emulator, not any CPU; results check code paths and evidence only"
            )
        } else {
            format!(
                "running under a hypervisor ({h}): expect steal time and timing disturbed by the host"
            )
        });
    }
    if let Some(note) = noise {
        notes.push(note);
    }
    if let Err(why) = crate::counters::probe() {
        notes.push(why);
    }
    if let Some(seed) = shuffle_seed {
        notes.push(format!("benchmarks ran in random order, seed {seed}"));
    }
    if session.config.quick {
        notes.push("quick pass: short budgets, numbers are rough".into());
    }
    let b = &session.base;
    if b.share_within_2x_min < 0.5 {
        notes.push(format!(
            "BASE is wide: only {:.0}% of observations within 2× the minimum; short timings are unreliable",
            b.share_within_2x_min * 100.0
        ));
    }
    let cal = &session.clock.info().calibration;
    if cal.relative_uncertainty > 0.001 {
        notes.push(format!(
            "clock calibration uncertain by {:.2}%",
            cal.relative_uncertainty * 100.0
        ));
    }
    notes
}

/// Puts `benches` in a random order reproducible from `seed`.
pub fn shuffle(benches: &mut [&'static Benchmark], seed: u64) {
    use rand::seq::SliceRandom;
    use rand::SeedableRng;
    benches.shuffle(&mut rand::rngs::StdRng::seed_from_u64(seed));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffle_is_reproducible_from_its_seed_and_keeps_every_benchmark() {
        static A: Benchmark = Benchmark {
            id: "t.a",
            ..Benchmark::TEMPLATE
        };
        static B: Benchmark = Benchmark {
            id: "t.b",
            ..Benchmark::TEMPLATE
        };
        static C: Benchmark = Benchmark {
            id: "t.c",
            ..Benchmark::TEMPLATE
        };
        let list: Vec<&'static Benchmark> = vec![&A, &B, &C, &A, &B, &C, &A, &B];
        let ids = |v: &[&Benchmark]| v.iter().map(|b| b.id).collect::<Vec<_>>();
        let (mut x, mut y) = (list.clone(), list.clone());
        shuffle(&mut x, 7);
        shuffle(&mut y, 7);
        assert_eq!(ids(&x), ids(&y));
        let mut sorted = ids(&x);
        sorted.sort();
        let mut want = ids(&list);
        want.sort();
        assert_eq!(sorted, want);
        let orders: std::collections::BTreeSet<Vec<&str>> = (0..20)
            .map(|seed| {
                let mut z = list.clone();
                shuffle(&mut z, seed);
                ids(&z)
            })
            .collect();
        assert!(orders.len() > 1, "every seed gave the same order");
    }

    /// An unoptimised build says so; an optimised one (every level cargo
    /// gives a release: 1–3, "s", "z") says nothing. The crate's own level
    /// reached the code.
    #[test]
    fn only_an_unoptimised_build_is_noted() {
        let note = build_note("0").unwrap();
        assert!(
            note.contains("unoptimised") && note.contains("--release"),
            "{note}"
        );
        for level in ["1", "2", "3", "s", "z"] {
            assert_eq!(build_note(level), None, "opt-level {level}");
        }
        assert!(
            ["0", "1", "2", "3", "s", "z"].contains(&OPT_LEVEL),
            "OPT_LEVEL {OPT_LEVEL}"
        );
    }
}
