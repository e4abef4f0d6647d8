//! A store read as a fleet: the newest run of every machine, machines of
//! the same hardware side by side for each of lmbench's headline
//! primitives ([`yamba_analysis::headline::HEADLINES`]), and the machines that
//! stand out — outside their group's spread, or moved since their own
//! previous run (with when, and what changed in their description).
//!
//! A machine is its hostname (the key the store keeps for every run). Its
//! hardware group is CPU model + online CPUs + memory rounded to the GiB:
//! the kernel, microcode and mitigations are *not* part of it, since a
//! change of those is what a move should be traced to.
//!
//! The rule, for each primitive (the hot result's headline value):
//!
//! * the group's centre is the median of its machines' newest values and
//!   its spread the MAD scaled by 1.4826 (a normal σ), relative to the
//!   median;
//! * a machine is *outside its group* when |value / median − 1| exceeds
//!   max([`K`]·spread, [`FLOOR`]); groups of fewer than [`MIN_GROUP`]
//!   machines are shown but not judged (no robust centre);
//! * a machine *moved* when |newest / previous − 1| exceeds
//!   max([`K`]·√2·spread, [`FLOOR`]) — the difference of two runs has √2
//!   times one run's spread — with the spread of its group (just the floor
//!   when the group is too small to have one).
//!
//! [`K`] = 7 and [`FLOOR`] = 5% are chosen for a fleet of about 50
//! machines whose runs scatter by 1–2%. The spread is itself estimated
//! (from ~17 machines a MAD is uncertain by ~±28%), so the false-flag rate
//! is stated from simulation rather than from 2·Φ(−7) alone: with normal
//! noise of σ = 1% a view of 50 machines in 3 groups × 18 primitives (900
//! outlier and 900 move tests) shows ≈ 0.015 false flags (one view in ~65
//! has one), with σ = 2% ≈ 0.3 (mostly moves; about one view in four).
//! The unit test `false_flags_per_view_are_as_documented` recomputes it.
//! What is caught: a machine off its group by more than 5% when the
//! spread is under 0.7%, 7% at 1%, 14% at 2% (a move: 5%, 10%, 20%).
//! Real timings have heavier tails than a normal: the floor keeps a quiet
//! primitive from flagging on those, and a flag is a reason to look, not
//! a verdict.

use crate::store::{History, RunId};
use crate::HistoryError;
use serde::Serialize;
use std::collections::BTreeMap;
use yamba_analysis::headline::HEADLINES;
use yamba_results::ResultsFile;

/// How many spreads away a value must be to be flagged.
pub const K: f64 = 7.0;
/// The smallest relative difference ever flagged (5%), whatever the spread.
pub const FLOOR: f64 = 0.05;
/// The fewest machines a group needs for its members to be judged against it.
pub const MIN_GROUP: usize = 3;
/// MAD × this estimates a normal distribution's σ.
const MAD_TO_SIGMA: f64 = 1.4826;

/// The fleet view of a store.
#[derive(Debug, Clone, Serialize)]
pub struct Fleet {
    /// Where the runs were read from.
    pub store: String,
    pub k: f64,
    pub floor: f64,
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
    /// Its newest value moved from its previous run's.
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
    pub value: f64,
    /// The group's median (outlier) or the previous run's value (moved).
    pub reference: f64,
    /// value / reference − 1.
    pub change: f64,
    /// The relative bound it exceeded.
    pub bound: f64,
    /// The run with the value, and when it started (for a move: since when).
    pub run: RunId,
    pub since: String,
    /// For a move: the previous run, and what changed in the machine's
    /// description between the two (kernel, microcode, mitigations…).
    pub previous: Option<RunId>,
    pub changes: Vec<String>,
}

/// One stored run, read as far as the fleet needs.
struct Read {
    id: RunId,
    started: String,
    header: ResultsFile,
    values: BTreeMap<String, f64>,
}

impl Read {
    fn of(h: &mut History, id: RunId, started: &str) -> Result<Read, HistoryError> {
        Ok(Read {
            id,
            started: started.to_string(),
            header: h.load_header(id)?,
            values: h.headlines(id)?,
        })
    }
    fn hot(&self, id: &str) -> Option<f64> {
        self.values.get(&format!("{id}@hot")).copied()
    }
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
/// (`None`: too small a group to have one).
pub fn move_bound(spread: Option<f64>) -> f64 {
    spread.map_or(FLOOR, |s| (K * std::f64::consts::SQRT_2 * s).max(FLOOR))
}

impl History {
    /// The fleet view of this store: the newest run per machine grouped by
    /// hardware, each headline primitive side by side, and the flags.
    pub fn fleet(&mut self) -> Result<Fleet, HistoryError> {
        // Each machine's newest two runs: the view and its moves read no more.
        let mut by_host: BTreeMap<String, Vec<(RunId, String)>> = BTreeMap::new();
        for (host, id, started) in self.newest_per_host(2)? {
            by_host.entry(host).or_default().push((id, started));
        }
        let mut groups: BTreeMap<String, Vec<(String, Read, Option<Read>)>> = BTreeMap::new();
        for (host, v) in by_host {
            let newest = Read::of(self, v[0].0, &v[0].1)?;
            let previous = match v.get(1) {
                Some((id, started)) => Some(Read::of(self, *id, started)?),
                None => None,
            };
            groups
                .entry(hardware(&newest.header))
                .or_default()
                .push((host, newest, previous));
        }
        let mut fleet = Fleet {
            store: self.location(),
            k: K,
            floor: FLOOR,
            groups: Vec::new(),
            flags: Vec::new(),
        };
        for (hw, members) in groups {
            let mut group = Group {
                hardware: hw.clone(),
                machines: members
                    .iter()
                    .map(|(host, n, p)| Machine {
                        host: host.clone(),
                        run: n.id,
                        started: n.started.clone(),
                        kernel: n.header.machine.kernel.clone(),
                        previous: p.as_ref().map(|p| p.id),
                    })
                    .collect(),
                primitives: Vec::new(),
            };
            let mut outliers = Vec::new();
            let mut moves = Vec::new();
            for h in HEADLINES {
                // One result for the whole group: the preferred id any
                // member has.
                let Some(id) = h
                    .ids
                    .iter()
                    .find(|id| members.iter().any(|(_, n, _)| n.hot(id).is_some()))
                else {
                    continue;
                };
                let values: Vec<Option<f64>> = members.iter().map(|(_, n, _)| n.hot(id)).collect();
                let present: Vec<f64> = values.iter().flatten().copied().collect();
                let (med, spread) = centre_and_spread(&present);
                let bound = outlier_bound(present.len(), spread);
                for ((host, n, p), v) in members.iter().zip(&values) {
                    let flag = |kind, value: f64, reference: f64, bound: f64| Flag {
                        host: host.clone(),
                        hardware: hw.clone(),
                        kind,
                        primitive: h.name.to_string(),
                        result: format!("{id}@hot"),
                        value,
                        reference,
                        change: value / reference - 1.0,
                        bound,
                        run: n.id,
                        since: n.started.clone(),
                        previous: None,
                        changes: Vec::new(),
                    };
                    let Some(v) = *v else { continue };
                    if let Some(b) = bound {
                        if (v / med - 1.0).abs() > b {
                            outliers.push(flag(FlagKind::Outlier, v, med, b));
                        }
                    }
                    if let Some(pv) = p.as_ref().and_then(|p| p.hot(id)) {
                        let b = move_bound(bound.map(|_| spread));
                        if (v / pv - 1.0).abs() > b {
                            let p = p.as_ref().expect("has a value");
                            let mut f = flag(FlagKind::Moved, v, pv, b);
                            f.previous = Some(p.id);
                            f.changes = description_changes(&p.header, &n.header);
                            moves.push(f);
                        }
                    }
                }
                group.primitives.push(Primitive {
                    name: h.name.to_string(),
                    result: format!("{id}@hot"),
                    values,
                    median: med,
                    spread,
                    bound,
                });
            }
            let order = |f: &Flag| {
                group
                    .machines
                    .iter()
                    .position(|m| m.host == f.host)
                    .unwrap_or(0)
            };
            let mut flags: Vec<Flag> = outliers.into_iter().chain(moves).collect();
            flags.sort_by_key(|f| (order(f), f.kind == FlagKind::Moved));
            fleet.flags.extend(flags);
            fleet.groups.push(group);
        }
        Ok(fleet)
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
            "flagged: outside the group by more than max({}·spread, {}%); moved from its previous run by more than max({}·√2·spread, {}%)",
            self.k,
            self.floor * 100.0,
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
                    "{}: {} ({}) moved {} since run @{} of {} (from @{}; bound ±{:.1}%)",
                    self.host,
                    self.primitive,
                    self.result,
                    pct(self.change),
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

    /// 50 steady machines (groups of 17, 17, 16), 18 primitives, two runs
    /// each with normal noise of relative σ: how many flags a view shows,
    /// on average, by the rule as `History::fleet` applies it.
    fn false_flags_per_view(sigma: f64, views: usize, seed: u64) -> f64 {
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
        let mut flags = 0usize;
        for _ in 0..views {
            for n in [17, 17, 16] {
                for _ in 0..18 {
                    let new: Vec<f64> = (0..n).map(|_| 1.0 + sigma * gauss()).collect();
                    let old: Vec<f64> = (0..n).map(|_| 1.0 + sigma * gauss()).collect();
                    let (m, s) = centre_and_spread(&new);
                    let b = outlier_bound(n, s).unwrap();
                    let bm = move_bound(Some(s));
                    flags += new.iter().filter(|v| (*v / m - 1.0).abs() > b).count();
                    flags += new
                        .iter()
                        .zip(&old)
                        .filter(|(v, p)| (*v / *p - 1.0).abs() > bm)
                        .count();
                }
            }
        }
        flags as f64 / views as f64
    }

    #[test]
    fn false_flags_per_view_are_as_documented() {
        let one = false_flags_per_view(0.01, 1000, 7);
        let two = false_flags_per_view(0.02, 1000, 11);
        assert!(one < 0.04, "σ = 1%: {one} false flags per view");
        assert!(
            (0.15..0.5).contains(&two),
            "σ = 2%: {two} false flags per view"
        );
    }
}
