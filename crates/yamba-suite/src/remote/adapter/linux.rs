//! The agent's Linux adapter: the root opened once (O_PATH), each request
//! resolved beneath it (openat2, or a component walk: `beneath.rs`), the
//! file looked at through O_PATH (type, links, file system) before it is
//! opened.

#[path = "beneath.rs"]
mod beneath;

pub use beneath::{force_component_walk, resolver};

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

pub const NAME: &str = "linux-sockets";

/// The root directory as a descriptor that opens nothing (O_PATH).
pub fn open_root(p: &Path) -> std::io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC)
        .open(p)
}

/// Opens `rel` beneath `root` for reading only once it is known to be a
/// regular file, with one link, on a file system that holds data: first
/// a handle that opens nothing (O_PATH), resolved beneath the root and
/// checked with fstat and fstatfs; then the same inode reopened through
/// /proc/self/fd, and checked to be the same.
pub fn open_beneath(root: &File, rel: &str) -> Result<File, String> {
    let path = beneath::handle_beneath(root, rel)?;
    let meta = path.metadata().map_err(|e| format!("cannot stat: {e}"))?;
    if !meta.file_type().is_file() {
        return Err("not a regular file".into());
    }
    if meta.nlink() > 1 {
        return Err(format!(
            "has {} hard links (refused: a link inside the root to a file outside it would be served)",
            meta.nlink()
        ));
    }
    if let Some(fs) = pseudo_fs(&path) {
        return Err(format!(
            "is on a pseudo file system ({fs}), whose files describe this machine rather than hold data"
        ));
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(format!("/proc/self/fd/{}", path.as_raw_fd()))
        .map_err(|e| format!("cannot reopen for reading: {e}"))?;
    let again = file.metadata().map_err(|e| format!("cannot stat: {e}"))?;
    if (again.dev(), again.ino()) != (meta.dev(), meta.ino()) {
        return Err("changed while being opened".into());
    }
    Ok(file)
}

/// The file system of an open handle, when it is one whose files are
/// made up by the kernel (procfs, sysfs, …): its name.
pub fn pseudo_fs(f: &File) -> Option<&'static str> {
    // SAFETY: statfs is plain data; fstatfs fills it for a valid fd.
    let mut s: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: fstatfs fills the statfs we own for an open descriptor.
    if unsafe { libc::fstatfs(f.as_raw_fd(), &mut s) } != 0 {
        return Some("unknown (fstatfs failed)");
    }
    #[allow(clippy::unnecessary_cast)]
    let magic = s.f_type as i64 as u32;
    PSEUDO.iter().find(|(m, _)| *m == magic).map(|(_, n)| *n)
}

/// Magic numbers of pseudo file systems (linux/magic.h).
const PSEUDO: &[(u32, &str)] = &[
    (0x9fa0, "proc"),
    (0x6265_6572, "sysfs"),
    (0x6462_6720, "debugfs"),
    (0x7472_6163, "tracefs"),
    (0x7363_6673, "securityfs"),
    (0xf97c_ff8c, "selinuxfs"),
    (0x4341_5d53, "smackfs"),
    (0x0027_e0eb, "cgroup"),
    (0x6367_7270, "cgroup2"),
    (0xcafe_4a11, "bpf"),
    (0x1cd1, "devpts"),
    (0x6265_6570, "configfs"),
    (0xde5e_81e4, "efivarfs"),
    (0x6165_676c, "pstore"),
    (0x6573_5543, "fusectl"),
    (0x4249_4e4d, "binfmt_misc"),
    (0x1980_0202, "mqueue"),
    (0x6e73_6673, "nsfs"),
    (0x0904_1934, "anon_inode"),
    (0x6759_6969, "rpc_pipefs"),
    (0x9fa1, "openprom"),
    (0x9fa2, "usbdevfs"),
];
