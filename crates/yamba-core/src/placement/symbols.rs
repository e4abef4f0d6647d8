//! How long a function of this executable is: its symbol's size, from the
//! ELF symbol table of /proc/self/exe (read once per process).

use std::sync::OnceLock;

/// Functions of this executable: (start, size) at their run-time
/// addresses, sorted by start.
struct Index(Vec<(u64, u64)>);

static INDEX: OnceLock<Result<Index, String>> = OnceLock::new();

/// The size in bytes of the function that starts at `addr`.
pub fn function_size(addr: usize) -> Result<usize, String> {
    let Index(funcs) = INDEX
        .get_or_init(read_index)
        .as_ref()
        .map_err(Clone::clone)?;
    let addr = addr as u64;
    let i = funcs.partition_point(|&(start, _)| start < addr);
    match funcs.get(i) {
        Some(&(start, size)) if start == addr => Ok(size as usize),
        _ => Err(format!(
            "no symbol starts at {addr:#x} in this executable's symbol table"
        )),
    }
}

fn read_index() -> Result<Index, String> {
    use object::{Object, ObjectSymbol, SymbolKind};
    let file = std::fs::File::open("/proc/self/exe")
        .map_err(|e| format!("cannot open /proc/self/exe: {e}"))?;
    // SAFETY: the executable is not written while it runs (the kernel
    // refuses writes to a running image: ETXTBSY).
    let map = unsafe { memmap2::Mmap::map(&file) }
        .map_err(|e| format!("cannot map /proc/self/exe: {e}"))?;
    let elf = object::File::parse(&*map).map_err(|e| format!("cannot read /proc/self/exe: {e}"))?;
    let bias = load_bias();
    let mut funcs: Vec<(u64, u64)> = elf
        .symbols()
        .filter(|s| s.kind() == SymbolKind::Text && s.size() > 0)
        .map(|s| (s.address().wrapping_add(bias), s.size()))
        .collect();
    if funcs.is_empty() {
        return Err("this executable has no symbol table (stripped?)".into());
    }
    funcs.sort_unstable();
    funcs.dedup_by_key(|f| f.0);
    Ok(Index(funcs))
}

/// Where the kernel loaded this (position-independent) executable:
/// what its symbols' addresses are offset by.
fn load_bias() -> u64 {
    // dlpi_addr is an address: 32 bits wide on 32-bit targets, 64 here.
    #[allow(clippy::unnecessary_cast)]
    unsafe extern "C" fn first(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: the loader hands valid pointers; `data` is the u64 below.
        unsafe { *(data as *mut u64) = (*info).dlpi_addr as u64 };
        1 // the first object is the executable itself: stop
    }
    let mut bias = 0u64;
    // SAFETY: the callback only reads the entry and writes `bias`.
    unsafe { libc::dl_iterate_phdr(Some(first), &mut bias as *mut u64 as *mut libc::c_void) };
    bias
}

#[cfg(test)]
mod tests {
    use super::*;

    #[inline(never)]
    fn known() -> u64 {
        std::hint::black_box(41) + 1
    }

    #[test]
    fn a_function_of_this_executable_has_its_size() {
        let size = function_size(known as fn() -> u64 as usize).unwrap();
        assert!((1..4096).contains(&size), "{size}");
        let e = function_size(known as fn() -> u64 as usize + 1).unwrap_err();
        assert!(e.contains("no symbol starts"), "{e}");
    }
}
