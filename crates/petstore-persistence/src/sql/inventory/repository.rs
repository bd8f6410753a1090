//! `DieselInventoryRepository`: the inventory port as one statement on either backend,
//! `SELECT status, count(*) FROM pets WHERE removed_at IS NULL GROUP BY status`, read on the
//! store's pool off the async workers. It takes no write's turn and no lock: creates never wait
//! for it, and it sees the pets committed when it starts.

use async_trait::async_trait;
use diesel::dsl::count_star;
use diesel::prelude::*;
use petstore_application::{InventoryRepository, RepositoryError};
use petstore_domain::{Inventory, PetStatus};

use crate::sql::engine::connection::Generations;
use crate::sql::engine::errors::ScrubbedMessage;
use crate::sql::engine::health::StoreHealth;
use crate::sql::engine::read::read_off_the_workers;
use crate::sql::engine::Pool;
use crate::sql::schema::pets;
use crate::DatabaseUrl;

/// Counts the pets in the database behind a pool.
#[derive(Clone)]
pub struct DieselInventoryRepository {
    pool: Pool,
    generations: Generations,
    health: StoreHealth,
    url: DatabaseUrl,
}

impl std::fmt::Debug for DieselInventoryRepository {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DieselInventoryRepository")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl DieselInventoryRepository {
    pub(crate) fn new(
        pool: Pool,
        generations: Generations,
        health: StoreHealth,
        url: DatabaseUrl,
    ) -> Self {
        Self {
            pool,
            generations,
            health,
            url,
        }
    }
}

/// A stored status and its count, as the port counts them.
fn counted(status: &str, count: i64) -> Result<(PetStatus, u64), RepositoryError> {
    let corrupt = || {
        RepositoryError::Unexpected(Box::new(ScrubbedMessage(format!(
            "stored pets have an invalid status or count ({count} of `{status}`)"
        ))))
    };
    let status = PetStatus::parse(status).map_err(|_| corrupt())?;
    let count = u64::try_from(count).map_err(|_| corrupt())?;
    Ok((status, count))
}

#[async_trait]
impl InventoryRepository for DieselInventoryRepository {
    async fn count_by_status(&self) -> Result<Inventory, RepositoryError> {
        self.health.admit_read()?;
        let rows = read_off_the_workers(
            &self.pool,
            &self.generations,
            &self.health,
            &self.url,
            |conn| {
                pets::table
                    .filter(pets::removed_at.is_null())
                    .group_by(pets::status)
                    .select((pets::status, count_star()))
                    .load::<(String, i64)>(conn)
            },
        )
        .await?;
        let counts = rows
            .iter()
            .map(|(status, count)| counted(status, *count))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Inventory::from_counts(counts))
    }
}
