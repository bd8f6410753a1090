//! The webhook settings of `petstore serve` (`PETSTORE_WEBHOOK_*`), and the rules they must
//! keep: the ones that open the server to internal addresses (loopback, a static name table)
//! exist for development and tests and are refused in production; a lease always outlives an
//! attempt.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use petstore_domain::{AddressPolicy, RetrySchedule};

use crate::durations::at_least_a_second;

/// How webhooks are delivered.
#[derive(Debug, Clone, Args)]
pub struct WebhookArgs {
    /// The waits before each attempt of a delivery, comma-separated: the first after the event,
    /// each next after a failed attempt; when the last fails, the delivery has failed.
    #[arg(
        long,
        env = "PETSTORE_WEBHOOK_RETRY_SCHEDULE",
        default_value = "0s,5s,5m,30m,2h,5h,10h,10h",
        value_parser = parse_schedule
    )]
    pub webhook_retry_schedule: RetrySchedule,

    /// How long an attempt may take, 1s to 15s: resolving, connecting, TLS, and the answer's
    /// status line and headers. A slower endpoint's attempt fails as `timeout`.
    #[arg(long, env = "PETSTORE_WEBHOOK_TIMEOUT", default_value = "15s", value_parser = parse_timeout)]
    pub webhook_timeout: Duration,

    /// How long a claimed delivery is this instance's before another may take it over (an
    /// instance that crashed mid-attempt); at least the timeout and 5 s.
    #[arg(long, env = "PETSTORE_WEBHOOK_LEASE", default_value = "60s", value_parser = at_least_a_second)]
    pub webhook_lease: Duration,

    /// How long an endpoint may fail every attempt before it is disabled.
    #[arg(long, env = "PETSTORE_WEBHOOK_DISABLE_AFTER", default_value = "5days", value_parser = at_least_a_second)]
    pub webhook_disable_after: Duration,

    /// Endpoints posted to at once by this instance (each endpoint's deliveries one after
    /// another), 1 to 256.
    #[arg(long, env = "PETSTORE_WEBHOOK_CONCURRENCY", default_value_t = 16, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub webhook_concurrency: u16,

    /// Development and tests only (refused in production): also deliver to loopback
    /// (`127.0.0.0/8`, `::1`) and to `http://` URLs.
    #[arg(long, env = "PETSTORE_WEBHOOK_ALLOW_LOOPBACK", default_value_t = false, action = clap::ArgAction::Set)]
    pub webhook_allow_loopback: bool,

    /// Development and tests only (refused in production): names resolved without DNS,
    /// `name=address` comma-separated, like curl's `--resolve`. The addresses are checked like
    /// any other.
    #[arg(long, env = "PETSTORE_WEBHOOK_HOSTS", default_value = "", value_parser = parse_hosts)]
    pub webhook_hosts: StaticHosts,

    /// A PEM file of certificate authorities trusted for endpoints besides the system's (a
    /// private CA); it widens no address rule.
    #[arg(long, env = "PETSTORE_WEBHOOK_CA_FILE")]
    pub webhook_ca_file: Option<PathBuf>,
}

/// Names resolved without DNS.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StaticHosts(pub Vec<(String, IpAddr)>);

fn parse_schedule(text: &str) -> Result<RetrySchedule, String> {
    let waits = text
        .split(',')
        .map(|wait| humantime::parse_duration(wait.trim()).map_err(|error| error.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    RetrySchedule::parse(waits).map_err(|error| error.to_string())
}

fn parse_timeout(text: &str) -> Result<Duration, String> {
    let timeout = humantime::parse_duration(text).map_err(|error| error.to_string())?;
    if !(Duration::from_secs(1)..=Duration::from_secs(15)).contains(&timeout) {
        return Err("must be between 1s and 15s".to_owned());
    }
    Ok(timeout)
}

fn parse_hosts(text: &str) -> Result<StaticHosts, String> {
    petstore_webhooks::parse_hosts(text)
        .map(StaticHosts)
        .map_err(|error| error.to_string())
}

impl WebhookArgs {
    /// The rule endpoint URLs and delivery addresses follow.
    pub fn address_policy(&self) -> AddressPolicy {
        AddressPolicy {
            allow_loopback: self.webhook_allow_loopback,
        }
    }

    /// Refuses what production must not run with, and a lease an attempt could outlive.
    pub fn check(&self, production: bool) -> Result<(), String> {
        if production {
            if self.webhook_allow_loopback {
                return Err(
                    "PETSTORE_WEBHOOK_ALLOW_LOOPBACK is for development and tests; \
                            production never delivers webhooks to loopback"
                        .to_owned(),
                );
            }
            if !self.webhook_hosts.0.is_empty() {
                return Err(
                    "PETSTORE_WEBHOOK_HOSTS is for development and tests; production \
                            resolves endpoint names with DNS"
                        .to_owned(),
                );
            }
        }
        if self.webhook_lease < self.webhook_timeout + Duration::from_secs(5) {
            return Err(format!(
                "PETSTORE_WEBHOOK_LEASE ({}) must be at least PETSTORE_WEBHOOK_TIMEOUT ({}) and \
                 5s, so that no attempt outlives its lease",
                humantime::format_duration(self.webhook_lease),
                humantime::format_duration(self.webhook_timeout)
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Command {
        #[command(flatten)]
        webhooks: WebhookArgs,
    }

    fn args(flags: &[&str]) -> Result<WebhookArgs, clap::Error> {
        let mut argv = vec!["petstore"];
        argv.extend_from_slice(flags);
        Command::try_parse_from(argv).map(|command| command.webhooks)
    }

    #[test]
    fn the_defaults_are_svix_schedule_a_15_s_deadline_and_no_loopback() {
        let defaults = args(&[]).unwrap();
        assert_eq!(defaults.webhook_retry_schedule, RetrySchedule::default());
        assert_eq!(defaults.webhook_timeout, Duration::from_secs(15));
        assert!(!defaults.address_policy().allow_loopback);
        assert!(defaults.check(true).is_ok());
    }

    #[test]
    fn loopback_and_static_hosts_are_refused_in_production_only() {
        let loopback = args(&["--webhook-allow-loopback", "true"]).unwrap();
        assert!(loopback.check(true).is_err());
        assert!(loopback.check(false).is_ok());
        let hosts = args(&["--webhook-hosts", "hooks.test=127.0.0.1"]).unwrap();
        assert_eq!(
            hosts.webhook_hosts.0,
            [("hooks.test".to_owned(), "127.0.0.1".parse().unwrap())]
        );
        assert!(hosts
            .check(true)
            .unwrap_err()
            .contains("PETSTORE_WEBHOOK_HOSTS"));
    }

    #[test]
    fn a_lease_shorter_than_an_attempt_is_refused() {
        let short = args(&["--webhook-lease", "10s"]).unwrap();
        assert!(short
            .check(false)
            .unwrap_err()
            .contains("PETSTORE_WEBHOOK_LEASE"));
        let fast = args(&["--webhook-lease", "7s", "--webhook-timeout", "2s"]).unwrap();
        assert!(fast.check(false).is_ok());
    }

    #[test]
    fn bad_values_are_refused_when_parsed() {
        assert!(args(&["--webhook-timeout", "30s"]).is_err());
        assert!(args(&["--webhook-retry-schedule", ""]).is_err());
        assert!(args(&["--webhook-retry-schedule", "0s,2days"]).is_err());
        assert!(args(&["--webhook-hosts", "hooks.test"]).is_err());
        assert!(args(&["--webhook-concurrency", "0"]).is_err());
        let short = args(&["--webhook-retry-schedule", "0s,100ms,200ms"]).unwrap();
        assert_eq!(short.webhook_retry_schedule.attempts(), 3);
    }
}
