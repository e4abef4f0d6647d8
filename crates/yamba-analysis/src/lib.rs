//! What yamba's results say, without saying it to anyone: the comparison
//! of two runs (benchstat's question, one sample per process) and the
//! regression gate, the spread earlier runs of a configuration showed,
//! predictions from the machine's facts, the headline primitives, and
//! picking results out of a file by name. Presentation — tables, HTML,
//! exports — is yamba-report's; the history reads this crate, never that.
pub mod between;
pub mod compare;
pub mod headline;
pub mod predict;
pub mod select;
