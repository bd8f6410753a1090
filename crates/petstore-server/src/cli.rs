//! The `petstore` command line. Every flag has an environment fallback, so the same settings
//! work from a shell, a Makefile or a container; `serve`, `migrate` and the `keys` commands share
//! the storage and key settings, so a key issued from the CLI is one the server knows.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use petstore_domain::{KeyScope, KeyScopeError, OpenOrderLimit, OpenOrderLimitError};
use petstore_http::security::client_address::{ClientAddressHeader, TrustedProxies};
use petstore_http::{CorsOrigins, RateLimit, ServerUrl};

use humantime::parse_duration;

use crate::durations::{at_least_a_millisecond, at_least_a_second};

pub mod data_moves;

#[derive(Debug, Parser)]
#[command(
    name = "petstore",
    version,
    about = "The petstore API server (spec v1.0.0)"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the API (applies pending migrations first).
    Serve(Box<ServeArgs>),
    /// Apply pending database migrations and exit.
    Migrate(StorageArgs),
    /// Manage API keys.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Print the OpenAPI document the server serves at /v1/openapi.json.
    Openapi(OpenapiArgs),
    /// Copy the SQLite database to a file while servers use it (PostgreSQL: `pg_dump`).
    Backup(data_moves::BackupArgs),
    /// Put a backup in the place of the SQLite database; no server may be using it.
    Restore(data_moves::RestoreArgs),
    /// Write the database (pets, categories, orders, keys) as JSON Lines, for `import`.
    Export(data_moves::ExportArgs),
    /// Read an export into an empty database of either backend, in one transaction.
    Import(data_moves::ImportArgs),
    /// Ask the local server's `/healthz` and exit 0 if it answers 200: a container health check
    /// that needs no shell or curl in the image.
    Healthcheck(HealthcheckArgs),
}

#[derive(Debug, Clone, Args)]
pub struct HealthcheckArgs {
    /// The address the server listens on (its `--bind`); an unspecified one (`0.0.0.0`, `::`)
    /// is asked on loopback.
    #[arg(long, env = "PETSTORE_BIND", default_value = DEFAULT_BIND, value_parser = parse_bind)]
    pub bind: SocketAddr,

    /// How long the whole check may take.
    #[arg(long, default_value = "2s", value_parser = parse_duration)]
    pub timeout: Duration,
}

/// Where `serve` listens unless told otherwise; `openapi` derives its default server URL from it.
pub const DEFAULT_BIND: &str = "127.0.0.1:8080";

#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Issue an API key and record it in the registry; prints the key alone on stdout.
    Issue(IssueKeyArgs),
    /// List the keys in the registry.
    List(ListKeysArgs),
    /// Revoke a key: every instance refuses it within a second. Revoking twice is harmless.
    Revoke(RevokeKeyArgs),
    /// Print a new random key secret (32 bytes, hex) for PETSTORE_KEY_SECRET.
    Secret,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Environment {
    /// Local use: a key secret is generated once and kept in the data directory.
    Development,
    /// Refuses to start without an explicitly configured key secret of at least 32 bytes.
    Production,
}

#[derive(Debug, Clone, Args)]
pub struct StorageArgs {
    /// Storage backend: a SQLite path or `sqlite://PATH`, `postgres://...`, or `memory:`.
    /// [default: sqlite://<data-dir>/petstore.db]
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    pub database_url: Option<String>,

    /// Directory for the default SQLite database and the development key secret.
    #[arg(long, env = "PETSTORE_DATA_DIR", default_value = "data")]
    pub data_dir: PathBuf,

    /// Most database connections this process opens.
    #[arg(long, env = "PETSTORE_POOL_SIZE", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub pool_size: u32,

    /// How long a request waits for a free database connection before answering 503.
    #[arg(long, env = "PETSTORE_POOL_TIMEOUT", default_value = "5s", value_parser = parse_duration)]
    pub pool_timeout: Duration,

    /// How long opening one database connection may take.
    #[arg(long, env = "PETSTORE_CONNECT_TIMEOUT", default_value = "5s", value_parser = parse_duration)]
    pub connect_timeout: Duration,

    /// How long one PostgreSQL statement may run (and sent data go unacknowledged) before the
    /// request answers 503; `0s` for no limit.
    #[arg(long, env = "PETSTORE_STATEMENT_TIMEOUT", default_value = "5s", value_parser = parse_duration)]
    pub statement_timeout: Duration,

    /// Most requests waiting for the database in each queue (creates waiting for their group's
    /// commit; PostgreSQL reads); a request finding its queue full answers 503 at once.
    #[arg(long, env = "PETSTORE_QUEUE_SIZE", default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub queue_size: u64,

    /// How long start-up keeps retrying an unreachable database before giving up.
    #[arg(long, env = "PETSTORE_STARTUP_TIMEOUT", default_value = "30s", value_parser = parse_duration)]
    pub startup_timeout: Duration,
}

#[derive(Debug, Clone, Args)]
pub struct KeySecretArgs {
    /// Secret that signs API keys (HS256). At least 32 bytes in production.
    #[arg(
        long,
        env = "PETSTORE_KEY_SECRET",
        hide_env_values = true,
        conflicts_with = "key_secret_file"
    )]
    pub key_secret: Option<String>,

    /// File holding the key secret (trailing newline ignored), instead of `--key-secret`.
    #[arg(long, env = "PETSTORE_KEY_SECRET_FILE")]
    pub key_secret_file: Option<PathBuf>,

    /// Previous key secrets, comma-separated: keys signed with them are still accepted while a
    /// rotation is under way. New keys are always signed with the current secret.
    #[arg(
        long,
        env = "PETSTORE_KEY_SECRET_PREVIOUS",
        hide_env_values = true,
        value_delimiter = ','
    )]
    pub key_secret_previous: Vec<String>,

    /// Files holding previous key secrets, comma-separated, instead of or besides
    /// `--key-secret-previous`.
    #[arg(long, env = "PETSTORE_KEY_SECRET_PREVIOUS_FILE", value_delimiter = ',')]
    pub key_secret_previous_file: Vec<PathBuf>,

    /// `development` or `production`.
    #[arg(
        long = "env",
        env = "PETSTORE_ENV",
        value_enum,
        default_value = "development"
    )]
    pub environment: Environment,
}

/// Connections served at once unless told otherwise: far more than a load balancer's pool or a
/// fleet of keep-alive clients needs, and with the database's files within the open-file limit
/// most service managers grant.
pub const DEFAULT_MAX_CONNECTIONS: u32 = 4096;

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address to listen on, `HOST:PORT` (a host name binds its first IPv4 address); port 0
    /// picks a free port.
    #[arg(long, env = "PETSTORE_BIND", default_value = DEFAULT_BIND, value_parser = parse_bind)]
    pub bind: SocketAddr,

    /// HTTP worker threads [default: one per CPU core].
    #[arg(long, env = "PETSTORE_WORKERS")]
    pub workers: Option<usize>,

    /// How long a request body may take to arrive; a slower one gets 408 and its connection
    /// is closed.
    #[arg(long, env = "PETSTORE_BODY_TIMEOUT", default_value = "10s", value_parser = at_least_a_millisecond)]
    pub body_timeout: Duration,

    /// How long a request head (request line and headers) may take from its first byte, for
    /// every request on a connection; a slower connection is closed.
    #[arg(long, env = "PETSTORE_HEAD_TIMEOUT", default_value = "5s", value_parser = at_least_a_millisecond)]
    pub head_timeout: Duration,

    /// Refuse a change of a pet (PATCH, DELETE) that carries no `If-Match` with 428, so that no
    /// client overwrites a change it has not seen.
    #[arg(long, env = "PETSTORE_REQUIRE_IF_MATCH", default_value_t = false, action = clap::ArgAction::Set)]
    pub require_if_match: bool,

    /// How long an idle connection stays open waiting for its next request; `0s` closes each
    /// connection after its response.
    #[arg(long, env = "PETSTORE_KEEP_ALIVE", default_value = "5s", value_parser = parse_duration)]
    pub keep_alive: Duration,

    /// Most connections served at once, across the workers. At the bound a new connection
    /// takes the place of the oldest idle one; with none idle it is answered 503 and
    /// closed. Lowered at start-up to fit the open-file limit.
    #[arg(long, env = "PETSTORE_MAX_CONNECTIONS", default_value_t = DEFAULT_MAX_CONNECTIONS, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_connections: u32,

    /// Most connections served at once from one address (the socket's peer; the trusted
    /// proxies have no bound of their own); one more is answered 429 and closed [default: an
    /// eighth of --max-connections].
    #[arg(long, env = "PETSTORE_MAX_CONNECTIONS_PER_CLIENT", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_connections_per_client: Option<u32>,

    /// On SIGTERM or SIGINT, how long the instance keeps serving with `/readyz` at 503 (and
    /// `Connection: close` on every answer) before it stops accepting, so that a balancer has
    /// taken it out of rotation first. `make run` uses `0s`.
    #[arg(long, env = "PETSTORE_DRAIN_DELAY", default_value = "5s", value_parser = parse_duration)]
    pub drain_delay: Duration,

    /// After the drain delay, how long requests in flight may take to finish before the server
    /// closes their connections.
    #[arg(long, env = "PETSTORE_SHUTDOWN_TIMEOUT", default_value = "30s", value_parser = parse_duration)]
    pub shutdown_timeout: Duration,

    /// How long the response to a request with an `Idempotency-Key` is kept and replayed to
    /// its retries; after that the key may be used again. Expired responses are purged in the
    /// background.
    #[arg(long, env = "PETSTORE_IDEMPOTENCY_TTL", default_value = "24h", value_parser = at_least_a_second)]
    pub idempotency_ttl: Duration,

    /// How long events stay in the feed (`GET /v1/events`); older ones are purged in the
    /// background, and a cursor from before them answers 410.
    #[arg(long, env = "PETSTORE_EVENT_RETENTION", default_value = "30days", value_parser = at_least_a_second)]
    pub event_retention: Duration,

    /// How many open orders (placed, not yet approved) one API key may have at once, 1 to
    /// 100000; one more is refused with 409 `too_many_open_orders` until one is approved or
    /// cancelled. Keeps one key from reserving every available pet.
    #[arg(long, env = "PETSTORE_MAX_OPEN_ORDERS_PER_KEY", default_value = "10", value_parser = parse_open_order_limit)]
    pub max_open_orders_per_key: OpenOrderLimit,

    /// Serve `GET /metrics` on this address instead of the API's (e.g. `127.0.0.1:9090`); in
    /// production `/metrics` is served only here, never on the API's address.
    #[arg(long, env = "PETSTORE_METRICS_BIND", value_parser = parse_bind)]
    pub metrics_bind: Option<SocketAddr>,

    /// Per-key rate limit, per instance: `100/s`, `6000/m`, with `,burst=N`. Off when unset.
    #[arg(long, env = "PETSTORE_RATE_LIMIT")]
    pub rate_limit: Option<RateLimit>,

    /// Per-client-address rate limit, per instance, for what no key answers for: refused keys
    /// (401) and the endpoints without a key (health, metrics, the contract, unknown paths).
    /// Same format as `--rate-limit`. Off when unset.
    #[arg(long, env = "PETSTORE_CLIENT_RATE_LIMIT")]
    pub client_rate_limit: Option<RateLimit>,

    /// Proxies (addresses or CIDR blocks, comma-separated) whose `--client-address-header`
    /// names the client: the address the per-client limit counts and the log shows. None when
    /// unset: the socket's peer is the client.
    #[arg(long, env = "PETSTORE_TRUSTED_PROXIES", default_value = "")]
    pub trusted_proxies: TrustedProxies,

    /// The header the trusted proxies write the client's address in: `x-forwarded-for` or
    /// `forwarded` (RFC 7239). Only that header is read, and only from a trusted proxy; the
    /// other is ignored, since a proxy passes on what a client sent in it.
    #[arg(
        long,
        env = "PETSTORE_CLIENT_ADDRESS_HEADER",
        default_value = "x-forwarded-for"
    )]
    pub client_address_header: ClientAddressHeader,

    /// Origins allowed to call the API from a browser: a comma-separated list of
    /// `scheme://host[:port]`, or `*`. Off when unset.
    #[arg(long, env = "PETSTORE_CORS_ORIGINS", default_value = "")]
    pub cors_origins: CorsOrigins,

    #[command(flatten)]
    pub storage: StorageArgs,

    #[command(flatten)]
    pub keys: KeySecretArgs,

    #[command(flatten)]
    pub servers: ApiServerArgs,

    #[command(flatten)]
    pub webhooks: crate::webhooks::WebhookArgs,
}

impl ServeArgs {
    /// One address's bound when the total is `max_connections` (after any lowering to fit the
    /// open-file limit): as configured, else an eighth of the total, at least one.
    pub fn connections_per_client(&self, max_connections: usize) -> usize {
        self.max_connections_per_client
            .map_or((max_connections / 8).max(1), |bound| bound as usize)
    }
}

/// The `servers` of the OpenAPI document. A URL not ending in `/v1` gets it appended, since the
/// document's paths (`/pets`) are relative to its servers.
#[derive(Debug, Clone, Args)]
pub struct ApiServerArgs {
    /// Public base URL of the API: the production server of the OpenAPI document and of the
    /// docs page's "try it out" [default: http://<bind address>/v1].
    #[arg(long, env = "PETSTORE_PUBLIC_URL")]
    pub public_url: Option<ServerUrl>,

    /// Base URL of the staging deployment, listed as the document's second server.
    #[arg(long, env = "PETSTORE_STAGING_URL")]
    pub staging_url: Option<ServerUrl>,
}

#[derive(Debug, Clone, Args)]
pub struct OpenapiArgs {
    #[command(flatten)]
    pub servers: ApiServerArgs,

    /// `3.1` (what `/v1/openapi.json` serves) or `3.0` (`/v1/openapi-3.0.json`).
    #[arg(long = "openapi-version", value_enum, default_value = "3.1")]
    pub version: OpenapiVersion,
}

/// Which OpenAPI version `petstore openapi` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OpenapiVersion {
    #[value(name = "3.1")]
    V3_1,
    #[value(name = "3.0")]
    V3_0,
}

#[derive(Debug, Clone, Args)]
pub struct IssueKeyArgs {
    /// Who the key is for; becomes the key's `sub` claim.
    #[arg(long)]
    pub name: String,

    /// What the key may do: `read` (list and get pets, and the key's own orders), `write` (also
    /// create pets, place orders and cancel its own) or `store` (the store's staff: also see,
    /// cancel, approve and deliver every order).
    #[arg(long, value_parser = parse_scope, default_value = "write")]
    pub scope: KeyScope,

    /// Lifetime of the key, e.g. `90d`, `12h`, at least `1m`; `never` for a key that does not
    /// expire.
    #[arg(long, value_parser = parse_lifetime, default_value = "90d")]
    pub expires_in: KeyLifetime,

    #[command(flatten)]
    pub storage: StorageArgs,

    #[command(flatten)]
    pub keys: KeySecretArgs,
}

/// How long a key works.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyLifetime {
    For(Duration),
    Never,
}

impl KeyLifetime {
    pub fn duration(self) -> Option<Duration> {
        match self {
            Self::For(duration) => Some(duration),
            Self::Never => None,
        }
    }
}

fn parse_lifetime(text: &str) -> Result<KeyLifetime, String> {
    if text == "never" {
        return Ok(KeyLifetime::Never);
    }
    parse_duration(text)
        .map(KeyLifetime::For)
        .map_err(|err| format!("{err} (or `never`)"))
}

fn parse_open_order_limit(text: &str) -> Result<OpenOrderLimit, String> {
    text.parse()
        .map_err(|err: OpenOrderLimitError| err.to_string())
}

fn parse_scope(text: &str) -> Result<KeyScope, String> {
    text.parse().map_err(|err: KeyScopeError| err.to_string())
}

#[derive(Debug, Clone, Args)]
pub struct ListKeysArgs {
    /// One JSON array instead of a table, for scripts.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub storage: StorageArgs,
}

#[derive(Debug, Clone, Args)]
pub struct RevokeKeyArgs {
    /// The key's id (its `jti`, as `keys list` shows it).
    pub id: String,

    #[command(flatten)]
    pub storage: StorageArgs,
}

/// `HOST:PORT` with an IP address or a host name, resolved now: its first IPv4 address (what
/// `localhost` means to most clients), else its first address.
fn parse_bind(text: &str) -> Result<SocketAddr, String> {
    use std::net::ToSocketAddrs as _;
    let addresses: Vec<SocketAddr> = text
        .to_socket_addrs()
        .map_err(|error| {
            format!("cannot resolve `{text}` ({error}); write HOST:PORT, e.g. 127.0.0.1:8080 or localhost:8080")
        })?
        .collect();
    addresses
        .iter()
        .find(|address| address.is_ipv4())
        .or_else(|| addresses.first())
        .copied()
        .ok_or_else(|| format!("`{text}` resolves to no address"))
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    fn issue_args(extra: &[&str]) -> IssueKeyArgs {
        let argv = [&["petstore", "keys", "issue", "--name", "me"][..], extra].concat();
        let Command::Keys(KeysCommand::Issue(args)) = Cli::try_parse_from(argv).unwrap().command
        else {
            panic!("parsed as another command");
        };
        args
    }

    #[test]
    fn keys_issue_takes_a_name_a_scope_and_a_lifetime() {
        let args = issue_args(&["--expires-in", "30d", "--scope", "read"]);
        assert_eq!(args.name, "me");
        assert_eq!(args.scope, KeyScope::Read);
        assert_eq!(
            args.expires_in,
            KeyLifetime::For(Duration::from_secs(30 * 86_400))
        );
    }

    #[test]
    fn keys_are_write_keys_for_90_days_unless_told_and_never_must_be_asked_for() {
        let args = issue_args(&[]);
        assert_eq!(args.scope, KeyScope::Write);
        assert_eq!(
            args.expires_in,
            KeyLifetime::For(Duration::from_secs(90 * 86_400))
        );
        assert_eq!(
            issue_args(&["--expires-in", "never"]).expires_in,
            KeyLifetime::Never
        );
        let argv = [
            "petstore", "keys", "issue", "--name", "me", "--scope", "admin",
        ];
        let err = Cli::try_parse_from(argv).unwrap_err();
        assert!(
            err.to_string().contains("`read`, `write` or `store`"),
            "{err}"
        );
        assert_eq!(issue_args(&["--scope", "store"]).scope, KeyScope::Store);
    }

    #[test]
    fn a_key_may_have_10_open_orders_unless_configured_and_0_is_refused() {
        let serve = |extra: &[&str]| {
            let argv = [&["petstore", "serve"][..], extra].concat();
            Cli::try_parse_from(argv).map(|cli| match cli.command {
                Command::Serve(args) => args.max_open_orders_per_key,
                _ => panic!("parsed as another command"),
            })
        };
        assert_eq!(serve(&[]).unwrap(), OpenOrderLimit::DEFAULT);
        assert_eq!(serve(&["--max-open-orders-per-key", "3"]).unwrap().get(), 3);
        for bad in ["0", "100001", "many"] {
            let err = serve(&["--max-open-orders-per-key", bad]).unwrap_err();
            assert!(err.to_string().contains("from 1 to 100000"), "{bad}: {err}");
        }
    }

    #[test]
    fn a_host_name_binds_its_first_ipv4_address_and_an_unresolvable_one_is_refused() {
        let serve = |bind: &str| {
            let cli = Cli::try_parse_from(["petstore", "serve", "--bind", bind])?;
            let Command::Serve(args) = cli.command else {
                panic!("parsed as another command");
            };
            Ok::<_, clap::Error>(args.bind)
        };
        assert_eq!(
            serve("localhost:8080").unwrap(),
            "127.0.0.1:8080".parse::<SocketAddr>().unwrap()
        );
        assert_eq!(
            serve("[::1]:0").unwrap(),
            "[::1]:0".parse::<SocketAddr>().unwrap()
        );
        let err = serve("no-such-host.invalid:8080").unwrap_err();
        assert!(
            err.to_string()
                .contains("cannot resolve `no-such-host.invalid:8080`"),
            "{err}"
        );
        assert!(serve("localhost").is_err(), "a port is needed");
    }

    #[test]
    fn durations_need_a_unit_and_the_error_says_so() {
        let cli = Cli::try_parse_from(["petstore", "serve", "--pool-timeout", "500ms"]).unwrap();
        let Command::Serve(args) = cli.command else {
            panic!("parsed as another command");
        };
        assert_eq!(args.storage.pool_timeout, Duration::from_millis(500));
        let err = Cli::try_parse_from(["petstore", "serve", "--pool-timeout", "90"]).unwrap_err();
        assert!(err.to_string().contains("unit"), "{err}");
    }

    #[test]
    fn server_urls_end_in_v1_and_bad_ones_are_refused() {
        let cli = Cli::try_parse_from([
            "petstore",
            "openapi",
            "--public-url",
            "https://petstore.example.com",
            "--staging-url",
            "https://staging.petstore.example.com/v1/",
        ])
        .unwrap();
        let Command::Openapi(args) = cli.command else {
            panic!("parsed as another command");
        };
        assert_eq!(
            args.servers.public_url.unwrap().as_str(),
            "https://petstore.example.com/v1"
        );
        assert_eq!(
            args.servers.staging_url.unwrap().as_str(),
            "https://staging.petstore.example.com/v1"
        );
        let err =
            Cli::try_parse_from(["petstore", "serve", "--public-url", "petstore.example.com"])
                .unwrap_err();
        assert!(err.to_string().contains("http://"), "{err}");
    }

    #[test]
    fn connection_limits_have_defaults_and_a_head_deadline_is_never_zero() {
        let Command::Serve(args) = Cli::try_parse_from(["petstore", "serve"]).unwrap().command
        else {
            panic!("parsed as another command");
        };
        assert_eq!(args.head_timeout, Duration::from_secs(5));
        assert_eq!(args.keep_alive, Duration::from_secs(5));
        assert_eq!(args.max_connections, DEFAULT_MAX_CONNECTIONS);
        assert_eq!(args.max_connections_per_client, None);
        assert_eq!(args.connections_per_client(4096), 512);
        assert_eq!(args.connections_per_client(7), 1);
        let err = Cli::try_parse_from(["petstore", "serve", "--head-timeout", "0s"]).unwrap_err();
        assert!(err.to_string().contains("at least 1ms"), "{err}");
        let err = Cli::try_parse_from(["petstore", "serve", "--max-connections", "0"]).unwrap_err();
        assert!(err.to_string().contains("--max-connections"), "{err}");
        let err = Cli::try_parse_from(["petstore", "serve", "--max-connections-per-client", "0"])
            .unwrap_err();
        assert!(
            err.to_string().contains("--max-connections-per-client"),
            "{err}"
        );
        let Command::Serve(args) =
            Cli::try_parse_from(["petstore", "serve", "--max-connections-per-client", "20"])
                .unwrap()
                .command
        else {
            panic!("parsed as another command");
        };
        assert_eq!(args.connections_per_client(4096), 20);
    }

    #[test]
    fn a_bad_duration_is_refused_with_its_value() {
        let err = Cli::try_parse_from(["petstore", "serve", "--pool-timeout", "soon"]).unwrap_err();
        assert!(err.to_string().contains("'soon'"), "{err}");
    }
}
