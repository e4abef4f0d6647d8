//! Issue 27 through the binary: the failures an attacker found, each as a
//! user meets it. Every test is deterministic and bounded in time.
//!
//! - §2 `--out` never replaces a device node, a FIFO, a socket or a
//!   directory: a one-line error, the node untouched (select, export,
//!   report, plot, run's results file);
//! - §4 a zstd bomb, a file claiming a huge number of observations and a
//!   huge plain file are refused (or read) in bounded memory, with one line
//!   naming the limit and the variable that raises it; /dev/zero is refused
//!   by every reader at once; reading memory grows linearly with a file;
//! - §7 10 000 nested parentheses, blocks or unary minus give a located
//!   error, not a stack overflow;
//! - and the smaller ones: a broken pipe ends quietly, control characters
//!   from a results file never reach the terminal, an `include` outside
//!   the program's folder shows nothing of the file, `stone` leaves no
//!   background child and has `--timeout`, `lang run` has `--timeout`, a
//!   `--remote` run that fails exits non-zero.

use std::io::{Read, Write};
use std::os::unix::fs::FileTypeExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../yamba-report/tests/data/quick-both.json"
);

fn yamba() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_yamba"));
    c.env_remove("YAMBA_TOKEN")
        .env_remove("YAMBA_MAX_RESULTS_SIZE")
        .env_remove("YAMBA_MAX_OBSERVATIONS")
        // A history of the tests' own in Cargo's scratch folder for tests:
        // never the user's, and nothing left outside target/ (a made-up
        // path under / was created when the tests ran as root).
        .env(
            "YAMBA_HISTORY",
            concat!(env!("CARGO_TARGET_TMPDIR"), "/security-history.sqlite"),
        );
    c
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// What a command did: exit status, stdout, stderr, peak RSS (KiB, from
/// wait4) and how long it ran. It is killed after `limit`.
struct Done {
    status: std::process::ExitStatus,
    out: String,
    err: String,
    rss_kib: u64,
    took: Duration,
    killed: bool,
}

fn run_bounded(mut c: Command, limit: Duration) -> Done {
    c.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let t0 = Instant::now();
    let mut child = c.spawn().unwrap();
    let pid = child.id() as i32;
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let a = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = so.read_to_end(&mut v);
        v
    });
    let b = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = se.read_to_end(&mut v);
        v
    });
    let (status, rss, killed) = wait_rss(pid, t0, limit);
    std::mem::forget(child);
    Done {
        status,
        out: text(&a.join().unwrap()),
        err: text(&b.join().unwrap()),
        rss_kib: rss,
        took: t0.elapsed(),
        killed,
    }
}

/// The peak resident memory of the program `pid` runs now (VmHWM, KiB).
/// Not wait4's ru_maxrss: that counts the test process's own memory too,
/// which the child shared until its exec.
fn vm_hwm(pid: i32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Waits for `pid` (killing it after `limit`): its status and peak RSS
/// (the largest VmHWM seen, polled every 2 ms until it exits).
fn wait_rss(pid: i32, t0: Instant, limit: Duration) -> (std::process::ExitStatus, u64, bool) {
    let mut killed = false;
    let mut peak = 0u64;
    loop {
        if let Some(h) = vm_hwm(pid) {
            peak = peak.max(h);
        }
        let mut status = 0;
        // SAFETY: rusage is plain data for wait4 to fill.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: our own child; status and ru are ours to fill.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut ru) };
        if r == pid {
            let _ = ru.ru_maxrss;
            return (std::process::ExitStatus::from_raw(status), peak, killed);
        }
        if !killed && t0.elapsed() > limit {
            // SAFETY: kill of our own child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            killed = true;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn fixture() -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(FIXTURE).unwrap()).unwrap()
}

fn write_json(path: &Path, v: &serde_json::Value) {
    std::fs::write(path, serde_json::to_vec(v).unwrap()).unwrap();
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// A character device (1,3: what /dev/null is) at `p`, when this process
/// may make one (root); None otherwise.
fn mkchardev(p: &Path) -> Option<()> {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid C string; makedev is arithmetic.
    let r = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o600, libc::makedev(1, 3)) };
    (r == 0).then_some(())
}

fn one_line(s: &str) -> bool {
    s.trim_end().lines().count() == 1
}

// ---------------------------------------------------------------- §2

/// §2. Every writer of a results file or report asked to write over a
/// FIFO, a character device, a socket or a directory refuses with one
/// line, and the node is still what it was.
#[test]
fn out_never_replaces_a_device_a_fifo_a_socket_or_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.json");
    std::fs::copy(FIXTURE, &good).unwrap();
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    let dev = dir.path().join("null");
    let have_dev = mkchardev(&dev).is_some();
    if !have_dev {
        eprintln!("out_never_replaces…: NOT CHECKED for a device node: mknod needs root");
    }
    let sock = dir.path().join("sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let subdir = dir.path().join("sub");
    std::fs::create_dir(&subdir).unwrap();
    let mut targets: Vec<(&Path, &str)> =
        vec![(&fifo, "FIFO"), (&sock, "socket"), (&subdir, "directory")];
    if have_dev {
        targets.push((&dev, "device"));
    }
    let g = good.to_str().unwrap();
    let mut attempts = 0;
    for (target, kind) in &targets {
        let t = target.to_str().unwrap();
        let cmds: Vec<Vec<&str>> = vec![
            vec!["select", g, "cpu.base", "--out", t],
            vec!["export", g, "--format", "csv", "--out", t],
            vec!["export", g, "--format", "lmbench", "--out", t],
            vec!["report", g, "-o", t],
            vec!["plot", g, "cpu.base", "--output", t],
        ];
        for args in cmds {
            let mut c = yamba();
            c.args(&args);
            let d = run_bounded(c, Duration::from_secs(60));
            attempts += 1;
            assert!(!d.killed, "{args:?} hung");
            assert_ne!(d.status.code(), Some(0), "{args:?} wrote over a {kind}");
            let ft = std::fs::symlink_metadata(target).unwrap().file_type();
            let same = match *kind {
                "FIFO" => ft.is_fifo(),
                "socket" => ft.is_socket(),
                "directory" => ft.is_dir(),
                _ => ft.is_char_device(),
            };
            assert!(same, "{args:?}: the {kind} was replaced");
            // `plot` refuses a name without .svg/.png before anything else.
            // (The fixture's own warnings come first: its statistics were
            // thinned with its observations.)
            let errors: Vec<&str> = d.err.lines().filter(|l| !l.contains("warning:")).collect();
            if args[0] != "plot" {
                assert!(
                    errors.len() == 1 && errors[0].contains("not a regular file"),
                    "{args:?}: {}",
                    d.err
                );
            }
        }
    }
    println!(
        "{attempts} writes over a {} : 0 replaced",
        targets
            .iter()
            .map(|(_, k)| *k)
            .collect::<Vec<_>>()
            .join(", ")
    );
    // A results file name that is a FIFO, for `plot --output x.svg`.
    let svg_fifo = dir.path().join("p.svg");
    mkfifo(&svg_fifo);
    let mut c = yamba();
    c.args([
        "plot",
        g,
        "cpu.base",
        "--output",
        svg_fifo.to_str().unwrap(),
    ]);
    let d = run_bounded(c, Duration::from_secs(60));
    assert_ne!(d.status.code(), Some(0));
    assert!(std::fs::symlink_metadata(&svg_fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    // A regular file and a new name are still written.
    let new = dir.path().join("new.json");
    let mut c = yamba();
    c.args(["select", g, "cpu.base", "--out", new.to_str().unwrap()]);
    let d = run_bounded(c, Duration::from_secs(60));
    assert_eq!(d.status.code(), Some(0), "{}", d.err);
    let mut c = yamba();
    c.args(["select", g, "cpu", "--out", new.to_str().unwrap()]);
    let d = run_bounded(c, Duration::from_secs(60));
    assert_eq!(d.status.code(), Some(0), "{}", d.err);
}

// ---------------------------------------------------------------- §4

/// A zstd stream of `head`, then `pad` bytes of `fill`, then `tail`.
fn zstd_of(head: &[u8], fill: u8, pad: u64, tail: &[u8], out: &Path) {
    let mut w = std::io::BufWriter::new(std::fs::File::create(out).unwrap());
    let mut z = zstd::stream::Encoder::new(&mut w, 1).unwrap();
    z.write_all(head).unwrap();
    let block = vec![fill; 1 << 20];
    let mut left = pad;
    while left > 0 {
        let k = left.min(block.len() as u64) as usize;
        z.write_all(&block[..k]).unwrap();
        left -= k as u64;
    }
    z.write_all(tail).unwrap();
    z.finish().unwrap();
}

/// §4. A small .json.zst padded with 1 GiB of spaces (a valid file
/// otherwise): with a 256 MB cap it is refused with one line naming the
/// limit and YAMBA_MAX_RESULTS_SIZE, in bounded memory. Before: the whole
/// gigabyte was decompressed into memory, then parsed.
#[test]
fn a_zstd_bomb_is_refused_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let bomb = dir.path().join("bomb.json.zst");
    let text = std::fs::read(FIXTURE).unwrap();
    // Spaces before the closing brace: valid JSON all along.
    let cut = text.iter().rposition(|&b| b == b'}').unwrap();
    zstd_of(&text[..cut], b' ', 1 << 30, &text[cut..], &bomb);
    let size = std::fs::metadata(&bomb).unwrap().len();
    eprintln!("bomb: {size} bytes compressed, 1 GiB decompressed");
    for cmd in ["summary", "report"] {
        let mut c = yamba();
        c.env("YAMBA_MAX_RESULTS_SIZE", "256M").arg(cmd).arg(&bomb);
        if cmd == "report" {
            c.arg("-o").arg(dir.path().join("r.html"));
        }
        let d = run_bounded(c, Duration::from_secs(120));
        eprintln!(
            "{cmd} of the bomb: exit {:?}, peak RSS {} MiB, {:.1} s: {}",
            d.status.code(),
            d.rss_kib / 1024,
            d.took.as_secs_f64(),
            d.err.trim()
        );
        assert!(!d.killed);
        assert_eq!(d.status.code(), Some(2), "{}", d.err);
        assert!(
            d.err.contains("YAMBA_MAX_RESULTS_SIZE") && one_line(&d.err),
            "{}",
            d.err
        );
        assert!(d.rss_kib < 150 * 1024, "peak RSS {} KiB", d.rss_kib);
    }
    // The same padding under the default limit (2 GiB) is read, in
    // memory that does not grow with the spaces.
    let mut c = yamba();
    c.arg("summary").arg(&bomb);
    let d = run_bounded(c, Duration::from_secs(120));
    eprintln!(
        "summary of the bomb, default limit: exit {:?}, peak RSS {} MiB, {:.1} s",
        d.status.code(),
        d.rss_kib / 1024,
        d.took.as_secs_f64()
    );
    assert_eq!(d.status.code(), Some(0), "{}", d.err);
    assert!(d.rss_kib < 150 * 1024, "peak RSS {} KiB", d.rss_kib);
}

/// §4. A 50 KB .json.zst claiming 2×10⁷ observations of one result:
/// refused under a cap of 10⁶ with one line naming it and
/// YAMBA_MAX_OBSERVATIONS; read under the default cap in memory about 4×
/// its decompressed size (8-byte numbers from 2-byte "0,"), not 16×.
#[test]
fn a_file_claiming_many_observations_is_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("many.json.zst");
    let mut v = fixture();
    v["results"] = serde_json::Value::Array(vec![v["results"][0].clone()]);
    v["results"][0]["observations"] = serde_json::json!([]);
    let text = serde_json::to_string(&v).unwrap();
    let at = text.find("\"observations\":[]").unwrap() + "\"observations\":[".len();
    let n: u64 = 20_000_000;
    let head = format!("{}0", &text[..at]);
    // "0" then ",0" n−1 times: build with a repeated two-byte pattern.
    let mut w = std::io::BufWriter::new(std::fs::File::create(&p).unwrap());
    let mut z = zstd::stream::Encoder::new(&mut w, 3).unwrap();
    z.write_all(head.as_bytes()).unwrap();
    let pair = ",0".repeat(1 << 19);
    let mut left = n - 1;
    while left > 0 {
        let k = left.min(1 << 19);
        z.write_all(&pair.as_bytes()[..2 * k as usize]).unwrap();
        left -= k;
    }
    z.write_all(&text.as_bytes()[at..]).unwrap();
    z.finish().unwrap();
    drop(w);
    let decompressed = text.len() as u64 + 2 * n;
    eprintln!(
        "{} bytes compressed, {} MB decompressed, {n} observations",
        std::fs::metadata(&p).unwrap().len(),
        decompressed / 1_000_000
    );
    let mut c = yamba();
    c.env("YAMBA_MAX_OBSERVATIONS", "1000000")
        .arg("summary")
        .arg(&p);
    let d = run_bounded(c, Duration::from_secs(120));
    eprintln!(
        "capped: exit {:?}, peak RSS {} MiB: {}",
        d.status.code(),
        d.rss_kib / 1024,
        d.err.trim()
    );
    assert_eq!(d.status.code(), Some(2), "{}", d.err);
    assert!(
        d.err.contains("YAMBA_MAX_OBSERVATIONS") && one_line(&d.err),
        "{}",
        d.err
    );
    assert!(d.rss_kib < 100 * 1024, "peak RSS {} KiB", d.rss_kib);
    let mut c = yamba();
    c.arg("summary").arg(&p);
    let d = run_bounded(c, Duration::from_secs(120));
    let ratio = d.rss_kib as f64 * 1024.0 / decompressed as f64;
    eprintln!(
        "default cap: exit {:?}, peak RSS {} MiB = {ratio:.2}× the decompressed size",
        d.status.code(),
        d.rss_kib / 1024
    );
    assert_eq!(d.status.code(), Some(0), "{}", d.err);
    assert!(ratio < 5.0, "{ratio:.2}×");
}

/// §4. Reading memory grows linearly with a real file: the fixture's
/// results repeated 1, 8 and 32 times, peak RSS of `summary` per byte of
/// file (printed), the largest under 3× its size. Before: about 10×.
#[test]
fn reading_memory_is_linear_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let base = fixture();
    let mut rows = Vec::new();
    for k in [1usize, 8, 32] {
        let mut v = base.clone();
        let rs = v["results"].as_array().unwrap().clone();
        let mut all = Vec::new();
        for i in 0..k {
            for r in &rs {
                let mut r = r.clone();
                r["id"] = format!("{}.copy{i}", r["id"].as_str().unwrap()).into();
                all.push(r);
            }
        }
        v["results"] = serde_json::Value::Array(all);
        let p = dir.path().join(format!("x{k}.json"));
        write_json(&p, &v);
        let size = std::fs::metadata(&p).unwrap().len();
        let mut c = yamba();
        c.arg("summary").arg(&p);
        let d = run_bounded(c, Duration::from_secs(120));
        assert_eq!(d.status.code(), Some(0), "{}", d.err);
        rows.push((size, d.rss_kib * 1024));
        eprintln!(
            "×{k:<3} file {:>6.1} MB  peak RSS {:>6.1} MB  RSS/size {:.2}",
            size as f64 / 1e6,
            d.rss_kib as f64 * 1024.0 / 1e6,
            d.rss_kib as f64 * 1024.0 / size as f64
        );
    }
    let (s1, r1) = rows[0];
    let (s32, r32) = rows[2];
    let slope = (r32 - r1) as f64 / (s32 - s1) as f64;
    eprintln!("marginal RSS per byte of file: {slope:.2}");
    assert!(slope < 3.0, "{slope:.2} bytes of memory per byte of file");
}

/// §4 and the smaller ones: /dev/zero given to a reader is refused at
/// once (ministat spun forever, plot and compare read until memory ran out).
#[test]
fn readers_refuse_dev_zero_at_once() {
    let cmds: Vec<Vec<&str>> = vec![
        vec!["ministat", "/dev/zero"],
        vec!["plot", "/dev/zero"],
        vec!["compare", "/dev/zero", FIXTURE],
        vec!["summary", "/dev/zero"],
        vec!["obs", "/dev/zero", "cpu.base"],
        vec!["stone", "-n", "3", "--compare", "/dev/zero", "true"],
    ];
    for args in cmds {
        let mut c = yamba();
        c.args(&args);
        let d = run_bounded(c, Duration::from_secs(10));
        eprintln!(
            "{args:?}: exit {:?} in {:.2} s, peak RSS {} MiB: {}",
            d.status.code(),
            d.took.as_secs_f64(),
            d.rss_kib / 1024,
            d.err.trim()
        );
        assert!(!d.killed, "{args:?} still running after 10 s");
        assert_ne!(d.status.code(), Some(0), "{args:?}");
        assert!(d.rss_kib < 200 * 1024, "{args:?}: {} KiB", d.rss_kib);
        assert!(d.err.contains("character device"), "{args:?}: {}", d.err);
    }
}

// ---------------------------------------------------------------- §7

/// §7. 10 000 nested parentheses, blocks or unary minus: `lang check`
/// reports a located error and exits 1. Before: stack overflow, SIGABRT.
#[test]
fn deep_nesting_is_a_located_error() {
    let dir = tempfile::tempdir().unwrap();
    let n = 10_000;
    let cases = [
        (
            "parens",
            format!(
                "yamba T {{\n  int f() {{ return {}1{}; }}\n}}\n",
                "(".repeat(n),
                ")".repeat(n)
            ),
        ),
        (
            "blocks",
            format!(
                "yamba T {{\n  int f() {{ {} return 1; {} }}\n}}\n",
                "{".repeat(n),
                "}".repeat(n)
            ),
        ),
        (
            "minus",
            format!(
                "yamba T {{\n  int f() {{ return {}1; }}\n}}\n",
                "-".repeat(n)
            ),
        ),
        (
            "not",
            format!(
                "yamba T {{\n  int f() {{ return {}1; }}\n}}\n",
                "!".repeat(n)
            ),
        ),
        (
            "sum",
            format!(
                "yamba T {{\n  int f() {{ return 1{}; }}\n}}\n",
                "+1".repeat(200_000)
            ),
        ),
        (
            "calls",
            format!(
                "yamba T {{\n  int f() {{ return f{}; }}\n}}\n",
                "()".repeat(n)
            ),
        ),
    ];
    for (name, src) in cases {
        let p = dir.path().join(format!("{name}.yamba"));
        std::fs::write(&p, src).unwrap();
        let mut c = yamba();
        c.args(["lang", "check"]).arg(&p);
        let d = run_bounded(c, Duration::from_secs(60));
        eprintln!(
            "{name}: exit {:?} signal {:?}, {} lines",
            d.status.code(),
            d.status.signal(),
            d.out.lines().count()
        );
        assert_eq!(d.status.code(), Some(1), "{name}: {}{}", d.out, d.err);
        assert!(
            d.out.contains("nested more deeply than")
                && d.out.contains(&format!("{name}.yamba:2:")),
            "{name}: {}",
            &d.out[..d.out.len().min(2000)]
        );
        assert!(
            d.out.lines().count() < 40,
            "{name}: {} lines of errors",
            d.out.lines().count()
        );
    }
}

// ------------------------------------------------------ smaller ones

/// A broken pipe ends a printing command quietly: no panic, status 0.
/// Before: `lang … | head -1` panicked (exit 101).
#[test]
fn a_broken_pipe_ends_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let many = dir.path().join("many.yamba");
    let mut src = String::new();
    for i in 0..2000 {
        src += &format!("yamba C{i} {{ int x = 1; }}\n");
    }
    std::fs::write(&many, src).unwrap();
    let cmds: Vec<Vec<String>> = vec![
        vec!["lang".into(), "check".into(), many.display().to_string()],
        vec!["list".into()],
        vec![
            "export".into(),
            FIXTURE.into(),
            "--format".into(),
            "gobench".into(),
        ],
        vec!["compare".into(), FIXTURE.into(), FIXTURE.into()],
        vec!["obs".into(), FIXTURE.into(), "cpu.base@hot".into()],
    ];
    for args in cmds {
        let mut c = yamba();
        c.args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        // Read one line, then close the pipe, as `head -1` does.
        let mut out = child.stdout.take().unwrap();
        let mut b = [0u8; 1];
        let _ = out.read(&mut b);
        drop(out);
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let st = child.wait().unwrap();
        eprintln!("{args:?} into a closed pipe: {st}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(
            st.code() == Some(0) || st.code() == Some(141) || st.signal() == Some(libc::SIGPIPE),
            "{args:?}: {st} {err}"
        );
    }
}

fn hostile_fixture(dir: &Path, name: &str) -> PathBuf {
    let mut v = fixture();
    let esc = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{1b}[31mRED\r\u{9b}31m";
    v["results"][0]["id"] = format!("cpu.base{esc}").into();
    v["results"][0]["reason"] = format!("why{esc}").into();
    v["results"][0]["status"] = "failed".into();
    v["notes"] = serde_json::json!([format!("note{esc}")]);
    v["machine"]["hostname"] = format!("host{esc}").into();
    let p = dir.join(name);
    write_json(&p, &v);
    p
}

/// Control characters in a results file never reach the terminal:
/// compare, the tables of `history show`, summary, export's text and
/// the error messages escape them. Before: printed raw.
#[test]
fn control_characters_from_a_results_file_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let a = hostile_fixture(dir.path(), "a.json");
    let b = hostile_fixture(dir.path(), "b.json");
    let store = dir.path().join("h.sqlite");
    let mut c = yamba();
    c.env("YAMBA_HISTORY", &store)
        .args(["history", "import"])
        .arg(&a);
    let d = run_bounded(c, Duration::from_secs(60));
    assert_eq!(d.status.code(), Some(0), "{}", d.err);
    let runs: Vec<Vec<String>> = vec![
        vec![
            "compare".into(),
            a.display().to_string(),
            b.display().to_string(),
        ],
        vec!["history".into(), "show".into(), "1".into()],
        vec!["summary".into(), a.display().to_string()],
        vec![
            "export".into(),
            a.display().to_string(),
            "--format".into(),
            "gobench".into(),
        ],
        vec!["obs".into(), a.display().to_string(), "cpu".into()],
        vec!["history".into()],
    ];
    for args in runs {
        let mut c = yamba();
        c.env("YAMBA_HISTORY", &store).args(&args);
        let d = run_bounded(c, Duration::from_secs(60));
        for (what, s) in [("stdout", &d.out), ("stderr", &d.err)] {
            let bad: Vec<char> = s
                .chars()
                .filter(|c| c.is_control() && !matches!(c, '\n' | '\t'))
                .collect();
            assert!(bad.is_empty(), "{args:?} {what}: {bad:?} in {s}");
        }
    }
}

/// An `include` of a file outside the program's folder is refused without
/// showing a byte of it. Before: its first line was printed in the error.
#[test]
fn an_include_outside_the_program_folder_shows_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, "TOPSECRET-LINE-1 with words\nsecond\n").unwrap();
    let prog = dir.path().join("prog");
    std::fs::create_dir(&prog).unwrap();
    let main = prog.join("main.yamba");
    for inc in [secret.display().to_string(), "../secret.txt".to_string()] {
        std::fs::write(
            &main,
            format!("include \"{inc}\";\nyamba T {{ int x = 1; }}\n"),
        )
        .unwrap();
        let mut c = yamba();
        c.args(["lang", "check"]).arg(&main);
        let d = run_bounded(c, Duration::from_secs(60));
        assert_eq!(d.status.code(), Some(1), "{}{}", d.out, d.err);
        assert!(
            !d.out.contains("TOPSECRET") && !d.err.contains("TOPSECRET"),
            "{}{}",
            d.out,
            d.err
        );
        assert!(d.out.contains("outside the program's folder"), "{}", d.out);
    }
    // A symbolic link inside the folder to the file outside is no way round.
    std::os::unix::fs::symlink(&secret, prog.join("link.yamba")).unwrap();
    std::fs::write(&main, "include \"link.yamba\";\nyamba T { int x = 1; }\n").unwrap();
    let mut c = yamba();
    c.args(["lang", "check"]).arg(&main);
    let d = run_bounded(c, Duration::from_secs(60));
    assert!(!d.out.contains("TOPSECRET") && !d.err.contains("TOPSECRET"));
}

fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => {
            let state = s[s.rfind(')').unwrap() + 2..].chars().next().unwrap();
            state != 'Z' && state != 'X'
        }
        Err(_) => false,
    }
}

/// `stone` kills what its command left running in the background at the
/// end of each run. Before: the background child outlived stone.
#[test]
fn stone_leaves_no_background_child() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let mut c = yamba();
    c.args(["stone", "-n", "2", "--shell"]).arg(format!(
        "sleep 300 </dev/null >/dev/null 2>&1 & echo $! >> {}",
        pids.display()
    ));
    let d = run_bounded(c, Duration::from_secs(60));
    assert_eq!(d.status.code(), Some(0), "{}", d.err);
    let list: Vec<u32> = std::fs::read_to_string(&pids)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    assert!(list.len() >= 2, "{list:?}");
    std::thread::sleep(Duration::from_millis(300));
    let left: Vec<u32> = list.iter().copied().filter(|p| alive(*p)).collect();
    for p in &left {
        // SAFETY: cleaning up what the old code left.
        unsafe { libc::kill(*p as i32, libc::SIGKILL) };
    }
    assert!(left.is_empty(), "still running: {left:?}");
}

/// `stone --timeout` ends a run that takes too long: killed, said, failed.
#[test]
fn stone_has_a_timeout() {
    let mut c = yamba();
    c.args(["stone", "-n", "1", "--timeout", "1", "sleep 30"]);
    let d = run_bounded(c, Duration::from_secs(20));
    assert!(!d.killed, "stone ran past 20 s");
    assert!(d.took < Duration::from_secs(10), "{:?}", d.took);
    assert_ne!(d.status.code(), Some(0));
    assert!(d.err.contains("timed out after 1 s"), "{}", d.err);
}

/// `lang run --timeout` ends a benchmark that never returns.
#[test]
fn lang_run_has_a_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("spin.yamba");
    std::fs::write(
        &p,
        "yamba Spin {\n  void benchmark() { while (1) { } }\n  void benchmark_dummy() { }\n}\n",
    )
    .unwrap();
    let mut c = yamba();
    c.current_dir(dir.path())
        .args(["lang", "run"])
        .arg(&p)
        .args([
            "--class",
            "Spin",
            "--quick",
            "--timeout",
            "2",
            "--no-history",
        ])
        .arg("--out")
        .arg(dir.path().join("r.json"));
    let d = run_bounded(c, Duration::from_secs(60));
    eprintln!(
        "lang run of an endless loop with --timeout 2: exit {:?} in {:.1} s: {}",
        d.status.code(),
        d.took.as_secs_f64(),
        d.out
    );
    assert!(!d.killed, "ran past 60 s");
    assert!(d.took < Duration::from_secs(30), "{:?}", d.took);
    assert_ne!(d.status.code(), Some(0));
    assert!(
        d.out.contains("timed out") || d.err.contains("timed out"),
        "{}{}",
        d.out,
        d.err
    );
}

/// A `--remote` run that fails against the agent exits non-zero.
/// Before: 0 unless --strict.
#[test]
fn a_failed_remote_run_exits_non_zero() {
    let dir = tempfile::tempdir().unwrap();
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut c = yamba();
    c.env("YAMBA_TOKEN", "3f9c1e77a0b24d6e8f1a2b3c4d5e6f70")
        .args(["run", "--quick", "--no-history", "net.tcp.rtt", "--remote"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--out")
        .arg(dir.path().join("r.json"));
    let d = run_bounded(c, Duration::from_secs(120));
    eprintln!(
        "failed --remote run: exit {:?}: {}",
        d.status.code(),
        d.err.trim()
    );
    assert_eq!(d.status.code(), Some(1), "{}{}", d.out, d.err);
}
