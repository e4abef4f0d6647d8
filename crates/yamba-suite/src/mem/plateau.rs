//! Plateaus of a latency-by-working-set curve: each cache level is a run of
//! sizes at about one latency, and the run that reaches the largest sizes
//! is main memory.
//!
//! A level's *capacity* is not where its plateau ends: physically indexed
//! caches with 4 KiB pages start losing lines to set conflicts long before
//! they are full (a 1 MiB L2 is flat only to ~350 KiB). The mean latency of
//! a chase is a linear mix of hit and miss latency, so the working set
//! where it crosses the *arithmetic* midpoint between a level's plateau and
//! the next level's is where half the loads still hit: that is
//! [`capacity`]. The plateau's end is kept as "fully effective up to".

use serde::Serialize;

/// A run of consecutive points at about one latency.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plateau {
    /// Smallest and largest working set on the run, in bytes.
    pub first_bytes: f64,
    pub last_bytes: f64,
    /// Median latency of the run's points, in ns.
    pub latency_ns: f64,
    /// Indices into the curve of the points that make the run.
    pub points: Vec<usize>,
}

/// How far a point may rise above a run's level and still belong to it.
pub const RISE: f64 = 0.25;
/// Largest step between neighbours where a new run may begin.
pub const FLAT: f64 = 0.12;

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Finds the plateaus of `curve` (points (bytes, ns) in ascending bytes).
/// A run begins where two neighbours differ by less than [`FLAT`], grows
/// while points stay within [`RISE`] of its median (one stray point is
/// passed over if the next is back on the level), and needs two points.
/// Runs whose levels differ by less than [`RISE`] are one run split by
/// noise and are merged.
pub fn detect(curve: &[[f64; 2]]) -> Vec<Plateau> {
    let n = curve.len();
    let y = |i: usize| curve[i][1];
    let level = |pts: &[usize]| median(&mut pts.iter().map(|&i| y(i)).collect::<Vec<_>>());
    let mut runs: Vec<Vec<usize>> = Vec::new();
    let mut i = 0;
    while i + 1 < n {
        let (a, b) = (y(i), y(i + 1));
        if (b - a).abs() > FLAT * a.min(b) {
            i += 1;
            continue;
        }
        let mut pts = vec![i, i + 1];
        let mut j = i + 2;
        while j < n {
            let lvl = level(&pts);
            if y(j) <= lvl * (1.0 + RISE) {
                pts.push(j);
                j += 1;
            } else if j + 1 < n && y(j + 1) <= lvl * (1.0 + RISE) {
                pts.push(j + 1);
                j += 2;
            } else {
                break;
            }
        }
        runs.push(pts);
        i = j;
    }
    let mut merged: Vec<Vec<usize>> = Vec::new();
    for r in runs {
        match merged.last_mut() {
            Some(prev) if level(&r) <= level(prev) * (1.0 + RISE) => prev.extend(r),
            _ => merged.push(r),
        }
    }
    merged
        .into_iter()
        .map(|pts| Plateau {
            first_bytes: curve[pts[0]][0],
            last_bytes: curve[*pts.last().unwrap()][0],
            latency_ns: level(&pts),
            points: pts,
        })
        .collect()
}

/// The working set, in bytes, where `curve` first rises through the
/// arithmetic midpoint between `level_ns` and `next_ns`, searching after
/// the point `from` (the level's plateau's last point); interpolated
/// linearly in log(size) between the two points around the crossing. A
/// single point above the midpoint with the next back below it is noise,
/// not the crossing. `None` when the curve never gets there.
pub fn capacity(curve: &[[f64; 2]], from: usize, level_ns: f64, next_ns: f64) -> Option<f64> {
    let mid = (level_ns + next_ns) / 2.0;
    let above = |j: usize| curve.get(j).is_some_and(|p| p[1] >= mid);
    let j =
        (from + 1..curve.len()).find(|&j| above(j) && (j + 1 == curve.len() || above(j + 1)))?;
    let ([x0, y0], [x1, y1]) = (curve[j - 1], curve[j]);
    if y1 <= y0 {
        return Some(x1);
    }
    let t = ((mid - y0) / (y1 - y0)).clamp(0.0, 1.0);
    Some((x0.ln() + t * (x1.ln() - x0.ln())).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A staircase: 1 ns to 48K, 4 ns to 1M, 12 ns to 32M, 90 ns beyond,
    /// with gradual transitions and a little noise.
    fn staircase() -> Vec<[f64; 2]> {
        let mut pts = Vec::new();
        let mut x = 4096.0f64;
        let mut k = 0;
        while x <= 512.0 * 1048576.0 {
            let lvl = |cap: f64, below: f64, above: f64| {
                if x <= cap {
                    below
                } else if x >= 2.0 * cap {
                    above
                } else {
                    below + (above - below) * (x / cap - 1.0)
                }
            };
            let l1 = lvl(48.0 * 1024.0, 1.0, 4.0);
            let l2 = if x > 96.0 * 1024.0 {
                lvl(1048576.0, 4.0, 12.0)
            } else {
                l1
            };
            let l3 = if x > 2.0 * 1048576.0 {
                lvl(32.0 * 1048576.0, 12.0, 90.0)
            } else {
                l2
            };
            let noise = 1.0 + 0.03 * ((k % 3) as f64 - 1.0);
            pts.push([x, l3 * noise]);
            x *= 2f64.powf(0.25);
            k += 1;
        }
        pts
    }

    #[test]
    fn finds_each_level_of_a_staircase() {
        let p = detect(&staircase());
        assert_eq!(p.len(), 4, "{p:#?}");
        let sizes: Vec<f64> = p.iter().map(|p| p.last_bytes).collect();
        for (got, want) in sizes
            .iter()
            .zip([48.0 * 1024.0, 1048576.0, 32.0 * 1048576.0])
        {
            assert!(*got <= want && *got >= want / 1.5, "{got} vs {want}");
        }
        for (got, want) in p.iter().zip([1.0, 4.0, 12.0, 90.0]) {
            assert!((got.latency_ns / want - 1.0).abs() < 0.05, "{got:?}");
        }
    }

    #[test]
    fn one_stray_point_does_not_split_a_level() {
        let mut c: Vec<[f64; 2]> = (0..10).map(|i| [1024.0 * (i + 1) as f64, 2.0]).collect();
        c[4][1] = 5.0;
        let p = detect(&c);
        assert_eq!(p.len(), 1, "{p:#?}");
        assert_eq!(p[0].points.len(), 9);
    }

    #[test]
    fn capacity_is_the_midpoint_crossing_not_the_plateau_end() {
        // The Zen 4 curve of issue 11 (2 MiB pages): flat at 3.76 ns to
        // 256 KiB, a gradual rise to the 12 ns L3 plateau; L2 is 1 MiB.
        let k = 1024.0;
        let c = [
            [128.0 * k, 3.76],
            [181.0 * k, 3.75],
            [256.0 * k, 3.76],
            [362.0 * k, 4.9],
            [512.0 * k, 5.6],
            [741.0 * k, 6.4],
            [1024.0 * k, 8.8],
            [1448.0 * k, 11.7],
            [2048.0 * k, 12.0],
            [2896.0 * k, 12.2],
        ];
        let p = detect(&c);
        assert_eq!(p.len(), 2, "{p:#?}");
        assert!(p[0].last_bytes < 600.0 * k, "{p:#?}");
        let from = *p[0].points.last().unwrap();
        let cap = capacity(&c, from, p[0].latency_ns, p[1].latency_ns).unwrap();
        assert!((0.85..=1.0).contains(&(cap / (1024.0 * k))), "{}", cap / k);
        // A sharp step is found between the two points around it.
        let step = [[32.0, 1.0], [45.0, 1.0], [64.0, 5.0], [90.0, 5.0]];
        let cap = capacity(&step, 1, 1.0, 5.0).unwrap();
        assert!(cap > 45.0 && cap < 64.0, "{cap}");
        // One stray point above the midpoint is not the crossing.
        let stray = [
            [1.0, 1.0],
            [2.0, 1.0],
            [4.0, 9.0],
            [8.0, 1.1],
            [16.0, 9.0],
            [32.0, 9.0],
        ];
        assert!(capacity(&stray, 1, 1.0, 9.0).unwrap() > 8.0);
        // A curve that never gets there has no capacity.
        assert_eq!(capacity(&step, 1, 1.0, 50.0), None);
    }

    #[test]
    fn a_steady_slope_has_no_plateau() {
        let c: Vec<[f64; 2]> = (0..10).map(|i| [(i + 1) as f64, 1.5f64.powi(i)]).collect();
        assert!(detect(&c).is_empty());
    }
}
