//! The standard classes a Yamba class can `import`: per instruction set
//! (`x86_64`, `x86_32`, `aarch64`: page size and cast functions), per compiler
//! convention (`compiler_x86_64`, `compiler_x86_32`, `compiler_aarch64`: prologues and
//! epilogues, behind the same member names on both), and per operating
//! system (`posix`, `linux`: host functions the C parts call).
//!
//! The Linux page-out adapter (`linux.page_out`) is mem.pagefault.major's
//! own eviction (yamba-os's `mem::page_out`: fdatasync + posix_fadvise
//! DONTNEED, drop_caches when pages survive and we may), with its
//! verification: mincore before and after, ru_majflt per pass.

use crate::ast::CType;
use crate::isa::Isa;
use std::path::PathBuf;
use yamba_os::mem::{page_out, resident_pages, Faults, FileMap, Readahead, ScratchFile};

/// A value of the C subset.
#[derive(Debug, Clone)]
pub enum Value {
    Void,
    Int(i64),
    /// An address and the size of what it points to (for arithmetic).
    Ptr(i64, i64),
    /// Generated machine code, callable with its C sub-type.
    Code(std::rc::Rc<crate::eval::Compiled>),
}

impl Value {
    /// The value as a 64-bit machine word (what a register would hold).
    pub fn word(&self) -> i64 {
        match self {
            Value::Int(v) | Value::Ptr(v, _) => *v,
            Value::Code(c) => c.addr() as i64,
            Value::Void => 0,
        }
    }
}

pub type HostFn = fn(&mut Host, &[Value]) -> Result<Value, String>;

pub enum StdKind {
    /// A constant, computed for the generating host.
    Const(fn() -> i64),
    /// `cast_imm_32(v)`: `bytes` little-endian bytes of v (range-checked).
    Cast { bytes: usize },
    /// Machine code, written as assembly of the class's instruction set.
    Asm(&'static str),
    /// A function of the host the C parts call.
    Host {
        params: &'static [CType],
        ret: CType,
        f: HostFn,
    },
}

pub struct StdMember {
    pub name: &'static str,
    pub kind: StdKind,
}

pub struct StdClass {
    pub name: &'static str,
    /// The instruction set importing this class commits a class to.
    pub isa: Option<Isa>,
    pub members: &'static [StdMember],
}

impl StdClass {
    pub fn member(&self, name: &str) -> Option<&'static StdMember> {
        self.members.iter().find(|m| m.name == name)
    }
}

fn host_page_size() -> i64 {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as i64
}

macro_rules! m {
    ($n:expr, $k:expr) => {
        StdMember { name: $n, kind: $k }
    };
}

const P: CType = CType::BYTE_PTR;
const L: CType = CType::LONG;
const V: CType = CType::VOID;

static CLASSES: &[StdClass] = &[
    StdClass {
        name: "x86_64",
        isa: Some(Isa::X86_64),
        members: &[
            m!("page_size", StdKind::Const(|| if cfg!(target_arch = "x86_64") { host_page_size() } else { 4096 })),
            m!("cast_imm_8", StdKind::Cast { bytes: 1 }),
            m!("cast_imm_16", StdKind::Cast { bytes: 2 }),
            m!("cast_imm_32", StdKind::Cast { bytes: 4 }),
            m!("cast_immediate_32", StdKind::Cast { bytes: 4 }),
            m!("cast_imm_64", StdKind::Cast { bytes: 8 }),
        ],
    },
    StdClass {
        name: "compiler_x86_64",
        isa: Some(Isa::X86_64),
        members: &[
            m!("prologue_standard", StdKind::Asm("push rbp; mov rbp, rsp")),
            m!("epilogue_standard", StdKind::Asm("pop rbp; ret")),
            m!(
                "prologue_save_all",
                StdKind::Asm("push rbp; mov rbp, rsp; push rbx; push r12; push r13; push r14; push r15; sub rsp, 8")
            ),
            m!(
                "epilogue_restore_all",
                StdKind::Asm("add rsp, 8; pop r15; pop r14; pop r13; pop r12; pop rbx; pop rbp; ret")
            ),
            // Waits for everything before it to finish: chains in
            // consecutive calls cannot overlap.
            m!("serialize", StdKind::Asm("lfence")),
        ],
    },
    // The paper's own target (Figure 3): cdecl, arguments on the stack
    // ([ebp + 8] is the first after prologue_standard).
    StdClass {
        name: "x86_32",
        isa: Some(Isa::X86_32),
        members: &[
            m!("page_size", StdKind::Const(|| if cfg!(target_arch = "x86") { host_page_size() } else { 4096 })),
            m!("cast_imm_8", StdKind::Cast { bytes: 1 }),
            m!("cast_imm_16", StdKind::Cast { bytes: 2 }),
            m!("cast_imm_32", StdKind::Cast { bytes: 4 }),
            m!("cast_immediate_32", StdKind::Cast { bytes: 4 }),
        ],
    },
    StdClass {
        name: "compiler_x86_32",
        isa: Some(Isa::X86_32),
        members: &[
            m!("prologue_standard", StdKind::Asm("push ebp; mov ebp, esp")),
            m!("epilogue_standard", StdKind::Asm("pop ebp; ret")),
            // ebx, esi, edi and ebp are callee-saved in the i386 System V ABI.
            m!(
                "prologue_save_all",
                StdKind::Asm("push ebp; mov ebp, esp; push ebx; push esi; push edi")
            ),
            m!(
                "epilogue_restore_all",
                StdKind::Asm("pop edi; pop esi; pop ebx; pop ebp; ret")
            ),
            m!("serialize", StdKind::Asm("lfence")),
        ],
    },
    StdClass {
        name: "aarch64",
        isa: Some(Isa::Aarch64),
        members: &[
            m!("page_size", StdKind::Const(|| if cfg!(target_arch = "aarch64") { host_page_size() } else { 4096 })),
            // An instruction word: 4 bytes, little-endian.
            m!("cast_u32", StdKind::Cast { bytes: 4 }),
            m!("cast_imm_32", StdKind::Cast { bytes: 4 }),
            m!("cast_imm_64", StdKind::Cast { bytes: 8 }),
        ],
    },
    StdClass {
        name: "compiler_aarch64",
        isa: Some(Isa::Aarch64),
        members: &[
            m!("prologue_standard", StdKind::Asm("stp x29, x30, [sp, #-16]!; mov x29, sp")),
            m!("epilogue_standard", StdKind::Asm("ldp x29, x30, [sp], #16; ret")),
            m!(
                "prologue_save_all",
                StdKind::Asm("stp x29, x30, [sp, #-96]!; mov x29, sp; stp x19, x20, [sp, #16]; stp x21, x22, [sp, #32]; stp x23, x24, [sp, #48]; stp x25, x26, [sp, #64]; stp x27, x28, [sp, #80]")
            ),
            m!(
                "epilogue_restore_all",
                StdKind::Asm("ldp x19, x20, [sp, #16]; ldp x21, x22, [sp, #32]; ldp x23, x24, [sp, #48]; ldp x25, x26, [sp, #64]; ldp x27, x28, [sp, #80]; ldp x29, x30, [sp], #96; ret")
            ),
            m!("serialize", StdKind::Asm("dsb sy; isb")),
        ],
    },
    StdClass {
        name: "posix",
        isa: None,
        members: &[
            m!("MS_INVALIDATE", StdKind::Const(|| libc::MS_INVALIDATE as i64)),
            m!("MS_SYNC", StdKind::Const(|| libc::MS_SYNC as i64)),
            m!("MS_ASYNC", StdKind::Const(|| libc::MS_ASYNC as i64)),
            m!("page_size", StdKind::Const(host_page_size)),
            m!("msync", StdKind::Host { params: &[P, L, L], ret: L, f: host_msync }),
            // Zero-filled memory for the C parts, freed when the class's run ends.
            m!("malloc", StdKind::Host { params: &[L], ret: P, f: host_malloc }),
        ],
    },
    StdClass {
        name: "linux",
        isa: None,
        members: &[
            m!("scratch_file", StdKind::Host { params: &[L], ret: L, f: host_scratch_file }),
            m!("map_file", StdKind::Host { params: &[L, L], ret: P, f: host_map_file }),
            m!("page_out", StdKind::Host { params: &[P], ret: V, f: host_page_out }),
        ],
    },
];

/// The standard class of that name.
pub fn class(name: &str) -> Option<&'static StdClass> {
    CLASSES.iter().find(|c| c.name == name)
}

pub fn names() -> Vec<&'static str> {
    CLASSES.iter().map(|c| c.name).collect()
}

/// A cast's value out of its width's range, signed and unsigned.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{value} does not fit in {bits} bits")]
pub struct DoesNotFit {
    pub value: i64,
    pub bits: usize,
}

/// Little-endian bytes of `v` for a cast of `bytes` bytes, if it fits
/// (signed or unsigned).
pub fn cast(v: i64, bytes: usize) -> Result<Vec<u8>, DoesNotFit> {
    let bits = bytes * 8;
    if bits < 64 {
        let lo = -(1i128 << (bits - 1));
        let hi = (1i128 << bits) - 1;
        if !(lo..=hi).contains(&(v as i128)) {
            return Err(DoesNotFit { value: v, bits });
        }
    }
    Ok(v.to_le_bytes()[..bytes].to_vec())
}

/// What the C parts are doing when a host function runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Setup,
    Benchmark,
    Dummy,
}

/// One `linux.page_out` call: what the pass before it did, and what the
/// eviction left.
#[derive(Debug, Clone)]
pub struct PageOutRecord {
    pub phase: Phase,
    /// Which call of benchmark() or benchmark_dummy() it was in.
    pub call: u64,
    /// Faults this thread took since the previous page-out (the pass).
    pub major: u64,
    pub minor: u64,
    /// File pages in memory (mincore) before eviction: what the pass brought in.
    pub resident_before_evict: usize,
    /// File pages in memory after eviction: what the next pass starts with.
    pub resident_after_evict: usize,
    pub steps: Vec<String>,
    /// How long the page-out itself took (it is inside the timed calls).
    pub ns: f64,
}

/// The host side of a running class: scratch files, mappings, and the
/// page-out log the runner turns into evidence.
pub struct Host {
    pub scratch: PathBuf,
    files: Vec<ScratchFile>,
    maps: Vec<(FileMap, usize)>,
    pub log: Vec<PageOutRecord>,
    pub phase: Phase,
    pub call: u64,
    /// drop_caches after every eviction (`--set evict=drop_caches`), as mem.pagefault.major.
    pub always_drop: bool,
    last_faults: Faults,
    /// `posix.malloc`'s buffers (8-byte aligned).
    buffers: Vec<Box<[u64]>>,
}

impl Host {
    pub fn new(scratch: PathBuf) -> Host {
        Host {
            scratch,
            files: Vec::new(),
            maps: Vec::new(),
            log: Vec::new(),
            phase: Phase::Setup,
            call: 0,
            always_drop: false,
            last_faults: Faults::now(),
            buffers: Vec::new(),
        }
    }
}

impl Host {
    /// Drops the mappings and scratch files an earlier `setup()` made, so
    /// a setup run again (at the chosen unroll degree) reuses their names
    /// and space instead of adding to them.
    pub fn release(&mut self) {
        self.maps.clear();
        self.files.clear();
    }
}

fn int_arg(args: &[Value], i: usize) -> i64 {
    args.get(i).map_or(0, Value::word)
}

fn host_msync(_h: &mut Host, args: &[Value]) -> Result<Value, String> {
    let ps = host_page_size();
    let addr = int_arg(args, 0);
    let start = addr / ps * ps;
    let len = int_arg(args, 1) + (addr - start);
    // SAFETY: msync only inspects the range; a bad range is an error return.
    let rc = unsafe {
        libc::msync(
            start as *mut libc::c_void,
            len as usize,
            int_arg(args, 2) as i32,
        )
    };
    if rc != 0 {
        return Err(format!("msync: {}", std::io::Error::last_os_error()));
    }
    Ok(Value::Int(0))
}

fn host_malloc(h: &mut Host, args: &[Value]) -> Result<Value, String> {
    let bytes = int_arg(args, 0);
    if !(1..=1 << 30).contains(&bytes) {
        return Err(format!("posix.malloc({bytes}): want 1 byte to 1 GiB"));
    }
    let b = vec![0u64; (bytes as usize).div_ceil(8)].into_boxed_slice();
    let p = b.as_ptr() as i64;
    h.buffers.push(b);
    Ok(Value::Ptr(p, 1))
}

fn host_scratch_file(h: &mut Host, args: &[Value]) -> Result<Value, String> {
    let pages = int_arg(args, 0);
    if !(1..=1 << 22).contains(&pages) {
        return Err(format!(
            "linux.scratch_file({pages}): want 1 to 4194304 pages"
        ));
    }
    let path = h.scratch.join(format!("lang-{}.dat", h.files.len()));
    // Page-sized writes: page-sized folios, one page per fault (as mem.pagefault.major).
    let f = ScratchFile::create(&path, pages as usize, 1)?;
    h.files.push(f);
    Ok(Value::Int(h.files.len() as i64 - 1))
}

fn host_map_file(h: &mut Host, args: &[Value]) -> Result<Value, String> {
    let fi = int_arg(args, 0);
    let f = h
        .files
        .get(fi as usize)
        .ok_or_else(|| format!("linux.map_file({fi}): no such scratch file"))?;
    let ra = if int_arg(args, 1) != 0 {
        Readahead::Off
    } else {
        Readahead::Kernel
    };
    let map = FileMap::new(&f.file, f.bytes, ra)?;
    let p = map.as_ptr() as i64;
    h.maps.push((map, fi as usize));
    Ok(Value::Ptr(p, 1))
}

/// Evicts the scratch file mapped at `addr` and records the pass before it.
fn host_page_out(h: &mut Host, args: &[Value]) -> Result<Value, String> {
    let faults = Faults::now().since(h.last_faults);
    let t0 = std::time::Instant::now();
    let addr = int_arg(args, 0) as usize;
    let (map, fi) = h
        .maps
        .iter()
        .find(|(m, _)| (m.as_ptr() as usize..m.as_ptr() as usize + m.len()).contains(&addr))
        .ok_or_else(|| format!("linux.page_out(0x{addr:x}): not a mapping of linux.map_file"))?;
    let file = &h.files[*fi];
    let before = map.resident_pages()?;
    // The mapping stays (the C parts hold pointers into it); its page-table
    // entries go, so the page cache can drop the pages.
    // SAFETY: our own mapping; later reads fault the file in again.
    if unsafe {
        libc::madvise(
            map.as_ptr() as *mut libc::c_void,
            map.len(),
            libc::MADV_DONTNEED,
        )
    } != 0
    {
        return Err(format!(
            "madvise(DONTNEED): {}",
            std::io::Error::last_os_error()
        ));
    }
    let out = page_out(&file.file, file.bytes, h.always_drop)?;
    let after = resident_pages(map.as_ptr(), map.len())?;
    let mut steps = vec!["madvise(MADV_DONTNEED) on the mapping".to_string()];
    steps.extend(out.steps);
    h.log.push(PageOutRecord {
        phase: h.phase,
        call: h.call,
        major: faults.major,
        minor: faults.minor,
        resident_before_evict: before,
        resident_after_evict: after,
        steps,
        ns: t0.elapsed().as_nanos() as f64,
    });
    h.last_faults = Faults::now();
    Ok(Value::Void)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn casts_are_little_endian_and_range_checked() {
        assert_eq!(cast(0x1000, 4).unwrap(), vec![0x00, 0x10, 0, 0]);
        assert_eq!(cast(-1, 1).unwrap(), vec![0xff]);
        assert!(cast(1 << 32, 4).is_err());
        assert!(class("x86_64").unwrap().member("cast_imm_32").is_some());
        // Same names on both instruction sets.
        for n in [
            "prologue_standard",
            "epilogue_standard",
            "prologue_save_all",
            "epilogue_restore_all",
            "serialize",
        ] {
            assert!(class("compiler_x86_64").unwrap().member(n).is_some());
            assert!(class("compiler_aarch64").unwrap().member(n).is_some());
        }
    }
}
