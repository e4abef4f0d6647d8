//! `yamba run --profile BENCH`: where the time goes while a benchmark runs.

/// Runs `bench` under a sampling profiler and prints the top symbols.
pub fn run_profile(_session: &yamba_core::Session, _bench: &'static yamba_core::Benchmark) -> anyhow::Result<i32> {
    anyhow::bail!("--profile is being written")
}
