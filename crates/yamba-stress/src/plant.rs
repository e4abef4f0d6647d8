//! A test plant for the kernel-memory invariant: kernel memory that
//! outlives the process that allocated it, which no fd, mapping or process
//! census can see. System V message queues are such objects: the queue and
//! its messages (kmalloc'd, unreclaimable slab) stay until IPC_RMID or a
//! reboot. The keys are fixed so that a test (or a later run) can remove
//! what was planted.

/// First key of the planted queues ("YAMB" in ASCII).
const KEY_BASE: i32 = 0x5941_4d42;
/// Most queues planted (the kernel's default msgmni is 32000).
const MAX_QUEUES: i32 = 16_384;
/// One message: two 4 KiB slab objects and a small one in the kernel.
const MESSAGE: usize = 8000;
const MESSAGES_PER_QUEUE: usize = 2;

#[repr(C)]
struct Message {
    mtype: libc::c_long,
    text: [u8; MESSAGE],
}

/// Leaves about `bytes` of kernel memory in System V message queues that
/// nobody removes; returns the bytes of message text queued.
pub fn leak_kernel_memory(bytes: u64) -> u64 {
    remove_kernel_leak();
    let per_queue = (MESSAGE * MESSAGES_PER_QUEUE) as u64;
    let queues = (bytes / per_queue).min(MAX_QUEUES as u64) as i32;
    let msg = Message {
        mtype: 1,
        text: [0x5a; MESSAGE],
    };
    let mut queued = 0;
    for i in 0..queues {
        // SAFETY: plain System V IPC calls on a key of our own; the message
        // is a local of the layout msgsnd(2) documents.
        unsafe {
            let id = libc::msgget(KEY_BASE + i, libc::IPC_CREAT | libc::IPC_EXCL | 0o600);
            if id < 0 {
                break;
            }
            for _ in 0..MESSAGES_PER_QUEUE {
                let p = (&msg as *const Message).cast();
                if libc::msgsnd(id, p, MESSAGE, libc::IPC_NOWAIT) == 0 {
                    queued += MESSAGE as u64;
                }
            }
        }
    }
    queued
}

/// Removes what [`leak_kernel_memory`] left; returns how many queues.
pub fn remove_kernel_leak() -> usize {
    let mut removed = 0;
    for i in 0..MAX_QUEUES {
        // SAFETY: looks a key up and removes its queue.
        unsafe {
            let id = libc::msgget(KEY_BASE + i, 0);
            if id >= 0 && libc::msgctl(id, libc::IPC_RMID, std::ptr::null_mut()) == 0 {
                removed += 1;
            }
        }
    }
    removed
}
