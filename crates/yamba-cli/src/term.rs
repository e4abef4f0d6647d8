//! The terminal's size: the one place that asks the kernel for it.

/// The window size of standard output (columns, rows) as TIOCGWINSZ
/// reports it, or None when standard output is not a terminal.
#[cfg(unix)]
pub fn window_size() -> Option<(u16, u16)> {
    // SAFETY: `winsize` is plain data; TIOCGWINSZ writes one into it and
    // fails harmlessly when standard output is not a terminal.
    unsafe {
        let mut size: libc::winsize = std::mem::zeroed();
        (libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size) != -1)
            .then_some((size.ws_col, size.ws_row))
    }
}

#[cfg(not(unix))]
pub fn window_size() -> Option<(u16, u16)> {
    None
}

/// The size to draw for: $COLUMNS/$LINES when set, then the window's,
/// then 80×24.
pub fn size() -> (usize, usize) {
    let (cols, rows) = window_size()
        .filter(|&(c, r)| c > 0 && r > 0)
        .map(|(c, r)| (c as usize, r as usize))
        .unzip();
    (
        env_size("COLUMNS").or(cols).unwrap_or(80),
        env_size("LINES").or(rows).unwrap_or(24),
    )
}

/// A positive number of columns or lines from the environment
/// (`COLUMNS`, `LINES`), as a user or a test may set it.
pub fn env_size(key: &str) -> Option<usize> {
    std::env::var(key)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|v| *v > 0)
}
