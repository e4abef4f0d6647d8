//! What the stress costs: a benchmark of the suite measured through the
//! normal harness and isolation (`runner::run_one`) once on the idle
//! machine and once while the stress runs, in the same invocation, on the
//! same CPU; both kept as results with their whole distributions, and a
//! third result comparing them (the stressed observations over the idle
//! median, with the Hodges–Lehmann ratio, its 95% interval and the
//! Mann–Whitney p-value).

use crate::StressError;
use std::path::Path;
use yamba_core::runner::run_one;
use yamba_core::{BenchResult, Benchmark, Mode, Session, Status, Unit};

/// A benchmark to measure, and how to narrow it to the asked result.
#[derive(Debug, Clone)]
pub struct Target {
    /// As asked: `ipc.rtt.pipe`, `proc.fork.light`.
    pub name: String,
    pub bench: &'static Benchmark,
    pub settings: Vec<(String, String)>,
}

/// Benchmarks whose results one setting narrows (the component after
/// their id names the value): `ipc.rtt.pipe` is `ipc.rtt` with
/// `transports=pipe`.
const NARROWING: &[(&str, &str)] = &[("ipc.rtt", "transports")];

/// Finds the benchmark behind a result name.
pub fn resolve(name: &str) -> Result<Target, StressError> {
    let all = yamba_suite::all();
    if let Some(b) = all.iter().find(|b| b.id == name) {
        return Ok(Target {
            name: name.into(),
            bench: b,
            settings: Vec::new(),
        });
    }
    for (id, key) in NARROWING {
        if let Some(rest) = name.strip_prefix(&format!("{id}.")) {
            if let Some(b) = all.iter().find(|b| b.id == *id) {
                let value = rest.split('.').next().unwrap_or(rest);
                return Ok(Target {
                    name: name.into(),
                    bench: b,
                    settings: vec![(key.to_string(), value.to_string())],
                });
            }
        }
    }
    if let Some(b) = all.iter().find(|b| name.starts_with(&format!("{}.", b.id))) {
        return Ok(Target {
            name: name.into(),
            bench: b,
            settings: Vec::new(),
        });
    }
    Err(StressError::NoSuchBenchmark(name.into()))
}

/// Measures `target` in every mode asked that it supports; keeps the
/// results named by the target, their ids suffixed with `condition`.
pub fn measure(
    session: &Session,
    target: &Target,
    modes: &[Mode],
    scratch: &Path,
    condition: &str,
) -> Vec<BenchResult> {
    let mut s = session.clone();
    for (k, v) in &target.settings {
        s.config.settings.insert(k.clone(), v.clone());
    }
    let mut out = Vec::new();
    for &mode in modes {
        if !target.bench.supports(mode) {
            continue;
        }
        for mut r in run_one(&s, target.bench, mode, scratch) {
            let wanted = r.id == target.name || r.id.starts_with(&format!("{}.", target.name));
            let table_only = r.summary.is_none() && r.status == Status::Ok;
            if !wanted || table_only {
                continue;
            }
            r.id = format!("{}.{condition}", r.id);
            r.param("condition", condition);
            out.push(r);
        }
    }
    out
}

/// The result comparing a measurement under stress with its idle twin.
/// `covered`: whether the stress ran for the whole stressed measurement.
/// The cost result of a measurement that ran idle but not under stress (the
/// stress ended first, or was interrupted): failed, with why, never dropped.
pub fn not_measured(idle: &BenchResult, why: &str) -> BenchResult {
    let base_id = idle.id.trim_end_matches(".idle").to_string();
    let mut r = BenchResult::new(
        format!("stress.cost.{base_id}"),
        "stress.cost",
        "stress",
        Unit::Ratio,
        idle.mode,
        "generic",
    );
    r.description = format!("cost of the stress: {base_id} under stress over idle");
    r.param("idle", &idle.id);
    r.status = Status::Failed;
    r.reason = Some(format!(
        "not measured under stress: {why} (give the stress a --time longer than the measurement)"
    ));
    r
}

pub fn compare(idle: &BenchResult, stressed: &BenchResult, covered: (bool, String)) -> BenchResult {
    let base_id = idle.id.trim_end_matches(".idle").to_string();
    let mut r = BenchResult::new(
        format!("stress.cost.{base_id}"),
        "stress.cost",
        "stress",
        Unit::Ratio,
        idle.mode,
        "generic",
    );
    r.description = format!(
        "cost of the stress: {base_id} under stress over idle (each stressed observation / idle median)"
    );
    r.param("idle", &idle.id).param("stressed", &stressed.id);
    if idle.status != Status::Ok || stressed.status != Status::Ok {
        r.status = Status::Failed;
        r.reason = Some(format!(
            "idle {:?}{}, under stress {:?}{}",
            idle.status,
            idle.reason
                .as_deref()
                .map(|s| format!(" ({s})"))
                .unwrap_or_default(),
            stressed.status,
            stressed
                .reason
                .as_deref()
                .map(|s| format!(" ({s})"))
                .unwrap_or_default(),
        ));
        return r;
    }
    let (Some(si), Some(ss)) = (&idle.summary, &stressed.summary) else {
        r.status = Status::Failed;
        r.reason = Some("a measurement has no observations".into());
        return r;
    };
    let ratios: Vec<f64> = stressed
        .observations
        .iter()
        .map(|v| v / si.median)
        .collect();
    r.set_observations(ratios);
    let hl = yamba_stats::hodges_lehmann_ratio_ci(&idle.observations, &stressed.observations, 0.95);
    let mw = yamba_stats::mann_whitney_u(&idle.observations, &stressed.observations);
    r.extra.insert(
        "best_vs_worst".into(),
        serde_json::json!({
            "idle": {"median": si.median, "min": si.min, "p99": si.p99, "max": si.max, "n": si.n},
            "stressed": {"median": ss.median, "min": ss.min, "p99": ss.p99, "max": ss.max, "n": ss.n},
            "unit": idle.unit,
            "ratio_of_medians": ss.median / si.median,
            "ratio_of_p99": ss.p99 / si.p99,
            "hodges_lehmann_ratio": hl.map(|h| h.0),
            "ratio_ci95": hl.map(|h| [h.1, h.2]),
            "mann_whitney_p": mw.map(|m| m.p_value),
        }),
    );
    r.add_evidence(
        "the stress ran for the whole measurement under stress",
        "every worker running from its start to its end",
        covered.1,
        covered.0,
    );
    r.add_note_evidence(
        "idle and stressed measured in this invocation, same session (clock, BASE, CPU)",
        "same session",
        format!(
            "CPU {:?} both",
            idle.accounting.as_ref().and_then(|a| a.pinned_cpu)
        ),
        true,
    );
    r.apply_evidence();
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_ids_and_narrowed_names() {
        let t = resolve("ipc.rtt.pipe").unwrap();
        assert_eq!(t.bench.id, "ipc.rtt");
        assert_eq!(t.settings, vec![("transports".into(), "pipe".into())]);
        assert_eq!(
            resolve("proc.fork.light").unwrap().bench.id,
            "proc.fork.light"
        );
        assert_eq!(
            resolve("mem.pagefault.anon").unwrap().bench.id,
            "mem.pagefault.anon"
        );
        assert!(resolve("no.such")
            .unwrap_err()
            .to_string()
            .contains("no.such"));
    }
}
