//! The `net` and `fs.remote` benchmarks, on loopback and against an
//! in-process agent: each produces checked numbers. (A delay the agent
//! adds on purpose, in the measured round trip, is a measurement check:
//! measure_net.rs; the rate-limited link across network namespaces is in
//! `crates/yamba-cli/tests/measure_netns.rs`: it runs the real `yamba
//! serve`.)

mod support;

use std::path::Path;
use support::serial;
use yamba_core::affinity::{default_cpu, other_cpu};
use yamba_core::{BenchResult, Benchmark, Mode, RunConfig, Status};
use yamba_suite::fs::remote::{REMOTE_BLOCK, REMOTE_READ};
use yamba_suite::net::{bandwidth, connect, http, rtt};
use yamba_suite::remote::{Agent, AgentHandle, ServerConfig};

const TOKEN: &str = "net-test-token";

fn run(config: RunConfig, bench: &'static Benchmark) -> Vec<BenchResult> {
    support::run_config(config, bench, Mode::Hot)
}

/// Every result is Ok, has observations, and all its evidence held.
fn assert_ok(results: &[BenchResult]) {
    assert!(!results.is_empty());
    for r in results {
        assert_eq!(
            r.status,
            Status::Ok,
            "{}: {:?} {:?}",
            r.id,
            r.reason,
            r.evidence
        );
        assert!(!r.observations.is_empty(), "{}", r.id);
        // Every check held. The one note that may not is the count of
        // sockets in TIME_WAIT, a fact about the machine that this test's
        // own earlier connections (net.tcp.connect runs first) raise.
        assert!(
            r.evidence
                .iter()
                .all(|e| e.ok || (!e.gating && e.check.contains("TIME_WAIT"))),
            "{}: {:?}",
            r.id,
            r.evidence
        );
        assert!(r.median().unwrap() > 0.0, "{}", r.id);
        assert!(r.params.contains_key("endpoint"), "{}", r.id);
    }
}

fn agent(root: Option<&Path>, delay_us: u64) -> AgentHandle {
    Agent::bind(ServerConfig {
        listen: "127.0.0.1:0".into(),
        root: root.map(Path::to_path_buf),
        token: TOKEN.into(),
        test_delay_us: delay_us,
        // A busy machine would otherwise delay a spinning agent's wake-ups
        // more than an idle one's (it has used up its share of the CPU).
        realtime: true,
        log_stderr: false,
        ..ServerConfig::default()
    })
    .unwrap()
    // On the CPU the benchmark is not pinned to, as a peer would be, so
    // both sides are placed alike from run to run.
    .spawn_on(other_cpu(default_cpu()))
    .unwrap()
}

fn remote(a: &AgentHandle) -> RunConfig {
    RunConfig {
        remote: Some(a.addr().to_string()),
        remote_token: Some(TOKEN.into()),
        realtime: true,
        ..RunConfig::quick()
    }
}

#[test]
fn loopback_benchmarks_produce_checked_numbers() {
    let _serial = serial();
    // The naive counter-example is withheld on purpose (tests/lmbench_list.rs).
    for b in yamba_suite::net::BENCHMARKS
        .iter()
        .copied()
        .filter(|b| !b.id.ends_with("_naive"))
        .chain([&REMOTE_READ, &REMOTE_BLOCK])
    {
        let rs = run(RunConfig::quick(), b);
        assert_ok(&rs);
        for r in &rs {
            println!(
                "{:<24} median {:>10.4} {}  n={}",
                r.id,
                r.median().unwrap(),
                r.unit.symbol(),
                r.observations.len()
            );
        }
    }
}

#[test]
fn remote_mode_measures_against_the_agent() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("yamba-remote.dat"), vec![3u8; 1 << 20]).unwrap();
    let a = agent(Some(dir.path()), 0);
    let cfg = remote(&a);
    for b in [
        &rtt::TCP_RTT,
        &connect::TCP_CONNECT,
        &REMOTE_READ,
        &REMOTE_BLOCK,
    ] {
        let rs = run(cfg.clone(), b);
        assert_ok(&rs);
        assert!(rs[0].params["endpoint"]
            .as_str()
            .unwrap()
            .contains(&a.addr().to_string()));
    }
    let bw = run(cfg.clone(), &bandwidth::TCP_BW_1);
    assert_ok(&bw);
    let ids: Vec<&str> = bw.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "net.tcp.bandwidth.1.to_agent",
            "net.tcp.bandwidth.1.from_agent"
        ]
    );
    // UDP and UNIX sockets are not the agent's: skipped, saying why.
    for b in [&rtt::UDP_RTT, &bandwidth::UNIX_BW] {
        let rs = run(cfg.clone(), b);
        assert_eq!(rs[0].status, Status::Skipped, "{}", rs[0].id);
        assert!(
            rs[0].reason.as_deref().unwrap_or("").contains("loopback")
                || rs[0].reason.as_deref().unwrap_or("").contains("local")
        );
    }
    // A wrong token or a missing one fails with one clear reason, not a hang.
    let mut bad = cfg.clone();
    bad.remote_token = Some("wrong".into());
    let rs = run(bad, &rtt::TCP_RTT);
    assert_eq!(rs[0].status, Status::Failed);
    assert!(
        rs[0].reason.as_deref().unwrap().contains("wrong token"),
        "{:?}",
        rs[0].reason
    );
    let mut none = cfg;
    none.remote_token = None;
    let rs = run(none, &connect::TCP_CONNECT);
    assert!(
        rs[0].reason.as_deref().unwrap().contains("--token"),
        "{:?}",
        rs[0].reason
    );
}

/// `net.http.get` at sizes around nothing and one page: one result per
/// size, each with its response, body and served-count checks held.
#[test]
fn http_get_checks_every_response_and_the_server_count() {
    let _serial = serial();
    let mut config = RunConfig::quick();
    config
        .settings
        .insert(http::SIZES.key.into(), "0k,4k".into());
    let rs = run(config, &http::HTTP_GET);
    assert_ok(&rs);
    let ids: Vec<&str> = rs.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["net.http.get.0k", "net.http.get.4k"]);
    for r in &rs {
        for c in [
            "every response was whole",
            "the body was the file's bytes",
            "the server served every request sent",
        ] {
            assert!(
                r.evidence
                    .iter()
                    .any(|e| e.check.starts_with(c) && e.gating && e.ok),
                "{}: no passing '{c}' in {:?}",
                r.id,
                r.evidence
            );
        }
    }
}
