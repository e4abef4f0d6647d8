//! Reading what a user names on a command line: a results file by path
//! (`-` for standard input), or a file of numbers, always within the
//! size limit ([`crate::Limits::from_env`]) and with one clear error line.
//! The one place every reader (the CLI's commands, the report, the
//! history's `Resolver`) reads a results file from a path.

use crate::ResultsFile;

/// Reads a results file (plain or `.json.zst`), `-` meaning standard
/// input, with one clear error line on failure.
pub fn read_results(path: &str) -> Result<ResultsFile, String> {
    if path == "-" {
        let bytes = read_bounded(&mut std::io::stdin().lock())
            .map_err(|e| format!("standard input: {e}"))?;
        return ResultsFile::from_bytes(&bytes).map_err(|e| format!("standard input: {e}"));
    }
    ResultsFile::read(std::path::Path::new(path)).map_err(|e| match e {
        crate::ReadError::Io(e) => e.to_string(),
        e => format!("{path}: {e}"),
    })
}

/// Everything `r` gives, up to the results-file size limit
/// ([`crate::Limits::from_env`]): a longer input is refused with
/// the limit's one line, never read to the end.
pub fn read_bounded(r: &mut dyn std::io::Read) -> Result<Vec<u8>, String> {
    let limits = crate::Limits::from_env()?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(r, limits.max_bytes + 1),
        &mut bytes,
    )
    .map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > limits.max_bytes {
        return Err(crate::LimitExceeded::Bytes(limits.max_bytes).to_string());
    }
    Ok(bytes)
}

/// A file of numbers or results by name, up to the size limit; a device,
/// a directory or a socket is refused before it is read.
pub fn read_file_bounded(path: &std::path::Path) -> Result<Vec<u8>, String> {
    let shown = path.display();
    crate::readable_input(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let mut f = std::fs::File::open(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    read_bounded(&mut f).map_err(|e| format!("{shown}: {e}"))
}
