//! A team's or a fleet's store: the same schema in PostgreSQL, so many
//! machines report into one place (`--store postgres://…`). Plain
//! connections (no TLS): reach a remote server over a Unix socket, an SSH
//! tunnel or a trusted network.

use crate::backend::{numbered_placeholders, Backend, DbError, Dialect, Row, Value};
use postgres::types::{IsNull, ToSql, Type};

pub struct Postgres {
    client: postgres::Client,
    location: String,
}

fn db_error(e: postgres::Error) -> DbError {
    let unique_violation = e.code() == Some(&postgres::error::SqlState::UNIQUE_VIOLATION);
    // The driver's Display says only "db error"; the server's message is in the source.
    let message = match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => e.to_string(),
    };
    DbError {
        message,
        unique_violation,
    }
}

impl Postgres {
    /// Connects to `url` (`postgres://user@host:port/db`, or with
    /// `?host=/socket/dir` for a Unix socket).
    pub fn connect(url: &str) -> Result<Postgres, DbError> {
        let config: postgres::Config = url
            .parse()
            .map_err(|e| DbError::new(format!("--store {}: {e}", redact(url))))?;
        let location = redact(url);
        let client = config
            .connect(postgres::NoTls)
            .map_err(|e| DbError::new(format!("cannot connect to {location}: {e}")))?;
        Ok(Postgres { client, location })
    }
}

/// The URL with any password replaced by `***`.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (authority, tail) = match rest.find(['/', '?']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let authority = match authority.rsplit_once('@') {
        Some((user, host)) => match user.split_once(':') {
            Some((name, _password)) => format!("{name}:***@{host}"),
            None => format!("{user}@{host}"),
        },
        None => authority.to_string(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let q: Vec<String> = query
                .split('&')
                .map(|kv| match kv.split_once('=') {
                    Some(("password", _)) => "password=***".to_string(),
                    _ => kv.to_string(),
                })
                .collect();
            format!("{path}?{}", q.join("&"))
        }
        None => tail.to_string(),
    };
    format!("{scheme}://{authority}{tail}")
}

/// A parameter of whatever column type the statement expects: the shared
/// SQL passes integers to BIGINT columns, doubles to DOUBLE PRECISION, text
/// to TEXT and bytes to BYTEA.
#[derive(Debug)]
struct Param<'a>(&'a Value);

impl ToSql for Param<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut postgres::types::private::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self.0 {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(i) if *ty == Type::FLOAT8 => (*i as f64).to_sql(ty, out),
            Value::Int(i) => i.to_sql(ty, out),
            Value::Real(f) => f.to_sql(ty, out),
            Value::Text(s) => s.to_sql(ty, out),
            Value::Blob(b) => b.to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    postgres::types::to_sql_checked!();
}

fn from_row(row: &postgres::Row) -> Result<Row, DbError> {
    let mut out = Vec::with_capacity(row.len());
    for (i, col) in row.columns().iter().enumerate() {
        let ty = col.type_();
        let v = if *ty == Type::INT8 {
            row.try_get::<_, Option<i64>>(i)
                .map(|v| v.map_or(Value::Null, Value::Int))
        } else if *ty == Type::INT4 {
            row.try_get::<_, Option<i32>>(i)
                .map(|v| v.map_or(Value::Null, |v| Value::Int(v.into())))
        } else if *ty == Type::FLOAT8 {
            row.try_get::<_, Option<f64>>(i)
                .map(|v| v.map_or(Value::Null, Value::Real))
        } else if *ty == Type::BYTEA {
            row.try_get::<_, Option<Vec<u8>>>(i)
                .map(|v| v.map_or(Value::Null, Value::Blob))
        } else if *ty == Type::BOOL {
            row.try_get::<_, Option<bool>>(i)
                .map(|v| v.map_or(Value::Null, |b| Value::Int(b.into())))
        } else {
            row.try_get::<_, Option<String>>(i)
                .map(|v| v.map_or(Value::Null, Value::Text))
        };
        out.push(v.map_err(db_error)?);
    }
    Ok(out)
}

impl Backend for Postgres {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        let params: Vec<Param> = params.iter().map(Param).collect();
        let refs: Vec<&(dyn ToSql + Sync)> =
            params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
        self.client
            .execute(numbered_placeholders(sql).as_str(), &refs)
            .map_err(db_error)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        let params: Vec<Param> = params.iter().map(Param).collect();
        let refs: Vec<&(dyn ToSql + Sync)> =
            params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
        let rows = self
            .client
            .query(numbered_placeholders(sql).as_str(), &refs)
            .map_err(db_error)?;
        rows.iter().map(from_row).collect()
    }

    fn begin(&mut self) -> Result<(), DbError> {
        self.client.batch_execute("BEGIN").map_err(db_error)
    }

    fn commit(&mut self) -> Result<(), DbError> {
        self.client.batch_execute("COMMIT").map_err(db_error)
    }

    fn rollback(&mut self) -> Result<(), DbError> {
        self.client.batch_execute("ROLLBACK").map_err(db_error)
    }

    fn location(&self) -> String {
        self.location.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn passwords_never_reach_a_message() {
        assert_eq!(
            redact("postgres://bob:s3cret@db.example:5432/yamba"),
            "postgres://bob:***@db.example:5432/yamba"
        );
        assert_eq!(
            redact("postgresql:///yamba?host=/tmp/x&password=s3cret&user=bob"),
            "postgresql:///yamba?host=/tmp/x&password=***&user=bob"
        );
        assert_eq!(redact("postgres://bob@db/yamba"), "postgres://bob@db/yamba");
    }
}
