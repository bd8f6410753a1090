//! The SQL migrations, embedded in the binary from the top-level `migrations/<dialect>/`, and
//! how they are applied so that several instances starting at once are safe.
//!
//! - PostgreSQL: a session-level advisory lock serialises migration runs across instances; the
//!   second one waits, then finds nothing pending. The lock is released explicitly, and in any
//!   case with the session, as migrations run on a connection of their own, one without the
//!   statement timeout that bounds requests.
//! - SQLite: the whole run is one `BEGIN IMMEDIATE` transaction, which takes the file's write
//!   lock up front (waiting up to the busy timeout for another process's run).

use diesel::sql_types::BigInt;
use diesel::{PgConnection, RunQueryDsl, SqliteConnection};
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};
use petstore_application::BoxError;

use super::connection::AnyConnection;

const POSTGRES: EmbeddedMigrations = embed_migrations!("../../migrations/postgres");
const SQLITE: EmbeddedMigrations = embed_migrations!("../../migrations/sqlite");

/// Key of the advisory lock held while migrating: "petstore" in ASCII, unlikely to collide
/// with another application's lock on a shared server.
const MIGRATION_LOCK_KEY: i64 = 0x7065_7473_746f_7265;

/// Applies every pending migration; returns the versions applied, oldest first.
pub(crate) fn run_pending(conn: &mut AnyConnection) -> Result<Vec<String>, BoxError> {
    match conn {
        AnyConnection::Postgresql(pg) => run_pending_postgres(pg),
        AnyConnection::Sqlite(sqlite) => run_pending_sqlite(sqlite),
    }
}

fn run_pending_postgres(conn: &mut PgConnection) -> Result<Vec<String>, BoxError> {
    // The statement timeout bounds requests; a migration (or waiting for another instance's)
    // may rightly take longer, and this session serves nothing else.
    diesel::sql_query("SET statement_timeout = 0").execute(conn)?;
    diesel::sql_query("SET idle_in_transaction_session_timeout = 0").execute(conn)?;
    diesel::sql_query("SELECT pg_advisory_lock($1)")
        .bind::<BigInt, _>(MIGRATION_LOCK_KEY)
        .execute(conn)?;
    let applied = apply(conn, POSTGRES);
    let unlocked = diesel::sql_query("SELECT pg_advisory_unlock($1)")
        .bind::<BigInt, _>(MIGRATION_LOCK_KEY)
        .execute(conn);
    // The migration outcome matters more; a failed unlock is undone when the session closes.
    let applied = applied?;
    unlocked?;
    Ok(applied)
}

fn run_pending_sqlite(conn: &mut SqliteConnection) -> Result<Vec<String>, BoxError> {
    conn.immediate_transaction(|conn| apply(conn, SQLITE))
}

/// The versions of the migrations this binary carries (the same list in both dialects), oldest
/// first: what a backup or an export may be at most, and what a restore migrates to.
pub(crate) fn known_versions() -> Vec<String> {
    let mut versions: Vec<String> =
        diesel::migration::MigrationSource::<diesel::sqlite::Sqlite>::migrations(&SQLITE)
            .map(|all| {
                all.iter()
                    .map(|migration| migration.name().version().to_string())
                    .collect()
            })
            .unwrap_or_default();
    versions.sort();
    versions
}

fn apply<C>(conn: &mut C, migrations: EmbeddedMigrations) -> Result<Vec<String>, BoxError>
where
    C: MigrationHarness<C::Backend> + diesel::Connection,
{
    Ok(conn
        .run_pending_migrations(migrations)?
        .into_iter()
        .map(|version| version.to_string())
        .collect())
}

#[cfg(test)]
mod tests {
    use petstore_domain::{KeyScope, PetStatus};

    /// The `CHECK` constraint on `pets.status` stays SQL, in both dialects' migrations; it must
    /// allow exactly the domain's statuses.
    #[test]
    fn the_status_check_of_both_dialects_lists_exactly_the_domain_statuses() {
        let expected: Vec<String> = PetStatus::ALL
            .iter()
            .map(|status| format!("'{}'", status.as_str()))
            .collect();
        for dialect in ["sqlite", "postgres"] {
            let up = std::fs::read_to_string(format!(
                "{}/../../migrations/{dialect}/2026-11-22-000000_create_pets/up.sql",
                env!("CARGO_MANIFEST_DIR")
            ))
            .expect("the migration is readable");
            let check = up
                .split("CHECK (status IN (")
                .nth(1)
                .and_then(|rest| rest.split("))").next())
                .unwrap_or_else(|| panic!("{dialect}: no status CHECK constraint"));
            let listed: Vec<String> = check.split(',').map(|s| s.trim().to_owned()).collect();
            assert_eq!(listed, expected, "{dialect}");
        }
    }

    /// The `CHECK` constraint on `api_keys.scope`, as the latest migration that sets it leaves
    /// it, must allow exactly the domain's scopes.
    #[test]
    fn the_scope_check_of_both_dialects_lists_exactly_the_domain_scopes() {
        let expected: Vec<String> = KeyScope::ALL
            .iter()
            .map(|scope| format!("'{}'", scope.as_str()))
            .collect();
        for dialect in ["sqlite", "postgres"] {
            let up = std::fs::read_to_string(format!(
                "{}/../../migrations/{dialect}/2026-11-25-000002_add_order_owners/up.sql",
                env!("CARGO_MANIFEST_DIR")
            ))
            .expect("the migration is readable");
            let check = up
                .split("CHECK (scope IN (")
                .nth(1)
                .and_then(|rest| rest.split("))").next())
                .unwrap_or_else(|| panic!("{dialect}: no scope CHECK constraint"));
            let listed: Vec<String> = check.split(',').map(|s| s.trim().to_owned()).collect();
            assert_eq!(listed, expected, "{dialect}");
        }
    }
}
