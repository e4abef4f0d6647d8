//! Naming a test the same way everywhere: in what it prints, in the logs
//! CI reads and in `.ci/skips`.

use std::fmt;

/// `package/binary::path::to::test`: the cargo package, the test binary's
/// crate name (`yamba_core` for a library's unit tests, `measure_cpu` for
/// `tests/measure_cpu.rs`) and the test's path inside it as libtest names
/// it (`coreclock::tests::name`, or `name` in an integration test file).
/// E.g. `yamba-cli/report_browser::report_renders_in_chromium`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestId(String);

impl TestId {
    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The id of the test running on this thread. libtest names each test's
/// thread after the test's path; a thread it did not start (a helper
/// thread, or `main`) gives `?` as the path, which the id then shows.
pub fn test_id(package: &str, binary: &str) -> TestId {
    let thread = std::thread::current();
    let test = match thread.name() {
        Some(name) if name != "main" => name.to_string(),
        _ => "?".to_string(),
    };
    TestId(format!("{package}/{binary}::{test}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_is_package_binary_and_the_tests_path() {
        assert_eq!(
            test_id("yamba-testkit", "yamba_testkit").as_str(),
            "yamba-testkit/yamba_testkit::id::tests::the_id_is_package_binary_and_the_tests_path"
        );
    }
}
