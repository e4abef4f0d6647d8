//! A delay the agent adds on purpose shows up in the measured round trip,
//! against an in-process agent on loopback; an HTTP GET grows linearly
//! with its body at large sizes and costs a connection and more at small
//! ones. Measurement checks (docs/testing.md): each decides on the median
//! of independent runs.

mod support;

use yamba_core::affinity::{default_cpu, other_cpu};
use yamba_core::{BenchResult, Benchmark, Mode, RunConfig, Status};
use yamba_suite::net::{connect_close, http, rtt};
use yamba_suite::remote::{Agent, AgentHandle, ServerConfig};
use yamba_testkit::{alone, check, Accept};

const TOKEN: &str = "net-test-token";

fn agent(delay_us: u64) -> AgentHandle {
    Agent::bind(ServerConfig {
        listen: "127.0.0.1:0".into(),
        token: TOKEN.into(),
        test_delay_us: delay_us,
        // A busy machine would otherwise delay a spinning agent's wake-ups
        // more than an idle one's (it has used up its share of the CPU).
        realtime: true,
        log_stderr: false,
        ..ServerConfig::default()
    })
    .unwrap()
    // On the CPU the benchmark is not pinned to, as a peer would be.
    .spawn_on(other_cpu(default_cpu()))
    .unwrap()
}

/// The round trip's median against agent `a`, or why it was not ok.
fn rtt_ns(a: &AgentHandle, bench: &'static Benchmark) -> Result<f64, String> {
    let config = RunConfig {
        remote: Some(a.addr().to_string()),
        remote_token: Some(TOKEN.into()),
        realtime: true,
        ..RunConfig::quick()
    };
    let rs: Vec<BenchResult> = support::run_config(config, bench, Mode::Hot);
    match (rs[0].status, rs[0].median()) {
        (Status::Ok, Some(m)) if rs[0].evidence.iter().all(|e| e.ok) => Ok(m),
        _ => Err(format!(
            "{}: {:?} {:?}",
            rs[0].id, rs[0].status, rs[0].reason
        )),
    }
}

/// Ground truth: an agent that spins 1000 µs more before each reply
/// raises the measured TCP round trip by 1000 µs: agents spinning 1000 and
/// 2000 µs per request. Rule: the median difference / 1000 µs is 1 within
/// 5%. (Against a plain agent the added time came out 3–6% above 1000 µs
/// in fresh-clone CI runs on a KVM guest: a client waiting a millisecond
/// lets its vCPU go idle, and the wake-up is a constant the fast plain
/// round trip never pays; two delays both pay it, so it cancels — as in
/// yamba-cli's measure_netns.)
#[test]
fn agent_delay_raises_round_trip_by_that_delay() {
    let _alone = alone();
    const X_US: f64 = 1000.0;
    let once = agent(X_US as u64);
    let twice = agent(2 * X_US as u64);
    check!("added round trip / 1000 µs", Accept::within(1.0, 0.05))
        .attempts(5, 15)
        .run(|| {
            let one = rtt_ns(&once, &rtt::TCP_RTT)?;
            let two = rtt_ns(&twice, &rtt::TCP_RTT)?;
            let added_us = (two - one) / 1000.0;
            println!(
                "round trip with 1000 µs spun {:.1} µs, 1000 µs more added {added_us:.1} µs",
                one / 1000.0
            );
            Ok::<f64, String>(added_us / X_US)
        });
}

/// `net.http.get` run locally with `sizes`; each result's median by size
/// name, or why one was not ok.
fn http_medians(sizes: &str) -> Result<std::collections::BTreeMap<String, f64>, String> {
    let mut config = RunConfig::quick();
    config.settings.insert(http::SIZES.key.into(), sizes.into());
    let rs = support::run_config(config, &http::HTTP_GET, Mode::Hot);
    let mut m = std::collections::BTreeMap::new();
    for r in &rs {
        match (r.status, r.median()) {
            (Status::Ok, Some(v)) => m.insert(r.id.rsplit('.').next().unwrap().to_string(), v),
            _ => return Err(format!("{}: {:?} {:?}", r.id, r.status, r.reason)),
        };
    }
    Ok(m)
}

/// Ground truth: past its fixed cost a GET is bandwidth-bound, so the
/// time the body adds grows with its bytes: 1 MiB − 64 KiB is 4× the
/// bytes of 256 KiB − 64 KiB, and adds at least 4× the time. Not exactly
/// 4×: on the AMD EPYC guest the ratio was 5.1–7.4 (4 runs), because a
/// 1 MiB body no longer fits the 1 MiB L2 of either CPU it is copied on,
/// and beyond 2 MiB the send buffer's 4 MiB limit made times bimodal
/// (1, 2, 4 MiB gave ratios 1.4 to 8.3), so the check stays below that.
/// A client that stopped reading after the head, or a server that sent a
/// fixed amount, would give about 1 (their body checks withhold such
/// runs too). Rule: the median (T(1M) − T(64K)) / (T(256K) − T(64K)) is
/// in [3.6, 9].
#[test]
fn http_get_time_grows_with_the_body() {
    let _alone = alone();
    check!(
        "(T(1M) − T(64K)) / (T(256K) − T(64K))",
        Accept::between(3.6, 9.0)
    )
    .attempts(5, 15)
    .run(|| {
        let m = http_medians("64k,256k,1m")?;
        let (t64, t256, t1m) = (m["64k"], m["256k"], m["1m"]);
        println!(
            "64 KiB {:.0} µs, 256 KiB {:.0} µs, 1 MiB {:.0} µs",
            t64 / 1e3,
            t256 / 1e3,
            t1m / 1e3
        );
        Ok::<f64, String>((t1m - t64) / (t256 - t64))
    });
}

/// Ground truth: a GET is a connection and more (the request, the
/// server's accept, open, read and write, the client's reads to the end
/// of stream), so a small file's GET costs more than
/// `net.tcp.connect_close` (socket + connect + close from the client)
/// measured in the same attempt, and not many times it: the response is
/// one segment. A client that timed only its connect would be near 1; a
/// stalled small write (Nagle behind a delayed ACK, at least 40 ms on
/// Linux) thousands of times it. How many times in between is the host's:
/// the server is a peer thread on the other CPU, and a GET wakes it and
/// is woken by it — on an Intel Xeon guest (family 6 model 207) whose
/// cross-CPU round trips took 50–58 µs, a GET read a median 6.7× (5.2–7.7
/// over 15 attempts, CI of 2026-12-07) a connect_close of about 12 µs,
/// where the bound was 6 (it held on the AMD EPYC guests). Rule:
/// the median GET(1 KiB) / connect_close is in [1.1, 20].
#[test]
fn http_get_costs_a_connection_and_more() {
    let _alone = alone();
    check!("GET 1 KiB / TCP connect_close", Accept::between(1.1, 20.0))
        .attempts(5, 15)
        .run(|| {
            let get = http_medians("1k")?["1k"];
            let rs =
                support::run_config(RunConfig::quick(), &connect_close::CONNECT_CLOSE, Mode::Hot);
            let connect = match (rs[0].status, rs[0].median()) {
                (Status::Ok, Some(v)) => v,
                _ => {
                    return Err(format!(
                        "{}: {:?} {:?}",
                        rs[0].id, rs[0].status, rs[0].reason
                    ))
                }
            };
            println!(
                "GET 1 KiB {:.1} µs, connect_close {:.1} µs",
                get / 1e3,
                connect / 1e3
            );
            Ok::<f64, String>(get / connect)
        });
}
