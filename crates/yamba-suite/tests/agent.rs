//! The agent is not an open door: wrong tokens, escapes from its root,
//! oversized messages and idle connections are each refused cleanly, the
//! refusal is logged, and the agent goes on serving everyone else.
//! (Attacks on the handshake, floods, and hostile agents: agent_attacks.rs.)

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};
use yamba_suite::remote::protocol::{
    hello_payload, nonce, pattern_byte, proof, read_header, read_payload, write_frame, Prover,
    MAGIC, OP_AUTH, OP_ECHO, OP_HELLO, OP_SOURCE, OP_STAT,
};
use yamba_suite::remote::session::{client_id, From, Handshake, Session, TAG};
use yamba_suite::remote::{Agent, AgentError, AgentHandle, Client, ServerConfig};

const TOKEN: &str = "s3cret-token";
const T: Duration = Duration::from_secs(5);

/// An agent over `root` on a free loopback port.
fn agent(root: Option<&Path>, tweak: impl FnOnce(&mut ServerConfig)) -> AgentHandle {
    let mut cfg = ServerConfig {
        listen: "127.0.0.1:0".into(),
        root: root.map(Path::to_path_buf),
        token: TOKEN.into(),
        log_stderr: false,
        ..ServerConfig::default()
    };
    tweak(&mut cfg);
    Agent::bind(cfg).unwrap().spawn().unwrap()
}

fn connect(a: &AgentHandle) -> Client {
    Client::connect(&a.addr().to_string(), TOKEN, T).unwrap()
}

/// A client still gets correct service.
fn assert_serves(a: &AgentHandle) {
    let mut c = connect(a);
    assert_eq!(c.echo(b"still here").unwrap(), b"still here");
}

/// The handshake by hand, on a raw stream (what `Client` does).
fn raw_handshake(s: &mut TcpStream, token: &str) -> Session {
    let mut scratch = Vec::new();
    let cn = nonce();
    write_frame(
        s,
        OP_HELLO,
        &hello_payload(token.as_bytes(), &cn),
        &mut scratch,
    )
    .unwrap();
    let (st, len) = read_header(s).unwrap().unwrap();
    assert_eq!((st, len), (0, 36));
    let mut p = Vec::new();
    read_payload(s, len, &mut p).unwrap();
    assert_eq!(&p[..4], MAGIC);
    let sn: [u8; 32] = p[4..].try_into().unwrap();
    let mine = proof(token.as_bytes(), Prover::Client, &sn, &cn);
    write_frame(s, OP_AUTH, &mine, &mut scratch).unwrap();
    let (st, len) = read_header(s).unwrap().unwrap();
    assert_eq!((st, len), (0, 36));
    read_payload(s, len, &mut p).unwrap();
    let max = u32::from_le_bytes(p[..4].try_into().unwrap());
    Session::new(
        token.as_bytes(),
        &Handshake {
            server_nonce: sn,
            client_nonce: cn,
            client_id: client_id(token.as_bytes()),
            max_message: max,
        },
        From::Client,
    )
}

fn refused(r: Result<impl Sized, AgentError>) -> String {
    match r {
        Err(AgentError::Refused(why)) => why,
        Err(e) => panic!("expected a refusal, got {e}"),
        Ok(_) => panic!("expected a refusal, got service"),
    }
}

#[test]
fn serves_echo_sink_source_and_files() {
    let dir = tempfile::tempdir().unwrap();
    let data: Vec<u8> = (0..100_000u32).map(|i| (i * 13 % 256) as u8).collect();
    std::fs::write(dir.path().join("f.dat"), &data).unwrap();
    let a = agent(Some(dir.path()), |_| {});
    let mut c = connect(&a);
    assert_eq!(c.echo(b"ping").unwrap(), b"ping");
    assert_eq!(c.sink(3_000_001, &[7u8; 4096]).unwrap(), 3_000_001);
    let mut buf = vec![0u8; 65_536];
    assert_eq!(c.source(1_000_003, &mut buf).unwrap(), (1_000_003, 0));
    // Every byte follows the pattern (the client only samples): read raw.
    let mut s = TcpStream::connect(a.addr()).unwrap();
    s.set_read_timeout(Some(T)).unwrap();
    let mut scratch = Vec::new();
    let mut session = raw_handshake(&mut s, TOKEN);
    session
        .seal(OP_SOURCE, &300_007u64.to_le_bytes(), &mut scratch)
        .unwrap();
    s.write_all(&scratch).unwrap();
    assert_eq!(read_header(&mut s).unwrap(), Some((0, 8)));
    // The reply's 8 bytes and its tag, then the stream.
    let mut stream = vec![0u8; 8 + TAG + 300_007];
    s.read_exact(&mut stream).unwrap();
    assert_eq!(u64::from_le_bytes(stream[..8].try_into().unwrap()), 300_007);
    assert!(session.open(0, &stream[..8], &stream[8..8 + TAG]));
    assert!(stream[8 + TAG..]
        .iter()
        .enumerate()
        .all(|(i, &b)| b == pattern_byte(i as u64)));
    assert_eq!(c.stat("f.dat").unwrap(), 100_000);
    assert_eq!(c.read("f.dat", 99_000, 4096).unwrap(), &data[99_000..]);
    assert_eq!(c.read("f.dat", 10, 20).unwrap(), &data[10..30]);
    assert!(a.refusals().is_empty(), "{:?}", a.refusals());
}

#[test]
fn wrong_token_is_refused_clearly_and_logged() {
    let a = agent(None, |_| {});
    let t0 = Instant::now();
    let why = refused(Client::connect(&a.addr().to_string(), "guess", T));
    assert!(
        t0.elapsed() < Duration::from_secs(2),
        "refusal took {:?}",
        t0.elapsed()
    );
    assert!(why.contains("wrong token"), "{why}");
    refused(Client::connect(&a.addr().to_string(), "", T));
    refused(Client::connect(
        &a.addr().to_string(),
        &format!("{TOKEN}x"),
        T,
    ));
    let log = a.refusals();
    assert_eq!(log.len(), 3, "{log:?}");
    assert!(
        log[0].contains("127.0.0.1:") && log[0].contains("wrong token"),
        "{log:?}"
    );
    assert_serves(&a);
}

#[test]
fn requests_before_hello_are_refused() {
    let a = agent(None, |_| {});
    let mut s = TcpStream::connect(a.addr()).unwrap();
    s.set_read_timeout(Some(T)).unwrap();
    s.write_all(&[OP_ECHO, 2, 0, 0, 0, b'h', b'i']).unwrap();
    let mut reply = Vec::new();
    s.read_to_end(&mut reply).unwrap();
    assert_eq!(reply[0], 1, "status REFUSED");
    assert!(String::from_utf8_lossy(&reply[5..]).contains("before HELLO"));
    assert_serves(&a);
}

#[test]
fn nothing_outside_the_root_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(root.join("ok.txt"), b"inside").unwrap();
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, b"SECRET").unwrap();
    std::os::unix::fs::symlink(&secret, root.join("out-link")).unwrap();
    std::os::unix::fs::symlink(dir.path(), root.join("out-dir")).unwrap();
    std::os::unix::fs::symlink("ok.txt", root.join("in-link")).unwrap();
    let fifo = std::ffi::CString::new(root.join("fifo").to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);

    let a = agent(Some(&root), |_| {});
    let mut c = connect(&a);
    let secret_abs = secret.to_str().unwrap().to_string();
    let attacks = [
        "../secret.txt",
        "sub/../../secret.txt",
        "./../secret.txt",
        secret_abs.as_str(),
        "/etc/passwd",
        "out-link",
        "out-dir/secret.txt",
        "fifo",
        "sub",
        "",
        "does-not-exist",
    ];
    let t0 = Instant::now();
    for path in attacks {
        for r in [c.stat(path).map(|_| ()), c.read(path, 0, 100).map(|_| ())] {
            match r {
                Err(AgentError::Failed(why)) => assert!(!why.contains("SECRET"), "{why}"),
                Err(e) => panic!("{path:?}: expected a failed request, got {e}"),
                Ok(()) => panic!("{path:?} was served"),
            }
        }
    }
    // The FIFO did not block the agent; the connection is still usable.
    assert!(
        t0.elapsed() < Duration::from_secs(3),
        "took {:?}",
        t0.elapsed()
    );
    assert_eq!(c.read("ok.txt", 0, 100).unwrap(), b"inside");
    assert_eq!(c.read("in-link", 0, 100).unwrap(), b"inside");
    assert!(
        c.read("sub/../ok.txt", 0, 100).is_err(),
        "any '..' is refused"
    );
    let log = a.refusals();
    assert!(
        log.len() >= 2 * attacks.len(),
        "every refusal logged: {log:?}"
    );
    assert!(
        log.iter().any(|l| l.contains("'..' is not allowed")),
        "{log:?}"
    );
    assert!(log.iter().any(|l| l.contains("absolute")), "{log:?}");
    assert!(
        log.iter().any(|l| l.contains("outside the served root")),
        "{log:?}"
    );
    assert!(
        log.iter().any(|l| l.contains("not a regular file")),
        "{log:?}"
    );

    // An agent without a root serves no files at all.
    let bare = agent(None, |_| {});
    let why = connect(&bare).stat("ok.txt").unwrap_err().to_string();
    assert!(why.contains("serves no files"), "{why}");
}

#[test]
fn oversized_messages_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), vec![1u8; 10_000]).unwrap();
    let a = agent(Some(dir.path()), |c| c.max_message = 4096);
    let mut c = connect(&a);
    assert_eq!(c.max_message(), 4096);
    assert_eq!(c.echo(&[9u8; 4096]).unwrap().len(), 4096);
    let why = refused(c.echo(&[9u8; 4097]));
    assert!(why.contains("exceeds the limit of 4096"), "{why}");
    // A READ asking for more than the limit fails without a reply that large.
    let mut c = connect(&a);
    assert!(matches!(c.read("f", 0, 5000), Err(AgentError::Failed(_))));
    assert_eq!(c.read("f", 0, 4096).unwrap().len(), 4096);
    // A header announcing 4 GiB is refused before anything is allocated.
    let mut s = TcpStream::connect(a.addr()).unwrap();
    s.set_read_timeout(Some(T)).unwrap();
    s.write_all(&[OP_STAT, 0xff, 0xff, 0xff, 0xff]).unwrap();
    let mut reply = Vec::new();
    let _ = s.read_to_end(&mut reply);
    assert_eq!(reply.first(), Some(&1u8), "REFUSED");
    assert_serves(&a);
}

#[test]
fn idle_connections_are_bounded_and_timed_out() {
    let a = agent(None, |c| {
        c.max_connections = 4;
        c.idle_timeout = Duration::from_millis(1500);
        c.auth_timeout = Duration::from_millis(600);
    });
    // Silent connections without the token take no serving slot…
    let idle: Vec<TcpStream> = (0..6)
        .map(|_| TcpStream::connect(a.addr()).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(100));
    let clients: Vec<Client> = (0..4).map(|_| connect(&a)).collect();
    assert_eq!(a.active(), 4);
    // …so four clients with it fill them, and a fifth is refused at once.
    let t0 = Instant::now();
    let why = refused(Client::connect(&a.addr().to_string(), TOKEN, T));
    assert!(why.contains("too many connections (limit 4)"), "{why}");
    assert!(t0.elapsed() < Duration::from_secs(2));
    // Silent connections are closed after the handshake's deadline, told why.
    for mut s in idle {
        let mut b = Vec::new();
        s.set_read_timeout(Some(T)).unwrap();
        let _ = s.read_to_end(&mut b);
        assert_eq!(b.first(), Some(&1u8), "told it was refused");
        assert!(String::from_utf8_lossy(&b[5..]).contains("no authentication within 0.6 s"));
    }
    // Authenticated clients that go silent are closed after the idle timeout.
    std::thread::sleep(Duration::from_millis(2000));
    assert_eq!(a.active(), 0, "idle connections still open");
    drop(clients);
    let log = a.refusals();
    assert!(
        log.iter()
            .filter(|l| l.contains("no authentication within"))
            .count()
            >= 6,
        "{log:?}"
    );
    assert!(log.iter().any(|l| l.contains("idle for 1.5 s")), "{log:?}");
    assert!(
        log.iter().any(|l| l.contains("too many connections")),
        "{log:?}"
    );
    let clients: Vec<Client> = (0..4).map(|_| connect(&a)).collect();
    assert_eq!(clients.len(), 4);
}

#[test]
fn dribbling_or_huge_hellos_are_cut_off() {
    let a = agent(None, |c| c.auth_timeout = Duration::from_millis(600));
    // One byte every 200 ms never trips the idle timeout, but the HELLO
    // as a whole must arrive within it.
    let mut s = TcpStream::connect(a.addr()).unwrap();
    let t0 = Instant::now();
    let hello = [&[OP_HELLO, 100, 0, 0, 0][..], &[b'x'; 100][..]].concat();
    for b in hello {
        if s.write_all(&[b]).is_err() || t0.elapsed() > Duration::from_secs(3) {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(
        t0.elapsed() < Duration::from_secs(3),
        "dribbler kept its slot"
    );
    assert!(
        a.refusals()
            .iter()
            .any(|l| l.contains("no authentication within")),
        "{:?}",
        a.refusals()
    );
    // A HELLO far larger than any token is refused before it is read.
    let mut s = TcpStream::connect(a.addr()).unwrap();
    s.set_read_timeout(Some(T)).unwrap();
    s.write_all(&[OP_HELLO, 0, 0, 1, 0]).unwrap();
    let mut reply = Vec::new();
    let _ = s.read_to_end(&mut reply);
    assert_eq!(reply.first(), Some(&1u8), "REFUSED");
    assert!(String::from_utf8_lossy(&reply[5..]).contains("exceeds the limit of 4096"));
    assert_serves(&a);
}
