//! Measurement checks of `yamba run --copies 2` through the binary, on
//! benchmarks whose scaling is known by construction (docs/copies.md):
//!
//! - `testing.work`: a dependent chain of multiplies, nothing shared. Two
//!   copies, each pinned to a CPU of its own, each go at one copy's pace:
//!   the two copies' total throughput is twice one copy's, scaling 2.
//! - `testing.locked`: each operation takes an exclusive flock on a file
//!   every copy of the run shares and holds it for 16 000 dependent steps
//!   (~20 µs, beside the lock's own two system calls of ~1 µs): the copies
//!   can only take turns, so two do what one does less the lock's
//!   hand-over, which the check measures beside each attempt.
//!
//! Each attempt is one `yamba run --quick --copies 2` (a fresh run: a
//! one-copy block, then a block of two copies) and yields its scaling;
//! attempts are independent. The rule is the testkit's median check:
//! false-failure rate ≤ 0.1% when the true median of the scaling lies in
//! the accepted region (docs/testing.md). Both hold on a 2-vCPU KVM guest:
//! the chain is latency-bound (one multiply in flight), so even two vCPUs
//! that the host put on one physical core's two hardware threads would
//! each keep its pace; and the lock serializes whatever the CPUs are.

use std::process::Command;
use yamba_testkit::{check, premise_unmet, Accept};

/// One quick run of `bench` as two copies: the scaling of its first
/// copies result, or why there is none (a withheld result counts as none:
/// its checks say the copies did not run as claimed).
fn scaling(bench: &str) -> Result<f64, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = Command::new(env!("CARGO_BIN_EXE_yamba"))
        .current_dir(dir.path())
        .env("YAMBA_TEST_BENCHMARKS", "1")
        .args(["run", "--quick", "--no-history", "--format", "json"])
        // Half a second's sampling: a copy measures for ~0.1 s, and the
        // copies' start-together check allows a tenth of it (a quick
        // pass's 36 ms left 3.6 ms, which a busy guest's wake-ups exceed).
        .args(["--budget", "0.5", "--copies", "2", bench])
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())?;
    let r = v["results"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r.get("copies").is_some()))
        .ok_or("no copies result")?;
    if r["status"] != "ok" {
        return Err(format!("{}: {}", r["status"], r["reason"]));
    }
    let c = &r["copies"];
    println!(
        "{bench}: one copy {} ns, per copy {} ns on CPUs {}, scaling {}",
        c["one_copy"], r["certainty"]["estimate"], c["blocks"][0]["cpus"], c["scaling"]
    );
    c["scaling"].as_f64().ok_or_else(|| "no scaling".into())
}

fn two_cpus() -> bool {
    yamba_core::affinity::usable_cpus().len() >= 2
}

/// Two copies of CPU-bound work on two CPUs: scaling in [1.8, 2.2] — 2 by
/// construction. The scaling comes from means, which a disturbance moves
/// more than a median: beside other builds on the Zen 4 guest single
/// attempts gave 1.58–2.38, their median 2.003–2.005 (31 attempts); alone,
/// 2.00–2.02. Copies on one CPU give ~1.0.
#[test]
fn cpu_bound_work_scales_with_the_copies() {
    if !two_cpus() {
        premise_unmet!("one CPU allowed: two copies cannot each have one");
    }
    check!(
        "testing.work: scaling of 2 copies",
        Accept::between(1.8, 2.2)
    )
    .run(|| scaling("testing.work"));
}

/// The ground truth for `testing.locked`: its very operation
/// ([`yamba_suite::testing::hold_lock`]) done for `REFERENCE_S` by one
/// thread alone, then by two threads pinned to two CPUs, each with its
/// own descriptor of one file (flock locks belong to open files, so the
/// two contend as two processes would): the two's total operations over
/// the one's. Serialized, less what handing the lock over costs — 0.80
/// and 0.82 on the AMD EPYC (Zen 3) guest, where a C program doing the
/// same read the same (2026-12-05).
fn locked_reference() -> Result<f64, String> {
    const REFERENCE_S: f64 = 0.3;
    let cpus = yamba_core::affinity::usable_cpus();
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let path = dir.path().join("lock");
    let ops = |threads: usize| -> Result<u64, String> {
        std::thread::scope(|s| {
            let handles: Vec<_> = cpus[..threads]
                .iter()
                .map(|&cpu| {
                    let path = &path;
                    s.spawn(move || -> Result<u64, String> {
                        yamba_core::affinity::pin_current_thread(cpu)?;
                        let file = std::fs::OpenOptions::new()
                            .create(true)
                            .truncate(false)
                            .write(true)
                            .open(path)
                            .map_err(|e| e.to_string())?;
                        let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
                        let (mut x, mut done) = (1u64, 0u64);
                        let t0 = std::time::Instant::now();
                        while t0.elapsed().as_secs_f64() < REFERENCE_S {
                            if !yamba_suite::testing::hold_lock(fd, &mut x) {
                                return Err("flock refused".into());
                            }
                            done += 1;
                        }
                        std::hint::black_box(x);
                        Ok(done)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .map_err(|_| "a reference thread panicked".to_string())?
                })
                .sum()
        })
    };
    let one = ops(1)?;
    let two = ops(2)?;
    println!("testing.locked reference: one thread {one} operations, two {two}");
    Ok(two as f64 / one.max(1) as f64)
}

/// Two copies serialized on one lock: their scaling over the scaling of
/// the same operation done by two threads beside it (the ground truth,
/// [`locked_reference`]) in [0.85, 1.15]. The truth is 1 less the lock's
/// hand-over (a waiter woken on another vCPU), which the machine sets: on
/// the AMD EPYC (Zen 3) guest 0.80–0.82, where yamba read 0.66–0.91
/// (median ≈ 0.82, 12 attempts). Copies that do not share the lock give
/// 2 over ~0.8, and a scaling that took one copy's throughput for the
/// copies' total ~0.5 over it: both fail. (Until 2026-12-05 a copy that
/// had measured kept busy on a lock file of its own, and the other,
/// still measuring, ran uncontended: ×1.28.)
#[test]
fn copies_serialized_on_one_lock_do_not_scale() {
    if !two_cpus() {
        premise_unmet!("one CPU allowed: two copies cannot each have one");
    }
    check!(
        "testing.locked: scaling of 2 copies over two threads' on the same lock",
        Accept::between(0.85, 1.15)
    )
    .run(|| -> Result<f64, String> {
        let truth = locked_reference()?;
        Ok(scaling("testing.locked")? / truth)
    });
}
