//! The embedded store: one SQLite file (the bundled SQLite, so every
//! machine has the same one). Several `yamba run`s may finish at once and
//! write to the same file: the database is in WAL mode, writers take the
//! write lock when their transaction opens (`BEGIN IMMEDIATE`) and wait for
//! each other up to [`BUSY_TIMEOUT`] instead of failing.

use crate::backend::{Backend, DbError, Dialect, Row, Value};
use rusqlite::types::ValueRef;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a writer waits for another to finish storing its run.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

pub struct Sqlite {
    conn: rusqlite::Connection,
    path: PathBuf,
}

fn db_error(e: rusqlite::Error) -> DbError {
    let unique_violation = matches!(
        &e,
        rusqlite::Error::SqliteFailure(f, _)
            if f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                || f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
    );
    DbError {
        message: e.to_string(),
        unique_violation,
    }
}

impl Sqlite {
    /// Opens (creating if missing) the database at `path`; its folder must exist.
    pub fn open(path: &Path) -> Result<Sqlite, DbError> {
        let conn = rusqlite::Connection::open(path)
            .map_err(|e| DbError::new(format!("cannot open {}: {e}", path.display())))?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(db_error)?;
        // WAL lets readers go on while a run is stored. Switching needs a
        // moment alone with the file; another process may be switching too,
        // and SQLite answers "database is locked" at once there (without its
        // busy handler, which could deadlock two upgrading readers): so we
        // retry for as long as a writer would wait.
        let t0 = std::time::Instant::now();
        let mut pause = Duration::from_millis(2);
        loop {
            match conn.pragma_update(None, "journal_mode", "WAL") {
                Ok(()) => break,
                Err(rusqlite::Error::SqliteFailure(f, _))
                    if f.code == rusqlite::ErrorCode::DatabaseBusy
                        && t0.elapsed() < BUSY_TIMEOUT =>
                {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(100));
                }
                Err(e) => return Err(DbError::new(format!("cannot open {}: {e}", path.display()))),
            }
        }
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(db_error)?;
        Ok(Sqlite {
            conn,
            path: path.to_path_buf(),
        })
    }
}

fn to_sql(v: &Value) -> rusqlite::types::Value {
    use rusqlite::types::Value as S;
    match v {
        Value::Null => S::Null,
        Value::Int(i) => S::Integer(*i),
        Value::Real(f) => S::Real(*f),
        Value::Text(s) => S::Text(s.clone()),
        Value::Blob(b) => S::Blob(b.clone()),
    }
}

fn from_sql(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(f) => Value::Real(f),
        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    }
}

impl Backend for Sqlite {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        let params: Vec<rusqlite::types::Value> = params.iter().map(to_sql).collect();
        self.conn
            .prepare_cached(sql)
            .and_then(|mut stmt| stmt.execute(rusqlite::params_from_iter(params)))
            .map(|n| n as u64)
            .map_err(db_error)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        let params: Vec<rusqlite::types::Value> = params.iter().map(to_sql).collect();
        let mut stmt = self.conn.prepare(sql).map_err(db_error)?;
        let width = stmt.column_count();
        let mut rows = stmt
            .query(rusqlite::params_from_iter(params))
            .map_err(db_error)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(db_error)? {
            let mut r = Vec::with_capacity(width);
            for i in 0..width {
                r.push(from_sql(row.get_ref(i).map_err(db_error)?));
            }
            out.push(r);
        }
        Ok(out)
    }

    fn begin(&mut self) -> Result<(), DbError> {
        self.conn.execute_batch("BEGIN IMMEDIATE").map_err(db_error)
    }

    fn commit(&mut self) -> Result<(), DbError> {
        self.conn.execute_batch("COMMIT").map_err(db_error)
    }

    fn rollback(&mut self) -> Result<(), DbError> {
        self.conn.execute_batch("ROLLBACK").map_err(db_error)
    }

    fn location(&self) -> String {
        self.path.display().to_string()
    }

    fn file(&self) -> Option<PathBuf> {
        Some(self.path.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ten connections opening one new file at once all get it (SQLite
    /// answered "database is locked" to some of them, without waiting, while
    /// another switched the file to WAL: 7 rounds in 60 of ten concurrent
    /// `yamba history import`s failed so before the retry).
    #[test]
    fn connections_opening_a_new_file_at_once_all_open_it() {
        for _ in 0..30 {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("h.sqlite");
            let start = std::sync::Barrier::new(10);
            std::thread::scope(|s| {
                let opened: Vec<_> = (0..10)
                    .map(|_| {
                        s.spawn(|| {
                            start.wait();
                            Sqlite::open(&path).map(|_| ()).map_err(|e| e.message)
                        })
                    })
                    .collect();
                for o in opened {
                    o.join().unwrap().unwrap();
                }
            });
        }
    }
}
