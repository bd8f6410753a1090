//! The open-file budget checked at start-up: connections, the database's files and the
//! process's own must fit the open-file limit (`RLIMIT_NOFILE`), or a flood of connections
//! would leave the service unable to open anything and it would stop for everyone.
//!
//! The soft limit is raised towards the hard limit when the configured bound needs it (as Go's
//! runtime does for every program); when even the hard limit is too low, the bound on
//! connections is lowered to fit and a WARN says so and what to change.

use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};

/// Files the process holds besides connections and the database: standard streams, the
/// listeners, each worker's event queue, logs, and room to spare.
const FIXED_RESERVE: u64 = 64;
/// Files one database connection may hold: SQLite's database, WAL and shared-memory files
/// (a PostgreSQL connection is one socket).
const FILES_PER_DATABASE_CONNECTION: u64 = 3;

/// What must fit in the open-file limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileBudget {
    /// Connections the API serves at once (`--max-connections`).
    pub connections: u64,
    /// Other connections: those accepted beyond the bound (refused ones being answered, ended
    /// ones closing) and the metrics port's.
    pub other_connections: u64,
    /// Database connections (`--pool-size`).
    pub database_connections: u64,
}

impl FileBudget {
    /// Files needed besides the API's connections.
    fn reserved(&self) -> u64 {
        FIXED_RESERVE
            + self.other_connections
            + FILES_PER_DATABASE_CONNECTION * self.database_connections
    }

    fn needed(&self) -> u64 {
        self.connections + self.reserved()
    }

    /// The API's connections that fit a soft limit of `limit` files (at least one).
    fn connections_within(&self, limit: u64) -> u64 {
        self.connections
            .min(limit.saturating_sub(self.reserved()))
            .max(1)
    }
}

/// Makes room for `budget` (raising the soft limit if it can) and returns the number of API
/// connections to serve: `budget.connections`, or fewer if the limit cannot hold them.
pub fn fit(budget: FileBudget) -> u64 {
    let limit = getrlimit(Resource::Nofile);
    let Some(soft) = limit.current else {
        return budget.connections;
    };
    let needed = budget.needed();
    if soft >= needed {
        return budget.connections;
    }
    let target = limit.maximum.map_or(needed, |hard| hard.min(needed));
    let soft = if target > soft
        && setrlimit(
            Resource::Nofile,
            Rlimit {
                current: Some(target),
                maximum: limit.maximum,
            },
        )
        .is_ok()
    {
        tracing::info!(
            from = soft,
            to = target,
            "raised the open-file limit for the configured connections"
        );
        target
    } else {
        soft
    };
    let connections = budget.connections_within(soft);
    if connections < budget.connections {
        tracing::warn!(
            open_file_limit = soft,
            needed,
            max_connections = budget.connections,
            serving_at_most = connections,
            "the open-file limit (ulimit -n, LimitNOFILE=) is too low for PETSTORE_MAX_CONNECTIONS \
             plus the database pool and the process's own files: serving fewer connections at \
             once; raise the limit or lower PETSTORE_MAX_CONNECTIONS"
        );
    }
    connections
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUDGET: FileBudget = FileBudget {
        connections: 4096,
        other_connections: 0,
        database_connections: 10,
    };

    #[test]
    fn the_database_files_and_a_margin_are_kept_out_of_the_connections() {
        assert_eq!(BUDGET.needed(), 4096 + 30 + 64);
        assert_eq!(BUDGET.connections_within(1024), 1024 - 94);
        assert_eq!(BUDGET.connections_within(100_000), 4096);
        assert_eq!(BUDGET.connections_within(10), 1);
    }

    #[test]
    fn the_limit_this_process_has_holds_what_fit_returns() {
        let served = fit(BUDGET);
        let soft = getrlimit(Resource::Nofile).current.unwrap_or(u64::MAX);
        assert!(served <= BUDGET.connections);
        assert!(
            served == 1 || served + BUDGET.reserved() <= soft,
            "{served} > {soft}"
        );
    }
}
