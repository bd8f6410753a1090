//! The standard process metrics of Prometheus's client libraries, read from `/proc` at each
//! scrape and written in the exposition format: `process_cpu_seconds_total`,
//! `process_resident_memory_bytes`, `process_open_fds`, `process_max_fds`,
//! `process_start_time_seconds`. Written here rather than through the `metrics` facade, whose
//! counters hold whole numbers (CPU time is seconds with a fraction). Where `/proc` is missing
//! (not Linux), a family that cannot be read is left out.

use std::fmt::Write as _;

/// The families that could be read now, each with its `# HELP` and `# TYPE`.
pub fn render() -> String {
    let mut out = String::new();
    let stat = std::fs::read_to_string("/proc/self/stat").ok();
    let fields: Vec<&str> = stat
        .as_deref()
        // The command name (field 2) is in parentheses and may hold spaces: fields are counted
        // after its closing one.
        .and_then(|stat| stat.rsplit_once(')'))
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks = rustix::param::clock_ticks_per_second() as f64;
    // After the name: state is field 3, so field N is at index N - 3.
    let field = |n: usize| {
        fields
            .get(n - 3)
            .and_then(|value| value.parse::<u64>().ok())
    };
    if let (Some(user), Some(system)) = (field(14), field(15)) {
        family(
            &mut out,
            "process_cpu_seconds_total",
            "counter",
            "Total user and system CPU time spent in seconds.",
            (user + system) as f64 / ticks,
        );
    }
    if let Some(rss) = resident_bytes() {
        family(
            &mut out,
            "process_resident_memory_bytes",
            "gauge",
            "Resident memory size in bytes.",
            rss as f64,
        );
    }
    if let Ok(entries) = std::fs::read_dir("/proc/self/fd") {
        family(
            &mut out,
            "process_open_fds",
            "gauge",
            "Number of open file descriptors.",
            entries.count() as f64,
        );
    }
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    if let Some(max) = limit.current {
        family(
            &mut out,
            "process_max_fds",
            "gauge",
            "Maximum number of open file descriptors.",
            max as f64,
        );
    }
    if let (Some(started), Some(boot)) = (field(22), boot_time()) {
        family(
            &mut out,
            "process_start_time_seconds",
            "gauge",
            "Start time of the process since unix epoch in seconds.",
            boot as f64 + started as f64 / ticks,
        );
    }
    out
}

fn family(out: &mut String, name: &str, kind: &str, help: &str, value: f64) {
    let _ = write!(
        out,
        "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}\n\n"
    );
}

/// `VmRSS` of `/proc/self/status`, in bytes.
fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// When the machine booted, in seconds since the Unix epoch (`btime` of `/proc/stat`).
fn boot_time() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    stat.lines()
        .find_map(|line| line.strip_prefix("btime "))
        .and_then(|seconds| seconds.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use std::time::{SystemTime, UNIX_EPOCH};

    use super::*;

    fn value(rendered: &str, name: &str) -> f64 {
        rendered
            .lines()
            .find_map(|line| line.strip_prefix(&format!("{name} ")))
            .and_then(|value| value.parse().ok())
            .unwrap_or_else(|| panic!("{name} not in:\n{rendered}"))
    }

    #[test]
    fn every_standard_family_is_there_with_plausible_values() {
        let rendered = render();
        for name in [
            "process_cpu_seconds_total",
            "process_resident_memory_bytes",
            "process_open_fds",
            "process_max_fds",
            "process_start_time_seconds",
        ] {
            assert!(rendered.contains(&format!("# HELP {name} ")), "{rendered}");
            assert!(rendered.contains(&format!("# TYPE {name} ")), "{rendered}");
        }
        assert!(value(&rendered, "process_resident_memory_bytes") > 1e6);
        let open = value(&rendered, "process_open_fds");
        assert!(open >= 3.0 && open <= value(&rendered, "process_max_fds"));
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        let started = value(&rendered, "process_start_time_seconds");
        assert!(
            started <= now + 1.0 && started > now - 86_400.0,
            "{started} vs {now}"
        );
    }
}
