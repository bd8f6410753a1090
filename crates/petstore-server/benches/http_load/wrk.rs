//! Drives a server with `wrk` (Debian's package): HTTP/1.1 keep-alive connections from a second
//! process, the way a load balancer's connections arrive. A Lua script sets the method, headers
//! and body, and prints wrk's own summary (requests, latency percentiles, errors) as one line that
//! this module parses. Every 4xx or 5xx answer and every socket error is counted, so a run that
//! measured errors instead of work fails loudly.

use std::process::Command;
use std::time::Duration;

/// One request shape, sent over and over by every connection.
pub struct Load<'a> {
    pub method: &'a str,
    /// The full URL, e.g. `http://127.0.0.1:PORT/v1/pets/1`.
    pub url: String,
    pub bearer: Option<&'a str>,
    pub json_body: Option<&'a str>,
    /// Sends an `Idempotency-Key` of its own with every request: `PREFIX-THREAD-N`.
    pub idempotency_keys: Option<&'a str>,
    /// Sends `Accept-Encoding` with this value.
    pub accept_encoding: Option<&'a str>,
    /// One more header sent with every request (`If-None-Match`).
    pub header: Option<(&'a str, &'a str)>,
    /// When not empty, the `(path, JSON body)` of each request instead of the URL's path and
    /// `json_body`: each wrk thread takes its own share (every other entry with two threads) and
    /// goes round it, so writes spread over the rows the paths name.
    pub rotation: &'a [(String, String)],
}

/// What one wrk run measured.
#[derive(Debug, Clone, Copy)]
pub struct Measured {
    pub requests: u64,
    pub seconds: f64,
    pub p50: Duration,
    pub p99: Duration,
    pub max: Duration,
    /// The whole machine's busy CPU time (every process: server, wrk, PostgreSQL, the kernel)
    /// per request, when `/proc/stat` could be read.
    pub machine_cpu: Option<Duration>,
}

impl Measured {
    pub fn per_second(&self) -> f64 {
        self.requests as f64 / self.seconds
    }
}

/// The machine's busy CPU time so far (user, nice, system, irq, softirq of every core), from
/// `/proc/stat` in USER_HZ ticks, which Linux fixes at 100 a second for userspace.
fn machine_busy() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let ticks: Vec<u64> = stat
        .lines()
        .next()?
        .strip_prefix("cpu ")?
        .split_whitespace()
        .map(|field| field.parse().ok())
        .collect::<Option<_>>()?;
    let [user, nice, system, _idle, _iowait, irq, softirq, ..] = ticks[..] else {
        return None;
    };
    Some(Duration::from_millis(
        (user + nice + system + irq + softirq) * 10,
    ))
}

const RESULT_PREFIX: &str = "WRK_RESULT";

/// A Lua long-bracket string literal, which takes its content verbatim (no escapes).
fn lua_string(value: &str) -> String {
    assert!(!value.contains("]=]"), "cannot quote {value:?}");
    format!("[=[{value}]=]")
}

fn script(load: &Load<'_>, threads: usize) -> String {
    assert!(
        load.rotation.is_empty() || load.idempotency_keys.is_none(),
        "a rotation of requests with keys of their own is not supported"
    );
    let mut lua = format!("wrk.method = {}\n", lua_string(load.method));
    if let Some(token) = load.bearer {
        lua += &format!(
            "wrk.headers[\"Authorization\"] = {}\n",
            lua_string(&format!("Bearer {token}"))
        );
    }
    if let Some(codings) = load.accept_encoding {
        lua += &format!(
            "wrk.headers[\"Accept-Encoding\"] = {}\n",
            lua_string(codings)
        );
    }
    if let Some((name, value)) = load.header {
        // Spaces inside the brackets: `[[` would open a Lua long string.
        lua += &format!(
            "wrk.headers[ {} ] = {}\n",
            lua_string(name),
            lua_string(value)
        );
    }
    if let Some(body) = load.json_body {
        lua += "wrk.headers[\"Content-Type\"] = \"application/json\"\n";
        lua += &format!("wrk.body = {}\n", lua_string(body));
    }
    if !load.rotation.is_empty() {
        // Formatted once per thread in `init`, like the keyed requests below: formatting per
        // request would cost wrk CPU on the cores the server shares.
        lua += "wrk.headers[\"Content-Type\"] = \"application/json\"\nlocal entries = {\n";
        for (path, body) in load.rotation {
            lua += &format!("  {{ {}, {} }},\n", lua_string(path), lua_string(body));
        }
        lua += &format!(
            r#"}}
local threads = 0
setup = function(thread)
  thread:set("tid", threads)
  threads = threads + 1
end
local requests = {{}}
init = function(args)
  for i, entry in ipairs(entries) do
    if (i - 1) % {threads} == tid then
      requests[#requests + 1] = wrk.format(nil, entry[1], nil, entry[2])
    end
  end
end
local sent = 0
request = function()
  sent = sent % #requests + 1
  return requests[sent]
end
"#
        );
    }
    if let Some(prefix) = load.idempotency_keys {
        // Each wrk thread has a Lua state of its own: `setup` numbers them, and every request
        // gets a key no other request of the run has. The request is formatted once, around a
        // placeholder for the key, and each request joins the key in: formatting it anew per
        // request (`wrk.format()`) would cost wrk CPU on the cores the server shares, which the
        // keyed scenario would pay and the plain one not.
        lua += &format!(
            r#"local threads = 0
setup = function(thread)
  thread:set("tid", threads)
  threads = threads + 1
end
local before_key, after_key
init = function(args)
  wrk.headers["Idempotency-Key"] = "\0"
  local whole = wrk.format()
  local at = string.find(whole, "\0", 1, true)
  before_key = string.sub(whole, 1, at - 1) .. {} .. "-" .. tid .. "-"
  after_key = string.sub(whole, at + 1)
end
local sent = 0
request = function()
  sent = sent + 1
  return before_key .. sent .. after_key
end
"#,
            lua_string(prefix)
        );
    }
    lua += &format!(
        r#"done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("{RESULT_PREFIX} %d %d %d %d %d %d %d\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    latency.max, e.status, e.connect + e.read + e.write + e.timeout))
end
"#
    );
    lua
}

/// Runs wrk with `connections` open for `duration` and returns its figures.
///
/// # Panics
/// When wrk is missing or fails, or when any response was 4xx or 5xx (wrk counts those; a 304
/// is an answer) or any socket failed.
pub fn run(load: &Load<'_>, connections: usize, duration: Duration) -> Measured {
    run_checked(load, connections, duration, true).unwrap_or_else(|failed| panic!("{failed}"))
}

/// [`run`], with a run that got 4xx or 5xx answers or socket errors told apart as `Err` (what
/// went wrong) rather than a panic: a paired run's base build may fail under a load the
/// working tree serves.
///
/// # Panics
/// When wrk is missing or fails.
pub fn try_run(
    load: &Load<'_>,
    connections: usize,
    duration: Duration,
) -> Result<Measured, String> {
    run_checked(load, connections, duration, true)
}

/// [`run`] for a load that is meant to be refused (a flood past a rate limit): 4xx answers
/// are counted as answers; socket errors still fail the run.
pub fn run_accepting_refusals(load: &Load<'_>, connections: usize, duration: Duration) -> Measured {
    run_checked(load, connections, duration, false).unwrap_or_else(|failed| panic!("{failed}"))
}

fn run_checked(
    load: &Load<'_>,
    connections: usize,
    duration: Duration,
    only_2xx: bool,
) -> Result<Measured, String> {
    // Two client threads, as the server has two cores to itself at most; wrk needs at least
    // one connection per thread.
    let threads = connections.clamp(1, 2);
    let dir = tempfile::tempdir().expect("temporary directory");
    let script_path = dir.path().join("load.lua");
    std::fs::write(&script_path, script(load, threads)).expect("write the wrk script");
    let busy_before = machine_busy();
    let output = Command::new("wrk")
        .arg(format!("--threads={threads}"))
        .arg(format!("--connections={connections}"))
        .arg(format!("--duration={}s", duration.as_secs().max(1)))
        .arg("--timeout=10s")
        .arg(format!("--script={}", script_path.display()))
        .arg(&load.url)
        .output()
        .expect("run wrk (install it with `make deps-bench` or apt-get install wrk)");
    let busy = busy_before
        .zip(machine_busy())
        .map(|(before, after)| after - before);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "wrk failed: {output:?}");
    let line = stdout
        .lines()
        .find_map(|line| line.strip_prefix(RESULT_PREFIX))
        .unwrap_or_else(|| panic!("wrk printed no result: {stdout}"));
    let numbers: Vec<u64> = line
        .split_whitespace()
        .map(|n| n.parse().expect("wrk's figures are integers"))
        .collect();
    let [requests, micros, p50, p99, max, bad_status, socket_errors] = numbers[..] else {
        panic!("unexpected wrk result {line:?}");
    };
    if only_2xx && bad_status != 0 {
        return Err(format!(
            "{} {} at {connections} connections: {bad_status} 4xx or 5xx answers",
            load.method, load.url
        ));
    }
    if socket_errors != 0 {
        return Err(format!(
            "{} {} at {connections} connections: {socket_errors} socket errors or timeouts",
            load.method, load.url
        ));
    }
    Ok(Measured {
        requests,
        seconds: micros as f64 / 1e6,
        p50: Duration::from_micros(p50),
        p99: Duration::from_micros(p99),
        max: Duration::from_micros(max),
        machine_cpu: busy
            .filter(|_| requests > 0)
            .map(|busy| busy / u32::try_from(requests).unwrap_or(u32::MAX)),
    })
}
