//! Reading yamba results.
