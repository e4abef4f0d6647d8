//! `yamba serve` on loopback with its defaults: a random token printed,
//! wrong tokens refused and logged, bad options one line.

mod support;

use std::io::BufRead;
use std::process::Command;
use std::time::Duration;
use support::agent::Serve;
use yamba_suite::remote::{AgentError, Client};

#[test]
fn serve_defaults_to_loopback_and_a_random_token() {
    let mut serve = Serve::start(None, &["--listen", "127.0.0.1:0", "--idle-timeout", "5"]);
    assert!(serve.addr.starts_with("127.0.0.1:"), "{}", serve.addr);
    let mut line = String::new();
    serve.stdout.read_line(&mut line).unwrap();
    let token = line
        .trim()
        .strip_prefix("token: ")
        .expect("a generated token")
        .to_string();
    assert!(
        token.len() >= 32 && token.chars().all(|c| c.is_ascii_hexdigit()),
        "{token}"
    );
    let mut c = Client::connect(&serve.addr, &token, Duration::from_secs(5)).unwrap();
    assert_eq!(c.echo(b"hi").unwrap(), b"hi");
    let why = c.stat("anything").unwrap_err().to_string();
    assert!(why.contains("serves no files"), "{why}");
    assert!(matches!(
        Client::connect(&serve.addr, "nope", Duration::from_secs(5)),
        Err(AgentError::Refused(_))
    ));
    let refused = |log: &str| {
        log.lines()
            .any(|l| l.contains("refused 127.0.0.1:") && l.contains("wrong token"))
    };
    let log = serve.stop_when_logged(refused);
    assert!(refused(&log), "{log}");

    // Bad options: one clear error line, no agent.
    let out = Command::new(env!("CARGO_BIN_EXE_yamba"))
        .args(["serve", "--listen", "127.0.0.1:0", "--max-message", "lots"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--max-message"), "{err}");
}
