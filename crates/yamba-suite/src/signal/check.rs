//! The count every `signal` benchmark checks: the handler ran exactly as
//! many times as signals were sent (or faults triggered). Kept apart so a
//! test can show that a mismatch withholds the number.

use yamba_core::BenchResult;

/// Gating evidence: `ran` handler runs for `sent` signals or faults.
pub fn exact_count(r: &mut BenchResult, check: &str, sent: u64, ran: u64) {
    r.add_evidence(
        check,
        format!("{sent}"),
        format!("{ran}"),
        sent > 0 && ran == sent,
    );
}
