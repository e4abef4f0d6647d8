//! Names for sampled addresses: kernel symbols from /proc/kallsyms, user
//! symbols from the mapped files.

use super::{Mapping, Sample};
use std::collections::HashMap;
use std::path::PathBuf;

/// A symbol table: sorted start addresses and names.
#[derive(Debug, Default, Clone)]
pub struct SymbolTable {
    syms: Vec<(u64, String)>,
}

impl SymbolTable {
    pub fn from_pairs(mut syms: Vec<(u64, String)>) -> SymbolTable {
        syms.sort_by_key(|s| s.0);
        SymbolTable { syms }
    }

    /// The symbol whose range holds `addr` (the last one starting at or before it).
    pub fn lookup(&self, addr: u64) -> Option<&str> {
        let i = self.syms.partition_point(|s| s.0 <= addr);
        (i > 0).then(|| self.syms[i - 1].1.as_str())
    }

    pub fn len(&self) -> usize {
        self.syms.len()
    }

    pub fn is_empty(&self) -> bool {
        self.syms.is_empty()
    }
}

/// Text symbols of /proc/kallsyms text (`addr type name [module]`); Err
/// when the addresses are hidden (kptr_restrict, or not privileged).
pub fn parse_kallsyms(text: &str) -> Result<SymbolTable, String> {
    let mut syms = Vec::new();
    let mut zero = 0usize;
    for l in text.lines() {
        let mut f = l.split_whitespace();
        let (Some(a), Some(t), Some(name)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        if !matches!(t, "T" | "t" | "W" | "w") || name.starts_with("__pfx_") {
            continue;
        }
        let Ok(addr) = u64::from_str_radix(a, 16) else {
            continue;
        };
        if addr == 0 {
            zero += 1;
            continue;
        }
        let name = match f.next() {
            Some(m) => format!("{name} {m}"),
            None => name.to_string(),
        };
        syms.push((addr, name));
    }
    if syms.is_empty() {
        return Err(if zero > 0 {
            "kernel symbol addresses are hidden (/proc/sys/kernel/kptr_restrict)".into()
        } else {
            "no text symbols in /proc/kallsyms".into()
        });
    }
    Ok(SymbolTable::from_pairs(syms))
}

/// Function symbols of an ELF file, by `nm` (demangled), at their link-time
/// addresses; plus the (file offset → address) shift of its loadable segments.
struct ElfSymbols {
    table: SymbolTable,
    /// (p_offset, p_vaddr, p_filesz) of PT_LOAD segments.
    segments: Vec<(u64, u64, u64)>,
}

impl ElfSymbols {
    fn load(path: &std::path::Path) -> Result<ElfSymbols, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let segments = elf_load_segments(&bytes)
            .ok_or_else(|| format!("{}: not a 64-bit ELF file", path.display()))?;
        let mut syms = Vec::new();
        for args in [
            &["--defined-only", "-C"][..],
            &["--defined-only", "-C", "-D"][..],
        ] {
            let out = std::process::Command::new("nm")
                .args(args)
                .arg(path)
                .output()
                .map_err(|e| format!("cannot run nm (binutils): {e}"))?;
            for l in String::from_utf8_lossy(&out.stdout).lines() {
                let (Some(a), Some(rest)) = (l.get(..16), l.get(17..)) else {
                    continue;
                };
                let Some((t, name)) = rest.split_once(' ') else {
                    continue;
                };
                if !matches!(t, "T" | "t" | "W" | "w" | "i") {
                    continue;
                }
                // Dynamic symbols carry versions: read@@GLIBC_2.2.5.
                let name = name.split('@').next().unwrap_or(name);
                if let Ok(addr) = u64::from_str_radix(a, 16) {
                    syms.push((addr, name.to_string()));
                }
            }
            if !syms.is_empty() {
                break; // the full table was there; -D only for stripped libraries
            }
        }
        Ok(ElfSymbols {
            table: SymbolTable::from_pairs(syms),
            segments,
        })
    }

    fn lookup_file_offset(&self, off: u64) -> Option<&str> {
        let (p_off, p_vaddr, _) = self
            .segments
            .iter()
            .find(|(o, _, sz)| off >= *o && off < o + sz)
            .copied()?;
        self.table.lookup(off - p_off + p_vaddr)
    }
}

/// PT_LOAD program headers of a little-endian ELF64 image.
fn elf_load_segments(b: &[u8]) -> Option<Vec<(u64, u64, u64)>> {
    if b.get(..4)? != b"\x7fELF" || *b.get(4)? != 2 || *b.get(5)? != 1 {
        return None;
    }
    let u16_at = |o: usize| Some(u16::from_le_bytes(b.get(o..o + 2)?.try_into().ok()?));
    let u32_at = |o: usize| Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?));
    let u64_at = |o: usize| Some(u64::from_le_bytes(b.get(o..o + 8)?.try_into().ok()?));
    let phoff = u64_at(0x20)? as usize;
    let phentsize = u16_at(0x36)? as usize;
    let phnum = u16_at(0x38)? as usize;
    let mut segs = Vec::new();
    for i in 0..phnum {
        let p = phoff + i * phentsize;
        if u32_at(p)? == 1 {
            segs.push((u64_at(p + 8)?, u64_at(p + 16)?, u64_at(p + 32)?));
        }
    }
    Some(segs)
}

/// Resolves sampled addresses to `symbol` (kernel) or `symbol [file]` (user).
pub struct Symbolizer {
    kernel: Result<SymbolTable, String>,
    maps: Vec<Mapping>,
    files: HashMap<PathBuf, Result<ElfSymbols, String>>,
}

impl Symbolizer {
    pub fn new(maps: Vec<Mapping>) -> Symbolizer {
        let kernel = std::fs::read_to_string("/proc/kallsyms")
            .map_err(|e| format!("cannot read /proc/kallsyms: {e}"))
            .and_then(|t| parse_kallsyms(&t));
        Symbolizer {
            kernel,
            maps,
            files: HashMap::new(),
        }
    }

    /// Why kernel addresses cannot be named, if they cannot.
    pub fn kernel_problem(&self) -> Option<&str> {
        self.kernel.as_ref().err().map(String::as_str)
    }

    pub fn resolve(&mut self, s: Sample) -> String {
        if s.kernel {
            return match &self.kernel {
                Ok(t) => t.lookup(s.ip).map(|n| format!("{n} [kernel]")),
                Err(_) => None,
            }
            .unwrap_or_else(|| format!("{:#x} [kernel]", s.ip));
        }
        let Some(m) = self
            .maps
            .iter()
            .find(|m| s.ip >= m.start && s.ip < m.end)
            .cloned()
        else {
            return format!("{:#x} [unmapped]", s.ip);
        };
        if !m.path.starts_with("/") {
            return m.path.display().to_string(); // [vdso]: no file to read
        }
        let file = m
            .path
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let elf = self
            .files
            .entry(m.path.clone())
            .or_insert_with(|| ElfSymbols::load(&m.path));
        let off = s.ip - m.start + m.offset;
        match elf.as_ref().ok().and_then(|e| e.lookup_file_offset(off)) {
            Some(name) => format!("{name} [{file}]"),
            None => format!("{file}+{off:#x}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kallsyms_text_symbols() {
        let k = parse_kallsyms(
            "ffffffff81000000 T _text\nffffffff816bb810 T __pfx_ksys_read\nffffffff816bb820 T ksys_read\n\
             ffffffff816bb910 T __x64_sys_read\nffffffffc0000000 t modfn\t[kvm]\nffffffff82000000 D data\n",
        )
        .unwrap();
        assert_eq!(k.lookup(0xffffffff816bb830), Some("ksys_read"));
        assert_eq!(
            k.lookup(0xffffffff816bb815),
            Some("_text"),
            "padding prefixes are skipped"
        );
        assert_eq!(k.lookup(0xffffffffc0000010), Some("modfn [kvm]"));
        assert_eq!(k.lookup(0x10), None);
        assert!(parse_kallsyms("0000000000000000 T _text\n")
            .unwrap_err()
            .contains("kptr_restrict"));
    }
}
