//! The kprof-style table of where the time went.

use super::{Hot, Role, Samples};

/// The kprof-style table: a totals line, then `ms % sym` for the top `n`.
pub fn render(samples: &Samples, hot: &[Hot], n: usize) -> String {
    let total = samples.samples.len();
    let kernel = samples.samples.iter().filter(|s| s.kernel).count();
    let ms = |k: u64| k as f64 * samples.period_ns as f64 / 1e6;
    let mut out = format!(
        "total: {total} samples ({:.0} ms of CPU, one per {} µs)      in kernel: {kernel} ({:.1}%)      user: {} ({:.1}%)\n",
        ms(total as u64),
        samples.period_ns / 1000,
        100.0 * kernel as f64 / total.max(1) as f64,
        total - kernel,
        100.0 * (total - kernel) as f64 / total.max(1) as f64,
    );
    if samples.lost > 0 || samples.throttled > 0 {
        out.push_str(&format!(
            "lost: {} samples, throttled {} times (shares are of the samples kept)\n",
            samples.lost, samples.throttled
        ));
    }
    if samples.child_cpu_ns > 0 {
        out.push_str(&format!(
            "the kernel accounted {:.0} ms of CPU to the profiled process; the samples cover {:.0}% of it\n",
            samples.child_cpu_ns as f64 / 1e6,
            100.0 * ms(total as u64) * 1e6 / samples.child_cpu_ns as f64
        ));
    }
    let late = samples
        .samples
        .iter()
        .filter(|s| s.at_syscall_return)
        .count();
    if late > 0 {
        out.push_str(&format!(
            "{late} samples ({:.1}%) fell due while the kernel returned from a system call with interrupts masked and were taken at the caller's next instruction: counted as the kernel's\n",
            100.0 * late as f64 / total.max(1) as f64
        ));
    }
    let in_copies = |role| {
        samples
            .samples
            .iter()
            .filter(|s| s.placed == Some(role))
            .count()
    };
    let (code, dummy) = (in_copies(Role::Code), in_copies(Role::Dummy));
    if code + dummy > 0 {
        out.push_str(&format!(
            "{} samples ({:.1}%) ran in copies at random placements (code placement), named as the function each copies: {code} of the measured code, {dummy} of its dummy loop F\n",
            code + dummy,
            100.0 * (code + dummy) as f64 / total.max(1) as f64
        ));
    }
    if samples.copies_unrecorded > 0 {
        out.push_str(&format!(
            "{} placed copies found the profiler's ledger full: samples in placed copies from then on stay unnamed ([unmapped])\n",
            samples.copies_unrecorded
        ));
    }
    if let Err(why) = &samples.kernel {
        out.push_str(&format!("user space only: {why}\n"));
    }
    out.push_str("ms        %      sym\n");
    for h in hot.iter().take(n) {
        out.push_str(&format!(
            "{:<9.1} {:<6.1} {}\n",
            ms(h.samples),
            h.percent,
            h.symbol
        ));
    }
    out
}
