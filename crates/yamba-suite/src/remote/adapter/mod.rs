//! Platform adapter for the agent: how it opens a file it may serve
//! without opening anything else first, and how it learns the path the
//! kernel actually opened.
//!
//! The interface every implementation provides: `NAME` (for the
//! benchmarks that talk to an agent; `NO_ADAPTER` skips them),
//! `open_root` (the served directory, once), `open_beneath` (a request
//! resolved beneath it: a regular file with one link, on a file system
//! that holds data, or why not), `resolver` (how paths are resolved, in
//! words) and `force_component_walk` (tests).
//!
//! `linux.rs` on Linux (openat2 RESOLVE_BENEATH, or a component walk with
//! O_NOFOLLOW; O_PATH, fstat and fstatfs before opening);
//! `unsupported.rs` everywhere else: the component walk with O_NOFOLLOW,
//! the file opened without blocking and checked after.

#[cfg_attr(linux_adapters, path = "linux.rs")]
#[cfg_attr(not(linux_adapters), path = "unsupported.rs")]
mod imp;

pub use imp::*;

/// A request's directories on the way and its last name (empty and `.`
/// names dropped), for the component walk every adapter has; the root
/// itself and `..` refused.
fn split_request(rel: &str) -> Result<(Vec<&str>, &str), String> {
    let mut parts: Vec<&str> = rel
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    let Some(last) = parts.pop() else {
        return Err("names the root itself, not a file".into());
    };
    if last == ".." || parts.contains(&"..") {
        return Err("'..' is not allowed".into());
    }
    Ok((parts, last))
}
