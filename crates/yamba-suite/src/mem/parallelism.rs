//! P = one step of K independent pointer chases through memory: how many
//! cache misses the core keeps in flight at once (lmbench's par_mem).
//!
//! One random cycle over a working set far larger than the last-level
//! cache (2×, at least 64 MiB), 64-byte elements; K chases start at K
//! random places, one in each K-th of the cycle, afresh for every
//! observation, and move in lockstep, so they never share a line and no
//! chase walks where another has just been. One chase is a string of
//! dependent misses; K chases are K independent strings, and the core
//! overlaps as many as its miss buffers allow:
//!
//!   par(K) = K · T(1 chase) / T(K chases),
//!
//! measured in turns for K = 1 … 24 (lmbench stops at 16); the result is the
//! largest, the curve over K in `series`. Huge pages (when the kernel has
//! them) keep TLB misses and page walks out of it, so the number is the
//! memory system's parallelism; `--set mem.parallelism.pages=base` asks for
//! 4 KiB pages (lmbench's), `mem.parallelism.size=BYTES` for another size.
//!
//! Evidence (gating): the working set is far larger than the last-level
//! cache (≥ 2×); 1 ≤ par ≤ K; the chases ran the steps counted (the last
//! observation's ended where following the cycle that far ends).

use super::adapter::{self, Pages};
use super::chase::{rng, Chain, Order, Rng};
use crate::shared::interleave::{shared_plan, time_interleaved};
use rand::Rng as _;
use serde_json::json;
use yamba_core::{Benchmark, Cold, Ctx, Kind, Series, Setting, Unit};

/// `--set mem.parallelism.size`: the chases' working set.
pub const SIZE: Setting = Setting {
    key: "mem.parallelism.size",
    kind: Kind::Bytes {
        min: 1 << 20,
        max: 1 << 40,
    },
    default: "2× the effective last-level cache, at least 64 MiB",
    help: "bytes of the cycle the chases walk",
    aliases: &[],
};

/// `--set mem.parallelism.pages`: the page size under the chases.
pub const PAGES: Setting = Setting {
    key: "mem.parallelism.pages",
    kind: Kind::Choice(&["huge", "base"]),
    default: "huge where the kernel has them, base otherwise",
    help: "2 MiB pages (no TLB misses) or 4 KiB pages (lmbench's)",
    aliases: &[],
};

pub static PARALLELISM: Benchmark = Benchmark {
    id: "mem.parallelism",
    area: "mem",
    unit: Unit::Ratio,
    // More misses in flight at once is more of the memory system.
    higher_is_better: Some(true),
    description: "memory-level parallelism: how many independent pointer chases through memory the core overlaps (par(K) = K·T(1)/T(K), largest over K ≤ 24)",
    adapter: adapter::NAME,
    timeout_s: 300,
    settings: &[SIZE, PAGES],
    run: run_parallelism,
    cold: Cold::NotMeaningful(
        "pointer chases through memory far larger than the last-level cache: every load already misses",
    ),
    ..Benchmark::TEMPLATE
};

/// Numbers of chases measured.
pub const CHAINS: &[usize] = &[1, 2, 3, 4, 5, 6, 8, 10, 12, 14, 16, 20, 24];
const CHAINS_QUICK: &[usize] = &[1, 2, 4, 8, 12, 16, 24];

/// `n` steps of K chases from `p`, which is left where they ended.
#[inline(never)]
fn chase<const K: usize>(n: u64, p: &mut [usize; K]) {
    let mut q = *p;
    for _ in 0..n {
        for a in q.iter_mut() {
            // SAFETY: every element of the cycle holds the address of another.
            *a = unsafe { std::ptr::read(*a as *const usize) };
        }
    }
    *p = q;
}

/// `n` steps of chases from `starts` (one per chase); where they ended.
fn chase_from(starts: &[usize], n: u64) -> Vec<usize> {
    macro_rules! arm {
        ($($kk:literal),*) => {
            match starts.len() {
                $($kk => {
                    let mut s: [usize; $kk] = starts.try_into().unwrap();
                    chase::<$kk>(n, &mut s);
                    s.to_vec()
                })*
                k => panic!("no compiled chase for K = {k} (one of {CHAINS:?})"),
            }
        };
    }
    arm!(1, 2, 3, 4, 5, 6, 8, 10, 12, 14, 16, 20, 24)
}

/// Places spaced along the cycle where an observation's chases start.
pub const STARTS: usize = 4096;

/// K chases, each observation started afresh at random places of the
/// cycle (chase j in the j-th K-th of it): every run draws its lines from
/// the whole working set alike, and none walks in another's recent trail
/// (lines it would find still cached).
struct Chases<'a> {
    k: usize,
    starts: &'a [usize],
    rng: Rng,
    /// The last observation's starts, steps and ends.
    last: (Vec<usize>, u64, Vec<usize>),
}

impl Chases<'_> {
    fn run(&mut self, n: u64) {
        let seg = self.starts.len() / self.k;
        let from: Vec<usize> = (0..self.k)
            .map(|j| self.starts[j * seg + self.rng.gen_range(0..seg)])
            .collect();
        let ends = chase_from(&from, n);
        self.last = (from, n, ends);
    }
}

/// What one measurement found.
#[derive(Debug, Clone)]
pub struct Found {
    /// (K, median par(K)).
    pub curve: Vec<(usize, f64)>,
    pub best_k: usize,
    /// par at the best K, per observation.
    pub best_obs: Vec<f64>,
    /// ns per step of one chase (the dependent-miss latency).
    pub latency_ns: f64,
    pub method: yamba_results::results::Method,
    /// Whether the last observation's chases ended where following the
    /// cycle as many steps from their starts ends (K = 1 and the largest K).
    pub counted: bool,
}

/// Measures par(K) for each K in `ks` (the first must be 1), chases
/// starting from `starts` (spaced along the cycle).
pub fn measure(
    clock: &yamba_core::Clock,
    plan: &yamba_core::Plan,
    starts: &[usize],
    ks: &[usize],
) -> Found {
    assert_eq!(ks.first(), Some(&1));
    let mut runs: Vec<Chases> = ks
        .iter()
        .enumerate()
        .map(|(i, &k)| Chases {
            k,
            starts,
            rng: rng(0x51_u64 + i as u64),
            last: (Vec::new(), 0, Vec::new()),
        })
        .collect();
    let mut timed: Vec<Box<dyn FnMut(u64) + '_>> = runs
        .iter_mut()
        .map(|c| Box::new(move |n: u64| c.run(n)) as Box<dyn FnMut(u64)>)
        .collect();
    let mut refs: Vec<&mut dyn FnMut(u64)> = timed.iter_mut().map(|b| &mut **b as _).collect();
    let t = time_interleaved(clock, plan, &mut refs);
    drop(refs);
    drop(timed);
    // Known count: the last observation's chases (K = 1 and the largest
    // K) ended where following the cycle as many steps ends.
    let mut counted = true;
    for i in [0, ks.len() - 1] {
        let (from, n, ends) = &runs[i].last;
        for (start, end) in from.iter().zip(ends) {
            let mut p = *start;
            for _ in 0..*n {
                // SAFETY: p is an element of the cycle.
                p = unsafe { std::ptr::read_volatile(p as *const usize) };
            }
            counted &= p == *end;
        }
        counted &= from.len() == ks[i] && !from.is_empty();
    }
    let t1 = t[0].median();
    let curve: Vec<(usize, f64)> = ks
        .iter()
        .zip(&t)
        .map(|(&k, tk)| (k, k as f64 * t1 / tk.median()))
        .collect();
    let bi = (0..curve.len())
        .max_by(|&a, &b| curve[a].1.total_cmp(&curve[b].1))
        .unwrap();
    Found {
        best_obs: t[bi]
            .ns_per_block
            .iter()
            .filter(|&&ns| ns > 0.0)
            .map(|ns| ks[bi] as f64 * t1 / ns)
            .collect(),
        best_k: ks[bi],
        curve,
        latency_ns: t1,
        method: t[bi].method.clone(),
        counted,
    }
}

/// 2× the LLC, at least 64 MiB, rounded up to whole MiB: the cycle keeps
/// whole 64-byte elements, so an LLC estimate that is not a multiple of 32
/// bytes would otherwise leave the working set a few bytes short of the 2×
/// the evidence asks for (67301952 against 67301996 in a CI run).
fn default_bytes(llc: usize) -> usize {
    (2 * llc).max(64 << 20).next_multiple_of(1 << 20)
}

fn run_parallelism(ctx: &mut Ctx) -> Result<(), String> {
    // The effective LLC (sysfs's when the probe cannot find it): a VM's
    // sysfs may name a host's L3 many times what this guest reaches.
    let sizing = super::llc::Sizing::for_run(ctx);
    let llc = sizing.llc;
    let bytes = match ctx.bytes(SIZE.key)? {
        Some(b) => b as usize,
        None => default_bytes(llc),
    };
    let asked = ctx.choice(PAGES.key)?;
    let pages = match asked {
        Some("base") => Pages::Base,
        _ => match adapter::thp_unavailable(ctx.machine().transparent_hugepages.as_deref()) {
            None => Pages::Huge,
            Some(_) if asked.is_none() => Pages::Base,
            Some(why) => return Err(why),
        },
    };
    let huge_before = adapter::anon_huge_bytes();
    let (chain, starts) = Chain::with_starts(bytes, 64, Order::Random, pages, 0x9A4, STARTS)?;
    let huge_grew = huge_before
        .zip(adapter::anon_huge_bytes())
        .map(|(a, b)| b.saturating_sub(a));
    let ks = if ctx.quick() { CHAINS_QUICK } else { CHAINS };
    let kmax = *ks.last().unwrap();
    let plan = shared_plan(&ctx.plan(), 1.0);
    let f = measure(ctx.clock(), &plan, &starts, ks);

    let mut r = ctx.result(None);
    r.set_observations(f.best_obs.clone());
    r.method = Some(f.method.clone());
    r.param("working_set_bytes", chain.bytes)
        .param("llc_bytes", llc)
        .param(
            "llc",
            sizing.describe("working set ≥ 2 × the LLC, at least 64 MiB"),
        )
        .param("element_bytes", 64)
        .param(
            "pages",
            match pages {
                Pages::Base => "base",
                Pages::Huge => "2 MiB transparent huge pages",
            },
        )
        .param("chains_tried", ks)
        .param("best_chains", f.best_k);
    r.series = Some(Series {
        x_label: "independent chases".into(),
        x_unit: "count".into(),
        y_label: "parallelism".into(),
        y_unit: "ratio".into(),
        log_x: false,
        log_y: false,
        points: f.curve.iter().map(|&(k, v)| [k as f64, v]).collect(),
    });
    r.extra.insert(
        "chase".into(),
        json!({
            "latency_ns_one_chase": f.latency_ns,
            "ns_per_load_at_best": f.latency_ns / f.curve.iter().map(|c| c.1).fold(0.0, f64::max),
            "anon_huge_bytes_grew": huge_grew,
        }),
    );
    r.add_evidence(
        "the working set is far larger than the last-level cache (≥ 2×), so the chases miss to memory",
        format!("≥ {} bytes", 2 * llc),
        format!("{} bytes", chain.bytes),
        chain.bytes >= 2 * llc,
    );
    let best = f.curve.iter().map(|c| c.1).fold(0.0, f64::max);
    r.add_evidence(
        "the parallelism is between 1 and the number of chases",
        format!("0.9 ≤ par ≤ {:.1}", kmax as f64 * 1.05),
        format!(
            "{best:.2} at {} chases; curve {:?}",
            f.best_k,
            f.curve
                .iter()
                .map(|&(k, v)| (k, (v * 100.0).round() / 100.0))
                .collect::<Vec<_>>()
        ),
        best >= 0.9 && best <= kmax as f64 * 1.05,
    );
    r.add_evidence(
        "every chase ran the steps counted (it ended where following the cycle as far ends)",
        "the same element",
        if f.counted { "the same" } else { "different" },
        f.counted,
    );
    if pages == Pages::Huge {
        let whole = huge_grew.is_some_and(|g| g as usize >= chain.bytes / 2);
        r.add_note_evidence(
            "the working set lay mostly on huge pages (AnonHugePages grew by at least half of it)",
            format!("≥ {} bytes", chain.bytes / 2),
            format!("{huge_grew:?} bytes"),
            whole,
        );
    }
    let at_max = f.curve.last().map_or(0.0, |c| c.1);
    r.add_note_evidence(
        "the parallelism levelled off below the most chases tried (else it may be higher)",
        format!(
            "best at fewer than {kmax}, or par({kmax}) < {:.1}",
            0.8 * kmax as f64
        ),
        format!("best at {}, par({kmax}) = {at_max:.2}", f.best_k),
        f.best_k < kmax || at_max < 0.8 * kmax as f64,
    );
    ctx.push(r);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_working_set_stays_twice_an_odd_llc() {
        for llc in [33_650_998, 16 << 20, (40 << 20) + 7, 1 << 10] {
            let bytes = default_bytes(llc);
            let elements = bytes / 64;
            assert!(elements * 64 >= 2 * llc, "llc {llc}: {bytes}");
            assert!(
                bytes >= 64 << 20 && bytes.is_multiple_of(1 << 20),
                "{bytes}"
            );
        }
        assert_eq!(default_bytes(1 << 10), 64 << 20);
        assert_eq!(default_bytes(33_650_998), 65 << 20);
    }
}
