//! P = a timer's wake-up: how late a thread that asked to sleep until a
//! deadline runs again (lmbench's lat_usleep; Go!'s interrupt and
//! scheduler latency; cyclictest's measure).
//!
//! A pinned thread sleeps N times for a period D (10 µs, 100 µs, 1 ms) and
//! reads CLOCK_MONOTONIC the moment it runs again; one observation is the
//! wake-up's lateness, now − deadline, in ns; the result keeps the whole
//! distribution (median, p99, max: the tail is the point).
//! - `nanosleep`: clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) on a
//!   fixed grid t0 + k·D (cyclictest's), so lateness never accumulates.
//!   A wake-up so late that the next grid point has passed (an overrun,
//!   counted: the grid points passed) starts the grid again from the
//!   wake-up, so that every sleep asks for a whole D. cyclictest skips to
//!   the first point still ahead instead, a sleep of D/2 on average; where
//!   a wake-up takes longer than D (10 µs on a virtual machine) nearly
//!   every sleep was such a remainder, and a shorter sleep wakes sooner
//!   (AMD EPYC guest: median lateness 27.5–27.9 µs against 31.7–32.8 for a
//!   whole 10 µs), which is not D's wake-up nor lmbench's lat_usleep.
//! - `timerfd`: a periodic timerfd on the same grid (first expiry
//!   absolute, TFD_TIMER_ABSTIME), read() after each expiry; more than one
//!   expiration in a read is an overrun.
//! - `itimer`: lmbench's -u itimer: setitimer(ITIMER_REAL) one-shot of D,
//!   re-armed after each SIGALRM (taken with sigtimedwait); its deadline
//!   is the clock read just before setitimer + D, so the lateness counts
//!   the call's entry too (a fraction of a µs).
//!
//! Timer slack (the kernel may defer a sleeper's wake-up by this much, to
//! batch wake-ups; 50 µs by default) is reported as found, then set to its
//! least, 1 ns, for the measurement (any thread may), and restored.
//!
//! Evidence (gating): no wake-up before its deadline (one would mean the
//! sleep or the clock is not what we think); every requested wake-up came,
//! once (timerfd: after every read, the expirations read so far are the
//! grid points the clock passed — at least those passed when the read was
//! called, at most those passed when it returned; every alarm came within
//! D + 1 s); the thread stayed on its CPU.
//! Informational: overruns, the timer slack.
//!
//! No cold mode: each wake-up already follows a sleep, after which the
//! caches hold whatever ran meanwhile; evicting them before the sleep
//! would time the eviction's disturbance, not the timer's.

use super::adapter;
use serde_json::json;
use yamba_core::{BenchResult, Benchmark, Cold, Ctx, Kind, Setting, Unit};
use yamba_results::results::Method;

/// The periods slept: (result suffix, D in ns, wake-ups in a quick pass).
pub const PERIODS: [(&str, u64, usize); 3] = [
    ("10us", 10_000, 2000),
    ("100us", 100_000, 1000),
    ("1ms", 1_000_000, 200),
];

/// The timer under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timer {
    Nanosleep,
    Timerfd,
    Itimer,
}

impl Timer {
    pub fn name(self) -> &'static str {
        match self {
            Timer::Nanosleep => "nanosleep",
            Timer::Timerfd => "timerfd",
            Timer::Itimer => "itimer",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Timer::Nanosleep => "clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) to each point of a grid t0 + k·D",
            Timer::Timerfd => "a periodic timerfd on CLOCK_MONOTONIC (absolute first expiry, period D), read after each expiry",
            Timer::Itimer => "setitimer(ITIMER_REAL) one-shot of D, re-armed after each SIGALRM (sigtimedwait); deadline = clock before setitimer + D",
        }
    }
}

/// `--set sched.wakeup.plant=relative` (test only): nanosleep's sleeps
/// are relative D from each wake-up while the deadlines stay on the grid
/// — the drifting sleep the absolute deadline avoids.
pub const PLANT: Setting = Setting {
    key: "sched.wakeup.plant",
    kind: Kind::Choice(&["none", "relative"]),
    default: "none",
    help: "test only: a planted defect (relative: nanosleep sleeps D from each wake-up instead of to the grid's deadline)",
    aliases: &[],
};

pub static NANOSLEEP: Benchmark = Benchmark {
    id: "sched.wakeup.nanosleep",
    area: "sched",
    unit: Unit::Nanoseconds,
    description: "wake-up lateness of clock_nanosleep to absolute deadlines 10 µs, 100 µs, 1 ms apart (median, p99, max); timer slack at its least",
    adapter: adapter::NAME,
    run: run_nanosleep,
    settings: &[PLANT],
    cold: Cold::NotMeaningful(
        "every wake-up already follows a sleep, after which the caches hold whatever ran meanwhile: evicting before the sleep would time the eviction's disturbance, not the timer's",
    ),
    ..Benchmark::TEMPLATE
};

pub static TIMERFD: Benchmark = Benchmark {
    id: "sched.wakeup.timerfd",
    area: "sched",
    unit: Unit::Nanoseconds,
    description: "wake-up lateness of a periodic timerfd (10 µs, 100 µs, 1 ms) past each expiry (median, p99, max)",
    default: false,
    adapter: adapter::NAME,
    run: run_timerfd,
    cold: Cold::NotMeaningful(
        "every wake-up already follows a sleep, after which the caches hold whatever ran meanwhile: evicting before the sleep would time the eviction's disturbance, not the timer's",
    ),
    ..Benchmark::TEMPLATE
};

pub static ITIMER: Benchmark = Benchmark {
    id: "sched.wakeup.itimer",
    area: "sched",
    unit: Unit::Nanoseconds,
    description: "wake-up lateness of setitimer(ITIMER_REAL) + SIGALRM, re-armed for 10 µs, 100 µs, 1 ms (lmbench's lat_usleep -u itimer)",
    default: false,
    adapter: adapter::NAME,
    run: run_itimer,
    cold: Cold::NotMeaningful(
        "every wake-up already follows a sleep, after which the caches hold whatever ran meanwhile: evicting before the sleep would time the eviction's disturbance, not the timer's",
    ),
    ..Benchmark::TEMPLATE
};

/// What N wake-ups saw.
#[derive(Debug, Clone, Default)]
pub struct Wakeups {
    /// now − deadline of each wake-up, ns (negative: woke early).
    pub lateness_ns: Vec<f64>,
    pub requested: usize,
    /// Grid points passed without a wake-up of their own.
    pub overruns: u64,
    /// Expirations or alarms counted, and what they should add up to
    /// (timerfd's is checked read by read against the clock: `miscounted`).
    pub counted: u64,
    pub expected_count: u64,
    /// Alarms that did not come within D + 1 s.
    pub missed: u64,
    /// timerfd reads after which the expirations read so far were not the
    /// grid points the clock had passed (before the read ≤ total ≤ after).
    pub miscounted: u64,
    /// CLOCK_MONOTONIC at the start and at the last wake-up, ns.
    pub start_ns: u64,
    pub end_ns: u64,
    /// The last wake-up's deadline, ns: where the schedule ended.
    pub last_deadline_ns: u64,
    pub cpu_samples: u64,
    pub wrong_cpu: u64,
}

/// nanosleep's deadlines: anchor + k·D, the grid started again from a
/// wake-up that overran it (see the module's documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grid {
    anchor_ns: u64,
    k: u64,
    period_ns: u64,
}

impl Grid {
    pub fn new(start_ns: u64, period_ns: u64) -> Grid {
        Grid {
            anchor_ns: start_ns,
            k: 1,
            period_ns,
        }
    }

    /// The next wake-up's deadline.
    pub fn deadline(&self) -> u64 {
        self.anchor_ns + self.k * self.period_ns
    }

    /// Moves past a wake-up at `now_ns`: to the next grid point, or, when
    /// `now_ns` has reached it, to `now_ns` + D on a grid started there.
    /// Returns the grid points passed without a wake-up (the overruns).
    pub fn advance(&mut self, now_ns: u64) -> u64 {
        self.k += 1;
        let next = self.deadline();
        if next > now_ns {
            return 0;
        }
        let passed = (now_ns - next) / self.period_ns + 1;
        self.anchor_ns = now_ns;
        self.k = 1;
        passed
    }
}

/// Sleeps `count` times with period `period_ns` on `timer` and records
/// each wake-up's lateness; `relative` plants the drifting sleep
/// (nanosleep only). `cpu`: the CPU the thread is pinned to, if any.
pub fn measure(
    timer: Timer,
    period_ns: u64,
    count: usize,
    relative: bool,
    cpu: Option<usize>,
) -> Result<Wakeups, String> {
    let mut w = Wakeups {
        lateness_ns: Vec::with_capacity(count),
        requested: count,
        ..Wakeups::default()
    };
    let seen = |w: &mut Wakeups, deadline: u64| {
        let now = adapter::monotonic_ns();
        w.lateness_ns.push(now as f64 - deadline as f64);
        w.end_ns = now;
        w.last_deadline_ns = deadline;
        w.cpu_samples += 1;
        if cpu.is_some() && yamba_core::affinity::current_cpu() != cpu {
            w.wrong_cpu += 1;
        }
        now
    };
    w.start_ns = adapter::monotonic_ns();
    let t0 = w.start_ns;
    match timer {
        Timer::Nanosleep => {
            let mut grid = Grid::new(t0, period_ns);
            for i in 0..count {
                let deadline = grid.deadline();
                if relative {
                    adapter::sleep_for(period_ns)?;
                } else {
                    adapter::sleep_until(deadline)?;
                }
                let now = seen(&mut w, deadline);
                // After the last wake-up there is no next sleep to place.
                if i + 1 < count {
                    w.overruns += grid.advance(now);
                }
            }
            w.counted = count as u64;
            w.expected_count = count as u64;
        }
        Timer::Timerfd => {
            let t = adapter::PeriodicTimer::start(t0 + period_ns, period_ns)?;
            // The grid points t0 + k·D (k ≥ 1) the clock has passed by `at`.
            let passed = |at: u64| at.saturating_sub(t0) / period_ns;
            let mut expirations = 0u64;
            for _ in 0..count {
                let called = adapter::monotonic_ns();
                let n = t.wait()?;
                expirations += n;
                w.overruns += n.saturating_sub(1);
                let now = seen(&mut w, t0 + expirations * period_ns);
                // The kernel counts the periods up to the moment it reads
                // (after the call, before `now`): an undercount would make
                // every lateness after it look larger, an overcount would
                // hide an early wake-up.
                if !(passed(called)..=passed(now)).contains(&expirations) {
                    w.miscounted += 1;
                }
            }
            w.counted = expirations;
            w.expected_count = expirations;
        }
        Timer::Itimer => {
            let alarm = adapter::AlarmTimer::new()?;
            for _ in 0..count {
                let armed = adapter::monotonic_ns();
                alarm.arm(period_ns)?;
                if alarm.wait(period_ns + 1_000_000_000)? {
                    w.counted += 1;
                    seen(&mut w, armed + period_ns);
                } else {
                    w.missed += 1;
                }
            }
            w.expected_count = count as u64;
        }
    }
    Ok(w)
}

/// The timer slack as found, and as set for the measurement.
struct Slack {
    found: Option<u64>,
    during: Option<u64>,
    set_error: Option<String>,
}

impl Slack {
    /// Sets the least slack (1 ns); `restore` puts the found one back.
    fn least() -> Slack {
        let found = adapter::timer_slack_ns();
        let set_error = adapter::set_timer_slack_ns(1).err();
        Slack {
            found,
            during: adapter::timer_slack_ns(),
            set_error,
        }
    }

    fn restore(&self) {
        if let Some(s) = self.found {
            let _ = adapter::set_timer_slack_ns(s.max(1));
        }
    }
}

fn run_nanosleep(ctx: &mut Ctx) -> Result<(), String> {
    let relative = ctx.choice(PLANT.key)? == Some("relative");
    run(ctx, Timer::Nanosleep, relative)
}

fn run_timerfd(ctx: &mut Ctx) -> Result<(), String> {
    run(ctx, Timer::Timerfd, false)
}

fn run_itimer(ctx: &mut Ctx) -> Result<(), String> {
    run(ctx, Timer::Itimer, false)
}

fn run(ctx: &mut Ctx, timer: Timer, relative: bool) -> Result<(), String> {
    let slack = Slack::least();
    let mut results = Vec::new();
    for (suffix, period, quick_count) in PERIODS {
        let count = ctx.scaled(quick_count);
        let w = measure(timer, period, count, relative, ctx.cpu());
        results.push(match w {
            Ok(w) => result(ctx, timer, suffix, period, &w, &slack, relative),
            Err(why) => {
                let mut r = ctx.result(Some(suffix));
                r.status = yamba_core::Status::Failed;
                r.reason = Some(why);
                r
            }
        });
    }
    slack.restore();
    for r in results {
        ctx.push(r);
    }
    Ok(())
}

fn result(
    ctx: &Ctx,
    timer: Timer,
    suffix: &str,
    period_ns: u64,
    w: &Wakeups,
    slack: &Slack,
    relative: bool,
) -> BenchResult {
    let mut r = ctx.result(Some(suffix));
    r.description = format!(
        "wake-up lateness past a {} deadline: {}",
        suffix.replace("us", " µs").replace("ms", " ms"),
        timer.describe()
    );
    r.set_observations(w.lateness_ns.clone());
    let elapsed_s = (w.end_ns - w.start_ns) as f64 / 1e9;
    r.method = Some(Method::direct(
        w.lateness_ns.len() as u64,
        0.0,
        elapsed_s,
        elapsed_s,
        format!("{} wake-ups requested", w.requested),
    ));
    let mut sorted = w.lateness_ns.clone();
    sorted.sort_by(f64::total_cmp);
    let pct = |q: f64| (!sorted.is_empty()).then(|| yamba_stats::percentile_sorted(&sorted, q));
    r.extra.insert(
        "lateness_ns".into(),
        json!({
            "p50": pct(50.0), "p90": pct(90.0), "p99": pct(99.0), "p99.9": pct(99.9),
            "max": sorted.last(), "min": sorted.first(),
        }),
    );
    r.param("timer", timer.name())
        .param("period_ns", period_ns)
        .param("wakeups", w.lateness_ns.len())
        .param("overruns", w.overruns)
        .param("elapsed_s", elapsed_s)
        .param("timer_slack_ns_found", slack.found)
        .param("timer_slack_ns", slack.during);
    if let Some(m) = r.median() {
        // lmbench's lat_usleep prints the time per sleep: D + lateness.
        r.param("period_plus_median_lateness_ns", period_ns as f64 + m);
    }
    if relative {
        r.warn("test only: a planted defect — each sleep is relative D from the wake-up, not to the grid's deadline");
    }
    match &slack.set_error {
        None => r.add_note_evidence(
            "timer slack set to its least for the measurement (prctl PR_SET_TIMERSLACK), restored after",
            "1 ns",
            format!(
                "{} ns (found {} ns)",
                slack.during.map_or("?".into(), |s| s.to_string()),
                slack.found.map_or("?".into(), |s| s.to_string())
            ),
            slack.during == Some(1),
        ),
        Some(e) => {
            r.warn(format!("could not lower the timer slack: {e}; measured with it as found"));
            r.add_note_evidence("timer slack set to its least", "1 ns", e.clone(), false)
        }
    };
    let earliest = sorted.first().copied().unwrap_or(f64::NAN);
    r.add_evidence(
        "no wake-up before its deadline (CLOCK_MONOTONIC)",
        "every lateness ≥ 0",
        format!(
            "earliest {earliest:.0} ns; {} early of {}",
            sorted.iter().filter(|&&l| l < 0.0).count(),
            sorted.len()
        ),
        earliest >= 0.0,
    );
    r.add_evidence(
        "every requested wake-up came, once",
        match timer {
            Timer::Timerfd => format!(
                "{} wake-ups; after every read, the expirations read so far are the grid points the clock passed (before the read ≤ total ≤ after)",
                w.requested
            ),
            Timer::Itimer => format!("{} wake-ups; {} alarms", w.requested, w.expected_count),
            Timer::Nanosleep => format!("{} wake-ups; {} sleeps returned", w.requested, w.expected_count),
        },
        format!(
            "{} wake-ups; {} counted; {} alarms missed; {} reads miscounted",
            w.lateness_ns.len(),
            w.counted,
            w.missed,
            w.miscounted
        ),
        w.lateness_ns.len() == w.requested
            && w.counted == w.expected_count
            && w.missed == 0
            && w.miscounted == 0,
    );
    r.add_evidence(
        "the thread stayed on its CPU (sched_getcpu after every wake-up)",
        "0 elsewhere",
        format!("{}/{} elsewhere", w.wrong_cpu, w.cpu_samples),
        w.wrong_cpu == 0,
    );
    r.add_note_evidence(
        match timer {
            Timer::Nanosleep => "grid points passed by a late wake-up (overruns; the grid then starts again from the wake-up, so every sleep asks for a whole D)",
            _ => "wake-ups so late that a later deadline had passed (overruns)",
        },
        "0",
        format!("{} of {}", w.overruns, w.requested),
        w.overruns == 0,
    );
    r
}

#[cfg(test)]
mod tests {
    use super::Grid;

    #[test]
    fn the_grid_keeps_its_points_while_wake_ups_come_before_the_next() {
        let mut g = Grid::new(1_000, 100);
        assert_eq!(g.deadline(), 1_100);
        // Late by 99: the next point (1 200) is still ahead.
        assert_eq!(g.advance(1_199), 0);
        assert_eq!(g.deadline(), 1_200);
        assert_eq!(g.advance(1_200 + 5), 0);
        assert_eq!(g.deadline(), 1_300);
    }

    #[test]
    fn an_overrun_starts_the_grid_again_so_the_next_sleep_is_a_whole_period() {
        let mut g = Grid::new(1_000, 100);
        // Woke at 1 250: the point 1 200 passed, 1 300 would be a 50 ns sleep.
        assert_eq!(g.advance(1_250), 1);
        assert_eq!(g.deadline(), 1_350);
        // Woke at 1 600, exactly on 1 450 + 100 + 50: 1 450 and 1 550 passed.
        assert_eq!(g.advance(1_600), 2);
        assert_eq!(g.deadline(), 1_700);
        // A wake-up exactly on the next point has passed it too.
        assert_eq!(g.advance(1_800), 1);
        assert_eq!(g.deadline(), 1_900);
    }
}
