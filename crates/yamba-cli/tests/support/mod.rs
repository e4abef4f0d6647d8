//! Helpers the CLI's test files share.
pub mod agent;
pub mod run;
