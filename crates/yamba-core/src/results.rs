//! The results file. Its types live in the `yamba-results` crate (readers
//! need no measurement machinery); they are re-exported here at their old
//! paths.

pub use yamba_results::results::*;
