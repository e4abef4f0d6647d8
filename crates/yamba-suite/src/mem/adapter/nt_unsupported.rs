//! Architectures without a non-temporal store adapter: the benchmarks that
//! need one say so (`unavailable`) and never call `write` or `copy`.

pub fn unavailable() -> Option<String> {
    Some(format!(
        "no non-temporal store adapter for {}",
        std::env::consts::ARCH
    ))
}
pub fn write(_dst: &mut [u64], _value: u64) {
    unreachable!("non-temporal stores unavailable")
}
pub fn copy(_dst: &mut [u64], _src: &[u64]) {
    unreachable!("non-temporal stores unavailable")
}
