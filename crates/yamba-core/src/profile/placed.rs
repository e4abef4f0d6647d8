//! Samples in placed copies of measured code, named as the function each
//! copies and as the measured code's copy or its dummy's.
//!
//! Code placement (docs/certainty.md) runs a measured loop from copies in
//! an anonymous mapping, which no file names: a profile of a placed
//! syscall loop showed 13–25% of its samples as `0x… [unmapped]`. The
//! profiled child writes where and when it put each copy in a
//! [`Ledger`](crate::placement::ledger::Ledger); a user sample inside a
//! copy is moved to the same offset of the function the copy was made
//! from — the same instructions, byte for byte but for re-aimed relative
//! references — so it is named as that function and a system call's late
//! return in it is found (`syscall_return`); it keeps whether the copy was
//! of the measured code or of its dummy F, which are instances of one
//! generic loop and share a name. Copies reuse addresses from
//! block to block, so a sample belongs to the copy made last at its
//! address before the sample's time, not to whichever copy was made there
//! last. The stubs that call a copy are not copies and stay unnamed (a
//! call and a return per measured loop). Addresses are read as one space:
//! two processes of the profiled tree placing copies at one address at
//! once would be confused (a profiled benchmark measures in one process).

use super::Sample;
use crate::placement::ledger::{Entry, Recorded, Role};
use std::collections::BTreeMap;

/// Moves each user sample inside a placed copy to the address it copies
/// (and marks it); returns how many were moved. `ledger`: what the
/// child's ledger recorded; samples carry their times (CLOCK_MONOTONIC).
/// Samples from the time the ledger was full on stay where they were: an
/// address may hold a copy it does not know then.
pub fn name_placed_copies(samples: &mut [Sample], ledger: &Recorded) -> usize {
    if ledger.entries.is_empty() {
        return 0;
    }
    let until = ledger.full_at_ns.unwrap_or(u64::MAX);
    let mut copies: Vec<&Entry> = ledger.entries.iter().collect();
    copies.sort_by_key(|e| e.at_ns);
    let mut order: Vec<usize> = (0..samples.len())
        .filter(|&i| !samples[i].kernel && samples[i].time_ns > 0 && samples[i].time_ns < until)
        .collect();
    order.sort_by_key(|&i| samples[i].time_ns);
    // The copies in place at the time swept to: start → (end, source, role).
    let mut live: BTreeMap<u64, (u64, u64, Role)> = BTreeMap::new();
    let mut next = copies.iter().peekable();
    let mut moved = 0;
    for i in order {
        let s = &mut samples[i];
        while let Some(e) = next.next_if(|e| e.at_ns <= s.time_ns) {
            put(&mut live, e);
        }
        if let Some((&start, &(end, source, role))) = live.range(..=s.ip).next_back() {
            if s.ip < end {
                s.ip = source + (s.ip - start);
                s.placed = Some(role);
                moved += 1;
            }
        }
    }
    moved
}

/// Puts a copy in place: copies it overlaps are gone (their mapping was
/// unmapped before this one took the range).
fn put(live: &mut BTreeMap<u64, (u64, u64, Role)>, e: &Entry) {
    let end = e.start + e.len;
    let gone: Vec<u64> = live
        .range(..end)
        .rev()
        .take_while(|(_, &(old_end, _, _))| old_end > e.start)
        .map(|(&start, _)| start)
        .collect();
    for start in gone {
        live.remove(&start);
    }
    live.insert(e.start, (end, e.source, e.role()));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(at_ns: u64, start: u64, len: u64, source: u64) -> Entry {
        Entry {
            at_ns,
            start,
            len,
            source,
            dummy: 0,
        }
    }

    fn ledger(entries: &[Entry]) -> Recorded {
        Recorded {
            entries: entries.to_vec(),
            ..Recorded::default()
        }
    }

    /// A copy's address names the function copied there last before the
    /// sample: a later copy at the same address (the next block) takes it
    /// from then on, and an overlapping one removes it; samples before
    /// any copy, outside every copy, in the kernel or without a time stay.
    #[test]
    fn a_sample_belongs_to_the_copy_in_place_at_its_time() {
        let entries = [
            entry(10, 0x1000, 0x40, 0xa000), // block 1: f at 0x1000
            Entry {
                dummy: 1,
                ..entry(10, 0x2000, 0x40, 0xb000) // block 1: its dummy
            },
            entry(20, 0x1000, 0x40, 0xc000), // block 2: g at the same address
            entry(30, 0x1ff0, 0x40, 0xd000), // block 3: h over the dummy's
        ];
        let mut s = vec![
            Sample::at_time(0x1008, false, 5),  // before any copy
            Sample::at_time(0x1008, false, 15), // f + 8
            Sample::at_time(0x2010, false, 15), // dummy + 0x10
            Sample::at_time(0x1008, false, 25), // g + 8
            Sample::at_time(0x1040, false, 25), // just past the copy
            Sample::at_time(0x2010, false, 35), // h + 0x20: the dummy is gone
            Sample::at_time(0x1008, true, 25),  // kernel
            Sample::at_time(0x1008, false, 0),  // no time
        ];
        // Samples come from several CPUs' rings: not in time order.
        s.swap(1, 3);
        let unchanged = s.clone();
        assert_eq!(name_placed_copies(&mut s, &ledger(&entries)), 4);
        let got: Vec<(u64, Option<Role>)> = s.iter().map(|x| (x.ip, x.placed)).collect();
        let (code, dummy) = (Some(Role::Code), Some(Role::Dummy));
        assert_eq!(
            got,
            [
                (0x1008, None),
                (0xc008, code),
                (0xb010, dummy),
                (0xa008, code),
                (0x1040, None),
                (0xd020, code),
                (0x1008, None),
                (0x1008, None),
            ]
        );
        assert_eq!(name_placed_copies(&mut s, &ledger(&[])), 0);
        // The ledger full from time 20: a copy made then may be unknown
        // (g's, had it not been written), so samples from then on stay.
        let mut s = unchanged;
        let full = Recorded {
            full_at_ns: Some(20),
            ..ledger(&entries)
        };
        assert_eq!(name_placed_copies(&mut s, &full), 2);
        let named: Vec<bool> = s.iter().map(|x| x.placed.is_some()).collect();
        assert_eq!(
            named,
            [false, false, true, true, false, false, false, false]
        );
    }

    /// A sample in a real placed copy of a function with an inline system
    /// call, just after that call, is named as the function and credited
    /// to the kernel's return once moved: the copy's bytes are the
    /// function's, and the function's lie in this executable's file.
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    #[test]
    fn a_late_return_in_a_placed_copy_is_the_kernels() {
        use super::super::{credit_syscall_returns, parse_maps, Samples, SYSCALL_RETURN};
        use crate::placement::Placed;
        use rand::SeedableRng;
        #[inline(never)]
        extern "C" fn yamba_placed_getppid(n: u64) -> u64 {
            let mut last = 0u64;
            for _ in 0..std::hint::black_box(n) {
                // SAFETY: getppid takes no arguments and touches no memory.
                unsafe {
                    std::arch::asm!("syscall", inlateout("rax") libc::SYS_getppid as u64 => last,
                        out("rcx") _, out("r11") _, options(nostack))
                };
            }
            last
        }
        let f = yamba_placed_getppid as extern "C" fn(u64) -> u64 as usize;
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        let placed = Placed::new(f, None, 1, None, &mut rng).unwrap();
        let copy = placed.record.at[0].code;
        // The copy's entry, as the placement writes it to a ledger (the
        // ledger itself: placement::ledger's test).
        let entries = [entry(1, copy, placed.record.code_bytes as u64, f as u64)];
        // SAFETY: the function's bytes, mapped readable.
        let body = unsafe { std::slice::from_raw_parts(f as *const u8, placed.record.code_bytes) };
        let after = body
            .windows(2)
            .position(|w| w == [0x0f, 0x05])
            .expect("the function's syscall instruction") as u64
            + 2;
        let mut samples = Samples {
            samples: vec![
                Sample::at_time(copy + after, false, 2),
                Sample::at_time(copy, false, 2),
            ],
            period_ns: 1,
            lost: 0,
            throttled: 0,
            kernel: Ok(()),
            maps: parse_maps(&std::fs::read_to_string("/proc/self/maps").unwrap()),
            copies_unrecorded: 0,
            status: 0,
            child_cpu_ns: 0,
        };
        assert_eq!(
            name_placed_copies(&mut samples.samples, &ledger(&entries)),
            2
        );
        credit_syscall_returns(&mut samples);
        let [ret, entry_point] = [samples.samples[0], samples.samples[1]];
        assert!(
            ret.at_syscall_return && ret.kernel && ret.placed.is_some(),
            "{ret:?}"
        );
        assert!(!entry_point.kernel && entry_point.ip == f as u64);
        let mut sym = super::super::Symbolizer::new(samples.maps.clone());
        assert_eq!(sym.resolve(ret), SYSCALL_RETURN);
        let name = sym.resolve(entry_point);
        assert!(name.contains("yamba_placed_getppid"), "{name}");
        assert!(
            name.ends_with(super::super::symbols::COPY_OF_CODE),
            "{name}"
        );
    }
}
