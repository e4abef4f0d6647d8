//! Presenting yamba results: the run's table, `yamba compare`'s text, the
//! HTML report, lmbench's summary, the machine in words, exports to other
//! tools' formats, TIME_BLOCK tables, where a run's time went. What the
//! results say (comparisons, spreads, predictions) is yamba-analysis,
//! re-exported where a reader expects it here.
pub mod between;
pub mod blocks;
pub mod compare;
pub mod export;
pub mod html;
pub mod lmbench;
pub mod machine;
pub mod plotting;
pub mod table;
pub mod timings;

pub use yamba_analysis::{headline, predict, select};
