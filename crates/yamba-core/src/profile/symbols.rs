//! Names for sampled addresses, by blazesym: kernel addresses through
//! /proc/kallsyms (or a vmlinux image where one is found), user addresses
//! through the mapped file at the sampled file offset — its symbol table,
//! and its DWARF (embedded, or found by debug link) for inlined functions.
//! A symbol's size is respected: an address past the end of every symbol
//! is left unnamed (`file+0xoffset`) rather than credited to whichever
//! symbol happens to precede it.

use super::{Mapping, Role, Sample, SYSCALL_RETURN};
use blazesym::symbolize::source::{Elf, Kernel, Source};
use blazesym::symbolize::{Input, Sym, Symbolized};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

/// What follows the name of a sample in a placed copy of the measured
/// code, and of its dummy: the two are instances of one generic loop,
/// whose names alone would not tell them apart.
pub const COPY_OF_CODE: &str = " (placed copy: the measured code)";
pub const COPY_OF_DUMMY: &str = " (placed copy: its dummy loop F)";

/// Resolves sampled addresses to `symbol [kernel]` or `symbol [file]`.
pub struct Symbolizer {
    inner: blazesym::symbolize::Symbolizer,
    /// Why kernel addresses cannot be named, when they cannot.
    kernel: Result<(), String>,
    maps: Vec<Mapping>,
}

impl Symbolizer {
    pub fn new(maps: Vec<Mapping>) -> Symbolizer {
        let kernel = std::fs::read_to_string("/proc/kallsyms")
            .map_err(|e| format!("cannot read /proc/kallsyms: {e}"))
            .and_then(|t| kallsyms_usable(&t));
        Symbolizer {
            inner: blazesym::symbolize::Symbolizer::builder()
                .enable_inlined_fns(true)
                .enable_code_info(false)
                .enable_demangling(true)
                .build(),
            kernel,
            maps,
        }
    }

    /// Why kernel addresses cannot be named, if they cannot.
    pub fn kernel_problem(&self) -> Option<&str> {
        self.kernel.as_ref().err().map(String::as_str)
    }

    /// One sample's name.
    pub fn resolve(&mut self, s: Sample) -> String {
        self.resolve_all(&[s]).pop().unwrap_or_default()
    }

    /// Every sample's name, in order: each file is read once, each
    /// distinct address symbolized once.
    pub fn resolve_all(&mut self, samples: &[Sample]) -> Vec<String> {
        let mut names: HashMap<(bool, u64), String> = HashMap::new();
        let mut seen: HashSet<(bool, u64)> = HashSet::new();
        let mut kernel_ips: Vec<u64> = Vec::new();
        // File → its sampled offsets, and each user address's (file, offset).
        let mut by_file: HashMap<PathBuf, Vec<u64>> = HashMap::new();
        let mut where_: HashMap<u64, (PathBuf, u64)> = HashMap::new();
        for s in samples {
            if !seen.insert((s.kernel, s.ip)) {
                continue;
            }
            if s.at_syscall_return {
                names.insert((true, s.ip), SYSCALL_RETURN.to_string());
                continue;
            }
            if s.kernel {
                kernel_ips.push(s.ip);
                continue;
            }
            match Mapping::holding(&self.maps, s.ip) {
                None => {
                    names.insert((false, s.ip), format!("{:#x} [unmapped]", s.ip));
                }
                // [vdso] and the like: no file to read.
                Some(m) if !m.is_file() => {
                    names.insert((false, s.ip), m.path.display().to_string());
                }
                Some(m) => {
                    let off = m.file_offset(s.ip);
                    by_file.entry(m.path.clone()).or_default().push(off);
                    where_.insert(s.ip, (m.path.clone(), off));
                }
            }
        }
        self.name_kernel(&kernel_ips, &mut names);
        let mut by_offset: HashMap<(PathBuf, u64), String> = HashMap::new();
        for (path, mut offsets) in by_file {
            offsets.sort_unstable();
            offsets.dedup();
            let file = path
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            let found = self.symbolize_file(&path, &offsets);
            for (i, &off) in offsets.iter().enumerate() {
                let name = match found.get(i) {
                    Some(Symbolized::Sym(sym)) => format!("{} [{file}]", describe(sym)),
                    _ => format!("{file}+{off:#x}"),
                };
                by_offset.insert((path.clone(), off), name);
            }
        }
        for (ip, key) in where_ {
            if let Some(name) = by_offset.get(&key) {
                names.insert((false, ip), name.clone());
            }
        }
        samples
            .iter()
            .map(|s| {
                let name = names
                    .get(&(s.kernel, s.ip))
                    .cloned()
                    .unwrap_or_else(|| format!("{:#x}", s.ip));
                match s.placed {
                    _ if s.kernel => name,
                    Some(Role::Code) => name + COPY_OF_CODE,
                    Some(Role::Dummy) => name + COPY_OF_DUMMY,
                    None => name,
                }
            })
            .collect()
    }

    /// Names `offsets` of the file: with its debug information where that
    /// can be read, else (a debug link to a file that is not there, a
    /// section blazesym cannot read) with its ELF symbols alone.
    fn symbolize_file(&self, path: &std::path::Path, offsets: &[u64]) -> Vec<Symbolized<'_>> {
        let with_debug = Source::Elf(Elf::new(path));
        let mut found = self
            .inner
            .symbolize(&with_debug, Input::FileOffset(offsets))
            .unwrap_or_default();
        let unnamed: Vec<usize> = (0..offsets.len())
            .filter(|&i| !matches!(found.get(i), Some(Symbolized::Sym(_))))
            .collect();
        if unnamed.is_empty() {
            return found;
        }
        let mut plain = Elf::new(path);
        plain.debug_syms = false;
        let retry: Vec<u64> = unnamed.iter().map(|&i| offsets[i]).collect();
        let again = self
            .inner
            .symbolize(&Source::Elf(plain), Input::FileOffset(&retry))
            .unwrap_or_default();
        found.resize_with(offsets.len(), || {
            Symbolized::Unknown(blazesym::symbolize::Reason::IgnoredError)
        });
        for (k, sym) in again.into_iter().enumerate() {
            if let Symbolized::Sym(_) = sym {
                found[unnamed[k]] = sym;
            }
        }
        found
    }

    fn name_kernel(&self, ips: &[u64], names: &mut HashMap<(bool, u64), String>) {
        if ips.is_empty() {
            return;
        }
        let found = match self.kernel {
            Ok(()) => {
                let src = Source::Kernel(Kernel {
                    debug_syms: false,
                    ..Kernel::default()
                });
                self.inner
                    .symbolize(&src, Input::AbsAddr(ips))
                    .unwrap_or_default()
            }
            Err(_) => Vec::new(),
        };
        for (i, &ip) in ips.iter().enumerate() {
            let name = match found.get(i) {
                Some(Symbolized::Sym(sym)) => format!("{} [kernel]", describe(sym)),
                _ => format!("{ip:#x} [kernel]"),
            };
            names.insert((true, ip), name);
        }
    }
}

/// The function the address is in: the innermost inlined one, naming the
/// function it was inlined into.
fn describe(sym: &Sym) -> String {
    match sym.inlined.last() {
        Some(inner) => format!("{} (inlined into {})", inner.name, sym.name),
        None => sym.name.to_string(),
    }
}

/// Whether /proc/kallsyms text gives addresses (it shows zeros when
/// kptr_restrict hides them from this process).
fn kallsyms_usable(text: &str) -> Result<(), String> {
    let mut any = false;
    for addr in text.lines().filter_map(|l| l.split_whitespace().next()) {
        any = true;
        if addr.bytes().any(|b| b != b'0') {
            return Ok(());
        }
    }
    Err(if any {
        "kernel symbol addresses are hidden (/proc/sys/kernel/kptr_restrict)".into()
    } else {
        "no symbols in /proc/kallsyms".into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_kernel_addresses_are_named_as_the_reason() {
        assert!(kallsyms_usable("ffffffff81000000 T _text\n").is_ok());
        assert!(
            kallsyms_usable("0000000000000000 T _text\n0000000000000000 T x\n")
                .unwrap_err()
                .contains("kptr_restrict")
        );
        assert!(kallsyms_usable("").is_err());
    }

    /// Ground truth without sampling: the addresses of two functions of
    /// this test binary, turned into file offsets through this process's
    /// own maps, come back as those functions — and an address in an
    /// unmapped place or past a mapping says so.
    #[test]
    fn names_known_functions_of_this_binary() {
        #[inline(never)]
        fn yamba_symbolizer_known_a() -> u64 {
            std::hint::black_box(1)
        }
        #[inline(never)]
        fn yamba_symbolizer_known_b() -> u64 {
            std::hint::black_box(2)
        }
        let maps = super::super::parse_maps(&std::fs::read_to_string("/proc/self/maps").unwrap());
        let a = yamba_symbolizer_known_a as *const () as u64;
        let b = yamba_symbolizer_known_b as *const () as u64;
        let mut sym = Symbolizer::new(maps);
        let names = sym.resolve_all(&[
            Sample::at(a, false),
            Sample::at(b + 1, false),
            Sample::at(8, false),
        ]);
        assert!(names[0].contains("yamba_symbolizer_known_a"), "{names:?}");
        assert!(names[1].contains("yamba_symbolizer_known_b"), "{names:?}");
        assert!(names[2].contains("unmapped"), "{names:?}");
        assert_eq!(sym.resolve(Sample::at(a, false)), names[0]);
        let r = libc::read as *const () as u64;
        // libc is stripped with a debug link to a file that is not there:
        // its dynamic symbols still name the wrapper.
        assert!(
            sym.resolve(Sample::at(r + 1, false)).contains("read"),
            "libc's read wrapper unnamed"
        );
    }
}
