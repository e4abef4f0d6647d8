//! Linux: std's sockets; only the name differs, and where the kernel says
//! how many sockets wait in TIME_WAIT.

pub const NAME: &str = "linux-sockets";

/// IPv4 TCP sockets in TIME_WAIT, system-wide: `tw` of /proc/net/sockstat's
/// `TCP:` line. A new connection's cost rises with them (the search for a
/// free ephemeral port), so a connection benchmark records them.
pub fn tcp_time_wait() -> Option<u64> {
    time_wait_in(&std::fs::read_to_string("/proc/net/sockstat").ok()?)
}

/// `tw` of the `TCP:` line of a sockstat text.
fn time_wait_in(sockstat: &str) -> Option<u64> {
    let line = sockstat.lines().find(|l| l.starts_with("TCP:"))?;
    let mut words = line.split_whitespace();
    words.find(|w| *w == "tw")?;
    words.next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_wait_is_read_from_the_tcp_line() {
        let text = "sockets: used 180\nTCP: inuse 5 orphan 0 tw 3305 alloc 9 mem 1\n\
                    UDP: inuse 2 mem 0\n";
        assert_eq!(time_wait_in(text), Some(3305));
        assert_eq!(time_wait_in("UDP: inuse 2 tw 7\n"), None);
        assert_eq!(time_wait_in("TCP: inuse 5 tw\n"), None);
    }

    /// The kernel's count moves with sockets this test puts in TIME_WAIT.
    /// System-wide, others' sockets come and go (each after 60 s), so a
    /// look that sees fewer is taken again, up to 5 times.
    #[test]
    fn time_wait_counts_closed_connections() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let mut looks = Vec::new();
        for _ in 0..5 {
            let before = tcp_time_wait().expect("/proc/net/sockstat has TCP's tw");
            for _ in 0..50 {
                let client = std::net::TcpStream::connect(addr).unwrap();
                let server = listener.accept().unwrap().0;
                // The client closes first, then the server: the client's
                // end waits in TIME_WAIT (lat_connect's order).
                drop(client);
                drop(server);
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
            let after = tcp_time_wait().unwrap();
            if after >= before + 40 {
                return;
            }
            looks.push((before, after));
        }
        panic!("50 closed connections never showed in TIME_WAIT: {looks:?}");
    }
}
