//! The history itself: storing a results file, listing stored runs, reading
//! one back exactly, and following one result across runs. Written once
//! against [`Backend`], so the embedded SQLite file and a PostgreSQL server
//! hold the same tables and answer the same queries.

use crate::backend::{Backend, DbError, Dialect, Row, Value};
use crate::codec;
use crate::error::db;
use crate::schema;
use crate::trend::{Trend, TrendPoint};
use crate::HistoryError;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use yamba_results::{now_rfc3339, BenchResult, ResultsFile, Status, Unit};

/// A stored run's number: what `@ID` names.
pub type RunId = i64;

/// Where a history is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreSpec {
    /// An SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL connection URL (`postgres://…` or `postgresql://…`).
    Postgres(String),
}

/// The environment variable that moves the default history elsewhere: a
/// file path, or a `postgres://` URL.
pub const ENV_VAR: &str = "YAMBA_HISTORY";

impl StoreSpec {
    /// A `--store` argument: a PostgreSQL URL, or else an SQLite file path.
    pub fn parse(s: &str) -> StoreSpec {
        if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            StoreSpec::Postgres(s.to_string())
        } else {
            StoreSpec::Sqlite(PathBuf::from(s))
        }
    }

    /// The default history: `$YAMBA_HISTORY` when set, else
    /// `history.sqlite` under the user's data folder
    /// (`$XDG_DATA_HOME/yamba`, or `~/.local/share/yamba`).
    pub fn default_location() -> Result<StoreSpec, HistoryError> {
        if let Some(v) = std::env::var_os(ENV_VAR).filter(|v| !v.is_empty()) {
            return Ok(StoreSpec::parse(&v.to_string_lossy()));
        }
        let data = std::env::var_os("XDG_DATA_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| {
                std::env::var_os("HOME")
                    .filter(|h| !h.is_empty())
                    .map(|h| PathBuf::from(h).join(".local/share"))
            })
            .ok_or(HistoryError::NoPlace)?;
        Ok(StoreSpec::Sqlite(data.join("yamba").join("history.sqlite")))
    }

    /// `--store` if given, else the default.
    pub fn or_default(store: Option<&str>) -> Result<StoreSpec, HistoryError> {
        match store {
            Some(s) => Ok(StoreSpec::parse(s)),
            None => StoreSpec::default_location(),
        }
    }
}

/// How a run came into the history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OriginKind {
    /// Stored by `yamba run` as it ended.
    Run,
    /// Stored by `yamba stone`.
    Stone,
    /// Stored by `yamba stress`.
    Stress,
    /// A results file brought in by `yamba history import`.
    Import,
}

impl OriginKind {
    pub fn as_str(self) -> &'static str {
        match self {
            OriginKind::Run => "run",
            OriginKind::Stone => "stone",
            OriginKind::Stress => "stress",
            OriginKind::Import => "import",
        }
    }
}

/// Where a stored run came from, and what it ran.
#[derive(Debug, Clone)]
pub struct Origin {
    pub kind: OriginKind,
    /// What was run, in words (the benchmarks asked for, `default`, the
    /// command timed); `None` derives it from the results' areas.
    pub suite: Option<String>,
    /// The results file it was written to or read from.
    pub source: Option<PathBuf>,
}

/// What storing a file did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Saved {
    /// Stored as a new run.
    New(RunId),
    /// The same file was stored before, as this run: nothing was added.
    Existing(RunId),
}

impl Saved {
    pub fn id(self) -> RunId {
        match self {
            Saved::New(id) | Saved::Existing(id) => id,
        }
    }
}

/// One stored run, as a listing shows it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunSummary {
    pub id: RunId,
    pub stored_at: String,
    pub started: String,
    pub finished: Option<String>,
    pub complete: bool,
    /// `run`, `stone` or `import`.
    pub origin: String,
    pub source: Option<String>,
    /// The command line, without the program's path.
    pub command: String,
    pub suite: String,
    pub quick: bool,
    pub tool_version: String,
    pub hostname: String,
    /// The hardware, in words: host, CPU model, CPUs, memory, hypervisor.
    pub machine: String,
    pub kernel: String,
    pub results: i64,
    pub ok: i64,
    pub withheld: i64,
    pub skipped: i64,
    pub failed: i64,
}

/// A history, in whichever database.
pub struct History {
    db: Box<dyn Backend>,
    /// True when this open created the history's tables (a new history):
    /// of several commands opening it at once, exactly one.
    pub created: bool,
}

impl History {
    /// Opens the history at `spec`, creating the database (and an SQLite
    /// file's folder) and its tables when missing.
    pub fn open(spec: &StoreSpec) -> Result<History, HistoryError> {
        let db: Box<dyn Backend> = match spec {
            StoreSpec::Sqlite(path) => {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir).map_err(|error| HistoryError::Folder {
                        dir: dir.to_path_buf(),
                        error,
                    })?;
                }
                Box::new(crate::sqlite::Sqlite::open(path).map_err(HistoryError::Connect)?)
            }
            StoreSpec::Postgres(url) => {
                Box::new(crate::postgres::Postgres::connect(url).map_err(HistoryError::Connect)?)
            }
        };
        Self::with_backend(db)
    }

    /// A history over an open connection: creates the tables if missing,
    /// refuses a schema newer than this yamba knows.
    pub fn with_backend(db: Box<dyn Backend>) -> Result<History, HistoryError> {
        let mut h = History { db, created: false };
        let location = h.location();
        h.created = h
            .transaction(|db| {
                if db.dialect() == Dialect::Postgres {
                    // Two first runs at once would both create the tables:
                    // PostgreSQL's IF NOT EXISTS does not stop that race.
                    db.execute("SELECT pg_advisory_xact_lock(7952417)", &[])?;
                }
                db.execute(schema::META, &[])?;
                let rows = db.query(
                    "SELECT value FROM yamba_meta WHERE name = 'schema_version'",
                    &[],
                )?;
                let version = rows
                    .first()
                    .and_then(|r| r[0].as_str())
                    .and_then(|v| v.parse::<i64>().ok());
                match version {
                    Some(v) if v > schema::SCHEMA_VERSION => Err(DbError::new(format!(
                    "its schema version {v} is newer than this yamba knows ({}): use a newer yamba",
                    schema::SCHEMA_VERSION
                ))),
                    Some(from) => {
                        // An older yamba's store: upgraded in place, in this
                        // transaction, so a reader never sees it half done.
                        let mut v = from;
                        while v < schema::SCHEMA_VERSION {
                            let steps = schema::migration(v).ok_or_else(|| {
                                DbError::new(format!("no upgrade from schema version {v}"))
                            })?;
                            for stmt in steps {
                                db.execute(stmt, &[])?;
                            }
                            v += 1;
                        }
                        if v != from {
                            db.execute(
                                "UPDATE yamba_meta SET value = ? WHERE name = 'schema_version'",
                                &[Value::Text(v.to_string())],
                            )?;
                        }
                        Ok(false)
                    }
                    None => {
                        for stmt in schema::create_tables(db.dialect()) {
                            db.execute(&stmt, &[])?;
                        }
                        db.execute(
                            "INSERT INTO yamba_meta (name, value) VALUES ('schema_version', ?)",
                            &[Value::Text(schema::SCHEMA_VERSION.to_string())],
                        )?;
                        Ok(true)
                    }
                }
            })
            .map_err(crate::error::db("cannot open", &location))?;
        Ok(h)
    }

    /// Where the history is: a file path, or a URL without its password.
    pub fn location(&self) -> String {
        self.db.location()
    }

    pub(crate) fn dialect(&self) -> Dialect {
        self.db.dialect()
    }

    /// An SQLite file's size in bytes (its write-ahead log included).
    pub(crate) fn file_bytes(&self) -> Option<u64> {
        let path = self.db.file()?;
        let wal = path.with_extension(format!(
            "{}-wal",
            path.extension().and_then(|e| e.to_str()).unwrap_or("")
        ));
        let len = |p: &Path| std::fs::metadata(p).map(|m| m.len()).ok();
        Some(len(&path)? + len(&wal).unwrap_or(0))
    }

    /// Gives an SQLite file's free pages back to the file system: rewrites
    /// the file, then empties the write-ahead log into it.
    pub(crate) fn vacuum(&mut self) -> Result<(), DbError> {
        if self.db.dialect() == Dialect::Sqlite {
            self.db.execute("VACUUM", &[])?;
            self.db.query("PRAGMA wal_checkpoint(TRUNCATE)", &[])?;
        }
        Ok(())
    }

    /// Runs `f` in one transaction: all of it is written, or none.
    pub(crate) fn transaction<T>(
        &mut self,
        f: impl FnOnce(&mut dyn Backend) -> Result<T, DbError>,
    ) -> Result<T, DbError> {
        self.db.begin()?;
        match f(self.db.as_mut()) {
            Ok(v) => {
                self.db.commit()?;
                Ok(v)
            }
            Err(e) => {
                let _ = self.db.rollback();
                Err(e)
            }
        }
    }

    /// Stores a results file, observations and all. A file stored before
    /// (the same bytes) is not stored twice.
    pub fn save(&mut self, file: &ResultsFile, origin: &Origin) -> Result<Saved, HistoryError> {
        let location = self.location();
        let stored = Stored::of(file, origin).map_err(|reason| HistoryError::Encode {
            location: location.clone(),
            reason,
        })?;
        let digest = stored.digest.clone();
        let result = self.transaction(|db| {
            let rows = db.query(
                "INSERT INTO runs (digest, stored_at, started, finished, complete, origin, source, \
                 command, suite, quick, tool_version, hostname, machine, kernel, n_results, n_ok, \
                 n_withheld, n_skipped, n_failed, header) \
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                &stored.run,
            )?;
            let id = rows
                .first()
                .and_then(|r| r[0].as_i64())
                .ok_or_else(|| DbError::new("the database gave no id for the new run"))?;
            for r in &stored.results {
                let mut params = vec![Value::Int(id)];
                params.extend(r.iter().cloned());
                db.execute(
                    "INSERT INTO results (run_id, position, result_key, result_id, benchmark, area, \
                     mode, status, unit, headline, ci_lo, ci_hi, observations, body) \
                     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    &params,
                )?;
            }
            Ok(id)
        });
        match result {
            Ok(id) => Ok(Saved::New(id)),
            Err(e) if e.unique_violation => match self.find_digest(&digest)? {
                Some(id) => Ok(Saved::Existing(id)),
                None => Err(db("cannot store the run", &location)(e)),
            },
            Err(e) => Err(db("cannot store the run", &location)(e)),
        }
    }

    fn find_digest(&mut self, digest: &str) -> Result<Option<RunId>, HistoryError> {
        let location = self.location();
        let rows = self
            .db
            .query(
                "SELECT id FROM runs WHERE digest = ?",
                &[Value::Text(digest.into())],
            )
            .map_err(db("cannot read", &location))?;
        Ok(rows.first().and_then(|r| r[0].as_i64()))
    }

    /// Stored runs, newest first (by when they started); at most `limit`.
    pub fn list(&mut self, limit: Option<usize>) -> Result<Vec<RunSummary>, HistoryError> {
        let location = self.location();
        let mut sql = format!("SELECT {SUMMARY_COLUMNS} FROM runs ORDER BY started DESC, id DESC");
        if let Some(n) = limit {
            sql.push_str(&format!(" LIMIT {n}"));
        }
        let rows = self
            .db
            .query(&sql, &[])
            .map_err(db("cannot list runs", &location))?;
        Ok(rows.iter().map(summary).collect())
    }

    /// How many runs are stored.
    pub fn count(&mut self) -> Result<i64, HistoryError> {
        let location = self.location();
        let rows = self
            .db
            .query("SELECT COUNT(*) FROM runs", &[])
            .map_err(db("cannot count runs", &location))?;
        Ok(rows.first().and_then(|r| r[0].as_i64()).unwrap_or(0))
    }

    /// One stored run's listing.
    pub fn summary(&mut self, id: RunId) -> Result<RunSummary, HistoryError> {
        let location = self.location();
        let rows = self
            .db
            .query(
                &format!("SELECT {SUMMARY_COLUMNS} FROM runs WHERE id = ?"),
                &[Value::Int(id)],
            )
            .map_err(db("cannot read", &location))?;
        rows.first()
            .map(summary)
            .ok_or_else(|| self.no_such_run(id))
    }

    fn no_such_run(&self, id: RunId) -> HistoryError {
        HistoryError::NoSuchRun {
            id,
            location: self.location(),
        }
    }

    /// Run `id`'s results file without its results: what it ran on and
    /// with which settings, read without a single observation.
    pub fn load_header(&mut self, id: RunId) -> Result<ResultsFile, HistoryError> {
        let location = self.location();
        let header = self
            .db
            .query("SELECT header FROM runs WHERE id = ?", &[Value::Int(id)])
            .map_err(db("cannot read", &location))?;
        let header = header.first().ok_or_else(|| self.no_such_run(id))?;
        let header = header[0].as_blob().unwrap_or_default();
        let corrupt = |reason: String| HistoryError::Damaged {
            location: location.clone(),
            id,
            reason,
        };
        let text = codec::unpack_text(header).map_err(corrupt)?;
        ResultsFile::from_json(&text).map_err(|e| corrupt(e.to_string()))
    }

    /// Run `id`'s headline value of each result that was ok, by result key
    /// (`id@mode`), as listed at storing: no result body is read.
    pub fn headlines(&mut self, id: RunId) -> Result<BTreeMap<String, f64>, HistoryError> {
        let location = self.location();
        let rows = self
            .db
            .query(
                "SELECT result_key, headline FROM results WHERE run_id = ? AND status = ? ORDER BY position",
                &[Value::Int(id), Value::Text(Status::Ok.as_str().into())],
            )
            .map_err(db("cannot read", &location))?;
        let mut out = BTreeMap::new();
        for r in &rows {
            if let (Some(k), Some(v)) = (r[0].as_str(), r[1].as_f64()) {
                out.entry(k.to_string()).or_insert(v);
            }
        }
        Ok(out)
    }

    /// The results file stored as run `id`, exactly as it was stored.
    pub fn load(&mut self, id: RunId) -> Result<ResultsFile, HistoryError> {
        let mut file = self.load_header(id)?;
        let location = self.location();
        let bodies = self
            .db
            .query(
                "SELECT body FROM results WHERE run_id = ? ORDER BY position",
                &[Value::Int(id)],
            )
            .map_err(db("cannot read", &location))?;
        let corrupt = |reason: String| HistoryError::Damaged {
            location: location.clone(),
            id,
            reason,
        };
        file.results = bodies
            .iter()
            .map(|row| {
                let text = codec::unpack_text(row[0].as_blob().unwrap_or_default())?;
                serde_json::from_str::<BenchResult>(&text).map_err(|e| e.to_string())
            })
            .collect::<Result<_, _>>()
            .map_err(corrupt)?;
        Ok(file)
    }

    /// The `n` newest runs' ids, oldest of them first.
    pub fn last(&mut self, n: usize) -> Result<Vec<RunId>, HistoryError> {
        let mut ids: Vec<RunId> = self.list(Some(n))?.iter().map(|r| r.id).collect();
        if ids.len() < n {
            return Err(HistoryError::TooFewRuns {
                asked: n,
                held: ids.len(),
                location: self.location(),
            });
        }
        ids.reverse();
        Ok(ids)
    }

    /// Each machine's (hostname's) `n` newest runs, newest first, machines
    /// in name order: the fleet view's runs, read from the index of runs
    /// by machine and start, without a listing of every run.
    pub fn newest_per_host(
        &mut self,
        n: usize,
    ) -> Result<Vec<(String, RunId, String)>, HistoryError> {
        let location = self.location();
        let rows = self
            .db
            .query(
                "SELECT hostname, id, started FROM (\
                 SELECT hostname, id, started, ROW_NUMBER() OVER (\
                 PARTITION BY hostname ORDER BY started DESC, id DESC) AS newness \
                 FROM runs) AS ranked WHERE newness <= ? ORDER BY hostname, newness",
                &[Value::from(n)],
            )
            .map_err(db("cannot list runs", &location))?;
        Ok(rows
            .iter()
            .map(|r| {
                let text = |i: usize| r[i].as_str().unwrap_or("").to_string();
                (text(0), r[1].as_i64().unwrap_or(0), text(2))
            })
            .collect())
    }

    /// The `n` newest stored runs, newest first, that can be of `file`'s
    /// configuration and started no later, as far as the listing tells:
    /// the same host, kernel, yamba version and quick or not. Whatever else
    /// the store holds (other machines' runs, newer ones) is not read.
    pub fn earlier_of(
        &mut self,
        file: &ResultsFile,
        n: usize,
    ) -> Result<Vec<RunSummary>, HistoryError> {
        let location = self.location();
        let quick = file
            .config
            .get("quick")
            .and_then(|v| v.as_bool())
            .unwrap_or(false);
        let rows = self
            .db
            .query(
                &format!(
                    "SELECT {SUMMARY_COLUMNS} FROM runs WHERE hostname = ? AND started <= ? \
                     AND kernel = ? AND tool_version = ? AND quick = ? \
                     ORDER BY started DESC, id DESC LIMIT {n}"
                ),
                &[
                    Value::from(file.machine.hostname.as_str()),
                    Value::from(file.started.as_str()),
                    Value::from(file.machine.kernel.as_str()),
                    Value::from(file.tool.version.as_str()),
                    Value::from(quick),
                ],
            )
            .map_err(db("cannot list runs", &location))?;
        Ok(rows.iter().map(summary).collect())
    }

    /// One result's headline value and interval in every stored run that
    /// has it, oldest first, with changes of machine, kernel or yamba
    /// marked. `name` is `id@mode`, or an id measured in one mode only.
    pub fn trend(&mut self, name: &str) -> Result<Trend, HistoryError> {
        let location = self.location();
        // The name as a key, else the keys of an id (both from indexes alone).
        let exact = self
            .db
            .query(
                "SELECT result_key FROM results WHERE result_key = ? LIMIT 1",
                &[Value::Text(name.into())],
            )
            .map_err(db("cannot read", &location))?;
        let keys = if exact.is_empty() {
            self.db
                .query(
                    "SELECT DISTINCT result_key FROM results WHERE result_id = ? ORDER BY result_key",
                    &[Value::Text(name.into())],
                )
                .map_err(db("cannot read", &location))?
        } else {
            exact
        };
        let keys: Vec<&str> = keys.iter().filter_map(|r| r[0].as_str()).collect();
        if keys.is_empty() {
            return Err(self.unknown_result(name)?);
        }
        if keys.len() > 1 {
            return Err(HistoryError::Ambiguous {
                name: name.to_string(),
                keys: keys.iter().map(|k| k.to_string()).collect(),
            });
        }
        let key = keys[0].to_string();
        // Two index-only reads joined here: the result's rows, and every
        // run in start order with what a point shows of it.
        let results = self
            .db
            .query(
                "SELECT run_id, position, unit, status, headline, ci_lo, ci_hi, observations \
                 FROM results WHERE result_key = ?",
                &[Value::Text(key.clone())],
            )
            .map_err(db("cannot read", &location))?;
        let mut by_run: BTreeMap<RunId, &Row> = BTreeMap::new();
        for r in &results {
            let run = r[0].as_i64().unwrap_or(0);
            let first = by_run
                .get(&run)
                .is_none_or(|p| r[1].as_i64() < p[1].as_i64());
            if first {
                by_run.insert(run, r); // one point per run: its first such result
            }
        }
        let runs = self
            .db
            .query(
                "SELECT id, started, machine, kernel, tool_version FROM runs ORDER BY started, id",
                &[],
            )
            .map_err(db("cannot read", &location))?;
        let mut points: Vec<TrendPoint> = Vec::new();
        let mut unit: Option<Unit> = None;
        for run in &runs {
            let id = run[0].as_i64().unwrap_or(0);
            let Some(r) = by_run.get(&id) else { continue };
            let text = |i: usize| run[i].as_str().unwrap_or("").to_string();
            if let Some(u) = r[2]
                .as_str()
                .and_then(|u| serde_json::from_value(u.into()).ok())
            {
                unit = Some(u); // the newest run's unit
            }
            let mut p = TrendPoint {
                run: id,
                started: text(1),
                machine: text(2),
                kernel: text(3),
                tool_version: text(4),
                status: r[3].as_str().unwrap_or("").to_string(),
                value: r[4].as_f64(),
                ci: r[5].as_f64().zip(r[6].as_f64()),
                observations: r[7].as_i64().unwrap_or(0),
                changes: Vec::new(),
            };
            if let Some(prev) = points.last() {
                p.changes = changes(prev, &p);
            }
            points.push(p);
        }
        Ok(Trend { key, unit, points })
    }

    /// "No stored run has …", with the stored names it may have meant.
    fn unknown_result(&mut self, name: &str) -> Result<HistoryError, HistoryError> {
        let location = self.location();
        let stem = name.split('@').next().unwrap_or(name);
        let area = stem.split('.').next().unwrap_or(stem);
        let rows = self
            .db
            .query(
                "SELECT DISTINCT result_key FROM results WHERE result_key LIKE ? ORDER BY result_key",
                &[Value::Text(format!("{area}%"))],
            )
            .map_err(db("cannot read", &location))?;
        let near = rows
            .iter()
            .filter_map(|r| r[0].as_str())
            .take(8)
            .map(str::to_string)
            .collect();
        Ok(HistoryError::UnknownResult {
            name: name.to_string(),
            near,
        })
    }
}

/// What differs between two consecutive points' runs.
fn changes(prev: &TrendPoint, p: &TrendPoint) -> Vec<String> {
    let mut out = Vec::new();
    if prev.machine != p.machine {
        out.push(format!("machine: {} → {}", prev.machine, p.machine));
    }
    if prev.kernel != p.kernel {
        out.push(format!("kernel: {} → {}", prev.kernel, p.kernel));
    }
    if prev.tool_version != p.tool_version {
        out.push(format!("yamba: {} → {}", prev.tool_version, p.tool_version));
    }
    out
}

pub(crate) const SUMMARY_COLUMNS: &str =
    "id, stored_at, started, finished, complete, origin, source, \
    command, suite, quick, tool_version, hostname, machine, kernel, n_results, n_ok, n_withheld, \
    n_skipped, n_failed";

pub(crate) fn summary(r: &Row) -> RunSummary {
    let text = |i: usize| r[i].as_str().unwrap_or("").to_string();
    let opt = |i: usize| r[i].as_str().map(str::to_string);
    let int = |i: usize| r[i].as_i64().unwrap_or(0);
    RunSummary {
        id: int(0),
        stored_at: text(1),
        started: text(2),
        finished: opt(3),
        complete: int(4) != 0,
        origin: text(5),
        source: opt(6),
        command: text(7),
        suite: text(8),
        quick: int(9) != 0,
        tool_version: text(10),
        hostname: text(11),
        machine: text(12),
        kernel: text(13),
        results: int(14),
        ok: int(15),
        withheld: int(16),
        skipped: int(17),
        failed: int(18),
    }
}

/// A results file made ready to store: the run's row and one row per
/// result (after `run_id`), compressed before any lock is taken.
struct Stored {
    digest: String,
    run: Vec<Value>,
    results: Vec<Vec<Value>>,
}

impl Stored {
    fn of(file: &ResultsFile, origin: &Origin) -> Result<Stored, String> {
        let mut header = file.clone();
        header.results = Vec::new();
        let header_json = serde_json::to_string(&header).map_err(|e| e.to_string())?;
        let mut digest = codec::Fnv::new();
        digest.update(header_json.as_bytes());
        let mut results = Vec::with_capacity(file.results.len());
        for (i, r) in file.results.iter().enumerate() {
            let body = serde_json::to_string(r).map_err(|e| e.to_string())?;
            digest.update(body.as_bytes());
            let (value, ci) = match r.headline() {
                Some((v, ci)) => (Some(v), ci.map(|c| (c.lo, c.hi))),
                None => (None, None),
            };
            results.push(vec![
                Value::from(i),
                Value::from(r.key()),
                Value::from(r.id.as_str()),
                Value::from(r.benchmark.as_str()),
                Value::from(r.area.as_str()),
                Value::from(r.mode.as_str()),
                Value::from(r.status.as_str()),
                Value::from(r.unit.symbol()),
                finite(value),
                finite(ci.map(|c| c.0)),
                finite(ci.map(|c| c.1)),
                Value::from(r.observations.len()),
                Value::Blob(codec::pack(body.as_bytes())?),
            ]);
        }
        let count = |s: Status| file.results.iter().filter(|r| r.status == s).count();
        let quick = file
            .config
            .get("quick")
            .and_then(|q| q.as_bool())
            .unwrap_or(false);
        let run = vec![
            Value::from(digest.hex()),
            Value::from(now_rfc3339()),
            Value::from(file.started.as_str()),
            Value::from(file.finished.clone()),
            Value::from(file.complete),
            Value::from(origin.kind.as_str()),
            Value::from(
                origin
                    .source
                    .as_deref()
                    .map(|p| absolute(p).display().to_string()),
            ),
            Value::from(command_line(&file.command)),
            Value::from(origin.suite.clone().unwrap_or_else(|| suite_of(file))),
            Value::from(quick),
            Value::from(file.tool.version.as_str()),
            Value::from(file.machine.hostname.as_str()),
            Value::from(machine_words(file)),
            Value::from(file.machine.kernel.as_str()),
            Value::from(file.results.len()),
            Value::from(count(Status::Ok)),
            Value::from(count(Status::Withheld)),
            Value::from(count(Status::Skipped)),
            Value::from(count(Status::Failed)),
            Value::Blob(codec::pack(header_json.as_bytes())?),
        ];
        Ok(Stored {
            digest: digest.hex(),
            run,
            results,
        })
    }
}

/// NaN and infinities are stored as NULL (PostgreSQL and SQLite disagree about them).
fn finite(v: Option<f64>) -> Value {
    v.filter(|v| v.is_finite()).map_or(Value::Null, Value::Real)
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// The command line without the program's path.
fn command_line(argv: &[String]) -> String {
    argv.iter().skip(1).cloned().collect::<Vec<_>>().join(" ")
}

/// The hardware in words, so that a change of machine shows as a change
/// of this text: host, CPU, CPUs, memory (to the GiB: the kernel's own
/// share moves between boots), hypervisor.
pub fn machine_words(file: &ResultsFile) -> String {
    let m = &file.machine;
    let gib = (m.memory_bytes as f64 / (1u64 << 30) as f64).round();
    let mut s = format!(
        "{} ({}, {} CPUs, {gib} GiB",
        m.hostname, m.cpu_model, m.online_cpus
    );
    if let Some(h) = m.hypervisor_name() {
        s.push_str(&format!(", {h}"));
    }
    s.push(')');
    s
}

/// What a file ran, when the command that stores it does not say: its
/// results' areas, in the order they first appear.
pub fn suite_of(file: &ResultsFile) -> String {
    let mut areas: Vec<&str> = Vec::new();
    for r in &file.results {
        if !areas.contains(&r.area.as_str()) {
            areas.push(&r.area);
        }
    }
    match areas.len() {
        0 => "nothing".to_string(),
        1..=4 => areas.join(" "),
        n => format!("{n} areas ({} …)", areas[..3].join(" ")),
    }
}
