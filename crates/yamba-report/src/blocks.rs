//! Aggregating TIME_BLOCK reports: where the timed cycles went.
//!
//! A program using TIME_BLOCK (C header or Rust macro) prints lines
//! `file:line,executions,mean,total,percent%`, one per site per report;
//! each report covers the interval since the previous one. This module
//! does what the seed's awk pipeline does with them,
//!
//! ```text
//! awk -F, '{ totals[$1] += $4; total += $4;} END { for(k in totals) { print k, totals[k], totals[k]*100/total; } }' |
//!   sort -rn +1 | awk '{ cum += $3; print $1, $2, $3, cum; }'
//! ```
//!
//! totals per site over every report and instance, each site's share of
//! all timed cycles, largest first, with the cumulative share ("the top 10
//! account for 33%"). [`render_awk`] prints it exactly as the pipeline
//! does (awk's `%.6g` numbers); [`render_table`] adds executions and means.

use std::collections::HashMap;
use yamba_ministat::format_g;

/// One TIME_BLOCK line.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockLine {
    /// `file:line`.
    pub site: String,
    pub executions: u64,
    pub mean: u64,
    pub total: u64,
    pub percent: f64,
}

/// Parses a TIME_BLOCK line; None for anything else (a program's own output
/// is often mixed in on stdout).
pub fn parse_line(line: &str) -> Option<BlockLine> {
    let mut f = line.trim_end().rsplitn(5, ',');
    let percent = f.next()?.strip_suffix('%')?.parse().ok()?;
    let total = f.next()?.parse().ok()?;
    let mean = f.next()?.parse().ok()?;
    let executions = f.next()?.parse().ok()?;
    let site = f.next()?;
    let (_file, line_no) = site.rsplit_once(':')?;
    line_no.parse::<u32>().ok()?;
    Some(BlockLine {
        site: site.to_string(),
        executions,
        mean,
        total,
        percent,
    })
}

/// One site's totals over all the lines read.
#[derive(Debug, Clone, PartialEq)]
pub struct SiteTotal {
    pub site: String,
    pub executions: u64,
    /// Timed cycles (counter ticks), summed.
    pub total: u128,
    /// Share of all sites' cycles, in percent.
    pub share_pct: f64,
    /// This share plus those of every larger site.
    pub cumulative_pct: f64,
}

impl SiteTotal {
    /// Mean cycles per execution over all reports.
    pub fn mean(&self) -> f64 {
        if self.executions == 0 {
            0.0
        } else {
            self.total as f64 / self.executions as f64
        }
    }
}

/// Sites by total, largest first.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Aggregate {
    pub sites: Vec<SiteTotal>,
    /// All sites' cycles together.
    pub total: u128,
    /// TIME_BLOCK lines read.
    pub lines: usize,
    /// Other lines skipped.
    pub ignored: usize,
}

/// Totals the TIME_BLOCK lines of `text`, ignoring other lines.
pub fn aggregate<'a>(texts: impl IntoIterator<Item = &'a str>) -> Aggregate {
    let mut by_site: HashMap<String, (u64, u128)> = HashMap::new();
    let mut agg = Aggregate::default();
    for text in texts {
        for line in text.lines() {
            match parse_line(line) {
                Some(b) => {
                    let e = by_site.entry(b.site).or_default();
                    e.0 += b.executions;
                    e.1 += b.total as u128;
                    agg.total += b.total as u128;
                    agg.lines += 1;
                }
                None if line.trim().is_empty() => {}
                None => agg.ignored += 1,
            }
        }
    }
    let mut sites: Vec<SiteTotal> = by_site
        .into_iter()
        .map(|(site, (executions, total))| SiteTotal {
            share_pct: if agg.total == 0 {
                0.0
            } else {
                total as f64 * 100.0 / agg.total as f64
            },
            site,
            executions,
            total,
            cumulative_pct: 0.0,
        })
        .collect();
    // `sort -rn +1`: by total, descending; ties by the whole line, descending.
    sites.sort_by(|a, b| b.total.cmp(&a.total).then_with(|| b.site.cmp(&a.site)));
    let mut cum = 0.0;
    for s in &mut sites {
        cum += s.share_pct;
        s.cumulative_pct = cum;
    }
    agg.sites = sites;
    agg
}

/// awk's number output: integers as integers, the rest `%.6g`.
fn awk_number(x: f64) -> String {
    if x == x.trunc() && x.abs() < 1e16 {
        format!("{}", x as i64)
    } else {
        format_g(x, 6)
    }
}

/// The seed pipeline's output: `site total share cumulative`, first `top`
/// sites. As in the pipeline, the cumulative column sums the printed
/// (rounded) shares, so the output is the pipeline's to the byte.
pub fn render_awk(agg: &Aggregate, top: Option<usize>) -> String {
    let mut out = String::new();
    let mut cum = 0.0;
    for s in agg.sites.iter().take(top.unwrap_or(usize::MAX)) {
        let share = awk_number(s.share_pct);
        cum += share.parse::<f64>().unwrap_or(s.share_pct);
        out.push_str(&format!(
            "{} {} {} {}\n",
            s.site,
            s.total,
            share,
            awk_number(cum)
        ));
    }
    out
}

/// A readable table with a header, executions and mean cycles, and a
/// closing line saying what share the sites shown account for.
pub fn render_table(agg: &Aggregate, top: Option<usize>) -> String {
    let shown: Vec<&SiteTotal> = agg.sites.iter().take(top.unwrap_or(usize::MAX)).collect();
    let width = shown.iter().map(|s| s.site.len()).max().unwrap_or(4).max(4);
    let mut out = format!(
        "{:<width$} {:>12} {:>12} {:>16} {:>8} {:>8}\n",
        "site", "executions", "mean cycles", "total cycles", "%", "cum %"
    );
    for s in &shown {
        out.push_str(&format!(
            "{:<width$} {:>12} {:>12.0} {:>16} {:>8.4} {:>8.4}\n",
            s.site,
            s.executions,
            s.mean(),
            s.total,
            s.share_pct,
            s.cumulative_pct
        ));
    }
    if let Some(last) = shown.last() {
        out.push_str(&format!(
            "top {} of {} sites account for {:.1}% of {} timed cycles ({} lines)\n",
            shown.len(),
            agg.sites.len(),
            last.cumulative_pct,
            agg.total,
            agg.lines
        ));
    }
    out
}
