//! Code placement as a random factor (docs/certainty.md, "Code placement").
//!
//! Where a loop's machine code sits changes what it costs on some CPUs: on
//! an AMD EPYC (Zen 4) guest the same inline `syscall` loop cost 120 or
//! 161 ns depending only on its address, and a rebuild of yamba moved a
//! 1-byte read by 20%. A process measures one placement — the one its
//! build gave the loop — so its interval cannot speak for another build
//! (Mytkowicz et al., ASPLOS 2009). As Stabilizer does (Curtsinger &
//! Berger, ASPLOS 2013), yamba makes placement a random factor it samples:
//! the compiled loop P'' and its dummy F are copied into a fresh
//! executable mapping at [`SLOTS`] placements drawn at random from a
//! [`WINDOW`]-byte window (in steps of [`GRANULE`] bytes, the alignment the
//! compiler gave the code), each called through a stub that also moves
//! the stack down by a random multiple of 16 bytes within a page. The
//! harness visits the placements in turn, each for [`VISIT_NS`] or more
//! ([`Visits`]): long enough for code that has just arrived at an address
//! to settle there, as a loop that runs for a while does.
//!
//! The draw is balanced: the address bits from [`GRANULE`]'s up to
//! [`WINDOW`]'s are cut into groups of log2(slots) bits, and in each group
//! the block's placements take every value equally often, in a random
//! order ([`balanced_offsets`]; a Latin hypercube over bit groups). An
//! effect of one group's bits — where the loop sits in a cache line (4
//! placements take its four 16-byte positions), in a page, which KiB —
//! is then averaged exactly within every block, so blocks differ only by
//! what bits do together: the block's value is still an unbiased
//! estimate of the mean over all placements, with less spread between
//! blocks than independent draws would give.
//!
//! The copy is the compiled bytes themselves, not a re-encoding: only the
//! relative references that leave the function (calls, jumps, RIP-relative
//! data) are re-aimed at their original targets, so the copy runs the same
//! instructions against the same code and data (the adapter checks this
//! by decoding the copy). What cannot move stays a fixed effect, and the
//! docs say so: code the loop calls (libc's wrapper, a `syscall; ret`
//! function) and the kernel's side. Where placement is not possible — no
//! adapter for the architecture, a stripped executable, a loop with a jump
//! table — the code runs where the build put it and the result says why.
//! A profiled process records each copy in a [`ledger`], so its profile
//! names the function a copy was made from.

#[cfg_attr(all(target_os = "linux", target_arch = "x86_64"), path = "x86_64.rs")]
#[cfg_attr(all(target_os = "linux", target_arch = "aarch64"), path = "aarch64.rs")]
#[cfg_attr(
    not(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    )),
    path = "unsupported.rs"
)]
mod arch;
pub mod ledger;
// AArch64's instruction arithmetic, built everywhere so its tests run on
// every CI host.
#[cfg_attr(not(target_arch = "aarch64"), allow(dead_code))]
mod a64;
// Where the copies go and how long a function is: the operating system's part.
#[cfg_attr(target_os = "linux", path = "linux.rs")]
#[cfg_attr(not(target_os = "linux"), path = "other_os.rs")]
mod os;
#[cfg(target_os = "linux")]
mod symbols;

use os::{function_size, page_size, Mapping};

use rand::seq::SliceRandom;
use rand::Rng;
use std::time::Duration;
use yamba_results::{PlacedAt, Placement};

/// Bytes of address space placements are drawn from: 256 pages, past the
/// reach of any CPU's set-indexed front-end structures' low address bits.
pub const WINDOW: usize = 1 << 20;
/// Placements keep the code's address modulo this (the function alignment
/// the compiler chose), so every placement is one a build could give.
pub const GRANULE: usize = 16;
/// Most placements per measured quantity in one block.
pub const SLOTS: usize = 64;
/// How long one visit of a placement lasts, at least: the observations
/// taken there in a row. Code arriving at a new address — a placement, or
/// a new process's own code under ASLR — may run in a slow state that
/// ends with time: on an AMD EPYC (Zen 3) guest (kernel with the SRSO
/// "Safe RET" mitigation) an inline getppid loop ran at ~174 ns instead
/// of ~134 for 0.5 to more than 10 ms after it arrived, now and then for
/// a whole 20 ms block, whatever the address (`--fixed-placement` blocks
/// too), and visits of 3 × 20 µs — what a block made before — kept most
/// placements in it (docs/certainty.md, "Code placement"). A visit's
/// median reads the settled state when the slow start is shorter than
/// half of it. Over 10 interleaved precise runs of getppid beside a C
/// copy visited for 17 ms a placement (133.0–136.2 ns): visits of 10 ms
/// (two placements a block) read 141–142 ns in 6 runs (a block at ~154,
/// one of its two placements slow) and 134.7–135.0 in 4; visits of 20 ms
/// (one placement a block) read 134.4–135.0 in 9 and 136.3 in one. That
/// is the visit of a block that is one of its result's several blocks (a
/// precise run's replicated benchmark): the blocks, each at a placement
/// of its own, give the interval its placements.
pub const VISIT_NS: f64 = 20e6;
/// The shortest visit of a block that is the whole of its result (a
/// quick pass, a precise run's result measured in one process): its own
/// placements give the interval its degrees of freedom (two placements,
/// a t with one: ±12.7 standard errors), so it keeps more of them for
/// visits half as long, whose slow starts its interval then includes.
pub const SHORT_VISIT_NS: f64 = 10e6;
/// The stack is moved down by a multiple of 16 bytes below this.
const STACK_SPAN: u32 = 4096;

/// How a block visits its placements: `slots` of them in turn, `stretch`
/// observations in a row at each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Visits {
    pub slots: usize,
    pub stretch: usize,
}

impl Visits {
    /// Visits of at least [`VISIT_NS`] (observations of about `obs_ns`
    /// each), and as many placements — a power of two, at most [`SLOTS`] —
    /// as the minimum sampling time visits once each (never more than the
    /// budget does). Sampling past the minimum visits them again in turn.
    ///
    /// The minimum sampling time is shared out between the placements, so
    /// each is visited once for all of it, not one visited again for what
    /// is left: every arrival may start slow.
    ///
    /// `one_of_blocks`: the block is one of its result's several blocks
    /// (visits of [`VISIT_NS`]: a precise block's 20 ms holds one
    /// placement, and the blocks, complementary, give the interval its
    /// placements); otherwise its visits are at least [`SHORT_VISIT_NS`].
    /// Two placements of 20 ms a block (40 ms) were tried: getppid read
    /// ~141 ns in 2 of 10 precise runs (a block's slow arrival) against 0
    /// of 10 at one, sigaction's interval no narrower (docs/certainty.md).
    pub fn plan(
        min_sampling: Duration,
        budget: Duration,
        obs_ns: f64,
        one_of_blocks: bool,
    ) -> Visits {
        let obs = obs_ns.max(1.0);
        // A visit lasts its minimum, or one observation where that is
        // longer (rounding the observations up does not cost a placement).
        let shortest = if one_of_blocks {
            VISIT_NS
        } else {
            SHORT_VISIT_NS
        };
        let visit = shortest.max(obs);
        let span = (min_sampling.as_nanos() as f64).min(budget.as_nanos() as f64);
        let fit = ((span / visit).floor() as usize).clamp(1, SLOTS);
        // The largest power of two that fits: every value of a group of
        // address bits equally often ([`balanced_offsets`]).
        let slots = 1 << fit.ilog2();
        let stretch = (visit.max(span / slots as f64) / obs).ceil().max(1.0);
        Visits {
            slots,
            stretch: stretch as usize,
        }
    }

    /// Visits every placement at least once within `max_observations`: a
    /// visit of 10–20 ms of an operation of ~100 ns (a single timing of two
    /// clock reads) is 100 000–200 000 observations, and a block stopped at
    /// its maximum in its first placement had no interval at all.
    pub fn within(self, max_observations: usize) -> Visits {
        Visits {
            stretch: self
                .stretch
                .min(max_observations / self.slots.max(1))
                .max(1),
            ..self
        }
    }
}

/// The evidence line on where the measured code ran.
const PLACED_CHECK: &str = "the measured code ran at placements drawn at random (code placement is a random factor of the interval)";

/// How the blocks of one run share out placements: every block of a
/// quantity draws from one design made from the run's `seed` (the same in
/// every process of the run), and block `block` takes its part. Four
/// blocks in a row take complementary parts: in each group of address
/// bits the four take different values, so even a pilot of three blocks
/// at one placement each sits at three different positions of a cache
/// line, three different KiBs modulo 4, … — where drawn independently,
/// all three would share one position in 1 run of 16 and their interval
/// miss a placement effect entirely.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Design {
    pub seed: u64,
    pub block: usize,
}

/// Blocks that take complementary parts of one design.
const DESIGN_BLOCKS: usize = 4;

/// Offsets for block `design.block`'s `slots` placements: the address
/// bits from GRANULE's up to WINDOW's cut into groups of log2(4 × slots)
/// bits; in each group the top two bits are a permutation over the four
/// blocks of a design (the blocks' complementary parts), the low
/// log2(slots) bits a permutation over the block's own placements (as
/// [`balanced_offsets`] balances them), turned by a random amount. The
/// design is drawn from the seed and the block's four (blocks 0–3 share
/// one design, 4–7 the next, …), so every process of a run draws it alike.
fn design_offsets(slots: usize, design: Design) -> Vec<usize> {
    use rand::SeedableRng;
    let slots = slots.max(1);
    let four = (design.block / DESIGN_BLOCKS) as u64;
    let part = design.block % DESIGN_BLOCKS;
    let mut rng =
        rand::rngs::StdRng::seed_from_u64(design.seed ^ four.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let width = (slots * DESIGN_BLOCKS).next_power_of_two().trailing_zeros();
    let (lo, hi) = (GRANULE.trailing_zeros(), WINDOW.trailing_zeros());
    let mut offsets = vec![0usize; slots];
    let mut bit = lo;
    while bit < hi {
        let w = width.min(hi - bit);
        // Drawn in the same order in every process, whichever part it takes.
        let mut parts: Vec<usize> = (0..DESIGN_BLOCKS).collect();
        parts.shuffle(&mut rng);
        let own: Vec<Vec<usize>> = (0..DESIGN_BLOCKS)
            .map(|_| {
                let mut v: Vec<usize> = (0..slots).collect();
                v.shuffle(&mut rng);
                v
            })
            .collect();
        let turn = Rng::gen_range(&mut rng, 0..1usize << w);
        for (o, &v) in offsets.iter_mut().zip(&own[part]) {
            *o |= ((parts[part] * slots + v + turn) % (1 << w)) << bit;
        }
        bit += w;
    }
    offsets
}

/// Offsets in the window for `slots` placements, balanced bit group by
/// bit group: the offset's bits from GRANULE's up to WINDOW's are cut
/// into groups of log2(slots) bits (rounded up to a power of two), and in
/// each group the placements take a random permutation of its values
/// (each value equally often when the group is narrower), turned by a
/// random amount. So any effect of one group's bits — where the loop sits
/// in a cache line, in a page, which KiB — is averaged exactly over every
/// block's placements, as in a Latin hypercube; what depends on several
/// groups together is sampled at random.
fn balanced_offsets(slots: usize, rng: &mut impl Rng) -> Vec<usize> {
    let slots = slots.max(1);
    let width = slots.next_power_of_two().trailing_zeros().max(1);
    let (lo, hi) = (GRANULE.trailing_zeros(), WINDOW.trailing_zeros());
    let mut offsets = vec![0usize; slots];
    let mut bit = lo;
    while bit < hi {
        let w = width.min(hi - bit);
        let mut values: Vec<usize> = (0..slots).collect();
        values.shuffle(rng);
        let turn = Rng::gen_range(rng, 0..1usize << w);
        for (o, v) in offsets.iter_mut().zip(values) {
            *o |= ((v + turn) % (1 << w)) << bit;
        }
        bit += w;
    }
    offsets
}

/// Copies of a loop P'' and its dummy F at several placements.
pub struct Placed {
    map: Mapping,
    /// (stub calling P'', stub calling F or 0) per placement.
    entries: Vec<[usize; 2]>,
    pub record: Placement,
}

impl Placed {
    /// Copies of the functions at `code` and `dummy` (when there is one)
    /// at `slots` placements: the code's from the run's `design` (drawn
    /// with `rng` when there is none), the dummy's drawn with `rng`.
    pub fn new(
        code: usize,
        dummy: Option<usize>,
        slots: usize,
        design: Option<Design>,
        rng: &mut impl Rng,
    ) -> Result<Placed, String> {
        arch::supported()?;
        let code_len = function_size(code)?;
        let dummy_len = dummy.map_or(Ok(0), function_size)?;
        let page = page_size();
        let stubs = (2 * slots * arch::STUB_BYTES).div_ceil(page) * page;
        // The window is aligned to its size, so an offset's bits are the
        // address's bits (the slack before it is never touched).
        let len = (stubs + 2 * WINDOW + code_len.max(dummy_len)).div_ceil(page) * page;
        let map = Mapping::near(code, len)?;
        let window = (map.addr + stubs).next_multiple_of(WINDOW);
        // Placement `slot` of the code (k = 0) or the dummy (k = 1) sits at
        // offsets[k][slot] in the window, keeping the function's address
        // modulo GRANULE. Drawn again while two copies would overlap.
        let fits = |sets: &[Vec<usize>; 2]| {
            let mut spans: Vec<(usize, usize)> = Vec::new();
            for (set, (start, size)) in sets
                .iter()
                .zip([(code, code_len), (dummy.unwrap_or(0), dummy_len)])
            {
                if size == 0 {
                    continue;
                }
                for &o in set {
                    let at = window + o + start % GRANULE;
                    spans.push((at, at + size));
                }
            }
            spans.sort_unstable();
            spans.windows(2).all(|w| w[0].1 <= w[1].0)
        };
        // The code's placements are the design's; only the dummy's are
        // drawn again while a copy would overlap another.
        let designed = design.map(|d| design_offsets(slots, d));
        let offsets = (0..10_000)
            .map(|_| {
                let code_at = designed
                    .clone()
                    .unwrap_or_else(|| balanced_offsets(slots, rng));
                [code_at, balanced_offsets(slots, rng)]
            })
            .find(fits)
            .ok_or("no placements without overlap left in the window")?;
        // What is written where: only the stubs and the copies, so the
        // window's other pages are never touched (a quantity's placements
        // cost a few pages of memory, not the whole window).
        let mut pieces: Vec<(usize, Vec<u8>)> = Vec::with_capacity(4 * slots);
        let mut entries = Vec::with_capacity(slots);
        let mut at = Vec::with_capacity(slots);
        // (copy, length, function copied, role): for a profiler's ledger.
        let mut copied = Vec::with_capacity(2 * slots);
        for (slot, place) in offsets[0].iter().zip(&offsets[1]).enumerate() {
            let place = [*place.0, *place.1];
            let stack = Rng::gen_range(rng, 0..STACK_SPAN / 16) * 16;
            let mut entry = [0usize; 2];
            let mut copies = [0u64; 2];
            let pairs = [Some((code, code_len)), dummy.map(|d| (d, dummy_len))];
            for (k, (&(f, n), e)) in pairs
                .iter()
                .map_while(Option::as_ref)
                .zip(entry.iter_mut())
                .enumerate()
            {
                let to = window + place[k] + f % GRANULE;
                // SAFETY: `f` is a function of this executable `n` bytes
                // long (its symbol says so), mapped readable.
                let src = unsafe { std::slice::from_raw_parts(f as *const u8, n) };
                pieces.push((to - map.addr, arch::relocate(src, f as u64, to as u64)?));
                let s = map.addr + (2 * slot + k) * arch::STUB_BYTES;
                pieces.push((s - map.addr, arch::stub(s as u64, to as u64, stack)?));
                *e = s;
                copies[k] = to as u64;
                let role = [ledger::Role::Code, ledger::Role::Dummy][k];
                copied.push((to, n, f, role));
            }
            entries.push(entry);
            at.push(PlacedAt {
                code: copies[0],
                dummy: copies[1],
                stack,
            });
        }
        map.install(&pieces)?;
        for (to, n, f, role) in copied {
            ledger::note(to, n, f, role);
        }
        Ok(Placed {
            map,
            entries,
            record: Placement {
                placed: true,
                why_not: None,
                slots,
                stretch: 1,
                window_bytes: WINDOW,
                granule_bytes: GRANULE,
                code_bytes: code_len,
                dummy_bytes: dummy_len,
                at,
            },
        })
    }

    /// Entry points of placement `slot`: the stubs calling P'' and F (0
    /// when there is no F).
    pub fn entries(&self, slot: usize) -> [usize; 2] {
        debug_assert!(self.map.len > 0);
        self.entries[slot]
    }
}

/// How the reason of a placement asked for by the user or chosen by the
/// benchmark ([`crate::harness::Placing::Fixed`]) begins: it tells such a
/// choice from a placement that failed.
pub const CHOSEN: &str = "one placement ";

/// The placements' medians of one block must spread more than this many
/// times what the observations inside each placement explain before
/// placement is said to move the result.
const PLACEMENT_EFFECT_FACTOR: f64 = 3.0;

/// Evidence (informational) of what code placement did to a result in
/// this block: the range of its placements' medians against what the
/// scatter of the observations inside each placement would give them
/// alone; a warning names a result placement moved more than that. A
/// result whose code stayed where the build put it says why.
pub fn evidence(r: &mut yamba_results::BenchResult) {
    let Some(p) = r.method.as_ref().and_then(|m| m.placement.clone()) else {
        return;
    };
    if !p.placed {
        let why = p.why_not.unwrap_or_default();
        let chosen = why.starts_with(CHOSEN);
        r.add_note_evidence(
            PLACED_CHECK,
            format!("{SLOTS} copies in a {} KiB window", WINDOW >> 10),
            format!("one placement, where the build put it: {why}"),
            chosen,
        );
        return;
    }
    let rot = p.rotation();
    let Some(spread) = placement_spread(&r.observations, rot.slots, rot.stretch) else {
        return;
    };
    let unit = r.unit.symbol();
    let (lo, hi) = (spread.lo, spread.hi);
    let share = if spread.mean != 0.0 {
        (hi - lo) / spread.mean.abs() * 100.0
    } else {
        0.0
    };
    r.add_note_evidence(
        PLACED_CHECK,
        format!(
            "{} copies at random placements in a {} KiB window, {} observation(s) in a row each",
            p.slots,
            WINDOW >> 10,
            p.stretch
        ),
        format!(
            "{} placements' medians {}–{} {unit} ({share:.1}% of the value; {:.1}× what the scatter inside a placement explains)",
            spread.placements,
            yamba_results::format_sig(lo),
            yamba_results::format_sig(hi),
            spread.factor
        ),
        true,
    );
    if spread.factor > PLACEMENT_EFFECT_FACTOR && share > 1.0 {
        r.warn(
            "code placement moves this result more than the scatter inside a placement explains (its placements' medians are in the evidence): its interval includes that",
        );
    }
}

/// A precise run's result whose blocks each ran its code at one
/// placement of its own (visits as long as a block: [`Visits`]): the
/// evidence line per-block placement cannot give — the blocks' medians,
/// whose spread holds placement's, beside how many placements they are.
/// The interval between blocks covers it; a block far from the others is
/// named by the run's check of disagreeing processes.
pub fn between_blocks_evidence(
    m: &mut yamba_results::BenchResult,
    blocks: &[&yamba_results::BenchResult],
) {
    let one_each = blocks.len() >= 2
        && blocks.iter().all(|r| {
            r.method
                .as_ref()
                .and_then(|x| x.placement.as_ref())
                .is_some_and(|p| p.placed && p.slots == 1)
        });
    let medians: Vec<f64> = blocks.iter().filter_map(|r| r.median()).collect();
    if !one_each || medians.len() != blocks.len() {
        return;
    }
    let lo = medians.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = medians.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mean = medians.iter().sum::<f64>() / medians.len() as f64;
    let share = if mean != 0.0 {
        (hi - lo) / mean.abs() * 100.0
    } else {
        0.0
    };
    let unit = m.unit.symbol();
    m.add_note_evidence(
        PLACED_CHECK,
        format!(
            "{} processes, each at a placement of its own in a {} KiB window, the run's blocks at complementary placements",
            blocks.len(),
            WINDOW >> 10
        ),
        format!(
            "{} processes' medians {}–{} {unit} ({share:.1}% of the value)",
            blocks.len(),
            yamba_results::format_sig(lo),
            yamba_results::format_sig(hi)
        ),
        true,
    );
}

/// The range of a block's placement medians and how many times their
/// standard deviation exceeds what the observations' scatter inside each
/// placement gives a median of that many (1.2533 σ/√n, σ from the MAD).
pub struct Spread {
    pub placements: usize,
    pub lo: f64,
    pub hi: f64,
    /// The mean of the placements' medians: the block's value.
    pub mean: f64,
    pub factor: f64,
}

/// [`Spread`] of observations taken at `slots` placements in turn,
/// `stretch` at a time; None with fewer than two placements measured.
pub fn placement_spread(obs: &[f64], slots: usize, stretch: usize) -> Option<Spread> {
    let mut groups: Vec<Vec<f64>> = vec![Vec::new(); slots.max(1)];
    for (i, &x) in obs.iter().enumerate() {
        groups[(i / stretch.max(1)) % slots.max(1)].push(x);
    }
    groups.retain(|g| !g.is_empty());
    if groups.len() < 2 {
        return None;
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        yamba_stats::percentile_sorted(v, 50.0)
    };
    let mut medians = Vec::new();
    let mut se2 = 0.0;
    for g in &mut groups {
        let m = median(g);
        let mut dev: Vec<f64> = g.iter().map(|x| (x - m).abs()).collect();
        let sigma = 1.4826 * median(&mut dev);
        se2 += (1.2533 * sigma).powi(2) / g.len() as f64;
        medians.push(m);
    }
    let k = medians.len() as f64;
    let mean = medians.iter().sum::<f64>() / k;
    let sd = (medians.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (k - 1.0)).sqrt();
    let expected = (se2 / k).sqrt();
    let lo = medians.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = medians.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let factor = if expected > 0.0 {
        sd / expected
    } else if sd > 0.0 {
        f64::INFINITY
    } else {
        0.0
    };
    Some(Spread {
        placements: medians.len(),
        lo,
        hi,
        mean,
        factor,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--fixed-placement`'s reason reads as a choice, not a failure.
    #[test]
    fn the_asked_for_placement_reads_as_chosen() {
        let crate::harness::Placing::Fixed(why) = crate::harness::Placing::ASKED else {
            panic!("ASKED is not fixed");
        };
        assert!(why.starts_with(CHOSEN), "{why}");
    }

    /// The copies land where the record says, byte for byte the
    /// function's (it has no relative reference to re-aim), int3 beside
    /// them, and only the pages holding stubs and copies are ever made
    /// resident: a few per placement, not the window's 256.
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    #[test]
    fn only_the_copies_pages_are_written() {
        use rand::SeedableRng;
        #[inline(never)]
        extern "C" fn body(x: u64) -> u64 {
            std::hint::black_box(x).wrapping_mul(3)
        }
        let code = body as extern "C" fn(u64) -> u64 as usize;
        let len = function_size(code).expect("the test binary's symbol table");
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let p = Placed::new(code, None, SLOTS, None, &mut rng).unwrap();
        // SAFETY: `code` is a function `len` bytes long, mapped readable.
        let original = unsafe { std::slice::from_raw_parts(code as *const u8, len) };
        let page = page_size();
        for at in &p.record.at {
            // SAFETY: the copy and the byte after it lie inside the placed
            // mapping (the window is followed by a function's length),
            // readable.
            let copy = unsafe { std::slice::from_raw_parts(at.code as *const u8, len + 1) };
            assert_eq!(&copy[..len], original);
            // Beside a copy, int3: a stray jump traps. (Unless another copy
            // starts right after, or the copy ends its page.)
            let end = at.code + len as u64;
            if !end.is_multiple_of(page as u64) && !p.record.at.iter().any(|o| o.code == end) {
                assert_eq!(copy[len], 0xcc);
            }
        }
        let pages = p.map.len / page;
        let mut resident = vec![0u8; pages];
        // SAFETY: the mapping is ours, page-aligned, `len` bytes; `resident`
        // holds one byte per page.
        let r = unsafe {
            libc::mincore(
                p.map.addr as *mut libc::c_void,
                p.map.len,
                resident.as_mut_ptr(),
            )
        };
        assert_eq!(r, 0);
        let touched = resident.iter().filter(|&&b| b & 1 == 1).count();
        let stub_pages = (2 * SLOTS * arch::STUB_BYTES).div_ceil(page);
        assert!(
            touched <= stub_pages + 2 * SLOTS && touched < pages / 2,
            "{touched} of {pages} pages resident"
        );
    }

    /// A block visits each placement for VISIT_NS or more, and as many
    /// placements (a power of two) as its minimum sampling time holds
    /// visits — one at least, SLOTS at most, never more than its budget.
    #[test]
    fn visits_are_long_and_fill_the_minimum_sampling_time() {
        let ms = Duration::from_millis;
        // A precise block's 20 ms, a 20 µs observation: one place, 1000
        // in a row.
        assert_eq!(
            Visits::plan(ms(20), ms(100), 20e3, true),
            Visits {
                slots: 1,
                stretch: 1000
            }
        );
        // 30 ms: still one place, visited once for all of it (not for
        // 20 ms and again for 10, each visit starting slow).
        assert_eq!(
            Visits::plan(ms(30), ms(100), 20e3, true),
            Visits {
                slots: 1,
                stretch: 1500
            }
        );
        // 100 ms holds 5 visits: the power of two below, 4, of 25 ms.
        assert_eq!(
            Visits::plan(ms(100), ms(150), 20e3, true),
            Visits {
                slots: 4,
                stretch: 1250
            }
        );
        // A long minimum: at most SLOTS.
        assert_eq!(Visits::plan(ms(2000), ms(4000), 20e3, true).slots, SLOTS);
        // An observation longer than a visit: one a visit, one place.
        assert_eq!(
            Visits::plan(ms(20), ms(100), 30e6, true),
            Visits {
                slots: 1,
                stretch: 1
            }
        );
        // A budget below the minimum sampling time bounds the visits.
        assert_eq!(Visits::plan(ms(1000), ms(160), 20e3, true).slots, 8);
        // A block that is its result's whole (a quick pass, a result
        // measured in one process): visits of 10 ms at least, so 30 ms
        // holds 2 placements of 15 ms, 45 ms 4 of 11.25 ms.
        assert_eq!(
            Visits::plan(ms(30), ms(150), 20e3, false),
            Visits {
                slots: 2,
                stretch: 750
            }
        );
        assert_eq!(
            Visits::plan(ms(45), ms(150), 20e3, false),
            Visits {
                slots: 4,
                stretch: 563
            }
        );
    }

    /// A quick pass of two clock reads (~100 ns a timing): its two visits
    /// of 15 ms would be 150 000 observations each; the block's maximum of
    /// 100 000 holds both when each is 50 000.
    #[test]
    fn every_placement_is_visited_within_the_most_observations() {
        let ms = Duration::from_millis;
        let v = Visits::plan(ms(30), ms(150), 100.0, false);
        assert_eq!(
            v,
            Visits {
                slots: 2,
                stretch: 150_000
            }
        );
        assert_eq!(
            v.within(100_000),
            Visits {
                slots: 2,
                stretch: 50_000
            }
        );
        assert_eq!(v.within(1_000_000), v);
        assert_eq!(
            Visits {
                slots: 4,
                stretch: 9
            }
            .within(2)
            .stretch,
            1
        );
    }

    /// The value of address bits `bit..bit + w` of `offset`.
    fn bits(offset: usize, bit: u32, w: u32) -> usize {
        (offset >> bit) & ((1 << w) - 1)
    }

    /// Four blocks of a run at one placement each take the four 16-byte
    /// positions of a cache line and the four KiBs modulo 4, one each,
    /// whatever the seed; every process of the run draws its block's alike
    /// (the seed and the block decide), and blocks 4–7 take a design of
    /// their own.
    #[test]
    fn blocks_of_a_run_take_complementary_placements() {
        for seed in 0..200u64 {
            let at: Vec<usize> = (0..4)
                .map(|block| design_offsets(1, Design { seed, block })[0])
                .collect();
            for (bit, what) in [(4, "line position"), (10, "KiB modulo 4")] {
                let mut v: Vec<usize> = at.iter().map(|&o| bits(o, bit, 2)).collect();
                v.sort_unstable();
                assert_eq!(v, [0, 1, 2, 3], "{what}, seed {seed}: {at:?}");
            }
            assert!(at.iter().all(|&o| o % GRANULE == 0 && o < WINDOW));
            assert_eq!(design_offsets(1, Design { seed, block: 2 })[0], at[2]);
        }
        let next: Vec<usize> = (0..200u64)
            .map(|seed| design_offsets(1, Design { seed, block: 4 })[0])
            .collect();
        let first: Vec<usize> = (0..200u64)
            .map(|seed| design_offsets(1, Design { seed, block: 0 })[0])
            .collect();
        assert_ne!(next, first);
    }

    /// Two placements a block: within each block the two differ in the
    /// low bit of every 3-bit group (as a block's own placements are
    /// balanced), and over four blocks the eight take every value of
    /// every group once.
    #[test]
    fn a_designs_blocks_and_placements_are_balanced_together() {
        for seed in 0..100u64 {
            let all: Vec<Vec<usize>> = (0..4)
                .map(|block| design_offsets(2, Design { seed, block }))
                .collect();
            for bit in (4..19).step_by(3) {
                for b in &all {
                    assert_ne!(bits(b[0], bit, 1), bits(b[1], bit, 1), "{all:?}");
                }
                let mut v: Vec<usize> = all.iter().flatten().map(|&o| bits(o, bit, 3)).collect();
                v.sort_unstable();
                assert_eq!(v, (0..8).collect::<Vec<_>>(), "bits {bit}.., seed {seed}");
            }
        }
    }

    /// 4 placements take the 4 16-byte positions of a cache line, one
    /// each, in every draw, and the 4 KiBs modulo 4 too (each group of
    /// two address bits is balanced).
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    #[test]
    fn four_placements_take_the_four_positions_of_a_line() {
        use rand::SeedableRng;
        #[inline(never)]
        extern "C" fn body(x: u64) -> u64 {
            std::hint::black_box(x).wrapping_mul(5)
        }
        let code = body as extern "C" fn(u64) -> u64 as usize;
        for seed in 0..20 {
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
            let p = Placed::new(code, None, 4, None, &mut rng).unwrap();
            let mut lines: Vec<u64> = p.record.at.iter().map(|a| a.code % 64 / 16).collect();
            lines.sort();
            assert_eq!(lines, [0, 1, 2, 3], "seed {seed}");
            let mut kib: Vec<u64> = p.record.at.iter().map(|a| a.code >> 10 & 3).collect();
            kib.sort();
            assert_eq!(kib, [0, 1, 2, 3], "seed {seed}");
            assert!(p.record.at.iter().all(|a| a.code % 16 == code as u64 % 16));
        }
    }

    /// Every group of address bits takes each of its values equally
    /// often: 64 placements take the 64 16-byte positions of a KiB (bits
    /// 4–9) and each of the 16 values of bits 16–19 four times; one
    /// placement lands anywhere in the window.
    #[test]
    fn offsets_are_balanced_bit_group_by_bit_group() {
        use rand::SeedableRng;
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        for _ in 0..20 {
            let o = balanced_offsets(64, &mut rng);
            let mut kib: Vec<usize> = o.iter().map(|x| x >> 4 & 63).collect();
            kib.sort();
            assert_eq!(kib, (0..64).collect::<Vec<_>>());
            let mut top = [0; 16];
            for x in &o {
                top[x >> 16 & 15] += 1;
            }
            assert_eq!(top, [4; 16]);
            assert!(o.iter().all(|x| x % GRANULE == 0 && *x < WINDOW));
        }
        let one: Vec<usize> = (0..200).map(|_| balanced_offsets(1, &mut rng)[0]).collect();
        assert!(one.iter().any(|x| *x >= WINDOW / 2) && one.iter().any(|x| *x < WINDOW / 2));
        assert!(one.iter().any(|x| x >> 4 & 1 == 1) && one.iter().any(|x| x >> 4 & 1 == 0));
    }

    #[test]
    fn a_placement_effect_is_told_from_scatter() {
        // 4 placements, 2 observations in a row each; one placement 30%
        // dearer, the scatter inside each ±1%.
        let mut obs = Vec::new();
        for turn in 0..40 {
            let slot = turn % 4;
            let base = if slot == 3 { 130.0 } else { 100.0 };
            obs.push(base * 0.99);
            obs.push(base * 1.01);
        }
        let s = placement_spread(&obs, 4, 2).unwrap();
        assert_eq!((s.lo, s.hi), (100.0, 130.0));
        assert!(s.factor > 20.0, "{}", s.factor);
        // The same scatter and no placement effect: about 1×.
        let flat: Vec<f64> = (0..80)
            .map(|i| if i % 2 == 0 { 99.0 } else { 101.0 })
            .collect();
        let s = placement_spread(&flat, 4, 2).unwrap();
        assert!(s.factor < 1.0, "{}", s.factor);
        assert!(placement_spread(&flat[..2], 4, 2).is_none());
    }
}
