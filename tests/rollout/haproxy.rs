//! HAProxy in front of the instances, as a production balancer would be: round robin, health
//! checks on `/readyz`, a refused connection retried on another instance (safe for any method:
//! the request never reached an instance). Its CSV stats page tells when an instance is in
//! rotation.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use petstore_test_support::{client, eventually, try_send};
use tempfile::TempDir;

/// How often HAProxy asks each instance's `/readyz`; one failure takes it out of rotation.
pub const CHECK_INTERVAL: Duration = Duration::from_millis(200);

pub struct Haproxy {
    process: Child,
    /// `http://127.0.0.1:PORT` of the API through HAProxy.
    pub address: String,
    stats: String,
    _dir: TempDir,
}

impl Haproxy {
    pub fn start(front: u16, stats: u16, instances: &[u16]) -> Self {
        let dir = tempfile::tempdir().expect("a directory");
        let servers: String = instances
            .iter()
            .enumerate()
            .map(|(n, port)| format!("    server instance{n} 127.0.0.1:{port} check\n"))
            .collect();
        let config = format!(
            "global\n    maxconn 4096\n\n\
             defaults\n    mode http\n    timeout connect 1s\n    timeout client 30s\n    \
             timeout server 30s\n    retries 3\n    option redispatch 1\n    \
             retry-on conn-failure\n\n\
             frontend api\n    bind 127.0.0.1:{front}\n    default_backend petstore\n\n\
             frontend stats\n    bind 127.0.0.1:{stats}\n    stats enable\n    \
             stats uri /stats\n\n\
             backend petstore\n    balance roundrobin\n    option httpchk GET /readyz\n    \
             http-check expect status 200\n    \
             default-server inter {inter}ms fall 1 rise 2\n{servers}",
            inter = CHECK_INTERVAL.as_millis()
        );
        let path = dir.path().join("haproxy.cfg");
        std::fs::write(&path, config).expect("write haproxy.cfg");
        let check = Command::new("haproxy")
            .arg("-c")
            .arg("-f")
            .arg(&path)
            .output()
            .expect("run haproxy -c");
        assert!(check.status.success(), "haproxy.cfg: {check:?}");
        let process = Command::new("haproxy")
            .arg("-db")
            .arg("-f")
            .arg(&path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start haproxy");
        Self {
            process,
            address: format!("http://127.0.0.1:{front}"),
            stats: format!("http://127.0.0.1:{stats}/stats;csv"),
            _dir: dir,
        }
    }

    /// The instances HAProxy has in rotation (`instance0`, ...), from its stats page.
    pub async fn up(&self) -> Vec<String> {
        let Ok(response) = try_send(client().get(&self.stats), None).await else {
            return Vec::new();
        };
        response
            .body
            .lines()
            .filter_map(|line| {
                let fields: Vec<&str> = line.split(',').collect();
                let (proxy, server, status) = (fields.first()?, fields.get(1)?, fields.get(17)?);
                (*proxy == "petstore" && server.starts_with("instance") && *status == "UP")
                    .then(|| (*server).to_owned())
            })
            .collect()
    }

    /// Waits until `instance` is in rotation (or out of it), for at most `within`.
    pub async fn wait_until(&self, instance: usize, in_rotation: bool, within: Duration) {
        let name = format!("instance{instance}");
        let direction = if in_rotation { "up" } else { "down" };
        eventually(within, &format!("{name} to go {direction}"), async || {
            let up = self.up().await;
            if up.contains(&name) == in_rotation {
                Ok(())
            } else {
                Err(up)
            }
        })
        .await;
    }
}

impl Drop for Haproxy {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}
