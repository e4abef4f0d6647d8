//! Shared by the history tests: results files to store, and a private PostgreSQL server.

pub mod files;
pub mod fleet;
pub mod pg;
