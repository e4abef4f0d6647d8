//! perf_event_open(2), shared by the hardware counters and the profiler
//! (Linux only).

/// `struct perf_event_attr` up to PERF_ATTR_SIZE_VER5 (112 bytes).
#[repr(C)]
#[derive(Default)]
pub(crate) struct Attr {
    pub type_: u32,
    pub size: u32,
    pub config: u64,
    pub sample_period: u64,
    pub sample_type: u64,
    pub read_format: u64,
    pub flags: u64,
    pub wakeup_events: u32,
    pub bp_type: u32,
    pub config1: u64,
    pub config2: u64,
    pub branch_sample_type: u64,
    pub sample_regs_user: u64,
    pub sample_stack_user: u32,
    pub clockid: i32,
    pub sample_regs_intr: u64,
    pub aux_watermark: u32,
    pub sample_max_stack: u16,
    pub reserved: u16,
}

pub(crate) const FLAG_DISABLED: u64 = 1 << 0;
pub(crate) const FLAG_INHERIT: u64 = 1 << 1;
pub(crate) const FLAG_EXCLUDE_KERNEL: u64 = 1 << 5;
pub(crate) const FLAG_EXCLUDE_HV: u64 = 1 << 6;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;

/// Opens an event for `pid` (0: this process) on `cpu` (-1: any), with no
/// group leader; `attr.size` is filled in here.
pub(crate) fn open(mut attr: Attr, pid: i32, cpu: i32) -> std::io::Result<i32> {
    attr.size = std::mem::size_of::<Attr>() as u32;
    // SAFETY: attr is a valid perf_event_attr of the size it declares.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const Attr,
            pid,
            cpu,
            -1i32,
            PERF_FLAG_FD_CLOEXEC,
        )
    } as i32;
    if fd < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(fd)
    }
}
