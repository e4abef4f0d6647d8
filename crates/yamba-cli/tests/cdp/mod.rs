//! Headless Chromium driven over the DevTools protocol on a pipe
//! (`--remote-debugging-pipe`: JSON messages, each ended by a NUL byte, the
//! browser reading its descriptor 3 and writing its descriptor 4), with
//! the handful of commands tests/report_browser.rs uses: a tab of its
//! own, a viewport, navigation to a file, evaluating JavaScript,
//! screenshots, and the page's errors.
//!
//! Why not a crate for the whole protocol: headless_chrome, with the 58
//! packages only it brought (an HTTP client, TLS and a WebSocket client,
//! the protocol's generated types), cost 74 s of CPU in CI's test build
//! alone (cargo --timings, AMD EPYC guest), and lint checked it again, for
//! eight commands.

use serde_json::{json, Value};
use std::cell::RefCell;
use std::io::{BufRead, BufReader, PipeWriter, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How long a command's reply or a page's load may take.
const TIMEOUT: Duration = Duration::from_secs(60);

/// Chromium's executable: `$CHROME`, else the first of the usual names on
/// the PATH.
pub fn executable() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("CHROME") {
        return Ok(PathBuf::from(p));
    }
    let names = [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ];
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .flat_map(|d| names.iter().map(move |n| d.join(n)))
        .find(|p| p.is_file())
        .ok_or_else(|| format!("none of {} on the PATH, and CHROME unset", names.join(", ")))
}

/// A descriptor of `fd`'s file at 10 or above, closed on exec: the child's
/// dup2 to 3 and 4 then never overwrites a source it still needs.
fn high(fd: RawFd) -> Result<OwnedFd, String> {
    // SAFETY: F_DUPFD_CLOEXEC on a descriptor we own makes a new one (or
    // fails); nothing else is touched.
    let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 10) };
    if new < 0 {
        return Err(format!("fcntl: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: `new` was just made for us and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(new) })
}

/// One tab of a headless Chromium of its own (its profile in a temporary
/// directory), closed with it.
pub struct Tab {
    inner: RefCell<Inner>,
}

struct Inner {
    child: Child,
    to: PipeWriter,
    from: Receiver<Value>,
    next_id: u64,
    session: Option<String>,
    /// Events read while waiting for replies, not yet looked at.
    events: Vec<Value>,
    /// The page's errors so far, as text.
    errors: Vec<String>,
    _profile: tempfile::TempDir,
}

impl Tab {
    /// Starts Chromium at `exe`, opens a tab and attaches to it, with the
    /// page's console, exceptions and log reported.
    pub fn launch(exe: &Path, args: &[&str]) -> Result<Tab, String> {
        let profile = tempfile::tempdir().map_err(|e| e.to_string())?;
        let (browser_reads, to) = std::io::pipe().map_err(|e| e.to_string())?;
        let (from_browser, browser_writes) = std::io::pipe().map_err(|e| e.to_string())?;
        let (r, w) = (
            high(browser_reads.as_raw_fd())?,
            high(browser_writes.as_raw_fd())?,
        );
        drop((browser_reads, browser_writes));
        let (r_fd, w_fd) = (r.as_raw_fd(), w.as_raw_fd());
        let stderr =
            std::fs::File::create(profile.path().join("stderr.log")).map_err(|e| e.to_string())?;
        let mut cmd = Command::new(exe);
        cmd.args([
            "--headless",
            "--remote-debugging-pipe",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-default-apps",
            "--disable-extensions",
            "--disable-sync",
            "--disable-breakpad",
            "--disable-dev-shm-usage",
            "--metrics-recording-only",
            "--password-store=basic",
            "--use-mock-keychain",
            "--mute-audio",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr);
        // SAFETY: between fork and exec only dup2, which is
        // async-signal-safe, on descriptors that stay open (r and w live
        // until spawn returns) and at 10 or above, so the first dup2 cannot
        // overwrite the second's source.
        unsafe {
            cmd.pre_exec(move || {
                for (src, dst) in [(r_fd, 3), (w_fd, 4)] {
                    if libc::dup2(src, dst) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        let child = cmd
            .spawn()
            .map_err(|e| format!("{} does not start: {e}", exe.display()))?;
        drop((r, w));
        let (tx, from) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(from_browser);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match reader.read_until(0, &mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        buf.pop_if(|b| *b == 0);
                        if let Ok(v) = serde_json::from_slice::<Value>(&buf) {
                            if tx.send(v).is_err() {
                                return;
                            }
                        }
                    }
                }
            }
        });
        let tab = Tab {
            inner: RefCell::new(Inner {
                child,
                to,
                from,
                next_id: 0,
                session: None,
                events: Vec::new(),
                errors: Vec::new(),
                _profile: profile,
            }),
        };
        let started = tab.call("Browser.getVersion", json!({})).map_err(|e| {
            let log =
                std::fs::read_to_string(tab.inner.borrow()._profile.path().join("stderr.log"))
                    .unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(5).collect();
            format!(
                "{} does not answer: {e}; its stderr ends: {tail:?}",
                exe.display()
            )
        })?;
        eprintln!("browser: {}", started["product"]);
        let target = tab.call("Target.createTarget", json!({ "url": "about:blank" }))?;
        let attached = tab.call(
            "Target.attachToTarget",
            json!({ "targetId": target["targetId"], "flatten": true }),
        )?;
        tab.inner.borrow_mut().session = attached["sessionId"].as_str().map(str::to_string);
        for domain in ["Page.enable", "Runtime.enable", "Log.enable"] {
            tab.call(domain, json!({}))?;
        }
        // Load events that name their document: about:blank's own, which
        // may come late, must not pass for the page's.
        tab.call("Page.setLifecycleEventsEnabled", json!({ "enabled": true }))?;
        Ok(tab)
    }

    /// Sends `method` (to the tab once attached) and waits for its reply.
    pub fn call(&self, method: &str, params: Value) -> Result<Value, String> {
        let mut t = self.inner.borrow_mut();
        t.next_id += 1;
        let id = t.next_id;
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if let Some(s) = &t.session {
            msg["sessionId"] = s.clone().into();
        }
        let mut bytes = serde_json::to_vec(&msg).unwrap();
        bytes.push(0);
        t.to.write_all(&bytes)
            .map_err(|e| format!("{method}: {e}"))?;
        let reply = t.wait_for(|v| v["id"] == id, method)?;
        match reply.get("error") {
            Some(e) => Err(format!("{method}: {e}")),
            None => Ok(reply["result"].clone()),
        }
    }

    /// Sets a `width`×`height` viewport at scale 1, navigates to the file
    /// and waits for the load event of the document that navigation made.
    pub fn open(&self, page: &Path, width: u32, height: u32) -> Result<(), String> {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": width, "height": height, "deviceScaleFactor": 1, "mobile": false }),
        )?;
        self.inner.borrow_mut().sort_events();
        let nav = self.call(
            "Page.navigate",
            json!({ "url": format!("file://{}", page.display()) }),
        )?;
        if let Some(e) = nav.get("errorText") {
            return Err(format!("navigating to {}: {e}", page.display()));
        }
        let loader = nav["loaderId"].clone();
        self.inner
            .borrow_mut()
            .wait_for(
                |v| {
                    v["method"] == "Page.lifecycleEvent"
                        && v["params"]["name"] == "load"
                        && v["params"]["loaderId"] == loader
                },
                "the page's load",
            )
            .map(drop)
    }

    /// The value of JavaScript expression `js`, by value.
    pub fn evaluate(&self, js: &str) -> Result<Value, String> {
        let r = self.call(
            "Runtime.evaluate",
            json!({ "expression": js, "returnByValue": true, "awaitPromise": false }),
        )?;
        if let Some(e) = r.get("exceptionDetails") {
            return Err(format!("{js}: {e}"));
        }
        Ok(r["result"]["value"].clone())
    }

    /// A PNG of the viewport.
    pub fn screenshot(&self) -> Result<Vec<u8>, String> {
        use base64::Engine;
        let r = self.call(
            "Page.captureScreenshot",
            json!({ "format": "png", "fromSurface": true }),
        )?;
        let data = r["data"].as_str().ok_or("no screenshot data")?;
        base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| e.to_string())
    }

    /// The page's console errors and assertions, uncaught exceptions and
    /// error log entries so far, as text, waiting up to `wait` for at
    /// least `at_least` of them (events arrive on their own).
    pub fn errors(&self, at_least: usize, wait: Duration) -> Vec<String> {
        let deadline = Instant::now() + wait;
        let mut t = self.inner.borrow_mut();
        loop {
            t.sort_events();
            if t.errors.len() >= at_least || Instant::now() >= deadline {
                return t.errors.clone();
            }
            match t.from.recv_timeout(Duration::from_millis(50)) {
                Ok(v) => t.events.push(v),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return t.errors.clone(),
            }
        }
    }
}

impl Inner {
    /// Reads messages until one satisfies `want` (returned), keeping
    /// the others as events.
    fn wait_for(&mut self, want: impl Fn(&Value) -> bool, what: &str) -> Result<Value, String> {
        if let Some(i) = self.events.iter().position(&want) {
            return Ok(self.events.remove(i));
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.from.recv_timeout(left) {
                Ok(v) if want(&v) => return Ok(v),
                Ok(v) => self.events.push(v),
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!("no {what} within {} s", TIMEOUT.as_secs()))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(format!("the browser closed its pipe before {what}"))
                }
            }
        }
    }

    /// Moves the page's errors out of the events read so far and drops
    /// the other events.
    fn sort_events(&mut self) {
        while let Ok(v) = self.from.try_recv() {
            self.events.push(v);
        }
        for ev in std::mem::take(&mut self.events) {
            let text = |v: &Value| v.to_string().chars().take(400).collect::<String>();
            let p = &ev["params"];
            let error = match ev["method"].as_str() {
                Some("Runtime.exceptionThrown") => Some(text(p)),
                Some("Runtime.consoleAPICalled") => {
                    matches!(p["type"].as_str(), Some("error" | "assert")).then(|| text(p))
                }
                Some("Log.entryAdded") => (p["entry"]["level"] == "error").then(|| text(p)),
                _ => None,
            };
            self.errors.extend(error);
        }
    }
}

impl Drop for Tab {
    fn drop(&mut self) {
        let t = self.inner.get_mut();
        t.session = None;
        let _ = t.to.write_all(b"{\"id\":0,\"method\":\"Browser.close\"}\0");
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = t.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = t.child.kill();
        let _ = t.child.wait();
    }
}
