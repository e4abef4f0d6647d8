//! Plateaus of a latency-by-working-set curve: each cache level is a run of
//! sizes at about one latency; the size where a run ends is that level's
//! capacity as the chase sees it; the run that reaches the largest sizes is
//! main memory.

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
    fn a_steady_slope_has_no_plateau() {
        let c: Vec<[f64; 2]> = (0..10).map(|i| [(i + 1) as f64, 1.5f64.powi(i)]).collect();
        assert!(detect(&c).is_empty());
    }
}
