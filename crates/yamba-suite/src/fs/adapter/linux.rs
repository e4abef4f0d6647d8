//! Linux: O_DIRECT, fsync + posix_fadvise(DONTNEED), mincore, /proc/self/io,
//! statfs, forked workers, and cgroup v2/v1 memory limits.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

pub const NAME: &str = "linux";

/// Opens `path` for reading with O_DIRECT. `Ok(None)` when the
/// filesystem refuses O_DIRECT (EINVAL), so the caller can fall back.
pub fn open_direct(path: &Path) -> io::Result<Option<File>> {
    match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
    {
        Ok(f) => Ok(Some(f)),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Writes back and drops the file's pages from the page cache.
/// Whether they really went is for [`resident_pages`] to say.
pub fn evict(file: &File) -> io::Result<()> {
    file.sync_data()?;
    // SAFETY: advising on an open descriptor, whole file.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    Ok(())
}

/// (resident, total) pages of the first `len` bytes of `file`, from
/// mincore on a fresh mapping (mapping does not fault pages in).
pub fn resident_pages(file: &File, len: u64) -> io::Result<(usize, usize)> {
    if len == 0 {
        return Ok((0, 0));
    }
    let page = page_size();
    let pages = len.div_ceil(page as u64) as usize;
    // Mapping does not fault pages in; mincore only reads the page tables.
    let addr = crate::os::map_file_read(file, len as usize)?;
    let mut vec = vec![0u8; pages];
    // SAFETY: addr maps `len` bytes; vec has one byte per page.
    let rc = unsafe { libc::mincore(addr.cast(), len as usize, vec.as_mut_ptr()) };
    let err = io::Error::last_os_error();
    // SAFETY: the mapping made above, used only by mincore.
    unsafe { crate::os::unmap(addr, len as usize) };
    if rc != 0 {
        return Err(err);
    }
    Ok((vec.iter().filter(|&&b| b & 1 != 0).count(), pages))
}

pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_PAGESIZE).max(4096) as usize }
}

/// Bytes this process has caused to be fetched from storage so far
/// (`read_bytes` of /proc/self/io), or None without task I/O accounting.
pub fn storage_read_bytes() -> Option<u64> {
    std::fs::read_to_string("/proc/self/io")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("read_bytes:"))?
        .trim()
        .parse()
        .ok()
}

/// The filesystem a path is on.
#[derive(Debug, Clone)]
pub struct FsKind {
    pub name: &'static str,
    pub magic: u64,
    /// File data lives only in memory: there is no uncached read.
    pub memory_only: bool,
}

pub fn fs_kind(path: &Path) -> io::Result<FsKind> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains NUL"))?;
    // SAFETY: st is a valid statfs for the kernel to fill.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: c is NUL-terminated and st a valid statfs.
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let magic = st.f_type as u64;
    let (name, memory_only) = match magic {
        0x0102_1994 => ("tmpfs", true),
        0x8584_58f6 => ("ramfs", true),
        0x794c_7630 => ("overlayfs", false),
        0xef53 => ("ext2/3/4", false),
        0x5846_5342 => ("xfs", false),
        0x9123_683e => ("btrfs", false),
        0x2fc1_2fc1 => ("zfs", false),
        0x6969 => ("nfs", false),
        0x0102_1997 => ("9p", false),
        0x6573_5546 => ("fuse", false),
        _ => ("other", false),
    };
    Ok(FsKind {
        name,
        magic,
        memory_only,
    })
}

/// Free bytes for an unprivileged writer on the filesystem of `path`.
pub fn free_bytes(path: &Path) -> io::Result<u64> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains NUL"))?;
    // SAFETY: st is a valid statvfs for the kernel to fill.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: c is NUL-terminated and st a valid statvfs.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st.f_bavail as u64 * st.f_frsize as u64)
}

/// Counters in memory shared with forked workers (one u64 each).
pub struct SharedCounters {
    ptr: *mut u64,
    len: usize,
    bytes: usize,
}

impl SharedCounters {
    pub fn new(len: usize) -> io::Result<SharedCounters> {
        let bytes = (len.max(1) * 8).next_multiple_of(page_size());
        let p = crate::os::map_shared(bytes).map_err(io::Error::other)?;
        Ok(SharedCounters {
            ptr: p.cast(),
            len,
            bytes,
        })
    }

    fn slot(&self, i: usize) -> &std::sync::atomic::AtomicU64 {
        assert!(i < self.len);
        // SAFETY: in bounds, 8-aligned (page-aligned mapping), shared memory
        // only ever accessed atomically.
        unsafe { &*(self.ptr.add(i) as *const std::sync::atomic::AtomicU64) }
    }

    pub fn add(&self, i: usize, v: u64) {
        self.slot(i)
            .fetch_add(v, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn get(&self, i: usize) -> u64 {
        self.slot(i).load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Drop for SharedCounters {
    fn drop(&mut self) {
        // SAFETY: the mapping these counters made and own.
        unsafe { crate::os::unmap(self.ptr.cast(), self.bytes) };
    }
}

/// Forks a worker that runs `work` and exits. The worker may run on
/// any CPU (the benchmark's own pinning is not inherited), so workers
/// contend for the file system, not for the measuring process's CPU.
pub fn spawn_worker<F: FnOnce()>(work: F) -> io::Result<i32> {
    // SAFETY: the child only runs `work` (syscalls on fds it inherited)
    // and _exits; it never returns into the caller.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        unpin_all();
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).is_ok();
        // SAFETY: ending the forked child without running the parent's atexit.
        unsafe { libc::_exit(if ok { 0 } else { 101 }) };
    }
    Ok(pid)
}

/// Allows the calling thread on every CPU the kernel lets it use.
fn unpin_all() {
    // SAFETY: set is a valid cpu_set_t; the kernel intersects it with cpuset.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for c in 0..libc::CPU_SETSIZE as usize {
            libc::CPU_SET(c, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// Kills a worker and reaps it.
pub fn kill_worker(pid: i32) {
    // SAFETY: signalling and reaping our own child.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        let mut st = 0;
        libc::waitpid(pid, &mut st, 0);
    }
}

/// Waits for a worker; true when it exited with status 0.
pub fn wait_worker(pid: i32) -> bool {
    let mut st = 0;
    // SAFETY: reaping our own child.
    let rc = unsafe { libc::waitpid(pid, &mut st, 0) };
    rc == pid && libc::WIFEXITED(st) && libc::WEXITSTATUS(st) == 0
}

/// A memory cgroup of its own with a hard limit, removed on drop.
/// cgroup v2 (`memory.max`) where the memory controller is enabled at
/// the root, else cgroup v1 (`memory.limit_in_bytes`).
pub struct MemCgroup {
    dir: PathBuf,
    pub version: u32,
}

impl MemCgroup {
    /// Err explains why not (not root, no memory controller, …).
    pub fn create(limit_bytes: u64) -> Result<MemCgroup, String> {
        let name = format!("yamba-test-{}", std::process::id());
        let v2_root = Path::new("/sys/fs/cgroup");
        let v2_ok = std::fs::read_to_string(v2_root.join("cgroup.subtree_control"))
            .map(|s| s.split_whitespace().any(|c| c == "memory"))
            .unwrap_or(false);
        let v1_root = Path::new("/sys/fs/cgroup/memory");
        let (dir, version, limit_file) = if v2_ok {
            (v2_root.join(&name), 2, "memory.max")
        } else if v1_root.join("memory.limit_in_bytes").exists() {
            (v1_root.join(&name), 1, "memory.limit_in_bytes")
        } else {
            return Err(
                "no cgroup memory controller available (neither cgroup v2 with \
                        memory enabled at the root nor cgroup v1 memory)"
                    .into(),
            );
        };
        std::fs::create_dir(&dir)
            .map_err(|e| format!("cannot create cgroup {}: {e}", dir.display()))?;
        let cg = MemCgroup { dir, version };
        std::fs::write(cg.dir.join(limit_file), limit_bytes.to_string())
            .map_err(|e| format!("cannot set {limit_file}: {e}"))?;
        if version == 2 {
            // No swapping the limit away; absent without swap support.
            let _ = std::fs::write(cg.dir.join("memory.swap.max"), "0");
        }
        Ok(cg)
    }

    /// Moves the calling process into the cgroup.
    pub fn join(&self) -> Result<(), String> {
        std::fs::write(
            self.dir.join("cgroup.procs"),
            std::process::id().to_string(),
        )
        .map_err(|e| format!("cannot join cgroup {}: {e}", self.dir.display()))
    }
}

impl Drop for MemCgroup {
    fn drop(&mut self) {
        // The members have exited; a cgroup directory is removed with rmdir.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

/// Runs `work` in a forked child that has joined a fresh memory cgroup
/// limited to `limit_bytes`, and returns what it produced. The cgroup is
/// removed afterwards. Err says why it could not be done.
pub fn run_in_memory_cgroup<F: FnOnce() -> String>(
    limit_bytes: u64,
    work: F,
) -> Result<String, String> {
    use std::io::{Read, Write};
    use std::os::fd::FromRawFd;
    let cg = MemCgroup::create(limit_bytes)?;
    let mut fds = [0i32; 2];
    // SAFETY: fds is a valid 2-element array.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(format!("pipe: {}", io::Error::last_os_error()));
    }
    // SAFETY: the child joins the cgroup, runs `work`, writes and _exits.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork: {}", io::Error::last_os_error()));
    }
    if pid == 0 {
        // SAFETY: the write end is ours; the read end is closed.
        let mut out = unsafe {
            libc::close(fds[0]);
            File::from_raw_fd(fds[1])
        };
        let text = match cg.join() {
            Ok(()) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
                .unwrap_or_else(|_| "ERR work panicked".into()),
            Err(e) => format!("ERR {e}"),
        };
        let _ = out.write_all(text.as_bytes());
        drop(out);
        std::mem::forget(cg);
        // SAFETY: ending the child.
        unsafe { libc::_exit(0) };
    }
    // SAFETY: closing our write end; the read end is ours from here.
    let mut input = unsafe {
        libc::close(fds[1]);
        File::from_raw_fd(fds[0])
    };
    let mut text = String::new();
    let read = input.read_to_string(&mut text);
    let exited_ok = wait_worker(pid);
    drop(cg);
    read.map_err(|e| format!("reading the child's answer: {e}"))?;
    if !exited_ok {
        return Err("the child in the cgroup died (killed by the OOM killer?)".into());
    }
    match text.strip_prefix("ERR ") {
        Some(e) => Err(e.to_string()),
        None => Ok(text),
    }
}

/// Opens `path` for writing (and reading: mincore needs a readable
/// mapping) with O_DIRECT. `Ok(None)` when the filesystem refuses O_DIRECT
/// (EINVAL), so the caller can say so.
pub fn open_direct_write(path: &Path) -> io::Result<Option<File>> {
    match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
    {
        Ok(f) => Ok(Some(f)),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Ok(None),
        Err(e) => Err(e),
    }
}

/// A read-only shared mapping of the first `len` bytes of a file,
/// unmapped when dropped.
pub struct FileMap {
    ptr: *mut u8,
    len: usize,
}

impl FileMap {
    /// The mapped bytes. Reading them may fault pages in from the file.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr maps len readable bytes for as long as self lives;
        // the caller keeps len within the file (no SIGBUS).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl Drop for FileMap {
    fn drop(&mut self) {
        // SAFETY: the mapping this FileMap made; slices of it borrow self.
        unsafe { crate::os::unmap(self.ptr, self.len) };
    }
}

/// Maps the first `len` (> 0, within the file) bytes of `file` shared and read-only.
pub fn map_file(file: &File, len: usize) -> io::Result<FileMap> {
    let ptr = crate::os::map_file_read(file, len)?;
    Ok(FileMap { ptr, len })
}

/// Minor and major page faults this process has taken so far (getrusage).
pub fn page_faults() -> (u64, u64) {
    // SAFETY: ru is a valid rusage for the kernel to fill.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_SELF with a valid pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    (ru.ru_minflt as u64, ru.ru_majflt as u64)
}

/// The block device a filesystem stores its data on, found from a
/// file's `st_dev` through /sys/dev/block/MAJOR:MINOR.
#[derive(Debug, Clone)]
pub struct BlockDevice {
    /// Kernel name (`vda`, `nvme0n1p2`, `dm-0`).
    pub name: String,
    /// "disk", "partition" or "device-mapper".
    pub kind: &'static str,
    /// Its I/O counters (`stat`, the fields of /proc/diskstats).
    stat: PathBuf,
    /// The queue's `write_cache` ("write back": a completed write may sit in
    /// a volatile cache until a flush; "write through"), where known.
    pub write_cache: Option<String>,
}

/// What a block device has done since boot, from its `stat` file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeviceIo {
    /// 512-byte sectors written (the kernel counts in 512-byte units whatever
    /// the device's logical block size).
    pub sectors_written: u64,
    /// Flush requests completed (kernels from 5.5), else None.
    pub flushes: Option<u64>,
}

/// The block device behind `path`'s filesystem, or why there is none to
/// count: an anonymous device (major 0: tmpfs, overlayfs, btrfs, NFS, FUSE
/// have no single block device behind st_dev), or no sysfs entry for it.
pub fn block_device(path: &Path) -> Result<BlockDevice, String> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(path)
        .map_err(|e| format!("stat {}: {e}", path.display()))?
        .dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    if major == 0 {
        return Err(format!(
            "{} is on anonymous device 0:{minor} (tmpfs, overlayfs, btrfs, a network or FUSE \
             filesystem): no block device whose counters show what reached storage",
            path.display()
        ));
    }
    let sys = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    let real = std::fs::canonicalize(&sys).map_err(|e| {
        format!(
            "no block device {major}:{minor} in sysfs ({}): {e}",
            sys.display()
        )
    })?;
    let name = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (kind, queue) = if real.join("partition").exists() {
        // A partition's queue is its disk's, the parent directory.
        ("partition", real.parent().map(|p| p.join("queue")))
    } else if real.join("dm").is_dir() {
        ("device-mapper", Some(real.join("queue")))
    } else {
        ("disk", Some(real.join("queue")))
    };
    let stat = real.join("stat");
    if !stat.is_file() {
        return Err(format!(
            "block device {name} ({major}:{minor}) has no stat file"
        ));
    }
    let write_cache = queue
        .and_then(|q| std::fs::read_to_string(q.join("write_cache")).ok())
        .map(|s| s.trim().to_string());
    Ok(BlockDevice {
        name,
        kind,
        stat,
        write_cache,
    })
}

/// Whether the ext4 filesystem holding `path` has a journal: Some(false)
/// when its sysfs entry says no journal thread runs
/// (/sys/fs/ext4/DEV/journal_task reads "<none>"), None when not ext4 or
/// not known. Without a journal, ext4 skips inodes deleted in the last
/// 60–360 s when it allocates one, so a create's cost depends on the
/// recent deletes of every process on that filesystem.
pub fn ext4_has_journal(path: &Path) -> Option<bool> {
    if fs_kind(path).ok()?.magic != 0xef53 {
        return None;
    }
    let dev = block_device(path).ok()?;
    let task = std::fs::read_to_string(format!("/sys/fs/ext4/{}/journal_task", dev.name)).ok()?;
    Some(task.trim() != "<none>")
}

/// The device's counters now.
pub fn device_io(dev: &BlockDevice) -> io::Result<DeviceIo> {
    let text = std::fs::read_to_string(&dev.stat)?;
    parse_device_stat(&text)
        .ok_or_else(|| io::Error::other(format!("cannot parse {}: {text:?}", dev.stat.display())))
}

/// Parses a block device's `stat` line: field 7 is sectors written,
/// field 16 (kernels from 5.5) flush requests completed.
pub fn parse_device_stat(text: &str) -> Option<DeviceIo> {
    let f: Vec<u64> = text
        .split_whitespace()
        .map(|w| w.parse().ok())
        .collect::<Option<_>>()?;
    Some(DeviceIo {
        sectors_written: *f.get(6)?,
        flushes: f.get(15).copied(),
    })
}
