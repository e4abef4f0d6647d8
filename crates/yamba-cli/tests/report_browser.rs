//! `yamba report` in a real browser: headless Chromium (the distribution's
//! package, installed by .ci/install) opens the page from a file with the
//! network unused, and we check what a reader would see: no console
//! errors or uncaught exceptions, nothing fetched, every figure's SVG
//! drawn with all its points inside it, the hover read-out working, and a
//! 1280×800 screenshot that is not blank. The screenshots are kept under
//! the target directory (paths printed) for a person to look at.
//!
//! The input is a real `yamba run --quick --mode both` results file from a
//! 2-CPU KVM guest (tests/data/quick-both.json in yamba-report; its
//! observations thinned to at most 100 per result to keep it small — the
//! report reads them, it does not recompute the summaries).
//!
//! Skips, saying why, only when no browser can be found or started
//! (`yamba_testkit::skip!`): under YAMBA_CI=1 that fails the test, since
//! .ci/skips does not list it.
//!
//! The browser is driven over the DevTools protocol on a pipe (tests/cdp).
//! Built for x86-64 hosts only, as its dev-dependencies are there alone:
//! the emulated aarch64 guest has no browser.
#![cfg(target_arch = "x86_64")]

mod cdp;

use cdp::Tab;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../yamba-report/tests/data/quick-both.json"
);

fn yamba() -> Command {
    Command::new(env!("CARGO_BIN_EXE_yamba"))
}

/// Where screenshots are kept for a person to look at.
fn shots_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-screenshots");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A tab of a headless Chromium, or why there is none.
fn browser() -> Result<Tab, String> {
    let exe = cdp::executable()?;
    Tab::launch(
        &exe,
        &[
            // Tests run as root in CI, where Chromium's sandbox cannot start.
            "--no-sandbox",
            "--window-size=1280,800",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
        ],
    )
}

/// The page's errors so far: console errors and assertions, uncaught
/// exceptions, error log entries.
fn errors(tab: &Tab) -> Vec<String> {
    tab.errors(0, Duration::ZERO)
}

/// Opens `page` in the viewport a reader on a laptop has: 1280×800 CSS
/// pixels at scale 1.
fn open(tab: &Tab, page: &Path) {
    tab.open(page, 1280, 800).unwrap();
}

fn eval_json(tab: &Tab, js: &str) -> serde_json::Value {
    let v = tab
        .evaluate(&format!("JSON.stringify((function(){{ {js} }})())"))
        .unwrap();
    let v = v.as_str().unwrap_or_else(|| panic!("no value from {js}"));
    serde_json::from_str(v).unwrap()
}

/// A screenshot of the viewport, saved under `name`; returns its pixels
/// (RGBA) and size.
fn screenshot(tab: &Tab, name: &str) -> (Vec<u8>, u32, u32) {
    let png_bytes = tab.screenshot().unwrap();
    let path = shots_dir().join(name);
    std::fs::write(&path, &png_bytes).unwrap();
    eprintln!("screenshot: {}", path.display());
    let mut dec = png::Decoder::new(std::io::Cursor::new(png_bytes));
    dec.set_transformations(png::Transformations::EXPAND | png::Transformations::ALPHA);
    let mut reader = dec.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    (buf, info.width, info.height)
}

/// Share of pixels that differ from the most common colour (the page's
/// background), and how many distinct colours there are.
fn ink(rgba: &[u8]) -> (f64, usize) {
    let mut counts = std::collections::HashMap::new();
    for p in rgba.chunks_exact(4) {
        *counts.entry([p[0], p[1], p[2]]).or_insert(0usize) += 1;
    }
    let total = rgba.len() / 4;
    let background = counts.values().copied().max().unwrap_or(0);
    ((total - background) as f64 / total as f64, counts.len())
}

fn write_report(dir: &Path, inputs: &[&Path], name: &str) -> PathBuf {
    let out = dir.join(name);
    let mut cmd = yamba();
    cmd.arg("report");
    for i in inputs {
        cmd.arg(i);
    }
    let o = cmd
        .args(["--hist", "cpu.syscall.getppid", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "yamba report failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

/// Every figure: its declared point count, the `pt` elements it holds,
/// and how many of them the browser laid out inside the figure's box.
const FIGURES_JS: &str = r#"
  var out = [];
  document.querySelectorAll('svg.chart').forEach(function (svg) {
    var box = svg.getBoundingClientRect();
    var declared = 0;
    svg.querySelectorAll('g.series').forEach(function (g) { declared += +g.getAttribute('data-n'); });
    var pts = svg.querySelectorAll('.pt');
    var inside = 0;
    pts.forEach(function (p) {
      var r = p.getBoundingClientRect();
      var cx = r.left + r.width / 2, cy = r.top + r.height / 2;
      if (cx >= box.left - 1 && cx <= box.right + 1 && cy >= box.top - 1 && cy <= box.bottom + 1) inside++;
    });
    out.push({ id: svg.getAttribute('data-figure'), declared: declared, pts: pts.length,
               inside: inside, width: box.width, height: box.height });
  });
  return out;
"#;

fn check_page(tab: &Tab, want_figures: &[&str]) {
    let figs = eval_json(tab, FIGURES_JS);
    let figs = figs.as_array().unwrap();
    assert!(!figs.is_empty(), "no figures on the page");
    for f in figs {
        let id = f["id"].as_str().unwrap();
        let pts = f["pts"].as_u64().unwrap();
        assert!(pts > 0, "figure {id} has no points: {f}");
        assert_eq!(
            pts,
            f["declared"].as_u64().unwrap(),
            "figure {id} drew a different number of points than its series hold: {f}"
        );
        assert_eq!(
            pts,
            f["inside"].as_u64().unwrap(),
            "figure {id}: points outside it: {f}"
        );
        assert!(
            f["width"].as_f64().unwrap() > 300.0,
            "figure {id} too small: {f}"
        );
    }
    let ids: Vec<&str> = figs.iter().map(|f| f["id"].as_str().unwrap()).collect();
    for want in want_figures {
        assert!(
            ids.iter().any(|id| id.starts_with(want)),
            "no figure {want:?} among {ids:?}"
        );
    }
    eprintln!("{} figures, all drawn: {ids:?}", ids.len());

    // Nothing was fetched: no resource entries, no external references.
    let fetched = eval_json(
        tab,
        "return performance.getEntriesByType('resource').map(function (e) { return e.name; });",
    );
    assert_eq!(fetched, serde_json::json!([]), "the page fetched resources");

    // Hovering a point shows its exact values.
    let tip = eval_json(
        tab,
        r#"var p = document.querySelector('svg.chart .pt');
           p.dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
           var t = document.getElementById('tip');
           return { shown: !t.hidden, text: t.textContent, want: p.getAttribute('data-tip') };"#,
    );
    assert_eq!(tip["shown"], true, "{tip}");
    assert_eq!(tip["text"], tip["want"], "{tip}");
    assert!(!tip["text"].as_str().unwrap().is_empty());

    let errs = errors(tab);
    assert!(errs.is_empty(), "console errors: {errs:#?}");
}

#[test]
fn report_renders_in_chromium() {
    let tab = match browser() {
        Ok(b) => b,
        Err(why) => {
            yamba_testkit::skip!("no headless browser: {why} (.ci/install installs chromium)")
        }
    };
    let dir = tempfile::tempdir().unwrap();
    // Two runs: the file and a copy (a second column and a comparison).
    let second = dir.path().join("again.json");
    std::fs::copy(FIXTURE, &second).unwrap();
    let one = write_report(dir.path(), &[Path::new(FIXTURE)], "one.html");
    let two = write_report(dir.path(), &[Path::new(FIXTURE), &second], "two.html");

    open(&tab, &one);
    check_page(
        &tab,
        &[
            "base-",
            "mem-latency",
            "mem-pagefault",
            "fs-cache-size",
            "fs-read",
            "fs-contention",
            "bars-",
            "hist-",
        ],
    );
    let (px, w, h) = screenshot(&tab, "one-top.png");
    eprintln!("screenshot size {w}×{h}");
    assert_eq!((w, h), (1280, 800), "screenshot size");
    let (share, colours) = ink(&px);
    eprintln!(
        "top of page: {:.1}% inked, {colours} colours",
        share * 100.0
    );
    assert!(
        share > 0.02 && colours > 8,
        "blank screenshot: {share} inked, {colours} colours"
    );
    // The key numbers are on the first screen: the table's caption and
    // its first three rows lie inside the 800-pixel viewport, laid out.
    let key = eval_json(
        &tab,
        "var t = document.querySelector('#key table'); if (!t) return null; \
         var c = t.querySelector('caption').getBoundingClientRect(); \
         var r = t.querySelectorAll('tr')[3].getBoundingClientRect(); \
         return [c.top, c.height, r.bottom, r.height, window.innerHeight];",
    );
    eprintln!("key numbers: caption top, height; third row bottom, height; viewport: {key}");
    let k: Vec<f64> = key
        .as_array()
        .expect("no key numbers table")
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert!(
        k[0] >= 0.0 && k[1] > 0.0 && k[3] > 0.0,
        "not laid out: {k:?}"
    );
    assert!(
        k[2] <= k[4],
        "the key numbers' first rows are below the first screen: {k:?}"
    );

    // The figures a reader looks for, each scrolled into view and kept.
    for (fig, name) in [
        ("mem-latency", "one-latency.png"),
        ("mem-pagefault", "one-pagefault.png"),
        ("fs-cache-size", "one-cache-size.png"),
        ("fs-contention", "one-contention.png"),
        ("base-", "one-base.png"),
    ] {
        eval_json(
            &tab,
            &format!(
                "document.querySelector('svg.chart[data-figure^=\"{fig}\"]').closest('figure').scrollIntoView(); return 0;"
            ),
        );
        let (px, _, _) = screenshot(&tab, name);
        let (share, colours) = ink(&px);
        assert!(share > 0.02 && colours > 8, "{name} blank");
    }
    eval_json(
        &tab,
        "document.getElementById('predictions').scrollIntoView(); return 0;",
    );
    screenshot(&tab, "one-predictions.png");

    open(&tab, &two);
    check_page(&tab, &["mem-latency"]);
    let cmp = eval_json(
        &tab,
        "var s = document.getElementById('comparison'); s.scrollIntoView(); return s ? s.querySelectorAll('table.compare tr').length : 0;",
    );
    assert!(cmp.as_u64().unwrap() > 10, "comparison table rows: {cmp}");
    screenshot(&tab, "two-comparison.png");
}

/// The checks above can fail: a page with a script error, a console
/// error and an empty figure is caught on each count.
#[test]
fn the_browser_check_catches_broken_pages() {
    let tab = match browser() {
        Ok(b) => b,
        Err(why) => {
            yamba_testkit::skip!("no headless browser: {why} (.ci/install installs chromium)")
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("broken.html");
    std::fs::write(
        &page,
        r#"<!DOCTYPE html><html><body><svg class="chart" data-figure="empty" viewBox="0 0 10 10"><g class="series" data-n="3"></g></svg>
<script>console.error("deliberate"); undefinedFunction();</script></body></html>"#,
    )
    .unwrap();
    open(&tab, &page);
    // Events arrive asynchronously; give them a moment.
    let errs = tab.errors(2, Duration::from_secs(5));
    assert!(errs.iter().any(|e| e.contains("deliberate")), "{errs:#?}");
    assert!(
        errs.iter().any(|e| e.contains("undefinedFunction")),
        "{errs:#?}"
    );
    let figs = eval_json(&tab, FIGURES_JS);
    assert_eq!(figs[0]["pts"], 0);
    assert_eq!(figs[0]["declared"], 3);
}

/// Strings an attacker puts in a results file, each trying another way
/// out of its context: text, an attribute (double or single quoted), an
/// id, a URL fragment, a style or script element, a comment, an SVG.
const HOSTILE: &[&str] = &[
    "<script>window.__pwned=1</script>",
    "\"><img src=x onerror=\"window.__pwned=2\">",
    "'><svg onload=window.__pwned=3>",
    "javascript:window.__pwned=4",
    "</style><script>window.__pwned=5</script>",
    "--><script>window.__pwned=6</script><!--",
    "</script><script>window.__pwned=7</script>",
    "\" onmouseover=\"window.__pwned=8\" x=\"",
    "#\" onfocus=\"window.__pwned=9\" autofocus \"",
    "<iframe src=\"javascript:parent.__pwned=10\"></iframe>",
    "]]><script>window.__pwned=11</script>",
    "\u{2028}</textarea><base href=//evil.example/>",
];

/// Every string of a results file made hostile (the enumerations a reader
/// checks — unit, mode, status, schema — kept, so the file is read), and
/// hostile keys added to the free-form maps.
fn poison(v: &mut serde_json::Value, key: &str, n: &mut usize) {
    const KEEP: &[&str] = &[
        "unit",
        "mode",
        "status",
        "schema",
        "kind",
        "started",
        "finished",
        "block_kind",
        "resolution_kind",
        "stopped_because",
        "gate",
        "block",
    ];
    match v {
        serde_json::Value::String(s) if !KEEP.contains(&key) => {
            *n += 1;
            s.push_str(HOSTILE[*n % HOSTILE.len()]);
        }
        serde_json::Value::Array(a) => {
            for x in a {
                poison(x, key, n);
            }
        }
        serde_json::Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                poison(x, k, n);
            }
            if matches!(key, "params" | "extra" | "config") {
                for h in HOSTILE {
                    o.insert(format!("k{h}"), serde_json::Value::String(h.to_string()));
                }
            }
        }
        _ => {}
    }
}

/// A results file with hostile strings in every field (ids, areas,
/// descriptions, reasons, notes, the machine, the command, params and
/// their keys…), rendered by `yamba report` and opened in Chromium, runs
/// no script: nothing set `window.__pwned`, the page holds no element or
/// attribute it did not write itself, and the Content-Security-Policy
/// allows only its own script and style. Before: `results[].area` went
/// unescaped into `href` and `id`, and the page had no policy.
#[test]
fn a_hostile_results_file_runs_no_script_in_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(FIXTURE).unwrap()).unwrap();
    let mut n = 0;
    poison(&mut v, "", &mut n);
    // Areas and ids that collide once made safe must stay apart.
    v["results"][1]["area"] = "cpu\"><script>window.__pwned=12</script>".into();
    v["results"][2]["area"] = "cpu'><script>window.__pwned=12</script>".into();
    eprintln!("{n} strings made hostile");
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    std::fs::write(&a, serde_json::to_vec(&v).unwrap()).unwrap();
    std::fs::write(&b, serde_json::to_vec(&v).unwrap()).unwrap();
    let out = dir.path().join("hostile.html");
    let o = yamba()
        .arg("report")
        .arg(&a)
        .arg(&b)
        .args(["--hist", "all", "--title", HOSTILE[0], "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(&out).unwrap();
    // Without a browser: one script element, one style element, the policy.
    assert_eq!(html.matches("<script").count(), 1, "script elements");
    assert_eq!(html.matches("<style").count(), 1, "style elements");
    assert!(html.contains("http-equiv=\"Content-Security-Policy\""));
    // (Escaped, `onerror=&quot;…` is text; an attribute would need a raw quote.)
    for bad in [
        "<img",
        "<iframe",
        "<base",
        "<svg onload",
        "onerror=\"",
        "onmouseover=\"",
        "onfocus=\"",
    ] {
        assert!(!html.contains(bad), "{bad} in the page");
    }
    let tab = match browser() {
        Ok(b) => b,
        Err(why) => {
            yamba_testkit::skip!("no headless browser: {why} (.ci/install installs chromium)")
        }
    };
    open(&tab, &out);
    std::thread::sleep(Duration::from_millis(500));
    let seen = eval_json(
        &tab,
        r#"var on = 0;
           document.querySelectorAll('*').forEach(function (e) {
             for (var i = 0; i < e.attributes.length; i++)
               if (/^on/i.test(e.attributes[i].name)) on++;
           });
           var hrefs = [];
           document.querySelectorAll('[href]').forEach(function (e) {
             var h = e.getAttribute('href');
             if (h.charAt(0) !== '#') hrefs.push(h);
           });
           return { pwned: window.__pwned === undefined ? null : window.__pwned,
                    scripts: document.scripts.length,
                    styles: document.querySelectorAll('style').length,
                    iframes: document.querySelectorAll('iframe, img, base, object, embed').length,
                    handlers: on, hrefs: hrefs,
                    csp: !!document.querySelector('meta[http-equiv="Content-Security-Policy"]'),
                    ids: document.querySelectorAll('[id]').length,
                    bad_ids: Array.prototype.filter.call(document.querySelectorAll('[id]'),
                      function (e) { return !/^[A-Za-z0-9_.:@-]+$/.test(e.id); }).length };"#,
    );
    eprintln!("hostile report in Chromium: {seen}");
    assert_eq!(seen["pwned"], serde_json::Value::Null, "{seen}");
    assert_eq!(seen["scripts"], 1, "{seen}");
    assert_eq!(seen["styles"], 1, "{seen}");
    assert_eq!(seen["iframes"], 0, "{seen}");
    assert_eq!(seen["handlers"], 0, "{seen}");
    assert_eq!(seen["hrefs"], serde_json::json!([]), "{seen}");
    assert_eq!(seen["csp"], true, "{seen}");
    assert_eq!(seen["bad_ids"], 0, "{seen}");
    // Every area's link reaches its own section.
    let links = eval_json(
        &tab,
        r#"var bad = [];
           document.querySelectorAll('nav.toc a').forEach(function (a) {
             var id = a.getAttribute('href').slice(1);
             if (!document.getElementById(id)) bad.push(id);
           });
           var ids = {}; var dup = 0;
           document.querySelectorAll('[id]').forEach(function (e) { if (ids[e.id]) dup++; ids[e.id] = 1; });
           return { bad: bad, dup: dup };"#,
    );
    assert_eq!(links["bad"], serde_json::json!([]), "{links}");
    assert_eq!(links["dup"], 0, "{links}");
    let errs = errors(&tab);
    assert!(errs.is_empty(), "console errors: {errs:#?}");
}
