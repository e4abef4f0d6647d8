//! yamba's test helpers (docs/testing.md).
//!
//! - [`skip!`]: a test that cannot run here says why and returns; under
//!   `YAMBA_CI=1` that is a failure unless `.ci/skips` lists the test with
//!   its reason.
//! - [`alone`]: measurement checks hold it for their whole body, so no two
//!   of them run at once inside one test binary.
//! - [`check!`] / [`Check`]: a measurement check that decides with a
//!   sequential rule whose false-failure rate is at most 0.1%.
//! - [`rate_check!`] / [`RateCheck`]: a check on how often something
//!   happens over trials (a gate's false alarms, its power), with the same
//!   0.1% bound on a false failure.
//! - [`premise_unmet!`]: a check whose premise this machine does not meet
//!   says so, is recorded and returns.
//! - [`fuzz_plan`]: fuzzers run a fixed number of cases from a fixed seed.
//! - [`RamExt4`]: an ext4 of known make (journal or not) on a zram device.
//!
//! Every outcome is recorded (`YAMBA_SKIP_LOG`, `YAMBA_CHECK_LOG`) so CI
//! can list what it did not test.

mod alone;
mod check;
mod fuzz;
mod id;
mod ram_ext4;
mod rate;
mod record;
mod rule;
mod skip;

pub use alone::{alone, Alone};
pub use check::{
    note_core_reading, Accept, Attempt, Check, CoreReadings, Outcome, Verdict, RETAKES,
    RETAKE_LIMIT,
};
pub use fuzz::fuzz_plan;
pub use id::{test_id, TestId};
pub use ram_ext4::{Journal, RamExt4};
pub use rate::{Claim, RateCheck, RateVerdict, PASS_TAIL};
pub use record::premise_unmet;
pub use rule::{median_interval, ALPHA, PASS_LEVEL};
pub use skip::{allowed_skips, skipped};

/// The calling test binary's id ([`TestId`]): what every record of a skip
/// or a check is filed under.
#[macro_export]
macro_rules! this_test {
    () => {
        $crate::test_id(env!("CARGO_PKG_NAME"), env!("CARGO_CRATE_NAME"))
    };
}

/// Returns from the calling test after recording that it could not run
/// here, with a reason (`format!` arguments). Under `YAMBA_CI=1` it panics
/// instead unless `.ci/skips` lists the test (see [`skipped`]).
#[macro_export]
macro_rules! skip {
    ($($reason:tt)+) => {{
        $crate::skipped(
            &$crate::this_test!(),
            &format!($($reason)+),
        );
        return;
    }};
}

/// Returns from the calling measurement check after recording that this
/// machine does not meet its premise (one CPU only, a shared core, an
/// emulator's speed, no PMU), with the reason (`format!` arguments). Not a
/// skip: no allowlist, but CI counts and lists it.
#[macro_export]
macro_rules! premise_unmet {
    ($($reason:tt)+) => {{
        $crate::premise_unmet(
            &$crate::this_test!(),
            &format!($($reason)+),
        );
        return;
    }};
}

/// A [`Check`] named `name` that accepts `accept` ([`Accept`]), recorded
/// under the calling test's id.
#[macro_export]
macro_rules! check {
    ($name:expr, $accept:expr) => {
        $crate::Check::new($crate::this_test!(), $name, $accept)
    };
}

/// A [`RateCheck`] named `name` on `claim` ([`Claim`]), recorded under
/// the calling test's id.
#[macro_export]
macro_rules! rate_check {
    ($name:expr, $claim:expr) => {
        $crate::RateCheck::new($crate::this_test!(), $name, $claim)
    };
}
