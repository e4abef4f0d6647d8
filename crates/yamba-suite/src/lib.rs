//! yamba benchmarks.
