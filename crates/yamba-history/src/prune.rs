//! Retention: `yamba history prune` removes runs by rule — beyond each
//! machine's newest N (`--keep N`), and/or started before a date
//! (`--before DATE`). A run goes when any rule given selects it. With no
//! rule nothing is removed: pruning refuses rather than guess.
//!
//! Space: an SQLite file is rewritten (`VACUUM`) after runs are removed,
//! so it shrinks; PostgreSQL's autovacuum makes the rows' space reusable
//! for later runs (the tables do not shrink on disk; `VACUUM FULL runs,
//! results` does that, locking them while it runs).

use crate::backend::{Dialect, Value};
use crate::store::{History, RunSummary};
use crate::HistoryError;

/// Which runs to remove. At least one rule must be given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prune {
    /// Keep each machine's (hostname's) newest `keep` runs, remove the rest.
    pub keep: Option<usize>,
    /// Remove runs started before this UTC date or time (`YYYY-MM-DD`, or
    /// `YYYY-MM-DDTHH:MM:SSZ`, as runs record their start).
    pub before: Option<String>,
}

/// What pruning removed (or, for a dry run, would remove).
#[derive(Debug, Clone)]
pub struct Pruned {
    /// The runs, oldest first.
    pub runs: Vec<RunSummary>,
    /// Their stored bytes: headers and results, compressed, as stored.
    pub bytes: u64,
    /// Nothing was removed: only said.
    pub dry_run: bool,
    /// An SQLite file's size before and after (removed and vacuumed).
    pub file_bytes: Option<(u64, u64)>,
}

/// Whether `s` is a date (`YYYY-MM-DD`) or a UTC time as runs record their
/// start (`YYYY-MM-DDTHH:MM:SSZ`): compared as text, nothing else orders right.
pub fn valid_date(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| r.clone().all(|i| b[i].is_ascii_digit());
    let date = b.len() >= 10
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10);
    date && (b.len() == 10
        || (b.len() == 20
            && b[10] == b'T'
            && digits(11..13)
            && b[13] == b':'
            && digits(14..16)
            && b[16] == b':'
            && digits(17..19)
            && b[19] == b'Z'))
}

/// At most this many ids in one `IN (…)` (SQLite's limit on parameters is 32 766).
const CHUNK: usize = 500;

impl History {
    /// Removes the runs `rule` selects (a dry run only lists them), all in
    /// one transaction; then reclaims an SQLite file's space.
    pub fn prune(&mut self, rule: &Prune, dry_run: bool) -> Result<Pruned, HistoryError> {
        if rule.keep.is_none() && rule.before.is_none() {
            return Err(HistoryError::NoRule);
        }
        if let Some(d) = rule.before.as_deref().filter(|d| !valid_date(d)) {
            return Err(HistoryError::BadDate(d.to_string()));
        }
        let mut select = Vec::new();
        let mut params = Vec::new();
        if let Some(k) = rule.keep {
            select.push("newness > ?");
            params.push(Value::from(k));
        }
        if let Some(d) = &rule.before {
            select.push("started < ?");
            params.push(Value::from(d.as_str()));
        }
        let sql = format!(
            "SELECT id FROM (SELECT id, started, ROW_NUMBER() OVER (\
             PARTITION BY hostname ORDER BY started DESC, id DESC) AS newness FROM runs) AS ranked \
             WHERE {} ORDER BY started, id",
            select.join(" OR ")
        );
        let file_before = self.file_bytes();
        let location = self.location();
        let (ids, runs, bytes) = self
            .transaction(|db| {
                let ids: Vec<i64> = db
                    .query(&sql, &params)?
                    .iter()
                    .filter_map(|r| r[0].as_i64())
                    .collect();
                let mut runs = Vec::with_capacity(ids.len());
                let mut bytes = 0u64;
                for chunk in ids.chunks(CHUNK) {
                    let list = vec!["?"; chunk.len()].join(", ");
                    let p: Vec<Value> = chunk.iter().map(|&i| Value::Int(i)).collect();
                    let sum = |db: &mut dyn crate::backend::Backend, q: &str| {
                        db.query(q, &p)
                            .map(|r| r.first().and_then(|r| r[0].as_i64()).unwrap_or(0) as u64)
                    };
                    bytes += sum(
                        db,
                        &format!("SELECT COALESCE(SUM(LENGTH(header)), 0) FROM runs WHERE id IN ({list})"),
                    )?;
                    bytes += sum(
                        db,
                        &format!("SELECT COALESCE(SUM(LENGTH(body)), 0) FROM results WHERE run_id IN ({list})"),
                    )?;
                    let rows = db.query(
                        &format!(
                            "SELECT {} FROM runs WHERE id IN ({list}) ORDER BY started, id",
                            crate::store::SUMMARY_COLUMNS
                        ),
                        &p,
                    )?;
                    runs.extend(rows.iter().map(crate::store::summary));
                    if !dry_run {
                        db.execute(&format!("DELETE FROM results WHERE run_id IN ({list})"), &p)?;
                        db.execute(&format!("DELETE FROM runs WHERE id IN ({list})"), &p)?;
                    }
                }
                Ok((ids, runs, bytes))
            })
            .map_err(crate::error::db("cannot prune", &location))?;
        let mut file_bytes = None;
        if !dry_run && !ids.is_empty() && self.dialect() == Dialect::Sqlite {
            self.vacuum().map_err(|error| HistoryError::Vacuum {
                location: location.clone(),
                removed: ids.len(),
                error,
            })?;
            file_bytes = file_before.zip(self.file_bytes());
        }
        Ok(Pruned {
            runs,
            bytes,
            dry_run,
            file_bytes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_a_day_or_a_utc_second() {
        assert!(valid_date("2026-11-20"));
        assert!(valid_date("2026-11-20T09:00:00Z"));
        for bad in [
            "2026-1-20",
            "20261120",
            "2026-11-20 09:00",
            "2026-11-20T09:00:00+01:00",
            "yesterday",
            "",
        ] {
            assert!(!valid_date(bad), "{bad}");
        }
    }
}
