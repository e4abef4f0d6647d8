//! The one seam between the history and a database: a connection that runs
//! SQL with positional parameters and returns rows of plain values. SQLite
//! and PostgreSQL each implement it ([`crate::sqlite`], [`crate::postgres`]);
//! everything else — the schema's tables and columns, every query, what a
//! stored run looks like — is shared and lives in [`crate::store`].

use std::fmt;

/// A value passed to or read from the database. The schema uses only these
/// column types: 64-bit integers, doubles, text and byte strings.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl Value {
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Real(f) => Some(*f),
            Value::Int(i) => Some(*i as f64),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Text(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_blob(&self) -> Option<&[u8]> {
        match self {
            Value::Blob(b) => Some(b),
            _ => None,
        }
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::Int(v)
    }
}

impl From<usize> for Value {
    fn from(v: usize) -> Value {
        Value::Int(v as i64)
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Value {
        Value::Int(i64::from(v))
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Value {
        Value::Real(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::Text(v.to_string())
    }
}

impl From<String> for Value {
    fn from(v: String) -> Value {
        Value::Text(v)
    }
}

impl From<Vec<u8>> for Value {
    fn from(v: Vec<u8>) -> Value {
        Value::Blob(v)
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}

/// A row: one value per selected column, in order.
pub type Row = Vec<Value>;

/// What went wrong talking to the database.
#[derive(Debug)]
pub struct DbError {
    pub message: String,
    /// A uniqueness constraint refused the write (a run stored twice).
    pub unique_violation: bool,
}

impl DbError {
    pub fn new(message: impl Into<String>) -> DbError {
        DbError {
            message: message.into(),
            unique_violation: false,
        }
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DbError {}

/// The SQL dialect differences the shared code must know about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

/// A connection to a history database.
///
/// SQL is written once, with `?` placeholders numbered in order; a backend
/// whose database numbers them (`$1`, PostgreSQL) rewrites them. Every
/// statement the shared code sends is inside a transaction it opened with
/// [`Backend::begin`], so a run is stored whole or not at all.
pub trait Backend {
    fn dialect(&self) -> Dialect;
    /// Runs a statement; returns the rows it changed.
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError>;
    /// Runs a query; returns every row.
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError>;
    /// Opens a transaction that takes the write lock at once, so two
    /// writers queue instead of failing half-way (SQLite: `BEGIN
    /// IMMEDIATE`, waiting out the busy timeout).
    fn begin(&mut self) -> Result<(), DbError>;
    fn commit(&mut self) -> Result<(), DbError>;
    fn rollback(&mut self) -> Result<(), DbError>;
    /// Where the database is, for messages (a path, or a URL without its password).
    fn location(&self) -> String;
    /// The database's file, where it is one (SQLite).
    fn file(&self) -> Option<std::path::PathBuf> {
        None
    }
}

/// Rewrites `?` placeholders as `$1`, `$2`, … (the shared SQL has no `?`
/// inside string literals).
pub fn numbered_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    for c in sql.chars() {
        if c == '?' {
            n += 1;
            out.push('$');
            out.push_str(&n.to_string());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_in_order() {
        assert_eq!(
            numbered_placeholders("SELECT a FROM t WHERE b = ? AND c IN (?, ?)"),
            "SELECT a FROM t WHERE b = $1 AND c IN ($2, $3)"
        );
        assert_eq!(numbered_placeholders("SELECT 1"), "SELECT 1");
    }

    #[test]
    fn options_become_nulls() {
        assert_eq!(Value::from(None::<i64>), Value::Null);
        assert_eq!(Value::from(Some(2.5)), Value::Real(2.5));
        assert_eq!(Value::from(true), Value::Int(1));
    }
}
