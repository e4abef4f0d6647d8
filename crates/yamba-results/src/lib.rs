//! yamba's results file, and nothing that measures.
//!
//! The serialised types every writer (`yamba run`, `yamba stone`) and every
//! reader (`compare`, `plot`, `obs`, `select`, `export`, the report crate)
//! shares: the [`ResultsFile`], its [`BenchResult`]s with their [`Method`],
//! [`Evidence`] and [`Accounting`], and the descriptions of the machine,
//! clock and BASE a run recorded. Detecting, calibrating and measuring
//! these is `yamba-core`'s job; a reader needs only this crate.
//!
//! The format is documented field by field in docs/results-schema.md and
//! checked by docs/results.schema.json.

pub mod base;
pub mod clock;
pub mod consistency;
pub mod copies;
pub mod counters;
pub mod cpustates;
pub mod input;
pub mod limits;
pub mod machine;
pub mod output;
pub mod results;
pub mod secrets;
// Units and their printing live in yamba-stats (yamba-plot, which reads
// no results file, uses them too); every `yamba_results::units` path still
// names them.
pub use yamba_stats::units;

pub use base::Base;
pub use clock::{Calibration, ClockInfo, ClockKind};
pub use consistency::{check_result, Inconsistency};
pub use copies::{Copies, CopiesBlock};
pub use counters::Counts;
pub use cpustates::CpuStates;
pub use input::{read_bounded, read_file_bounded, read_results, InputError};
pub use limits::{LimitExceeded, Limits};
pub use machine::{CacheLevel, Disk, Machine, MemoryModule, Nic};
pub use results::{
    is_compressed_name, now_rfc3339, readable_input, rfc3339, writable_output, write_atomic,
    Accounting, BenchResult, BlockKind, Certainty, Evidence, Method, MethodKind, Mode, Phases,
    PlacedAt, Placement, ReadError, ResultsFile, Rotation, RunTimings, Series, Status, Tool,
    PRECISE_BLOCKS, SCHEMA_NAME, SCHEMA_VERSION,
};
pub use units::{format_sig, Unit};

/// This yamba's version, as recorded in results files.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
