//! Kernel time that a timer sample shows at a user address.
//!
//! The `cpu-clock` sampler is a timer interrupt. When it falls due while
//! the kernel has interrupts masked — as it has on the way back from a
//! system call — it fires only once they are unmasked, and for the exit
//! path that is at the first user instruction, just after the `syscall`.
//! The sample then names the caller (libc's `read`, say) for time the
//! kernel spent. How much depends on the machine: on an AMD EPYC (Zen 3)
//! Firecracker guest with the SRSO "Safe RET" mitigation, 54% of a
//! 1-byte `read(2)` loop's samples lay on the one instruction after its
//! `syscall`, by `perf` as by yamba, for a loop whose user side is a few
//! instructions. Such a sample is credited to the kernel here, by name,
//! so that the kernel's share is the kernel's and the caller's is its own.
//!
//! Limits: the instruction is read from the mapped file, so code without a
//! file (the vDSO, code generated at run time) keeps its samples as
//! sampled — yamba's placed loops are read at the function they copy
//! (`placed`, which runs first); on x86-64 the two bytes `0f 05` can
//! end a longer instruction too (an immediate), which would credit that
//! address's samples to the kernel — rare, and named, never silent; a
//! genuine sample on the instruction after a `syscall` is one cycle in
//! hundreds of the call, so crediting it to the kernel moves little.

use super::{Mapping, Samples};
use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

/// The name of a sample credited to the kernel's return from a system call.
pub const SYSCALL_RETURN: &str =
    "(returning from a system call, interrupts masked: sampled late, at the caller) [kernel]";

/// The system call instruction, as it lies in the file, on this machine's
/// architecture; empty where calls go through the vDSO (i686), which has
/// no file to read.
#[cfg(target_arch = "x86_64")]
const SYSCALL_INSN: &[u8] = &[0x0f, 0x05]; // syscall
#[cfg(target_arch = "aarch64")]
const SYSCALL_INSN: &[u8] = &[0x01, 0x00, 0x00, 0xd4]; // svc #0
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const SYSCALL_INSN: &[u8] = &[];

/// Credits to the kernel every user sample taken on the instruction just
/// after a system call instruction (module doc), reading each distinct
/// address's preceding bytes from its mapped file once.
pub fn credit_syscall_returns(samples: &mut Samples) {
    credit_after(samples, SYSCALL_INSN);
}

fn credit_after(samples: &mut Samples, insn: &[u8]) {
    if insn.is_empty() {
        return;
    }
    let mut files: HashMap<PathBuf, Option<File>> = HashMap::new();
    let mut after: HashMap<u64, bool> = HashMap::new();
    for s in samples.samples.iter_mut().filter(|s| !s.kernel) {
        let hit = *after
            .entry(s.ip)
            .or_insert_with(|| follows(&samples.maps, &mut files, s.ip, insn));
        if hit {
            s.kernel = true;
            s.at_syscall_return = true;
        }
    }
}

/// Whether the bytes just before `ip`, in the file mapped there, are `insn`.
fn follows(
    maps: &[Mapping],
    files: &mut HashMap<PathBuf, Option<File>>,
    ip: u64,
    insn: &[u8],
) -> bool {
    let Some(m) = Mapping::holding(maps, ip) else {
        return false;
    };
    // The instruction must lie in the same mapping, in a file.
    let len = insn.len() as u64;
    if !m.is_file() || ip - m.start < len {
        return false;
    }
    let Some(file) = files
        .entry(m.path.clone())
        .or_insert_with(|| File::open(&m.path).ok())
    else {
        return false;
    };
    let mut bytes = vec![0u8; insn.len()];
    file.read_exact_at(&mut bytes, m.file_offset(ip) - len)
        .is_ok()
        && bytes == insn
}

#[cfg(test)]
mod tests {
    use super::super::Sample;
    use super::*;

    fn samples(maps: Vec<Mapping>, at: &[(u64, bool)]) -> Samples {
        Samples {
            samples: at.iter().map(|&(ip, k)| Sample::at(ip, k)).collect(),
            period_ns: 100_000,
            lost: 0,
            throttled: 0,
            kernel: Ok(()),
            maps,
            copies_unrecorded: 0,
            status: 0,
            child_cpu_ns: 0,
        }
    }

    /// A file with a system call instruction at a known offset, mapped at
    /// a known address: the sample just after it is the kernel's, by name;
    /// samples elsewhere, before it, in the kernel, at the mapping's first
    /// bytes or in no mapping stay as they were.
    #[test]
    fn a_sample_just_after_a_system_call_is_the_kernels() {
        let insn: &[u8] = &[0x0f, 0x05];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("code");
        let mut code = vec![0x90u8; 0x3000];
        code[0x2010..0x2012].copy_from_slice(insn);
        std::fs::write(&path, &code).unwrap();
        // Mapped from file offset 0x2000 at 0x7000.
        let maps = vec![Mapping {
            start: 0x7000,
            end: 0x8000,
            offset: 0x2000,
            path,
        }];
        let after = 0x7012;
        let mut s = samples(
            maps.clone(),
            &[
                (after, false),
                (0x7010, false),
                (0x7020, false),
                (after, true),
                (0x7001, false),
                (0x9000, false),
                (after, false),
            ],
        );
        credit_after(&mut s, insn);
        let credited: Vec<bool> = s.samples.iter().map(|x| x.at_syscall_return).collect();
        assert_eq!(
            credited,
            [true, false, false, false, false, false, true],
            "{s:?}"
        );
        assert!(s.samples[0].kernel && s.samples[6].kernel);
        assert!(!s.samples[1].kernel && !s.samples[2].kernel);
        assert_eq!(s.samples[0].ip, after, "the user address is kept");
        // Named as the kernel's return, not as the caller.
        #[cfg(target_os = "linux")]
        assert_eq!(
            super::super::Symbolizer::new(maps).resolve(s.samples[0]),
            SYSCALL_RETURN
        );
        // No instruction to look for: nothing credited.
        let mut s = samples(s.maps.clone(), &[(after, false)]);
        credit_after(&mut s, &[]);
        assert!(!s.samples[0].kernel);
    }

    /// This machine's own system call instruction, where there is one to
    /// look for, is found after a real call in libc: the address after the
    /// `syscall` in `syscall(2)`'s own code is found by scanning it.
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    #[test]
    fn libcs_system_call_wrapper_returns_to_a_system_call_instruction() {
        let maps = super::super::parse_maps(&std::fs::read_to_string("/proc/self/maps").unwrap());
        let f = libc::syscall as *const () as u64;
        // The wrapper is short: its `syscall` lies in its first 64 bytes.
        let found = (f + 2..f + 64).find(|&ip| {
            let mut files = HashMap::new();
            follows(&maps, &mut files, ip, SYSCALL_INSN)
        });
        let ip = found.expect("no syscall instruction in libc's syscall()");
        let mut s = samples(maps, &[(ip, false), (f, false)]);
        credit_syscall_returns(&mut s);
        assert!(s.samples[0].at_syscall_return && !s.samples[1].at_syscall_return);
    }
}
