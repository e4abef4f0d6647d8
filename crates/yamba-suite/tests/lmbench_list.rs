//! Ground truth for the benchmarks that complete lmbench's list (issue 11
//! §3): known work (a chain of N adds timed by another clock, bytes moved
//! through a pipe, pages written through a mapping, files counted in a
//! directory, a path N components deep), known counts checked by the
//! benchmarks' own evidence, and ratios measured in one run. Statistical
//! checks get up to three attempts; the tests run one at a time.

mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use support::{attempts, find, serial};
use yamba_core::{BenchResult, Benchmark, Clock, Mode, RunConfig, Status};
use yamba_suite::{cpu, fs, ipc, mem, net, proc};

fn run_with(b: &'static Benchmark, settings: &[(&str, &str)]) -> Vec<BenchResult> {
    let mut config = RunConfig::quick();
    config.settings = settings
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect::<BTreeMap<_, _>>();
    support::run_config(config, b, Mode::Hot)
}

fn run(b: &'static Benchmark) -> Vec<BenchResult> {
    let rs = run_with(b, &[]);
    for r in &rs {
        eprintln!(
            "{} {:?} median {:?} {:?}",
            r.id,
            r.status,
            r.median(),
            r.reason
        );
    }
    rs
}

fn pin() -> usize {
    let cpu = yamba_core::affinity::default_cpu();
    yamba_core::affinity::pin_current_thread(cpu).unwrap();
    cpu
}

/// Ok, and every gating check held.
fn assert_ok(r: &BenchResult) {
    assert_eq!(
        r.status,
        Status::Ok,
        "{}: {:?} {:?}",
        r.id,
        r.reason,
        r.evidence
    );
    assert!(r.median().is_some_and(|m| m > 0.0), "{}", r.id);
}

fn evidence<'a>(r: &'a BenchResult, starts: &str) -> &'a yamba_core::Evidence {
    r.evidence
        .iter()
        .find(|e| e.check.starts_with(starts))
        .unwrap_or_else(|| panic!("{} has no evidence '{starts}…': {:?}", r.id, r.evidence))
}

fn median(r: &BenchResult) -> f64 {
    r.median().unwrap()
}

/// N dependent register adds (N a multiple of 100): N core cycles.
#[cfg(target_arch = "x86_64")]
fn add_chain(n: u64) -> u64 {
    let mut x = 0u64;
    for _ in 0..n / 100 {
        // SAFETY: register arithmetic only.
        unsafe {
            std::arch::asm!(".rept 100", "add {x}, {one}", ".endr", x = inout(reg) x,
                one = in(reg) 1u64, options(nomem, nostack));
        }
    }
    x
}

#[cfg(target_arch = "aarch64")]
fn add_chain(n: u64) -> u64 {
    let mut x = 0u64;
    for _ in 0..n / 100 {
        // SAFETY: register arithmetic only.
        unsafe {
            std::arch::asm!(".rept 100", "add {x}, {x}, {one}", ".endr", x = inout(reg) x,
                one = in(reg) 1u64, options(nomem, nostack));
        }
    }
    x
}

/// The core clock cpu.mhz reports runs a chain of N dependent adds, timed
/// here by CLOCK_MONOTONIC (pieces of ~0.1 ms, their median), in N cycles
/// (±5%): the benchmark's clock is the core's, whatever the time-stamp
/// counter says.
#[test]
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn core_clock_runs_a_known_chain_in_its_length_in_cycles() {
    let _g = serial();
    pin();
    attempts(|| {
        let rs = run(&cpu::mhz::MHZ);
        let r = find(&rs, "cpu.mhz");
        assert_ok(r);
        let hz = median(r);
        // 0.1 s of chain in 1000 pieces, each timed: on a busy machine
        // most pieces run without another task's time slice in them.
        let n = 300_000u64;
        let mut pieces: Vec<f64> = (0..1000)
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(add_chain(n));
                t.elapsed().as_secs_f64()
            })
            .collect();
        pieces.sort_by(f64::total_cmp);
        let best = pieces[pieces.len() / 2];
        let chain_hz = n as f64 / best;
        let core = &r.extra["core_clock"];
        eprintln!(
            "cpu.mhz {:.0} MHz; {n} adds in {best:.4} s = {:.0} MHz; time-stamp counter {:.0} MHz (core/counter {:.3}; on a VM the two may differ)",
            hz / 1e6,
            chain_hz / 1e6,
            core["timer_counter_hz"].as_f64().unwrap() / 1e6,
            core["core_over_counter"].as_f64().unwrap(),
        );
        let ratio = chain_hz / hz;
        if (0.95..=1.05).contains(&ratio) {
            Ok(())
        } else {
            Err(format!("the chain ran at {ratio:.3}× the reported clock"))
        }
    });
}

/// Dependent adds take one cycle, a multiply more, a divide more than a
/// multiply — in every integer and float type — and an x86-64 64-bit
/// multiply exactly its documented three cycles.
#[test]
fn operation_latencies_order_as_the_hardware_does() {
    let _g = serial();
    pin();
    attempts(|| {
        let rs = run(&cpu::ops::OPS);
        assert_eq!(rs.len(), cpu::ops::PAIRS.len());
        for r in &rs {
            assert_ok(r);
        }
        let cycles = |op: &str| {
            find(&rs, &format!("cpu.ops.{op}")).params["cycles"]
                .as_f64()
                .unwrap()
        };
        let mut bad = Vec::new();
        for op in ["i32.add", "i64.add", "i32.bit", "i64.bit"] {
            if !cpu::ops::ONE_CYCLE.contains(&cycles(op)) {
                bad.push(format!("{op} {:.2} cycles", cycles(op)));
            }
        }
        for (slow, fast) in [
            ("i32.mul", "i32.add"),
            ("i64.mul", "i64.add"),
            ("i32.div", "i32.mul"),
            ("i64.div", "i64.mul"),
            ("f32.div", "f32.mul"),
            ("f64.div", "f64.mul"),
            ("f64.mul", "i64.add"),
        ] {
            if cycles(slow) <= 1.2 * cycles(fast) {
                bad.push(format!(
                    "{slow} {:.2} not above {fast} {:.2}",
                    cycles(slow),
                    cycles(fast)
                ));
            }
        }
        if cfg!(target_arch = "x86_64") && !(2.7..=3.3).contains(&cycles("i64.mul")) {
            bad.push(format!("i64.mul {:.2} cycles, not 3", cycles("i64.mul")));
        }
        if bad.is_empty() {
            Ok(())
        } else {
            Err(bad.join("; "))
        }
    });
}

/// Whether a parallelism curve rises (within noise) up to its maximum.
fn rises_to_its_peak(points: &[[f64; 2]]) -> bool {
    let peak = (0..points.len())
        .max_by(|&a, &b| points[a][1].total_cmp(&points[b][1]))
        .unwrap();
    points[..=peak]
        .windows(2)
        .all(|w| w[1][1] >= 0.85 * w[0][1])
}

/// Parallelism lies between 1 and the number of chains, rises to its
/// peak, and independent adds overlap more than independent divides.
#[test]
fn operation_parallelism_is_bounded_by_the_chains() {
    let _g = serial();
    pin();
    attempts(|| {
        let rs = run(&cpu::ops::PARALLEL);
        let mut bad = Vec::new();
        for r in &rs {
            assert_ok(r);
            let pts = &r.series.as_ref().unwrap().points;
            let kmax = pts.last().unwrap()[0];
            let par = median(r);
            if !(0.9..=kmax * 1.05).contains(&par) || !rises_to_its_peak(pts) {
                bad.push(format!("{}: {par:.2}, curve {pts:?}", r.id));
            }
        }
        let par = |op: &str| median(find(&rs, &format!("cpu.ops.parallel.{op}")));
        if par("i64.add") < 1.8 || par("i64.add") <= par("i64.div") {
            bad.push(format!(
                "i64 add overlaps {:.2}, div {:.2}",
                par("i64.add"),
                par("i64.div")
            ));
        }
        if bad.is_empty() {
            Ok(())
        } else {
            Err(bad.join("; "))
        }
    });
}

/// Memory-level parallelism: at least two misses overlap on any
/// out-of-order core, never more than the chases, and the curve rises to
/// its peak.
#[test]
fn memory_parallelism_is_bounded_by_the_chases() {
    let _g = serial();
    attempts(|| {
        let rs = run(&mem::parallelism::PARALLELISM);
        let r = find(&rs, "mem.parallelism");
        assert_ok(r);
        evidence(r, "every chase ran the steps counted");
        let pts = r.series.as_ref().unwrap().points.clone();
        let kmax = pts.last().unwrap()[0];
        let par = median(r);
        let two = pts.iter().find(|p| p[0] == 2.0).unwrap()[1];
        if (1.0..=kmax).contains(&par) && two >= 1.5 && rises_to_its_peak(&pts) {
            Ok(())
        } else {
            Err(format!("par {par:.2}, par(2) {two:.2}, curve {pts:?}"))
        }
    });
}

/// Known work: 4 MiB through the pipe takes 4 times as long as 1 MiB,
/// measured in turns; and the benchmark's bytes arrive intact.
#[test]
fn pipe_moves_four_times_the_bytes_in_four_times_the_time() {
    let _g = serial();
    let cpu = pin();
    let clock = Clock::detect(50);
    let stats = ipc::peer::Shared::<ipc::peer::PeerStats>::new_zeroed().unwrap();
    let (r, writer) = ipc::pipe_bw::spawn_writer(cpu, &stats).unwrap();
    attempts(|| {
        let (mut one, mut four) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            let t = ipc::pipe_bw::read_transfers(&clock, r, cpu, 1 << 20, 8, Duration::ZERO);
            assert_eq!((t.corrupt, t.failed), (0, 0));
            one.extend(t.ns);
            let t = ipc::pipe_bw::read_transfers(&clock, r, cpu, 4 << 20, 8, Duration::ZERO);
            assert_eq!((t.corrupt, t.failed), (0, 0));
            four.extend(t.ns);
        }
        let m = |v: &[f64]| yamba_stats::Summary::of(v).unwrap().median;
        let ratio = m(&four) / m(&one);
        eprintln!(
            "1 MiB {:.0} ns, 4 MiB {:.0} ns: ratio {ratio:.2}",
            m(&one),
            m(&four)
        );
        if (3.2..=4.8).contains(&ratio) {
            Ok(())
        } else {
            Err(format!("4 MiB took {ratio:.2}× as long as 1 MiB"))
        }
    });
    drop(writer);
    ipc::adapter::close(r);
    let rs = run(&ipc::pipe_bw::PIPE_BW);
    let same = find(&rs, "ipc.bw.pipe.same_cpu");
    assert_ok(same);
    assert!(evidence(same, "the bytes arrived intact").ok);
}

/// The ring's processes really touch their working sets (every hop's sum
/// is reported and checked) and each gives up the CPU once per round; the
/// whole sweep gives one checked curve per size.
#[test]
fn context_switch_sweep_touches_every_working_set() {
    let _g = serial();
    let cpu = pin();
    let clock = Clock::detect(50);
    assert!(ipc::adapter::set_batch(true).unwrap());
    let p = ipc::ctx_sweep::measure_point(&clock, cpu, 4, 16 << 10, 5, Duration::from_millis(20));
    ipc::adapter::set_batch(false).unwrap();
    let p = p.unwrap();
    eprintln!("{p:?}");
    assert_eq!(p.tokens_lost, 0);
    assert_eq!(p.untouched, 0, "{:?}", p.untouched_first);
    assert!(p.rounds > 0);
    assert!(p.child_switches.0 >= 0.97 && p.child_switches.1 <= 1.3);
    assert!(p.round_ns / 4.0 > p.alone_ns);

    let rs = run(&ipc::ctx_sweep::SWEEP);
    assert_eq!(rs.len(), ipc::ctx_sweep::SIZES.len());
    for r in &rs {
        assert_ok(r);
        assert!(evidence(r, "every process summed its whole working set").ok);
        let pts = &r.series.as_ref().unwrap().points;
        assert_eq!(pts.first().unwrap()[0], 2.0);
        assert_eq!(pts.last().unwrap()[0], ipc::ctx_sweep::MAX_PROCS as f64);
    }
}

/// Known work: the cost of mmap + writes + munmap grows with the pages
/// written — from 4 MiB to 32 MiB (179 more pages) by about 8 times what
/// it grows from 512 KiB to 4 MiB (22 more) — and every write faulted.
#[test]
fn mmap_cost_grows_with_the_pages_written() {
    let _g = serial();
    pin();
    attempts(|| {
        let rs = run(&mem::mmap::MMAP);
        assert_eq!(rs.len(), mem::mmap::SIZES.len());
        for r in &rs {
            assert_ok(r);
        }
        let t = |s: &str| median(find(&rs, &format!("mem.mmap.{s}")));
        let pages = |size: usize| mem::mmap::touches(size) as f64;
        let want = (pages(32 << 20) - pages(4 << 20)) / (pages(4 << 20) - pages(512 << 10));
        let got = (t("32m") - t("4m")) / (t("4m") - t("512k"));
        eprintln!("growth ratio {got:.2}, pages ratio {want:.2}");
        if (0.7 * want..=1.4 * want).contains(&got) {
            Ok(())
        } else {
            Err(format!("cost grew {got:.2}× where pages grew {want:.2}×"))
        }
    });
}

/// libc's memset and memcpy, the in-place update and STREAM's add and
/// scale leave exactly the values they must (checked word by word or by
/// checksum), one thread and one per CPU.
#[test]
fn new_bandwidth_kernels_are_checked() {
    let _g = serial();
    for (b, check) in [
        (
            &mem::bandwidth::BCOPY,
            "the destination holds every source word",
        ),
        (&mem::bandwidth::BZERO, "every word is zero"),
        (&mem::bandwidth::RDWR, "every word grew"),
        (&mem::bandwidth::ADD, "every element processed equals a + b"),
        (&mem::bandwidth::SCALE, "every element processed equals s·a"),
    ] {
        let rs = run_with(b, &[("mem.bw_size", "16M")]);
        assert_eq!(rs.len(), 2, "{}", b.id);
        for r in &rs {
            let e = evidence(r, check);
            assert!(e.ok, "{}: {e:?}", r.id);
            // 16 MiB arrays are too small to leave the cache: only that
            // check may withhold them.
            for e in r.evidence.iter().filter(|e| e.gating && !e.ok) {
                assert!(e.check.contains("last-level cache"), "{}: {e:?}", r.id);
            }
        }
    }
}

/// Files are counted after each batch; and the rates add up to the time:
/// batches of K files at the measured rates account for most of the wall
/// time the measurement took, and never more.
#[test]
fn create_and_delete_rates_count_real_files() {
    let _g = serial();
    pin();
    let clock = Clock::detect(50);
    let dir = tempfile::tempdir().unwrap();
    let t0 = Instant::now();
    let rates =
        fs::create_delete::measure(&clock, &dir.path().join("cd"), 4096, 50, 20, Duration::ZERO)
            .unwrap();
    let wall = t0.elapsed().as_secs_f64();
    assert_eq!(rates.failed, 0);
    assert!(rates.after_create.iter().all(|&c| c == (50, 50)));
    assert!(rates.after_delete.iter().all(|&c| c == 0));
    let timed: f64 = rates
        .create_per_s
        .iter()
        .chain(&rates.delete_per_s)
        .map(|r| 50.0 / r)
        .sum();
    eprintln!("timed {timed:.4} s of {wall:.4} s");
    assert!(timed <= wall && timed >= 0.3 * wall, "{timed} of {wall}");
    for r in run(&fs::create_delete::SIZE_1K) {
        assert_ok(&r);
        assert!(evidence(&r, "the files were counted").ok);
    }
}

/// A real connection is checked three ways; lmbench's loop with no server
/// listening times refused connects, and the result says so and is
/// withheld.
#[test]
fn refused_connections_are_not_reported_as_connections() {
    let _g = serial();
    let rs = run(&net::connect_close::CONNECT_CLOSE);
    let ok = find(&rs, "net.tcp.connect_close");
    assert_ok(ok);
    assert!(evidence(ok, "the server accepted every connection").ok);
    let rs = run(&net::connect_close::REFUSED_NAIVE);
    let naive = find(&rs, "net.tcp.connect_refused_naive");
    assert_eq!(naive.status, Status::Withheld, "{:?}", naive.reason);
    assert!(naive.reason.as_deref().unwrap().contains("really made"));
    let made = evidence(naive, "every connection was really made");
    assert!(!made.ok && made.observed.contains("refused"), "{made:?}");
    assert!(
        naive.median().unwrap() > 0.0,
        "the number is kept for diagnosis"
    );
    assert_eq!(
        naive.params["refused"].as_u64().unwrap() as usize,
        naive.observations.len() + 1,
        "every attempt (and the untimed warm-up) was refused"
    );
}

/// Known work: opening a file 20 path components deeper costs more; the
/// write goes to the null device; fstat sees the file's size.
#[test]
fn file_syscalls_do_what_they_claim() {
    let _g = serial();
    pin();
    for b in [
        &cpu::file_syscalls::WRITE_DEVNULL,
        &cpu::file_syscalls::FSTAT,
        &cpu::file_syscalls::OPEN,
    ] {
        for r in run(b) {
            assert_ok(&r);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let shallow = dir.path().join("f");
    let mut deep = dir.path().to_path_buf();
    for i in 0..20 {
        deep.push(format!("d{i}"));
    }
    std::fs::create_dir_all(&deep).unwrap();
    let deep = deep.join("f");
    std::fs::write(&shallow, b"x").unwrap();
    std::fs::write(&deep, b"x").unwrap();
    attempts(|| {
        let t = |p: &std::path::Path| {
            let rs = run_with(
                &cpu::file_syscalls::OPEN,
                &[("cpu.syscall.path", p.to_str().unwrap())],
            );
            assert_ok(&rs[0]);
            median(&rs[0])
        };
        let (s, d) = (t(&shallow), t(&deep));
        eprintln!("open: {s:.0} ns shallow, {d:.0} ns 20 components deeper");
        if d > 1.2 * s {
            Ok(())
        } else {
            Err(format!("deep {d:.0} ns vs shallow {s:.0} ns"))
        }
    });
}

/// The shell really ran the command (its exit status), and starting a
/// shell costs more than a vfork that runs nothing.
#[test]
fn shell_runs_the_command_and_costs_more_than_a_vfork() {
    let _g = serial();
    pin();
    attempts(|| {
        let rs = run(&proc::shell::SHELL_BENCH);
        let shell = find(&rs, "proc.shell");
        assert_ok(shell);
        assert!(evidence(shell, "every child really ran").ok);
        let vfork = run(&proc::exec::VFORK);
        let v = median(find(&vfork, "proc.vfork"));
        if median(shell) > 3.0 * v {
            Ok(())
        } else {
            Err(format!("shell {:.0} ns, vfork {v:.0} ns", median(shell)))
        }
    });
}
