//! `mem.tlb`: the reach of the data TLB's levels (lmbench's `tlb`), from
//! the same chase on 4 KiB and on 2 MiB pages.
//!
//! P = one load of a chase over N pages, one line per page (at an offset
//! that varies page to page, so the lines spread over the cache's sets),
//! pages in random order. The cache footprint is N lines on both page
//! sizes; only the 4 KiB chase needs a translation per page. The
//! difference of the two latencies is the TLB's share: ≈ 0 while N pages
//! fit the TLB, more past each level whose misses show (an L1 dTLB miss
//! that hits the second level can be all but free), a page walk past the
//! last, dearer again once the page tables themselves leave the caches.
//! Each rise by more than [`STEP_NS`] is a step: the last N before it is
//! the reach, in pages. The headline is the first step (lmbench's `tlb`
//! figure); later steps are `mem.tlb.stepK`, named as what they may be.

use super::adapter::{self, Anon, Pages};
use super::chase::{rng, Chain};
use rand::seq::SliceRandom;
use serde_json::json;
use std::time::Duration;
use yamba_core::harness::Plan;
use yamba_core::{Benchmark, Cold, Ctx, Series, Unit};

pub static TLB: Benchmark = Benchmark {
    id: "mem.tlb",
    area: "mem",
    unit: Unit::Count,
    description: "data TLB reach in 4 KiB pages (where the TLB's share first rises): one line per page chased on 4 KiB vs 2 MiB pages (lmbench's tlb)",
    adapter: adapter::NAME,
    requires: |m, _| match adapter::thp_unavailable(m.transparent_hugepages.as_deref()) {
        Some(why) => Err(format!("needs 2 MiB pages to compare with: {why}")),
        None => Ok(()),
    },
    run,
    timeout_s: 300,
    cold: Cold::NotMeaningful(
        "the pages chased are the experiment: each count is its own TLB case, past the TLB's reach the missing one",
    ),
    ..Benchmark::TEMPLATE
};

/// A rise of the TLB's share by more than this (ns) marks a level's end.
pub const STEP_NS: f64 = 1.0;

/// The chase over `pages` pages of `page` bytes, one line each.
pub fn page_chain(pages: usize, page: usize, kind: Pages, seed: u64) -> Result<Chain, String> {
    let mut order: Vec<usize> = (0..pages).collect();
    order.shuffle(&mut rng(seed));
    // 7 lines apart page to page (odd, so every offset in a page is used).
    let offsets: Vec<usize> = order
        .iter()
        .map(|&p| p * page + (p * 7 % (page / 64)) * 64)
        .collect();
    Chain::from_offsets(Anon::new(pages * page, kind, true)?, &offsets)
}

/// The levels a (pages, base − huge ns) curve shows: for each rise of
/// more than [`STEP_NS`] above the level before it (confirmed by the next
/// point: one stray point is noise), the last page count before the rise
/// and the first after. A rise spread over several points (a TLB whose
/// replacement is not strict LRU loses some entries early) is one level:
/// the next level starts where the curve stops rising.
pub fn levels(diff: &[(usize, f64)]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let Some(first) = diff.first() else {
        return out;
    };
    let mut level = first.1.max(0.0);
    let mut i = 1;
    while i < diff.len() {
        let risen = |j: usize, over: f64| diff.get(j).is_some_and(|d| d.1 > over + STEP_NS);
        if risen(i, level) && (i + 1 == diff.len() || risen(i + 1, level)) {
            out.push((diff[i - 1].0, diff[i].0));
            // Follow the rise to where it stops.
            while i + 1 < diff.len() && risen(i + 1, diff[i].1) {
                i += 1;
            }
            level = diff[i].1;
        } else {
            // Before the first rise the level is the lowest seen (≈ 0);
            // after a rise it stays where the rise settled.
            if out.is_empty() {
                level = level.min(diff[i].1.max(0.0));
            }
        }
        i += 1;
    }
    out
}

fn run(ctx: &mut Ctx) -> Result<(), String> {
    let page = adapter::page_size();
    // The headline (the first step) lies far inside a quick pass's range:
    // only the block that measures the curve goes on to 2^16 pages.
    let max_pages: usize = if ctx.quick() || !ctx.measures_curve() {
        1 << 14
    } else {
        1 << 16
    };
    let mut counts = Vec::new();
    let mut n = 8usize;
    while n <= max_pages {
        counts.push(n);
        counts.push(n * 3 / 2);
        n *= 2;
    }
    counts.retain(|&c| c <= max_pages);
    let mut plan: Plan = ctx.plan();
    plan.budget = ctx.scaled_time(Duration::from_millis(10));
    plan.min_observations = 5;
    let started = std::time::Instant::now();
    let (mut base, mut huge, mut diff) = (Vec::new(), Vec::new(), Vec::new());
    let mut on_huge = 0usize;
    for &n in &counts {
        let before = adapter::anon_huge_bytes();
        let h = page_chain(n, page, Pages::Huge, 0x71B + n as u64)?;
        let got = adapter::anon_huge_bytes()
            .zip(before)
            .is_some_and(|(a, b)| a.saturating_sub(b) >= (n * page) as u64);
        on_huge += usize::from(got);
        let b = page_chain(n, page, Pages::Base, 0x71B + n as u64)?;
        plan.warmup_ns = (n as f64 * 300.0).clamp(1e6, 20e6);
        // Interleaved twice, so drift moves both alike; the lower median
        // of each (disturbances only add time).
        let mut best = [f64::INFINITY; 2];
        for _ in 0..2 {
            for (k, c) in [&b, &h].into_iter().enumerate() {
                if let Some(s) = c.measure(ctx.clock(), &plan).summary() {
                    best[k] = best[k].min(s.median);
                }
            }
        }
        if !best.iter().all(|v| v.is_finite()) {
            continue;
        }
        base.push([n as f64, best[0]]);
        huge.push([n as f64, best[1]]);
        diff.push((n, best[0] - best[1]));
    }
    let found = levels(&diff);
    let mut r = ctx.result(None);
    // The headline: the first step's reach, in pages (lmbench's tlb).
    r.set_observations(found.first().map(|l| vec![l.0 as f64]).unwrap_or_default());
    r.method = Some(ctx.direct_method(1, started, "every page count measured"));
    r.param("page_bytes", page).param("max_pages", max_pages);
    r.series = Some(Series {
        x_label: "pages chased (one line each)".into(),
        x_unit: "pages".into(),
        y_label: "4 KiB − 2 MiB page latency (the TLB's share)".into(),
        y_unit: "ns".into(),
        log_x: true,
        log_y: false,
        points: diff.iter().map(|&(n, d)| [n as f64, d]).collect(),
    });
    let at = |n: usize| diff.iter().find(|d| d.0 == n).map(|d| d.1);
    let rows: Vec<serde_json::Value> = found
        .iter()
        .enumerate()
        .map(|(i, &(last, next))| {
            json!({
                "step": i + 1,
                "what": if i == 0 {
                    "the first TLB level whose misses show: beyond it each 4 KiB load pays more (lmbench's tlb figure)"
                } else {
                    "a further rise: the next TLB level's reach, or page walks getting dearer as page tables leave the caches"
                },
                "reach_pages": last, "rises_by_pages": next,
                "reach_bytes": last * page,
                "tlb_share_before_ns": at(last), "tlb_share_after_ns": at(next),
            })
        })
        .collect();
    r.extra.insert("steps".into(), json!(rows));
    r.extra.insert("base_pages_ns".into(), json!(base));
    r.extra.insert("huge_pages_ns".into(), json!(huge));
    r.add_evidence(
        "every 2 MiB chase lay on huge pages (AnonHugePages grew by its whole mapping)",
        format!("{} of {}", counts.len(), counts.len()),
        format!("{on_huge} of {}", counts.len()),
        on_huge == counts.len(),
    );
    let small = diff.first().map(|d| d.1).unwrap_or(f64::NAN);
    r.add_evidence(
        "a few pages cost the same on both page sizes (the TLB holds them: the difference is the TLB's only)",
        format!("|difference| ≤ {STEP_NS} ns at {} pages", counts[0]),
        format!("{small:.2} ns"),
        small.abs() <= STEP_NS,
    );
    r.add_evidence(
        "the 4 KiB chase outgrew at least one TLB level",
        "≥ 1 rise of the difference",
        format!("{} rise(s)", found.len()),
        !found.is_empty(),
    );
    if let (Some(first), Some(last)) = (diff.first(), diff.last()) {
        r.add_note_evidence(
            "past every level a 4 KiB load pays a page walk (difference grows)",
            format!("> {:.2} ns at {} pages", first.1 + STEP_NS, last.0),
            format!("{:.2} ns", last.1),
            last.1 > first.1 + STEP_NS,
        );
    }
    ctx.push(r);
    // The further steps are read off the whole curve: only the block that
    // measured it reports them (the others stop at a quick pass's range).
    let further = if ctx.measures_curve() { found.len() } else { 1 };
    for (i, &(last, next)) in found.iter().enumerate().take(further).skip(1) {
        let mut lr = ctx.result(Some(&format!("step{}", i + 1)));
        lr.description = format!(
            "step {} of the TLB's share: the most 4 KiB pages chased before it rises again (a further TLB level, or page walks missing the caches)",
            i + 1
        );
        lr.set_observations(vec![last as f64]);
        lr.method = Some(ctx.direct_method(1, started, "from mem.tlb's curve"));
        lr.param("reach_bytes", last * page)
            .param("misses_from_pages", next);
        ctx.push(lr);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_the_rises_of_the_difference() {
        let d = [
            (8, 0.0),
            (16, 0.1),
            (32, -0.1),
            (64, 0.1),
            (96, 2.8),
            (128, 3.0),
            (256, 3.1),
            (1024, 3.2),
            (1536, 3.1),
            (2048, 3.4),
            (3072, 14.0),
            (4096, 18.0),
            (8192, 20.0),
        ];
        assert_eq!(levels(&d), [(64, 96), (2048, 3072)]);
        // A rise spread over a few points is one level.
        let gradual = [
            (512, 0.0),
            (1024, 0.3),
            (1536, 0.3),
            (2048, 2.3),
            (3072, 6.4),
            (4096, 6.2),
            (6144, 6.5),
        ];
        assert_eq!(levels(&gradual), [(1536, 2048)]);
        // One stray point is not a level.
        let stray = [(8, 0.0), (16, 3.0), (32, 0.1), (64, 0.0)];
        assert!(levels(&stray).is_empty());
    }

    #[test]
    fn one_line_per_page_each_page_once() {
        let c = page_chain(64, 4096, Pages::Base, 3).unwrap();
        assert_eq!(c.elements, 64);
        assert_eq!(c.follow(64), c.start());
    }
}
