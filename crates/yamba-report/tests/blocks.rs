//! `yamba blocks` aggregation on a fixed input, against a table computed
//! by hand and against the seed's own awk pipeline.

use std::io::Write;
use std::process::{Command, Stdio};
use yamba_report::blocks::{aggregate, parse_line, render_awk, render_table};

/// Two reports of a program that also prints its own output.
const INPUT: &str = "\
hello from the program
a.c:10,100,50,5000,1.0000%
b.c:20,10,300,3000,0.6000%
c.c:30,4,250,1000,0.2000%

a.c:10,100,30,3000,0.6000%
b.c:20,5,200,1000,0.2000%
d.c:40,1,1000,1000,0.2000%
";

/// By hand: totals a 8000, b 4000, c 1000, d 1000 of 14000; shares
/// 57.142857…, 28.571428…, 7.142857… (×2); c and d tie and `sort -r`
/// puts d.c first; the cumulative column adds the printed shares.
const EXPECTED_AWK: &str = "\
a.c:10 8000 57.1429 57.1429
b.c:20 4000 28.5714 85.7143
d.c:40 1000 7.14286 92.8572
c.c:30 1000 7.14286 100
";

#[test]
fn totals_shares_and_cumulative_match_the_hand_computed_table() {
    let agg = aggregate([INPUT]);
    assert_eq!(agg.lines, 6);
    assert_eq!(agg.ignored, 1);
    assert_eq!(agg.total, 14_000);
    assert_eq!(render_awk(&agg, None), EXPECTED_AWK);
    assert_eq!(
        render_awk(&agg, Some(2)),
        "a.c:10 8000 57.1429 57.1429\nb.c:20 4000 28.5714 85.7143\n"
    );
    let a = &agg.sites[0];
    assert_eq!((a.executions, a.total), (200, 8000));
    assert_eq!(a.mean(), 40.0);
    assert!((agg.sites[1].cumulative_pct - 600.0 / 7.0).abs() < 1e-9);
    assert!((agg.sites[3].cumulative_pct - 100.0).abs() < 1e-9);

    let table = render_table(&agg, Some(2));
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 4, "{table}");
    assert!(
        lines[0].starts_with("site") && lines[0].contains("cum %"),
        "{table}"
    );
    let row: Vec<&str> = lines[2].split_whitespace().collect();
    assert_eq!(row, ["b.c:20", "15", "267", "4000", "28.5714", "85.7143"]);
    assert_eq!(
        lines[3],
        "top 2 of 4 sites account for 85.7% of 14000 timed cycles (6 lines)"
    );
}

#[test]
fn parses_the_seed_line_and_rejects_other_text() {
    let l = parse_line("/usr/src/lib/libsys/asynsend.c:136,2477,427,1058031,0.0002%").unwrap();
    assert_eq!(l.site, "/usr/src/lib/libsys/asynsend.c:136");
    assert_eq!((l.executions, l.mean, l.total), (2477, 427, 1_058_031));
    assert_eq!(l.percent, 0.0002);
    for bad in [
        "",
        "hello, world",
        "a.c:10,1,2,3,4",
        "a.c,1,2,3,4%",
        "a.c:x,1,2,3,4%",
        "a.c:1,-1,2,3,4%",
    ] {
        assert_eq!(parse_line(bad), None, "{bad:?}");
    }
}

#[test]
fn empty_input_gives_an_empty_table() {
    let agg = aggregate(["just text\n"]);
    assert!(agg.sites.is_empty());
    assert_eq!(render_awk(&agg, None), "");
}

/// The seed's pipeline itself (with `sort -k2`, today's spelling of `+1`),
/// when awk and sort are installed: the same bytes.
#[test]
fn same_bytes_as_the_seed_awk_pipeline() {
    let blocks: String = INPUT
        .lines()
        .filter(|l| parse_line(l).is_some())
        .map(|l| format!("{l}\n"))
        .collect();
    let script = "awk -F, '{ totals[$1] += $4; total += $4;} END { for(k in totals) { print k, totals[k], totals[k]*100/total; } }' \
                  | LC_ALL=C sort -rn -k2 | awk '{ cum += $3; print $1, $2, $3, cum; }'";
    let child = Command::new("sh")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => yamba_testkit::skip!("no sh ({e})"),
    };
    child
        .stdin
        .take()
        .unwrap()
        .write_all(blocks.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success() && !out.stdout.is_empty(),
        "the seed's awk pipeline failed ({}): awk or sort missing?",
        out.status
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), EXPECTED_AWK);
    assert_eq!(
        render_awk(&aggregate([blocks.as_str()]), None),
        EXPECTED_AWK
    );
}
