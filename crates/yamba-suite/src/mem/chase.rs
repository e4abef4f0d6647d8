//! The dependent pointer chase: P = one load whose address is the value of
//! the previous load, so loads cannot overlap and the time per P is the
//! load-to-use latency. The chain visits every element of the working set
//! in one cycle whose order (random, page by page, sequential) decides
//! what prefetchers and the TLB can do for it.

use super::adapter::{Anon, Pages};
use rand::seq::SliceRandom;
use yamba_core::harness::{measure_loop, Measured, Plan};
use yamba_core::Clock;

/// Order in which the chain visits the elements of the working set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// One random cycle over all elements: no prefetcher can follow it,
    /// and with base pages most loads also miss the TLB beyond its reach.
    Random,
    /// Pages in random order, each page's elements in random order before
    /// the next page: cache misses without most TLB misses.
    Page,
    /// Ascending addresses: what prefetchers do best (for comparison).
    Sequential,
}

impl Order {
    pub fn parse(s: &str) -> Result<Order, String> {
        match s {
            "random" => Ok(Order::Random),
            "page" => Ok(Order::Page),
            "sequential" => Ok(Order::Sequential),
            _ => Err(format!(
                "bad order '{s}': expected random, page or sequential"
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Order::Random => "random",
            Order::Page => "page",
            Order::Sequential => "sequential",
        }
    }
}

pub use crate::shared::{rng, Rng};

/// The visiting order of `n` elements, `per_page` of them to a page.
pub fn visit_order(n: usize, per_page: usize, order: Order, rng: &mut Rng) -> Vec<u32> {
    let mut v: Vec<u32> = (0..n as u32).collect();
    match order {
        Order::Sequential => {}
        Order::Random => v.shuffle(rng),
        Order::Page => {
            let per_page = per_page.max(1);
            let mut pages: Vec<usize> = (0..n.div_ceil(per_page)).collect();
            pages.shuffle(rng);
            v.clear();
            for p in pages {
                let start = v.len();
                v.extend((p * per_page..((p + 1) * per_page).min(n)).map(|i| i as u32));
                v[start..].shuffle(rng);
            }
        }
    }
    v
}

/// A working set laid out as one pointer cycle.
pub struct Chain {
    mem: Anon,
    /// Elements in the cycle.
    pub elements: usize,
    /// Bytes between consecutive elements in memory.
    pub stride: usize,
    /// Bytes the chain spans (`elements × stride`).
    pub bytes: usize,
    first: usize,
}

impl Chain {
    /// Builds a cycle over `bytes` of memory, one element every `stride`
    /// bytes, visited in `order`.
    pub fn new(
        bytes: usize,
        stride: usize,
        order: Order,
        pages: Pages,
        seed: u64,
    ) -> Result<Chain, String> {
        Self::with_starts(bytes, stride, order, pages, seed, 1).map(|(c, _)| c)
    }

    /// Like [`Chain::new`], and also `k` addresses spaced evenly along the
    /// cycle (the first is the chain's start): k chases started there
    /// visit disjoint stretches of the working set, independently.
    pub fn with_starts(
        bytes: usize,
        stride: usize,
        order: Order,
        pages: Pages,
        seed: u64,
        k: usize,
    ) -> Result<(Chain, Vec<usize>), String> {
        if stride < 8 || stride & 7 != 0 {
            return Err(format!(
                "bad stride {stride}: must be a multiple of 8 bytes"
            ));
        }
        let elements = (bytes / stride).max(2);
        let mut mem = Anon::new(elements * stride, pages, true)?;
        let ps = super::adapter::page_size();
        let per_page = (ps / stride).max(1);
        let ord = visit_order(elements, per_page, order, &mut rng(seed));
        let base = mem.as_ptr() as usize;
        let words = mem.words();
        let w = stride / 8;
        for i in 0..elements {
            let from = ord[i] as usize * w;
            let to = ord[(i + 1) % elements] as usize;
            words[from] = (base + to * stride) as u64;
        }
        let first = base + ord[0] as usize * stride;
        let k = k.clamp(1, elements);
        let starts = (0..k)
            .map(|j| base + ord[j * elements / k] as usize * stride)
            .collect();
        Ok((
            Chain {
                mem,
                elements,
                stride,
                bytes: elements * stride,
                first,
            },
            starts,
        ))
    }

    /// A cycle through `offsets` (bytes into `mem`, 8-byte aligned, each
    /// once) in the order given: for chases whose layout is the point (one
    /// line per page, pairs of words `stride` apart).
    pub fn from_offsets(mem: Anon, offsets: &[usize]) -> Result<Chain, String> {
        let bytes = mem.len();
        let mut c = Chain {
            mem,
            elements: 0,
            stride: 8,
            bytes,
            first: 0,
        };
        c.relink(offsets)?;
        Ok(c)
    }

    /// Makes the chain a cycle through other `offsets` of the same memory
    /// (as [`Chain::from_offsets`]): chases that must differ in their
    /// layout alone, not in their physical pages, share one mapping.
    pub fn relink(&mut self, offsets: &[usize]) -> Result<(), String> {
        let len = self.mem.len();
        if offsets.len() < 2 || offsets.iter().any(|&o| o % 8 != 0 || o + 8 > len) {
            return Err("chain offsets must be ≥ 2, 8-byte aligned, inside the mapping".into());
        }
        let base = self.mem.as_ptr() as usize;
        let words = self.mem.words();
        for (i, &o) in offsets.iter().enumerate() {
            words[o / 8] = (base + offsets[(i + 1) % offsets.len()]) as u64;
        }
        self.elements = offsets.len();
        self.first = base + offsets[0];
        Ok(())
    }

    /// Follows the chain `n` steps from its start and returns where it
    /// ended: n ≡ 0 (mod elements) must end at the start.
    pub fn follow(&self, n: usize) -> usize {
        let mut p = self.first;
        for _ in 0..n {
            // SAFETY: every element holds the address of another element.
            p = unsafe { std::ptr::read_volatile(p as *const usize) };
        }
        p
    }

    pub fn start(&self) -> usize {
        self.first
    }

    pub fn memory(&self) -> &Anon {
        &self.mem
    }

    /// ns per load, by the loop method: P = one step of the chase, F = the
    /// empty loop. The harness unrolls P (m consecutive dependent loads)
    /// and subtracts M(F).
    pub fn measure(&self, clock: &Clock, plan: &Plan) -> Measured {
        let mut p = self.first;
        let m = measure_loop(
            clock,
            plan,
            || {
                // SAFETY: every element holds the address of another element.
                p = unsafe { std::ptr::read_volatile(p as *const usize) };
            },
            || {},
        );
        std::hint::black_box(p);
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_is_one_cycle_over_every_element() {
        for order in [Order::Random, Order::Page, Order::Sequential] {
            let c = Chain::new(64 << 10, 64, order, Pages::Base, 7).unwrap();
            assert_eq!(c.elements, 1024);
            // Returns to the start after exactly `elements` steps, not before.
            let mut p = c.start();
            let mut seen = std::collections::HashSet::new();
            for _ in 0..c.elements {
                assert!(seen.insert(p), "{order:?}: revisited {p:#x} early");
                // SAFETY: p is an element of the chain.
                p = unsafe { std::ptr::read_volatile(p as *const usize) };
            }
            assert_eq!(p, c.start());
            assert_eq!(c.follow(c.elements * 3), c.start());
        }
    }

    #[test]
    fn page_order_finishes_a_page_before_the_next() {
        let v = visit_order(64 * 8, 64, Order::Page, &mut rng(3));
        for chunk in v.chunks(64) {
            let page = chunk[0] / 64;
            assert!(chunk.iter().all(|&e| e / 64 == page));
        }
        let mut sorted = v.clone();
        sorted.sort();
        assert_eq!(sorted, (0..512).collect::<Vec<u32>>());
    }
}
