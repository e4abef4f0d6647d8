//! Checks on how often something happens over independent trials: a
//! gate's false alarms over identical pairs, its power over pairs with a
//! known change.
//!
//! A claim names a rate p₀ that the true rate p must meet (`p ≥ p₀` or
//! `p ≤ p₀`). With k events in n trials, the rule takes the tail of the
//! count on the claim's wrong side when p = p₀ — P(X ≤ k) for an
//! at-least claim, P(X ≥ k) for an at-most one, X ~ Binomial(n, p₀):
//!
//! - **fail** when the tail is at most α/L (α = [`ALPHA`] = 0.1%, L the
//!   looks the test may take): a rate that meets the claim gives such a
//!   count with probability at most α/L at each look, so the check fails
//!   falsely with probability at most α over all of them;
//! - **pass** when the tail is above [`PASS_TAIL`] (5%): the count is one a
//!   rate meeting the claim gives in the usual run;
//! - otherwise **undecided**: the test may take more trials and look again
//!   (a look it has counted in L), or stop there, printed and recorded.
//!
//! A pass says the count does not contradict the claim; how far below the
//! claim a rate may be and still pass is the rule's price for a rare false
//! failure, and [`RateCheck::pass_chance`] states it: for at least 90% over
//! 20 trials (pass at 16 or more), a true 70% passes with 24%, 50% with
//! 0.6%; over 40 trials (pass at 33 or more), 70% passes with 5.5%.

use crate::check::Outcome;
use crate::id::TestId;
use crate::record::append;
use crate::rule::ALPHA;
use std::fmt;

/// A count whose tail on the claim's wrong side is above this passes.
pub const PASS_TAIL: f64 = 0.05;

/// What the true rate must meet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Claim {
    /// `p ≥ p₀`: a power.
    AtLeast(f64),
    /// `p ≤ p₀`: a false-alarm rate.
    AtMost(f64),
}

impl Claim {
    fn rate(self) -> f64 {
        match self {
            Claim::AtLeast(p) | Claim::AtMost(p) => p,
        }
    }
}

impl fmt::Display for Claim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Claim::AtLeast(p) => write!(f, "rate >= {p}"),
            Claim::AtMost(p) => write!(f, "rate <= {p}"),
        }
    }
}

/// A check on a rate: see the module's documentation for its rule. Made
/// with [`crate::rate_check!`], which names it after the calling test.
#[derive(Clone, Debug)]
pub struct RateCheck {
    id: TestId,
    name: String,
    claim: Claim,
    looks: usize,
}

/// A rate check's decision on one count.
#[derive(Clone, Debug, PartialEq)]
pub struct RateVerdict {
    /// How it ended.
    pub outcome: Outcome,
    /// Events counted.
    pub events: usize,
    /// Trials counted.
    pub trials: usize,
    /// The tail of the count on the claim's wrong side at the claimed rate.
    pub tail: f64,
}

impl RateCheck {
    /// A check named `name` of test `id` on `claim`, deciding at one look.
    /// Panics unless the claimed rate lies strictly between 0 and 1.
    pub fn new(id: TestId, name: impl Into<String>, claim: Claim) -> Self {
        let p = claim.rate();
        assert!(p > 0.0 && p < 1.0, "a claimed rate of {p}");
        RateCheck {
            id,
            name: name.into(),
            claim,
            looks: 1,
        }
    }

    /// The looks the test may take (each on all the trials so far): the
    /// fail level is α over their number.
    pub fn looks(mut self, looks: usize) -> Self {
        assert!(looks >= 1, "looks({looks})");
        self.looks = looks;
        self
    }

    /// The rule on `events` in `trials`: no printing, no log.
    pub fn judge(&self, events: usize, trials: usize) -> RateVerdict {
        assert!(events <= trials, "{events} events in {trials} trials");
        let p = self.claim.rate();
        let tail = match self.claim {
            Claim::AtLeast(_) => binomial_cdf(events, trials, p),
            Claim::AtMost(_) if events == 0 => 1.0,
            Claim::AtMost(_) => 1.0 - binomial_cdf(events - 1, trials, p),
        };
        let outcome = if tail <= ALPHA / self.looks as f64 {
            Outcome::Fail
        } else if tail > PASS_TAIL {
            Outcome::Pass
        } else {
            Outcome::Undecided
        };
        RateVerdict {
            outcome,
            events,
            trials,
            tail,
        }
    }

    /// The probability that a true rate `p` passes at `trials` (one look).
    pub fn pass_chance(&self, p: f64, trials: usize) -> f64 {
        (0..=trials)
            .filter(|&k| self.judge(k, trials).outcome == Outcome::Pass)
            .map(|k| binomial_pmf(k, trials, p))
            .sum()
    }

    /// [`RateCheck::judge`], printed on standard error (`PASS <id> [name]:
    /// k of n …`) with `detail`, and appended to `YAMBA_CHECK_LOG` as a
    /// measurement check's outcome. Does not panic: see [`RateCheck::run`].
    pub fn decide(&self, events: usize, trials: usize, detail: &str) -> RateVerdict {
        let v = self.judge(events, trials);
        let word = v.outcome.word();
        let line = self.line(&v, detail);
        eprintln!(
            "{} {} [{}]: {line}",
            word.to_uppercase(),
            self.id,
            self.name
        );
        append(
            "YAMBA_CHECK_LOG",
            &format!(
                "{word}\t{}\t{}\t{trials}\t{events}/{trials} = {:.3}\t{}\t{line}",
                self.id,
                self.name,
                events as f64 / trials.max(1) as f64,
                self.claim
            ),
        );
        v
    }

    /// [`RateCheck::decide`], panicking on a fail.
    pub fn run(&self, events: usize, trials: usize, detail: &str) -> RateVerdict {
        let v = self.decide(events, trials, detail);
        if v.outcome == Outcome::Fail {
            panic!(
                "FAILED {} [{}]: {}",
                self.id,
                self.name,
                self.line(&v, detail)
            );
        }
        v
    }

    fn line(&self, v: &RateVerdict, detail: &str) -> String {
        let mut s = format!(
            "{} of {} trials, claim {} (tail {:.2e}; fails at <= {:.1e}, passes above {PASS_TAIL}, {} looks)",
            v.events,
            v.trials,
            self.claim,
            v.tail,
            ALPHA / self.looks as f64,
            self.looks
        );
        if !detail.is_empty() {
            s.push_str("; ");
            s.push_str(detail);
        }
        s
    }
}

/// P(X = k) for X ~ Binomial(n, p), computed in logs.
fn binomial_pmf(k: usize, n: usize, p: f64) -> f64 {
    if k > n {
        return 0.0;
    }
    if p <= 0.0 {
        return if k == 0 { 1.0 } else { 0.0 };
    }
    if p >= 1.0 {
        return if k == n { 1.0 } else { 0.0 };
    }
    let ln_choose: f64 = (0..k)
        .map(|i| ((n - i) as f64).ln() - ((i + 1) as f64).ln())
        .sum();
    (ln_choose + k as f64 * p.ln() + (n - k) as f64 * (1.0 - p).ln()).exp()
}

/// P(X ≤ k) for X ~ Binomial(n, p).
fn binomial_cdf(k: usize, n: usize, p: f64) -> f64 {
    (0..=k.min(n))
        .map(|i| binomial_pmf(i, n, p))
        .sum::<f64>()
        .min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(claim: Claim) -> RateCheck {
        RateCheck::new(crate::test_id("t", "t"), "synthetic", claim)
    }

    #[test]
    fn the_binomial_matches_known_values() {
        // Binomial(20, 0.9): P(X ≤ 15) = 0.0432, P(X ≤ 12) = 0.000416.
        assert!((binomial_cdf(15, 20, 0.9) - 0.043_18).abs() < 1e-4);
        assert!((binomial_cdf(12, 20, 0.9) - 0.000_416).abs() < 1e-6);
        assert!((binomial_cdf(20, 20, 0.3) - 1.0).abs() < 1e-12);
        // Binomial(20, 0.05): P(X ≥ 6) = 0.000329.
        assert!((1.0 - binomial_cdf(5, 20, 0.05) - 0.000_329).abs() < 1e-6);
    }

    #[test]
    fn a_power_of_ninety_percent_over_twenty_trials() {
        let c = check(Claim::AtLeast(0.9));
        let outcome = |k| c.judge(k, 20).outcome;
        assert_eq!(outcome(20), Outcome::Pass);
        assert_eq!(outcome(16), Outcome::Pass);
        assert_eq!(outcome(15), Outcome::Undecided);
        assert_eq!(outcome(13), Outcome::Undecided);
        assert_eq!(outcome(12), Outcome::Fail);
        assert_eq!(outcome(0), Outcome::Fail);
        // Two looks halve the fail level: 13 stays undecided (0.0024).
        assert_eq!(c.clone().looks(2).judge(12, 20).outcome, Outcome::Fail);
    }

    #[test]
    fn a_false_alarm_rate_of_five_percent_over_twenty_trials() {
        let c = check(Claim::AtMost(0.05));
        let outcome = |k| c.judge(k, 20).outcome;
        assert_eq!(outcome(0), Outcome::Pass);
        assert_eq!(outcome(3), Outcome::Pass);
        assert_eq!(outcome(4), Outcome::Undecided);
        assert_eq!(outcome(5), Outcome::Undecided);
        assert_eq!(outcome(6), Outcome::Fail);
    }

    #[test]
    fn the_false_failure_rate_holds_at_the_claimed_rate() {
        // At p = p₀ exactly (the worst case of the claim), the chance of a
        // fail is the tail below α.
        for (claim, n) in [
            (Claim::AtLeast(0.9), 20),
            (Claim::AtLeast(0.9), 40),
            (Claim::AtMost(0.05), 20),
            (Claim::AtMost(0.05), 100),
        ] {
            let c = check(claim);
            let p = claim.rate();
            let fail: f64 = (0..=n)
                .filter(|&k| c.judge(k, n).outcome == Outcome::Fail)
                .map(|k| binomial_pmf(k, n, p))
                .sum();
            assert!(fail <= ALPHA, "{claim} at {n}: fails with {fail}");
            assert!(fail > 0.0, "{claim} at {n}: can never fail");
        }
    }

    #[test]
    fn the_pass_chances_the_documentation_states() {
        let c = check(Claim::AtLeast(0.9));
        let at = |p, n| c.pass_chance(p, n);
        assert!((at(0.7, 20) - 0.238).abs() < 0.005, "{}", at(0.7, 20));
        assert!((at(0.5, 20) - 0.0059).abs() < 0.0005, "{}", at(0.5, 20));
        assert!((at(0.7, 40) - 0.055).abs() < 0.002, "{}", at(0.7, 40));
        assert!(at(0.95, 20) > 0.99, "{}", at(0.95, 20));
        // Over 40 trials a pass needs 33.
        assert_eq!(c.judge(33, 40).outcome, Outcome::Pass);
        assert_ne!(c.judge(32, 40).outcome, Outcome::Pass);
    }
}
