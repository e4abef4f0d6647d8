//! A store read as a fleet: the newest run of every machine, machines of
//! the same hardware side by side for each of lmbench's headline
//! primitives ([`HEADLINES`]), and the machines that
//! stand out — outside their group's spread, or moved from their own level
//! (since when, and what changed in their description at the step).
//!
//! A machine is its hostname (the key the store keeps for every run). Its
//! hardware group is CPU model + online CPUs + memory rounded to the GiB:
//! the kernel, microcode and mitigations are *not* part of it, since a
//! change of those is what a move should be traced to. Each machine's
//! newest [`HISTORY_RUNS`] runs are read (headline values only; headers
//! just for the newest run and either side of a move's step).
//!
//! The rule, for each primitive (the hot result's headline value):
//!
//! * the group's centre is the median of its machines' newest values and
//!   its spread the MAD scaled by 1.4826 (a normal σ), relative to the
//!   median;
//! * a machine is *outside its group* when |value / median − 1| exceeds
//!   max([`K`]·spread, [`FLOOR`]); groups of fewer than [`MIN_GROUP`]
//!   machines are shown but not judged (no robust centre);
//! * a machine *moved* when |newest / level − 1| exceeds
//!   max([`K`]·√2·spread, [`FLOOR`]), where its *level* is the median of
//!   its earlier runs' values (up to [`HISTORY_RUNS`] − 1 = 7) and the
//!   spread is its group's (just the floor when the group is too small to
//!   have one). √2 is for a difference of two runs; against a median of
//!   m ≥ 2 runs the difference is less noisy (m = 7: ≈ 1.1 σ, not 1.41 σ),
//!   so the bound is conservative there. A machine with one stored run has
//!   no move judgement.
//! * since when: walking back from the newest run while runs stay within
//!   that bound of the newest value, the oldest such run starts the new
//!   level (the flag's `run` and `since`); the run before it is
//!   `previous`, and `changes` is what differs in the machine's
//!   description between those two. A step stays flagged while its runs
//!   are fewer than half the earlier ones (with 8 runs: the step run and
//!   the 3 after it); after that it is the machine's level. A single noisy
//!   earlier run barely moves the median, so it is no move; a noisy run
//!   inside the new level makes the step look later than it was.
//!
//! [`K`] = 7 and [`FLOOR`] = 5% are chosen for a fleet of about 50
//! machines whose runs scatter by 1–2%. The spread is itself estimated
//! (from ~17 machines a MAD is uncertain by ~±28%), so the false-flag rate
//! is stated from simulation rather than from 2·Φ(−7) alone: with normal
//! noise of σ = 1% a view of 50 machines in 3 groups × 18 primitives, 8
//! runs each (900 outlier and 900 move tests) shows ≈ 4·10⁻⁴ false flags
//! (one view in ~3000 has one), with σ = 2% ≈ 0.13 (0.11 outliers, 0.02
//! moves; about one view in eight). With moves judged from the previous
//! run alone (the rule before), the same views showed ≈ 0.016 and ≈ 0.26
//! (one view in 65, one in four). The unit test
//! `false_flags_per_view_are_as_documented` recomputes both.
//! What is caught: a machine off its group by more than 5% when the
//! spread is under 0.7%, 7% at 1%, 14% at 2% (a move: 5%, 10%, 20%).
//! Real timings have heavier tails than a normal: the floor keeps a quiet
//! primitive from flagging on those, and a flag is a reason to look, not
//! a verdict.

use crate::store::{History, RunId};
use crate::HistoryError;
use serde::Serialize;
use std::collections::{btree_map, BTreeMap};
/// The primitives the view reads (re-exported: what a store must hold for it).
pub use yamba_analysis::headline::HEADLINES;
use yamba_results::ResultsFile;

/// How many spreads away a value must be to be flagged.
pub const K: f64 = 7.0;
/// The smallest relative difference ever flagged (5%), whatever the spread.
pub const FLOOR: f64 = 0.05;
/// The fewest machines a group needs for its members to be judged against it.
pub const MIN_GROUP: usize = 3;
/// How many of a machine's newest runs are read: the newest, and up to 7
/// earlier ones whose median is its level before.
pub const HISTORY_RUNS: usize = 8;
/// MAD × this estimates a normal distribution's σ.
const MAD_TO_SIGMA: f64 = 1.4826;

/// The fleet view of a store.
#[derive(Debug, Clone, Serialize)]
pub struct Fleet {
    /// Where the runs were read from.
    pub store: String,
    pub k: f64,
    pub floor: f64,
    /// How many of each machine's newest runs were read: the newest, and
    /// the earlier ones whose median is its level before a move.
    pub history_runs: usize,
    pub groups: Vec<Group>,
    /// Every flag, group by group, machine by machine.
    pub flags: Vec<Flag>,
}

/// Machines of one hardware description.
#[derive(Debug, Clone, Serialize)]
pub struct Group {
    /// "CPU model, N CPUs, M GiB".
    pub hardware: String,
    pub machines: Vec<Machine>,
    pub primitives: Vec<Primitive>,
}

/// One machine: its newest run, and the one before if stored.
#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    pub host: String,
    pub run: RunId,
    pub started: String,
    pub kernel: String,
    pub previous: Option<RunId>,
    /// How many of its runs were read (at most [`HISTORY_RUNS`]).
    pub runs: usize,
}

/// One headline primitive across a group's machines.
#[derive(Debug, Clone, Serialize)]
pub struct Primitive {
    /// In words, as the report's key numbers name it.
    pub name: String,
    /// The result measured (hot mode).
    pub result: String,
    /// Each machine's newest value, in the group's machine order.
    pub values: Vec<Option<f64>>,
    pub median: f64,
    /// Relative robust spread: 1.4826·MAD / median.
    pub spread: f64,
    /// Relative difference beyond which a machine is outside the group:
    /// max(k·spread, floor); `None` when the group is too small to judge.
    pub bound: Option<f64>,
}

/// Why a machine stands out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FlagKind {
    /// Its newest value is outside its group's spread.
    Outlier,
    /// Its newest value moved from its own level (the median of its
    /// earlier runs).
    Moved,
}

/// One machine standing out on one primitive.
#[derive(Debug, Clone, Serialize)]
pub struct Flag {
    pub host: String,
    pub hardware: String,
    pub kind: FlagKind,
    pub primitive: String,
    pub result: String,
    /// The newest run's value.
    pub value: f64,
    /// The group's median (outlier) or the machine's level before (moved:
    /// the median of its earlier runs' values).
    pub reference: f64,
    /// value / reference − 1.
    pub change: f64,
    /// The relative bound it exceeded.
    pub bound: f64,
    /// The run, and when it started: for an outlier the newest; for a move
    /// the first run of the new level (since when).
    pub run: RunId,
    pub since: String,
    /// For a move: the run just before the new level, and what changed in
    /// the machine's description from it to `run` — at the step.
    pub previous: Option<RunId>,
    pub changes: Vec<String>,
    /// For a move: how many earlier runs the level came from (0 for an
    /// outlier).
    pub runs_before: usize,
}

/// One stored run, read as far as the fleet needs: its headline values
/// (its header only when the view needs it: the newest run's, and the two
/// either side of a move's step).
struct Read {
    id: RunId,
    started: String,
    values: BTreeMap<String, f64>,
}

impl Read {
    fn hot(&self, id: &str) -> Option<f64> {
        self.values.get(&format!("{id}@hot")).copied()
    }
}

/// A machine as read: its newest runs, newest first (at least one).
struct Member {
    host: String,
    kernel: String,
    runs: Vec<Read>,
}

/// The hardware group of a run: CPU model, online CPUs, memory to the GiB.
pub fn hardware(file: &ResultsFile) -> String {
    let m = &file.machine;
    let gib = (m.memory_bytes as f64 / (1u64 << 30) as f64).round();
    format!("{}, {} CPUs, {gib} GiB", m.cpu_model, m.online_cpus)
}

/// What differs between two runs' machine descriptions: kernel (release
/// and build), microcode, `mitigations=`, each vulnerability's line, and
/// the hardware group itself.
pub fn description_changes(old: &ResultsFile, new: &ResultsFile) -> Vec<String> {
    let (a, b) = (&old.machine, &new.machine);
    let mut out = Vec::new();
    let mut diff = |what: &str, x: &str, y: &str| {
        if x != y {
            out.push(format!("{what}: {x} → {y}"));
        }
    };
    let opt = |s: &Option<String>| s.clone().unwrap_or_else(|| "(none)".into());
    diff("hardware", &hardware(old), &hardware(new));
    diff("kernel", &a.kernel, &b.kernel);
    diff("kernel build", &opt(&a.kernel_build), &opt(&b.kernel_build));
    diff("microcode", &opt(&a.microcode), &opt(&b.microcode));
    diff("mitigations", &opt(&a.mitigations), &opt(&b.mitigations));
    let names: std::collections::BTreeSet<&String> = a
        .vulnerabilities
        .keys()
        .chain(b.vulnerabilities.keys())
        .collect();
    for n in names {
        let get = |m: &BTreeMap<String, String>| m.get(n).cloned().unwrap_or("(none)".into());
        diff(
            &format!("vulnerability {n}"),
            &get(&a.vulnerabilities),
            &get(&b.vulnerabilities),
        );
    }
    out
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// The median and the relative robust spread (1.4826·MAD / median).
pub fn centre_and_spread(v: &[f64]) -> (f64, f64) {
    let m = median(v);
    let dev: Vec<f64> = v.iter().map(|x| (x - m).abs()).collect();
    let spread = MAD_TO_SIGMA * median(&dev) / m.abs();
    (m, if spread.is_finite() { spread } else { 0.0 })
}

/// The outlier bound for a group of `n` machines with relative `spread`.
pub fn outlier_bound(n: usize, spread: f64) -> Option<f64> {
    (n >= MIN_GROUP).then(|| (K * spread).max(FLOOR))
}

/// The move bound for a machine whose group has relative `spread`
/// (`None`: too small a group to have one). √2: a difference of two runs
/// has √2 times one run's spread; a median of m ≥ 2 earlier runs is less
/// noisy than one run, so against it the bound is conservative.
pub fn move_bound(spread: Option<f64>) -> f64 {
    spread.map_or(FLOOR, |s| (K * std::f64::consts::SQRT_2 * s).max(FLOOR))
}

/// A move found in one machine's values of one primitive, with indices
/// into those values (newest first).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    /// The level before: the median of the earlier values.
    pub level: f64,
    /// The oldest value of the new level (since when).
    pub start: usize,
    /// The value just before the new level: `start + 1`.
    pub previous: usize,
}

/// Whether the newest of `values` (newest first) moved from the level
/// before — the median of the others — by more than `bound`, and if so
/// where the new level starts: walking back from the newest while the
/// values stay within `bound` of it. The walk tests |newest / value − 1|,
/// the move test's own ratio: values all within it would have a median
/// within it too, so a move always has a step inside `values`.
pub fn find_move(values: &[f64], bound: f64) -> Option<Step> {
    let (&newest, earlier) = values.split_first()?;
    if earlier.is_empty() {
        return None;
    }
    let level = median(earlier);
    if (newest / level - 1.0).abs() <= bound {
        return None;
    }
    let start = earlier
        .iter()
        .take_while(|v| (newest / **v - 1.0).abs() <= bound)
        .count();
    (start < earlier.len()).then_some(Step {
        level,
        start,
        previous: start + 1,
    })
}

/// One primitive (result `id`) across a group's members: its column of
/// the view, and its flags (moves without their description changes,
/// which need headers: [`History::fleet`] reads them).
fn judge_primitive(hw: &str, name: &str, id: &str, members: &[Member]) -> (Primitive, Vec<Flag>) {
    let result = format!("{id}@hot");
    let values: Vec<Option<f64>> = members.iter().map(|m| m.runs[0].hot(id)).collect();
    let present: Vec<f64> = values.iter().flatten().copied().collect();
    let (med, spread) = centre_and_spread(&present);
    let bound = outlier_bound(present.len(), spread);
    let moved = move_bound(bound.map(|_| spread));
    let mut flags = Vec::new();
    for (m, v) in members.iter().zip(&values) {
        let Some(v) = *v else { continue };
        let flag = |kind, reference: f64, bound: f64, at: &Read| Flag {
            host: m.host.clone(),
            hardware: hw.to_string(),
            kind,
            primitive: name.to_string(),
            result: result.clone(),
            value: v,
            reference,
            change: v / reference - 1.0,
            bound,
            run: at.id,
            since: at.started.clone(),
            previous: None,
            changes: Vec::new(),
            runs_before: 0,
        };
        if let Some(b) = bound.filter(|b| (v / med - 1.0).abs() > *b) {
            flags.push(flag(FlagKind::Outlier, med, b, &m.runs[0]));
        }
        // Its runs that have the value, newest first.
        let (runs, xs): (Vec<&Read>, Vec<f64>) = m
            .runs
            .iter()
            .filter_map(|r| r.hot(id).map(|x| (r, x)))
            .unzip();
        if let Some(step) = find_move(&xs, moved) {
            let mut f = flag(FlagKind::Moved, step.level, moved, runs[step.start]);
            f.previous = Some(runs[step.previous].id);
            f.runs_before = xs.len() - 1;
            flags.push(f);
        }
    }
    let primitive = Primitive {
        name: name.to_string(),
        result,
        values,
        median: med,
        spread,
        bound,
    };
    (primitive, flags)
}

/// One hardware group's view and flags: machine by machine, outliers
/// before moves, each in the primitives' order.
fn judge_group(hw: &str, members: &[Member]) -> (Group, Vec<Flag>) {
    let machines = members
        .iter()
        .map(|m| Machine {
            host: m.host.clone(),
            run: m.runs[0].id,
            started: m.runs[0].started.clone(),
            kernel: m.kernel.clone(),
            previous: m.runs.get(1).map(|r| r.id),
            runs: m.runs.len(),
        })
        .collect();
    let mut primitives = Vec::new();
    let mut flags = Vec::new();
    for h in HEADLINES {
        // One result for the whole group: the preferred id any member has.
        let Some(id) = h
            .ids
            .iter()
            .find(|id| members.iter().any(|m| m.runs[0].hot(id).is_some()))
        else {
            continue;
        };
        let (p, f) = judge_primitive(hw, h.name, id, members);
        primitives.push(p);
        flags.extend(f);
    }
    let order = |f: &Flag| members.iter().position(|m| m.host == f.host);
    flags.sort_by_key(|f| (order(f), f.kind == FlagKind::Moved));
    let group = Group {
        hardware: hw.to_string(),
        machines,
        primitives,
    };
    (group, flags)
}

impl History {
    /// The fleet view of this store: the newest run per machine grouped by
    /// hardware, each headline primitive side by side, and the flags.
    pub fn fleet(&mut self) -> Result<Fleet, HistoryError> {
        let mut headers = BTreeMap::new();
        let mut fleet = Fleet {
            store: self.location(),
            k: K,
            floor: FLOOR,
            history_runs: HISTORY_RUNS,
            groups: Vec::new(),
            flags: Vec::new(),
        };
        for (hw, members) in self.fleet_members(&mut headers)? {
            let (group, mut flags) = judge_group(&hw, &members);
            for f in flags.iter_mut().filter(|f| f.kind == FlagKind::Moved) {
                let Some(previous) = f.previous else { continue };
                for id in [previous, f.run] {
                    if let btree_map::Entry::Vacant(e) = headers.entry(id) {
                        e.insert(self.load_header(id)?);
                    }
                }
                f.changes = description_changes(&headers[&previous], &headers[&f.run]);
            }
            fleet.flags.extend(flags);
            fleet.groups.push(group);
        }
        Ok(fleet)
    }

    /// Each machine's newest [`HISTORY_RUNS`] runs (their headline values;
    /// the newest one's header, kept in `headers`), grouped by the newest
    /// run's hardware.
    fn fleet_members(
        &mut self,
        headers: &mut BTreeMap<RunId, ResultsFile>,
    ) -> Result<BTreeMap<String, Vec<Member>>, HistoryError> {
        let mut by_host: BTreeMap<String, Vec<Read>> = BTreeMap::new();
        for (host, id, started) in self.newest_per_host(HISTORY_RUNS)? {
            let values = self.headlines(id)?;
            by_host.entry(host).or_default().push(Read {
                id,
                started,
                values,
            });
        }
        let mut groups: BTreeMap<String, Vec<Member>> = BTreeMap::new();
        for (host, runs) in by_host {
            let newest = runs[0].id;
            let header = self.load_header(newest)?;
            let member = Member {
                host,
                kernel: header.machine.kernel.clone(),
                runs,
            };
            groups.entry(hardware(&header)).or_default().push(member);
            headers.insert(newest, header);
        }
        Ok(groups)
    }
}

impl Fleet {
    /// The machines flagged, each once, in order.
    pub fn flagged_hosts(&self) -> Vec<&str> {
        let mut v: Vec<&str> = Vec::new();
        for f in &self.flags {
            if !v.contains(&f.host.as_str()) {
                v.push(&f.host);
            }
        }
        v
    }
}

impl Fleet {
    /// The view as text: per group its primitives (median, spread, bound)
    /// and its machines side by side (each value as a percentage from the
    /// group's median, `*` where flagged), then the flags with reasons.
    pub fn text(&self) -> String {
        use std::fmt::Write as _;
        let mut o = String::new();
        let machines: usize = self.groups.iter().map(|g| g.machines.len()).sum();
        let _ = writeln!(
            o,
            "fleet of {machines} machine(s) in {} hardware group(s), newest run of each, from {}",
            self.groups.len(),
            self.store
        );
        let _ = writeln!(
            o,
            "flagged: outside the group by more than max({}·spread, {}%); moved from its level (median of its up to {} earlier runs) by more than max({}·√2·spread, {}%)",
            self.k,
            self.floor * 100.0,
            self.history_runs.saturating_sub(1),
            self.k,
            self.floor * 100.0
        );
        for g in &self.groups {
            let _ = writeln!(o, "\n{} — {} machine(s)", g.hardware, g.machines.len());
            let name_w = g
                .primitives
                .iter()
                .map(|p| p.name.chars().count())
                .max()
                .unwrap_or(0);
            for (i, p) in g.primitives.iter().enumerate() {
                let bound = p
                    .bound
                    .map_or("not judged (too few machines)".to_string(), |b| {
                        format!("bound {:.1}%", b * 100.0)
                    });
                let _ = writeln!(
                    o,
                    "  P{:<2} {:<name_w$}  {:<34} median {:>10}  spread {:>5.1}%  {bound}",
                    i + 1,
                    p.name,
                    p.result,
                    yamba_results::units::format_sig(p.median),
                    p.spread * 100.0,
                );
            }
            let host_w = g
                .machines
                .iter()
                .map(|m| m.host.chars().count())
                .max()
                .unwrap_or(4)
                .max(7);
            let _ = write!(o, "  {:<host_w$} {:>6}", "machine", "run");
            for i in 0..g.primitives.len() {
                let _ = write!(o, " {:>7}", format!("P{}", i + 1));
            }
            let _ = writeln!(o, "   (% from the group's median; * flagged)");
            for (mi, m) in g.machines.iter().enumerate() {
                let _ = write!(o, "  {:<host_w$} {:>6}", m.host, format!("@{}", m.run));
                for p in &g.primitives {
                    let flagged = self.flags.iter().any(|f| {
                        f.host == m.host && f.result == p.result && f.hardware == g.hardware
                    });
                    let cell = match p.values[mi] {
                        Some(v) => format!(
                            "{:+.1}{}",
                            (v / p.median - 1.0) * 100.0,
                            if flagged { "*" } else { "" }
                        ),
                        None => "-".to_string(),
                    };
                    let _ = write!(o, " {cell:>7}");
                }
                let _ = writeln!(o);
            }
        }
        if self.flags.is_empty() {
            let _ = writeln!(o, "\nno machine flagged");
        } else {
            let _ = writeln!(o, "\nflags:");
            for f in &self.flags {
                let _ = writeln!(o, "  {}", f.reason());
            }
        }
        o
    }
}

impl Flag {
    /// The flag in one line: which machine, what, by how much, since when,
    /// and what changed.
    pub fn reason(&self) -> String {
        let pct = |x: f64| format!("{:+.1}%", x * 100.0);
        match self.kind {
            FlagKind::Outlier => format!(
                "{}: {} ({}) {} from its group's median {} (bound ±{:.1}%), run @{} of {}",
                self.host,
                self.primitive,
                self.result,
                pct(self.change),
                yamba_results::units::format_sig(self.reference),
                self.bound * 100.0,
                self.run,
                self.since
            ),
            FlagKind::Moved => {
                let mut s = format!(
                    "{}: {} ({}) moved {} from {}, the median of its {} earlier run(s), since run @{} of {} (from @{}; bound ±{:.1}%)",
                    self.host,
                    self.primitive,
                    self.result,
                    pct(self.change),
                    yamba_results::units::format_sig(self.reference),
                    self.runs_before,
                    self.run,
                    self.since,
                    self.previous.unwrap_or(0),
                    self.bound * 100.0
                );
                if self.changes.is_empty() {
                    s.push_str("; nothing changed in its description");
                } else {
                    s.push_str(&format!("; changed: {}", self.changes.join("; ")));
                }
                s
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spread_is_robust_and_the_floor_binds_for_quiet_groups() {
        let mut v: Vec<f64> = (0..20).map(|i| 100.0 + (i % 5) as f64 * 0.25).collect();
        v.push(200.0); // one far outlier does not widen the spread
        let (m, s) = centre_and_spread(&v);
        assert!((m - 100.5).abs() < 1e-9, "{m}");
        assert!(s < 0.005, "{s}");
        assert_eq!(outlier_bound(v.len(), s), Some(FLOOR));
        assert_eq!(outlier_bound(2, s), None);
        assert!((outlier_bound(10, 0.02).unwrap() - 0.14).abs() < 1e-12);
        assert_eq!(move_bound(None), FLOOR);
        assert!((move_bound(Some(0.02)) - 0.14 * std::f64::consts::SQRT_2).abs() < 1e-12);
    }

    /// False flags per view, on average, by the rule as `History::fleet`
    /// applies it (outliers; moves by the two-newest rule; moves by the
    /// median of the earlier runs).
    #[derive(Debug, Default)]
    struct Rates {
        outliers: f64,
        moves_two_newest: f64,
        moves_median: f64,
    }

    /// 50 steady machines (groups of 17, 17, 16), 18 primitives, each with
    /// [`HISTORY_RUNS`] runs of normal noise of relative σ. The old rule is
    /// [`find_move`] over the newest two runs, the new one over them all.
    fn false_flags_per_view(sigma: f64, views: usize, seed: u64) -> Rates {
        let mut x = seed | 1;
        let mut uniform = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ((x >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        let mut gauss = move || {
            let (u, v) = (uniform(), uniform());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        };
        let mut counts = [0usize; 3];
        for _ in 0..views {
            for n in [17, 17, 16] {
                for _ in 0..18 {
                    let runs: Vec<Vec<f64>> = (0..n)
                        .map(|_| (0..HISTORY_RUNS).map(|_| 1.0 + sigma * gauss()).collect())
                        .collect();
                    let newest: Vec<f64> = runs.iter().map(|r| r[0]).collect();
                    let (m, s) = centre_and_spread(&newest);
                    let b = outlier_bound(n, s).unwrap();
                    let bm = move_bound(Some(s));
                    counts[0] += newest.iter().filter(|v| (*v / m - 1.0).abs() > b).count();
                    counts[1] += runs.iter().filter_map(|r| find_move(&r[..2], bm)).count();
                    counts[2] += runs.iter().filter_map(|r| find_move(r, bm)).count();
                }
            }
        }
        let per_view = |c: usize| c as f64 / views as f64;
        Rates {
            outliers: per_view(counts[0]),
            moves_two_newest: per_view(counts[1]),
            moves_median: per_view(counts[2]),
        }
    }

    #[test]
    fn false_flags_per_view_are_as_documented() {
        let one = false_flags_per_view(0.01, 1000, 7);
        let two = false_flags_per_view(0.02, 1000, 11);
        // The rule: ≈ 4·10⁻⁴ at σ = 1%, ≈ 0.13 at 2% (0.11 of them outliers).
        assert!(one.outliers + one.moves_median < 0.005, "{one:?}");
        let all = two.outliers + two.moves_median;
        assert!((0.07..0.2).contains(&all), "{two:?}");
        assert!((0.005..0.05).contains(&two.moves_median), "{two:?}");
        // The two-newest rule it replaced, on the same views: ≈ 0.015 and
        // ≈ 0.26; its moves were most of the false flags.
        assert!((0.005..0.04).contains(&(one.outliers + one.moves_two_newest)));
        let all = two.outliers + two.moves_two_newest;
        assert!((0.15..0.4).contains(&all), "{two:?}");
        assert!(two.moves_median * 4.0 < two.moves_two_newest, "{two:?}");
    }

    #[test]
    fn a_move_is_judged_from_the_median_of_earlier_runs() {
        let b = 0.05;
        // Newest first: a 15% step three runs before the newest, and stayed.
        let step = [1.15, 1.16, 1.14, 1.15, 1.0, 1.01, 0.99, 1.0];
        let found = find_move(&step, b).unwrap();
        assert_eq!((found.start, found.previous), (3, 4));
        assert!((found.level - 1.01).abs() < 1e-12, "{found:?}");
        // The two-newest rule misses it.
        assert_eq!(find_move(&step[..2], b), None);
        // One more run at the new level: now the machine's level.
        let settled = [1.15, 1.15, 1.16, 1.14, 1.15, 1.0, 1.01, 0.99];
        assert_eq!(find_move(&settled, b), None);
        // A single noisy previous run is not a move (the old rule flags it).
        let noisy = [1.0, 1.12, 1.01, 0.99, 1.0];
        assert_eq!(find_move(&noisy, b), None);
        assert!(find_move(&noisy[..2], b).is_some());
        // A step at the newest run: since the newest, from the one before.
        let newest = [1.2, 1.0, 1.01, 0.99];
        let found = find_move(&newest, b).unwrap();
        assert_eq!((found.start, found.previous), (0, 1));
        // One run: no judgement.
        assert_eq!(find_move(&[1.2], b), None);
        assert_eq!(find_move(&[], b), None);
    }
}
