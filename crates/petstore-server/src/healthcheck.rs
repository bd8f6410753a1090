//! `petstore healthcheck`: one `GET /healthz` to the server on this host, for a container's
//! health check. The image has no shell and no curl, so the binary asks itself; plain HTTP/1.1
//! over a socket is all it takes.

use std::io::{Read as _, Write as _};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use crate::cli::HealthcheckArgs;
use crate::AppError;

/// Exit 0 when `/healthz` answers 200 within the timeout; else an error saying what was seen.
pub fn run(args: &HealthcheckArgs) -> Result<(), AppError> {
    let address = probe_address(args.bind);
    let status_line = ask_healthz(address, args.timeout).map_err(|err| {
        AppError::Unhealthy(format!("no answer from http://{address}/healthz: {err}"))
    })?;
    if status_line.starts_with("HTTP/1.1 200 ") {
        Ok(())
    } else {
        Err(AppError::Unhealthy(format!(
            "http://{address}/healthz answered {status_line:?}"
        )))
    }
}

/// Where to ask: the bound address, or loopback when the server listens on every address.
fn probe_address(bind: SocketAddr) -> SocketAddr {
    let ip = match bind.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    SocketAddr::new(ip, bind.port())
}

/// The status line of `GET /healthz` at `address`.
fn ask_healthz(address: SocketAddr, timeout: Duration) -> std::io::Result<String> {
    let deadline = Instant::now() + timeout;
    let mut stream = TcpStream::connect_timeout(&address, timeout)?;
    let left = || {
        deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1))
    };
    stream.set_write_timeout(Some(left()))?;
    stream.write_all(
        format!("GET /healthz HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n").as_bytes(),
    )?;
    stream.set_read_timeout(Some(left()))?;
    let mut head = Vec::new();
    let mut buf = [0; 256];
    while !head.contains(&b'\n') {
        let read = stream.read(&mut buf)?;
        if read == 0 {
            break;
        }
        head.extend_from_slice(&buf[..read]);
    }
    let head = String::from_utf8_lossy(&head);
    Ok(head.lines().next().unwrap_or_default().to_owned())
}

#[cfg(test)]
mod tests {
    use super::probe_address;

    #[test]
    fn a_server_on_every_address_is_asked_on_loopback() {
        let asked = |bind: &str| probe_address(bind.parse().expect("an address")).to_string();
        assert_eq!(asked("0.0.0.0:8080"), "127.0.0.1:8080");
        assert_eq!(asked("[::]:8080"), "[::1]:8080");
        assert_eq!(asked("10.1.2.3:9000"), "10.1.2.3:9000");
    }
}
