//! Ground truth for the system call shapes: C loops compiled here by `cc`
//! make the same calls in the same three shapes — the raw instruction
//! inline, a call to a `syscall; ret` function, libc's wrapper — and must
//! measure what `yamba run cpu.syscall` reports for each, within ±5%, side
//! by side in one run: the C program runs before and after yamba, on the
//! same CPU, compared as ratios, up to three attempts for noise.
//!
//! It runs the `yamba` binary, as a user does: each benchmark in a fresh
//! single-threaded process. (A fork of this multi-threaded test process
//! would measure glibc's multi-threaded read(), ~20 ns dearer.)

use std::path::{Path, PathBuf};
use std::process::Command;

/// Each shape timed in rounds of `n` calls, the shapes interleaved round
/// by round, the empty loop's time subtracted; prints
/// `name median_ns_per_call` for each. Rounds are as short as a quick
/// yamba run's observations (~170 calls, ~20 µs) and many: on a busy VM
/// longer rounds all catch some of the frequent small interruptions and
/// measure ~4% more per call (1000-call rounds did), short ones mostly do
/// not, so the two medians see the same machine.
const REFERENCE: &str = r#"
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#define NR_GETPPID 110
#define NR_READ 0
static inline long sys0(long nr) {
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "0"(nr) : "rcx", "r11", "memory");
    return r;
}
static inline long sys3(long nr, long a, long b, long c) {
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "0"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}
#elif defined(__aarch64__)
#define NR_GETPPID 173
#define NR_READ 63
static inline long sys0(long nr) {
    register long x8 __asm__("x8") = nr;
    register long x0 __asm__("x0");
    __asm__ volatile("svc #0" : "=r"(x0) : "r"(x8) : "memory");
    return x0;
}
static inline long sys3(long nr, long a, long b, long c) {
    register long x8 __asm__("x8") = nr;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    __asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
    return x0;
}
#endif

__attribute__((noinline)) long wrapped_getppid(void) { return sys0(NR_GETPPID); }
__attribute__((noinline)) long wrapped_read(long fd, long buf, long n) { return sys3(NR_READ, fd, buf, n); }

static int fd;
static char buf[1];
static long bad;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

/* One timed loop per shape, nothing else in its body, unrolled 8 times
   as yamba's loop method unrolls P'' (n is a multiple of 8). */
#define LOOP(name, body)                                                   \
    static double name(long n) {                                           \
        double t0 = now();                                                 \
        for (long i = 0; i < n; i += 8) {                                  \
            body; body; body; body; body; body; body; body;                \
        }                                                                  \
        return (now() - t0) / n;                                           \
    }
LOOP(empty, __asm__ volatile("" ::: "memory"))
LOOP(getppid_inline, bad += sys0(NR_GETPPID) <= 0)
LOOP(getppid_call, bad += wrapped_getppid() <= 0)
LOOP(getppid_libc, bad += getppid() <= 0)
LOOP(read_inline, bad += sys3(NR_READ, fd, (long)buf, 1) != 1)
LOOP(read_call, bad += wrapped_read(fd, (long)buf, 1) != 1)
LOOP(read_libc, bad += read(fd, buf, 1) != 1)
static double (*const loops[7])(long) = {empty, getppid_inline, getppid_call, getppid_libc,
                                         read_inline, read_call, read_libc};

static double round_of(int shape, long n) { return loops[shape](n); }

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc != 4) return 2;
    int cpu = atoi(argv[1]), rounds = atoi(argv[2]);
    long n = atol(argv[3]);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) { perror("sched_setaffinity"); return 1; }
    fd = open("/dev/zero", O_RDONLY);
    if (fd < 0) { perror("/dev/zero"); return 1; }
    static const char *names[] = {"empty", "getppid.inline", "getppid.call", "getppid.libc",
                                  "read.inline", "read.call", "read.libc"};
    double *t[7];
    for (int s = 0; s < 7; s++) { t[s] = malloc(rounds * sizeof(double)); round_of(s, n / 4); }
    for (int r = 0; r < rounds; r++)
        for (int s = 0; s < 7; s++) t[s][r] = round_of(s, n);
    for (int s = 0; s < 7; s++) qsort(t[s], rounds, sizeof(double), cmp);
    double empty = t[0][rounds / 2];
    for (int s = 1; s < 7; s++) printf("%s %.4f\n", names[s], t[s][rounds / 2] - empty);
    return bad != 0;
}
"#;

/// (C reference's name, yamba's result id) for each shape.
const PAIRS: [(&str, &str); 6] = [
    ("getppid.inline", "cpu.syscall.getppid"),
    ("getppid.call", "cpu.syscall.getppid.call"),
    ("getppid.libc", "cpu.syscall.getppid.libc"),
    ("read.inline", "cpu.syscall.read_devzero"),
    ("read.call", "cpu.syscall.read_devzero.call"),
    ("read.libc", "cpu.syscall.read_devzero.libc"),
];

fn compile(dir: &Path) -> PathBuf {
    let src = dir.join("syscall_shapes_ref.c");
    let exe = dir.join("syscall_shapes_ref");
    std::fs::write(&src, REFERENCE).unwrap();
    let out = Command::new("cc")
        .args(["-O2", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap_or_else(|e| panic!("cannot run cc (.ci/install installs gcc): {e}"));
    assert!(
        out.status.success(),
        "cc failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// One run of the C reference on `cpu`: name → ns per call.
fn reference(exe: &Path, cpu: usize) -> Vec<(String, f64)> {
    let out = Command::new(exe)
        .args([cpu.to_string(), "5001".into(), "168".into()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "reference failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let (name, ns) = l.split_once(' ').unwrap();
            (name.to_string(), ns.parse().unwrap())
        })
        .collect()
}

/// `yamba run --quick --cpu CPU cpu.syscall`: result id → (status, median ns).
fn yamba(dir: &Path, cpu: usize) -> Vec<(String, String, f64)> {
    let out = dir.join("r.json");
    let o = Command::new(env!("CARGO_BIN_EXE_yamba"))
        .current_dir(dir)
        .args(["run", "--quick", "--cpu", &cpu.to_string(), "cpu.syscall"])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_string(),
                r["status"].as_str().unwrap().to_string(),
                r["summary"]["median"].as_f64().unwrap_or(f64::NAN),
            )
        })
        .collect()
}

#[test]
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
fn three_shapes_measure_what_c_loops_of_those_shapes_measure() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path());
    // The CPU yamba would pick (the last usable one), for both.
    let cpu = yamba_core::affinity::default_cpu();
    let mut last = String::new();
    for attempt in 1..=3 {
        // C, yamba, C: the reference brackets yamba's measurement in time.
        let before = reference(&exe, cpu);
        let ys = yamba(dir.path(), cpu);
        let after = reference(&exe, cpu);
        let mut report = Vec::new();
        let mut ok = true;
        for (c_name, id) in PAIRS {
            let (_, status, y_ns) = ys
                .iter()
                .find(|(i, _, _)| i == id)
                .unwrap_or_else(|| panic!("no {id} in {ys:?}"));
            assert_eq!(status, "ok", "{id}");
            let c = |v: &[(String, f64)]| v.iter().find(|(n, _)| n == c_name).unwrap().1;
            let c_ns = (c(&before) + c(&after)) / 2.0;
            let ratio = y_ns / c_ns;
            ok &= (ratio - 1.0).abs() <= 0.05;
            report.push(format!(
                "{id}: yamba {y_ns:.1} ns, C {c_ns:.1} ns (before {:.1}, after {:.1}), ratio {ratio:.3}",
                c(&before),
                c(&after)
            ));
        }
        last = report.join("\n");
        eprintln!("attempt {attempt}:\n{last}");
        if ok {
            return;
        }
    }
    panic!("a shape differs from its C loop by more than 5% in 3 attempts:\n{last}");
}
