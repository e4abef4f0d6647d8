//! Bounds set before any stress starts, so that a run cannot take a shared
//! machine down with it: resource limits in every worker (always), and a
//! cgroup v2 child with `pids.max` and `memory.max` when the machine has a
//! cgroup v2 hierarchy with those controllers delegated to our cgroup and
//! we may write there (root). What was used is recorded with the results.
//!
//! RLIMIT_NPROC is not enforced for root (CAP_SYS_RESOURCE): there, the
//! process bound is the workers' own pool caps, plus `pids.max` when the
//! cgroup is available. Said so in the notes.

use serde::Serialize;
use std::path::PathBuf;

/// What each worker is allowed, on top of what it holds when it starts.
#[derive(Debug, Clone, Serialize)]
pub struct Limits {
    /// Extra fds a worker may open (RLIMIT_NOFILE = what it has + this).
    pub fds: u64,
    /// Extra address space a worker may map (RLIMIT_AS = its VmSize + this).
    pub address_space_bytes: u64,
    /// RLIMIT_NPROC for each worker (not enforced for root).
    pub processes: u64,
    /// RLIMIT_FSIZE: the largest file a worker may write.
    pub file_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            fds: 1024,
            address_space_bytes: 1 << 30,
            processes: 4096,
            file_bytes: 16 << 20,
        }
    }
}

/// How the run was confined.
#[derive(Debug, Clone, Serialize)]
pub struct Confinement {
    /// "rlimits" or "cgroup v2 + rlimits".
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<PathBuf>,
    pub limits: Limits,
    /// Whole-run bounds the cgroup enforces (pids.max, memory.max).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pids_max: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_max_bytes: Option<u64>,
    /// Why the cgroup was not used, or other caveats.
    pub notes: Vec<String>,
}

impl Confinement {
    /// Detects a usable cgroup v2 and creates a child for this run there
    /// (falls back to rlimits alone, saying why). `pids`/`memory` bound
    /// the whole run.
    pub fn prepare(limits: Limits, pids: u64, memory: u64) -> Confinement {
        let mut notes = Vec::new();
        let root = is_root();
        if root {
            notes.push(
                "RLIMIT_NPROC is not enforced for root: processes are bounded by the workers' pool caps"
                    .into(),
            );
        }
        let cgroup = if root {
            match create_cgroup(pids, memory) {
                Ok(p) => Some(p),
                Err(why) => {
                    notes.push(format!("no cgroup v2 child: {why}; rlimits only"));
                    None
                }
            }
        } else {
            notes.push("no cgroup v2 child: not root; rlimits only".into());
            None
        };
        Confinement {
            kind: if cgroup.is_some() {
                "cgroup v2 + rlimits".into()
            } else {
                "rlimits".into()
            },
            pids_max: cgroup.as_ref().map(|_| pids),
            memory_max_bytes: cgroup.as_ref().map(|_| memory),
            cgroup,
            limits,
            notes,
        }
    }

    /// In a freshly forked worker: join the cgroup (if any) and set the rlimits.
    /// Returns what could not be applied.
    pub fn apply_in_child(&self) -> Vec<String> {
        let mut failed = Vec::new();
        if let Some(cg) = &self.cgroup {
            if std::fs::write(cg.join("cgroup.procs"), b"0").is_err() {
                failed.push("could not join the cgroup".into());
            }
        }
        let open = std::fs::read_dir("/proc/self/fd").map_or(64, |d| d.count() as u64);
        let vm = vm_size().unwrap_or(0);
        let l = &self.limits;
        for (res, name, value) in [
            (libc::RLIMIT_NOFILE, "RLIMIT_NOFILE", open + l.fds),
            (libc::RLIMIT_AS, "RLIMIT_AS", vm + l.address_space_bytes),
            (libc::RLIMIT_NPROC, "RLIMIT_NPROC", l.processes),
            (libc::RLIMIT_FSIZE, "RLIMIT_FSIZE", l.file_bytes),
            (libc::RLIMIT_CORE, "RLIMIT_CORE", 0),
        ] {
            if !lower_limit(res, value) {
                failed.push(format!(
                    "{name} not set: {}",
                    std::io::Error::last_os_error()
                ));
            }
        }
        failed
    }

    /// Removes the cgroup child (after every worker has exited).
    pub fn release(&self) {
        if let Some(cg) = &self.cgroup {
            for _ in 0..100 {
                if std::fs::remove_dir(cg).is_ok() || !cg.exists() {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
    }
}

/// Sets a soft and hard limit to `value`, never above the current hard limit.
fn lower_limit(res: libc::__rlimit_resource_t, value: u64) -> bool {
    // SAFETY: rl is a valid rlimit64 (64-bit fields on every target, as
    // `value`) for getrlimit64/setrlimit64.
    unsafe {
        let mut rl: libc::rlimit64 = std::mem::zeroed();
        if libc::getrlimit64(res, &mut rl) != 0 {
            return false;
        }
        let v = value.min(rl.rlim_max);
        let new = libc::rlimit64 {
            rlim_cur: v,
            rlim_max: v,
        };
        libc::setrlimit64(res, &new) == 0
    }
}

fn vm_size() -> Option<u64> {
    let t = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = t.lines().find(|l| l.starts_with("VmSize:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
}

fn is_root() -> bool {
    // SAFETY: no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Where the cgroup v2 hierarchy is mounted: the unified mount of a
/// cgroup2-only system or the `unified` directory of a hybrid one.
fn v2_mount() -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
    mounts
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.get(2) == Some(&"cgroup2"))
        .and_then(|f| f.get(1).map(PathBuf::from))
}

/// Our cgroup in the v2 hierarchy (the `0::` line of /proc/self/cgroup).
fn own_v2_cgroup() -> Option<String> {
    let t = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    t.lines()
        .find_map(|l| l.strip_prefix("0::"))
        .map(|p| p.trim_start_matches('/').to_string())
}

/// Why the stress has no cgroup of its own: the text of a confinement
/// note, the run goes on under rlimits only.
#[derive(Debug, thiserror::Error)]
enum CgroupError {
    #[error("no cgroup2 mount")]
    NoMount,
    #[error("this process is in no cgroup v2")]
    NotInOne,
    #[error("cannot read {}/cgroup.subtree_control: {error}", .parent.display())]
    Controllers {
        parent: PathBuf,
        error: std::io::Error,
    },
    /// Enabling a controller would change how everything else here is
    /// accounted: it must already be delegated.
    #[error("the {controller} controller is not enabled for children of {} (cgroup.subtree_control: '{enabled}')", .parent.display())]
    NotDelegated {
        controller: &'static str,
        parent: PathBuf,
        enabled: String,
    },
    #[error("cannot create {}: {error}", .dir.display())]
    Create { dir: PathBuf, error: std::io::Error },
    #[error("cannot set {file}: {error}")]
    Set {
        file: &'static str,
        error: std::io::Error,
    },
}

fn create_cgroup(pids: u64, memory: u64) -> Result<PathBuf, CgroupError> {
    let mount = v2_mount().ok_or(CgroupError::NoMount)?;
    let own = own_v2_cgroup().ok_or(CgroupError::NotInOne)?;
    let parent = mount.join(&own);
    // The controllers must already be delegated to our cgroup's children:
    // enabling them would change how everything else here is accounted.
    let enabled =
        std::fs::read_to_string(parent.join("cgroup.subtree_control")).map_err(|error| {
            CgroupError::Controllers {
                parent: parent.clone(),
                error,
            }
        })?;
    for c in ["pids", "memory"] {
        if !enabled.split_whitespace().any(|x| x == c) {
            return Err(CgroupError::NotDelegated {
                controller: c,
                parent,
                enabled: enabled.trim().into(),
            });
        }
    }
    let dir = parent.join(format!("yamba-stress-{}", std::process::id()));
    std::fs::create_dir(&dir).map_err(|error| CgroupError::Create {
        dir: dir.clone(),
        error,
    })?;
    let set = |file: &'static str, v: String| {
        std::fs::write(dir.join(file), v).map_err(|error| CgroupError::Set { file, error })
    };
    let ok = set("pids.max", pids.to_string())
        .and_then(|_| set("memory.max", memory.to_string()))
        .and_then(|_| set("memory.swap.max", "0".into()).or(Ok(())));
    if let Err(e) = ok {
        let _ = std::fs::remove_dir(&dir);
        return Err(e);
    }
    Ok(dir)
}
