//! `DieselCategoryRepository`: the category port on the `categories` table (declared here: no
//! other resource reads it), written once for both backends. Reads go through the store's pool;
//! every write is one write transaction with its idempotency record (`write_recorded`), on
//! SQLite on the writer thread in turn with every other write, on PostgreSQL on a pooled
//! connection after an advisory lock of the categories' own. So category writes take turns on
//! either backend: a name is checked free and taken in one turn (two creates of one name give
//! one category and one `NameTaken`, never a failed statement), and ids become visible in the
//! order they are handed out, which keyset paging needs (as the pets' insert turn does). The
//! partial unique index on the folded name of the live rows stays the last guard.

use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::BigInt;
use petstore_application::{
    CategoryError, CategoryRepository, RecordPlan, RepositoryError, Written,
};
use petstore_domain::{Category, CategoryId, CategoryName, EventType};

use super::engine::connection::{AnyConnection, Generations};
use super::engine::errors::ScrubbedMessage;
use super::engine::health::StoreHealth;
use super::engine::outbox::{self, payload, NewEvent};
use super::engine::read::read_off_the_workers;
use super::engine::write_transaction::lock_on_postgres;
use super::engine::writes::Writes;
use super::engine::Pool;
use super::idempotency::recorded_write::{write_recorded, Stop};
use crate::DatabaseUrl;

diesel::table! {
    /// Must match both dialects' `create_categories` migration.
    categories (id) {
        id -> BigInt,
        name -> Text,
        name_folded -> Text,
        removed_at -> Nullable<BigInt>,
    }
}

/// Key of the PostgreSQL advisory lock category writes take turns on: "category" in ASCII.
const CATEGORY_WRITES_LOCK_KEY: i64 = 0x6361_7465_676f_7279;

const COLUMNS: (categories::id, categories::name) = (categories::id, categories::name);

// Serde: an event's payload is the category's row as JSON (`engine/outbox.rs`).
#[derive(Debug, Queryable, serde::Serialize, serde::Deserialize)]
pub(crate) struct CategoryRow {
    id: i64,
    name: String,
}

impl CategoryRow {
    /// The event `event_type` of `category`, its payload the category's row.
    fn event(event_type: EventType, category: &Category) -> QueryResult<NewEvent> {
        let row = Self {
            id: category.id().get(),
            name: category.name().as_str().to_owned(),
        };
        Ok(NewEvent {
            event_type,
            order_audience: None,
            data: payload(&row)?,
        })
    }

    pub(crate) fn into_category(self) -> Result<Category, RepositoryError> {
        let id = self.id;
        let corrupt = |field: &str| {
            RepositoryError::Unexpected(Box::new(ScrubbedMessage(format!(
                "stored category {id} has an invalid {field}"
            ))))
        };
        Ok(Category::new(
            CategoryId::parse(self.id).map_err(|_| corrupt("id"))?,
            CategoryName::parse(&self.name).map_err(|_| corrupt("name"))?,
        ))
    }
}

/// Categories in the database behind a pool.
#[derive(Clone)]
pub struct DieselCategoryRepository {
    pool: Pool,
    writes: Writes,
    generations: Generations,
    health: StoreHealth,
    url: DatabaseUrl,
}

impl std::fmt::Debug for DieselCategoryRepository {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DieselCategoryRepository")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

/// The turn of a category write: on PostgreSQL the categories' advisory lock, held until the
/// transaction ends; on SQLite nothing beyond `BEGIN IMMEDIATE`.
fn take_turn(conn: &mut AnyConnection) -> QueryResult<()> {
    lock_on_postgres(conn, |pg| {
        diesel::sql_query("SELECT pg_advisory_xact_lock($1)")
            .bind::<BigInt, _>(CATEGORY_WRITES_LOCK_KEY)
            .execute(pg)
    })
}

/// The live category `id`, within a write transaction.
fn live(conn: &mut AnyConnection, id: CategoryId) -> Result<Category, Stop<CategoryError>> {
    let row = categories::table
        .find(id.get())
        .filter(categories::removed_at.is_null())
        .select(COLUMNS)
        .first::<CategoryRow>(conn)
        .optional()?
        .ok_or(Stop::Refused(CategoryError::NotFound(id)))?;
    row.into_category()
        .map_err(|error| Stop::Failed(CategoryError::Repository(error)))
}

/// Refuses `name` when a live category other than `except` has it, regardless of case.
fn name_free(
    conn: &mut AnyConnection,
    name: &CategoryName,
    except: Option<CategoryId>,
) -> Result<(), Stop<CategoryError>> {
    let holder = categories::table
        .filter(categories::name_folded.eq(name.folded()))
        .filter(categories::removed_at.is_null())
        .select(categories::id)
        .first::<i64>(conn)
        .optional()?;
    match holder {
        Some(holder) if Some(holder) != except.map(CategoryId::get) => {
            Err(Stop::Refused(CategoryError::NameTaken(name.clone())))
        }
        _ => Ok(()),
    }
}

fn insert(conn: &mut AnyConnection, name: &CategoryName) -> Result<Category, Stop<CategoryError>> {
    name_free(conn, name, None)?;
    let insert = diesel::insert_into(categories::table)
        .values((
            categories::name.eq(name.as_str()),
            categories::name_folded.eq(name.folded()),
        ))
        .returning(COLUMNS);
    let row = match conn {
        AnyConnection::Postgresql(pg) => insert.get_result::<CategoryRow>(pg),
        AnyConnection::Sqlite(sqlite) => insert.get_result::<CategoryRow>(sqlite),
    }?;
    let category = row
        .into_category()
        .map_err(|error| Stop::Failed(CategoryError::Repository(error)))?;
    record(conn, EventType::CategoryCreated, &category)?;
    Ok(category)
}

/// Writes the event of `category`'s change into the open transaction.
fn record(
    conn: &mut AnyConnection,
    event_type: EventType,
    category: &Category,
) -> Result<(), Stop<CategoryError>> {
    outbox::append(conn, vec![CategoryRow::event(event_type, category)?])?;
    Ok(())
}

fn rename(
    conn: &mut AnyConnection,
    id: CategoryId,
    name: Option<&CategoryName>,
) -> Result<Category, Stop<CategoryError>> {
    let category = live(conn, id)?;
    let Some(name) = name else {
        return Ok(category);
    };
    name_free(conn, name, Some(id))?;
    diesel::update(categories::table.find(id.get()))
        .set((
            categories::name.eq(name.as_str()),
            categories::name_folded.eq(name.folded()),
        ))
        .execute(conn)?;
    let changed = category.name().as_str() != name.as_str();
    let renamed = category.renamed(name.clone());
    if changed {
        record(conn, EventType::CategoryUpdated, &renamed)?;
    }
    Ok(renamed)
}

fn remove(
    conn: &mut AnyConnection,
    id: CategoryId,
    removed_at: i64,
) -> Result<Category, Stop<CategoryError>> {
    let category = live(conn, id)?;
    diesel::update(categories::table.find(id.get()))
        .set(categories::removed_at.eq(Some(removed_at)))
        .execute(conn)?;
    record(conn, EventType::CategoryRemoved, &category)?;
    Ok(category)
}

impl DieselCategoryRepository {
    pub(crate) fn new(
        pool: Pool,
        writes: Writes,
        generations: Generations,
        health: StoreHealth,
        url: DatabaseUrl,
    ) -> Self {
        Self {
            pool,
            writes,
            generations,
            health,
            url,
        }
    }

    async fn read<T, Q>(&self, query: Q) -> Result<T, RepositoryError>
    where
        T: Send + 'static,
        Q: Fn(&mut AnyConnection) -> QueryResult<T> + Send + 'static,
    {
        self.health.admit_read()?;
        read_off_the_workers(
            &self.pool,
            &self.generations,
            &self.health,
            &self.url,
            query,
        )
        .await
    }

    /// Runs `work` as one category write (its turn first), with the record `plan` makes of
    /// its result.
    async fn write<W>(
        &self,
        plan: Option<RecordPlan<Category>>,
        work: W,
    ) -> Result<Written<Category>, CategoryError>
    where
        W: Fn(&mut AnyConnection) -> Result<Category, Stop<CategoryError>> + Send + 'static,
    {
        self.health.admit_write()?;
        let health = self.health.clone();
        self.writes
            .run_shared(move |conn| write_recorded(conn, take_turn, plan.as_ref(), &health, work))
            .await?
    }
}

#[async_trait]
impl CategoryRepository for DieselCategoryRepository {
    async fn create(
        &self,
        name: CategoryName,
        plan: Option<RecordPlan<Category>>,
    ) -> Result<Written<Category>, CategoryError> {
        self.write(plan, move |conn| insert(conn, &name)).await
    }

    async fn rename(
        &self,
        id: CategoryId,
        name: Option<CategoryName>,
        plan: Option<RecordPlan<Category>>,
    ) -> Result<Written<Category>, CategoryError> {
        self.write(plan, move |conn| rename(conn, id, name.as_ref()))
            .await
    }

    async fn remove(&self, id: CategoryId, removed_at: i64) -> Result<Category, CategoryError> {
        match self
            .write(None, move |conn| remove(conn, id, removed_at))
            .await?
        {
            Written::Done(category, _) => Ok(category),
            Written::Earlier(_) => Err(CategoryError::Repository(RepositoryError::Unexpected(
                "storage answered a removal from an idempotency record".into(),
            ))),
        }
    }

    async fn find(&self, id: CategoryId) -> Result<Option<Category>, RepositoryError> {
        let row = self
            .read(move |conn| {
                categories::table
                    .find(id.get())
                    .filter(categories::removed_at.is_null())
                    .select(COLUMNS)
                    .first::<CategoryRow>(conn)
                    .optional()
            })
            .await?;
        row.map(CategoryRow::into_category).transpose()
    }

    async fn list(
        &self,
        after: Option<CategoryId>,
        max: usize,
    ) -> Result<Vec<Category>, RepositoryError> {
        let after = after.map_or(0, CategoryId::get);
        let max = i64::try_from(max).unwrap_or(i64::MAX);
        let rows = self
            .read(move |conn| {
                categories::table
                    .filter(categories::id.gt(after))
                    .filter(categories::removed_at.is_null())
                    .select(COLUMNS)
                    .order(categories::id)
                    .limit(max)
                    .load::<CategoryRow>(conn)
            })
            .await?;
        rows.into_iter().map(CategoryRow::into_category).collect()
    }
}
