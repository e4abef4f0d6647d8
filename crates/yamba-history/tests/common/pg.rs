//! A private PostgreSQL server for one test: the distribution's server
//! binaries (installed by `.ci/install`), a fresh cluster in a temporary
//! folder, listening only on a Unix socket in that folder, stopped and
//! removed when dropped. PostgreSQL refuses to run as root: as root the
//! server runs as the `postgres` user the package creates.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct PgServer {
    dir: tempfile::TempDir,
    bin: PathBuf,
    as_postgres: bool,
    pub port: u16,
}

/// The newest installed server's `bin` folder, if any.
fn server_bin() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let v: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((v, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, b)| b)
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|u| u == "0"))
        })
        .unwrap_or(false)
}

impl PgServer {
    /// Starts a server, or says why it cannot: `Err` only when the server
    /// binaries are not installed (the caller skips, printing the reason).
    /// Any other failure is a test failure.
    pub fn start() -> Result<PgServer, String> {
        let Some(bin) = server_bin() else {
            return Err(
                "PostgreSQL's server binaries are not installed (/usr/lib/postgresql/*/bin/initdb; `.ci/install` installs them)"
                    .into(),
            );
        };
        let as_postgres = is_root();
        let dir = tempfile::Builder::new()
            .prefix("yamba-pg-")
            .tempdir()
            .expect("temporary folder");
        if as_postgres {
            let out = Command::new("chown")
                .args(["postgres:postgres"])
                .arg(dir.path())
                .output()
                .expect("chown");
            assert!(
                out.status.success(),
                "chown postgres {}: {}",
                dir.path().display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let port = 5432;
        let server = PgServer {
            dir,
            bin,
            as_postgres,
            port,
        };
        let data = server.dir.path().join("data");
        server.run(
            "initdb",
            &[
                "-D",
                data.to_str().unwrap(),
                "-A",
                "trust",
                "-U",
                "yamba",
                "--no-sync",
            ],
        );
        let options = format!(
            "-p {port} -k {} -c listen_addresses='' -c fsync=off",
            server.dir.path().display()
        );
        server.run(
            "pg_ctl",
            &[
                "-D",
                data.to_str().unwrap(),
                "-o",
                &options,
                "-l",
                server.dir.path().join("log").to_str().unwrap(),
                "-w",
                "-t",
                "120",
                "start",
            ],
        );
        Ok(server)
    }

    fn command(&self, tool: &str) -> Command {
        let exe = self.bin.join(tool);
        if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(exe);
            c
        } else {
            Command::new(exe)
        }
    }

    fn run(&self, tool: &str, args: &[&str]) {
        let out = self
            .command(tool)
            .args(args)
            .current_dir(self.dir.path())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {tool}: {e}"));
        let log = std::fs::read_to_string(self.dir.path().join("log")).unwrap_or_default();
        assert!(
            out.status.success(),
            "{tool} {args:?} failed: {}{}\nserver log:\n{log}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The socket folder.
    pub fn socket_dir(&self) -> &Path {
        self.dir.path()
    }

    /// A URL for the `postgres` database as user `yamba`, over the socket.
    pub fn url(&self) -> String {
        self.url_for("postgres")
    }

    pub fn url_for(&self, db: &str) -> String {
        format!(
            "postgres:///{db}?host={}&port={}&user=yamba",
            self.dir.path().display(),
            self.port
        )
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        let data = self.dir.path().join("data");
        let _ = self
            .command("pg_ctl")
            .args([
                "-D",
                data.to_str().unwrap(),
                "-m",
                "immediate",
                "-w",
                "stop",
            ])
            .output();
    }
}
