//! Which files are mapped where in the profiled process (/proc/PID/maps).

use std::path::PathBuf;

/// A file-backed executable mapping from /proc/PID/maps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    pub start: u64,
    pub end: u64,
    pub offset: u64,
    pub path: PathBuf,
}

impl Mapping {
    /// The mapping of `maps` that holds `ip` (the first: `merge_maps` puts
    /// the newest reading first).
    pub fn holding(maps: &[Mapping], ip: u64) -> Option<&Mapping> {
        maps.iter().find(|m| ip >= m.start && ip < m.end)
    }

    /// Whether a file backs it ([vdso] and the like are named, not files).
    pub fn is_file(&self) -> bool {
        self.path.starts_with("/")
    }

    /// Where `ip`, inside this mapping, lies in its file.
    pub fn file_offset(&self, ip: u64) -> u64 {
        ip - self.start + self.offset
    }
}

/// Parses /proc/PID/maps text: executable, file-backed mappings only.
pub fn parse_maps(text: &str) -> Vec<Mapping> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let range = f.next()?;
            let perms = f.next()?;
            let offset = u64::from_str_radix(f.next()?, 16).ok()?;
            let _dev = f.next()?;
            let _inode = f.next()?;
            let path = f.collect::<Vec<_>>().join(" ");
            // Files, and the kernel's [vdso]: executable mappings with a name.
            if !perms.contains('x') || path.is_empty() {
                return None;
            }
            let (s, e) = range.split_once('-')?;
            Some(Mapping {
                start: u64::from_str_radix(s, 16).ok()?,
                end: u64::from_str_radix(e, 16).ok()?,
                offset,
                path: PathBuf::from(path),
            })
        })
        .collect()
}

/// Adds to `known` the mappings of a later reading that it lacks: the
/// process may have mapped a library or exec'd a program since, and its
/// earlier samples still belong to the earlier mappings. A later mapping
/// that overlaps an earlier one goes first, so the newest reading wins.
pub fn merge_maps(known: &mut Vec<Mapping>, later: Vec<Mapping>) {
    let mut fresh: Vec<Mapping> = later.into_iter().filter(|m| !known.contains(m)).collect();
    if fresh.is_empty() {
        return;
    }
    fresh.append(known);
    *known = fresh;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_executable_mappings() {
        let maps = parse_maps(
            "55d0a0000000-55d0a0100000 r--p 00000000 fd:01 123 /usr/bin/yamba\n\
             55d0a0100000-55d0a0400000 r-xp 00100000 fd:01 123 /usr/bin/yamba\n\
             7f0000000000-7f0000001000 r-xp 00000000 00:00 0 [vdso]\n",
        );
        assert_eq!(maps.len(), 2);
        assert_eq!(maps[1].path, PathBuf::from("[vdso]"));
        assert_eq!(maps[0].offset, 0x100000);
        assert_eq!(maps[0].path, PathBuf::from("/usr/bin/yamba"));
    }

    #[test]
    fn later_mappings_are_added_and_win_where_they_overlap() {
        let m = |start, path: &str| Mapping {
            start,
            end: start + 0x1000,
            offset: 0,
            path: PathBuf::from(path),
        };
        let mut known = vec![m(0x1000, "/bin/a"), m(0x5000, "/lib/x.so")];
        merge_maps(&mut known, vec![m(0x5000, "/lib/x.so")]);
        assert_eq!(known.len(), 2);
        merge_maps(
            &mut known,
            vec![m(0x1000, "/bin/b"), m(0x5000, "/lib/x.so")],
        );
        assert_eq!(known.len(), 3);
        let first = known.iter().find(|x| x.start <= 0x1800 && 0x1800 < x.end);
        assert_eq!(first.unwrap().path, PathBuf::from("/bin/b"));
    }
}
