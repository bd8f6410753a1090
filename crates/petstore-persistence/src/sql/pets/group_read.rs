//! Group reads for PostgreSQL: the reads that arrive while earlier ones are on their way to the
//! server are answered together. Point reads of a group share one `WHERE id = ANY($1)` query,
//! and identical page requests (the first page of a listing, most often) share one query each.
//!
//! Every read of PostgreSQL is a network round trip, and on a busy host the round trips, with
//! the thread hand-offs around them, cost more than the queries (`docs/benchmarks.md`); a group
//! pays them once. No read waits to fill a group: a reader thread takes whatever is queued when
//! it is free. Every query of a group starts after each of its requests arrived, so a read still
//! sees every write acknowledged before it was sent.
//!
//! [`READERS`] threads take turns at the queue, so a slow query holds up only its own group. The
//! queue is bounded like the create queue: full means unavailable at once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use diesel::prelude::*;
use petstore_application::RepositoryError;
use tokio::sync::mpsc;

use super::pet_row::PetRow;
use crate::sql::engine::connection::{on_connection, AnyConnection, Generations};
use crate::sql::engine::errors::ScrubbedMessage;
use crate::sql::engine::health::StoreHealth;
use crate::sql::engine::queue::{self, Queued, Reply};
use crate::sql::engine::read::{from_read, read_with_retry};
use crate::sql::engine::Pool;
use crate::sql::schema::pets;
use crate::DatabaseUrl;

/// Reader threads, each with at most one query in flight.
const READERS: u32 = 4;

/// Most requests one reader takes from the queue at a time.
const MAX_GROUP: usize = 256;

/// A page request: status filter, the id it starts after, how many rows at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Page {
    pub(crate) status: Option<&'static str>,
    pub(crate) after: i64,
    pub(crate) limit: i64,
}

#[derive(Debug)]
enum Read {
    Find {
        id: i64,
        reply: Reply<Option<PetRow>>,
    },
    Page {
        page: Page,
        reply: Reply<Vec<PetRow>>,
    },
}

/// The sending end of the readers' queue. The threads end once every clone is dropped.
#[derive(Debug, Clone)]
pub(crate) struct ReadQueue {
    sender: queue::Sender<Read>,
}

impl ReadQueue {
    /// Starts the reader threads (at most one per pooled connection).
    pub(crate) fn start(
        pool: Pool,
        generations: Generations,
        health: StoreHealth,
        url: DatabaseUrl,
        capacity: usize,
    ) -> std::io::Result<Self> {
        let (sender, receiver) = mpsc::channel(capacity.max(1));
        let receiver = Arc::new(Mutex::new(receiver));
        for n in 0..READERS.min(pool.max_size()) {
            let reader = Reader {
                pool: pool.clone(),
                generations: generations.clone(),
                health: health.clone(),
                url: url.clone(),
                queue: Arc::clone(&receiver),
            };
            std::thread::Builder::new()
                .name(format!("petstore-reader-{n}"))
                .spawn(move || reader.run())?;
        }
        Ok(Self { sender })
    }

    pub(crate) async fn find(&self, id: i64) -> Result<Option<PetRow>, RepositoryError> {
        queue::ask(&self.sender, "reader threads", |reply| Read::Find {
            id,
            reply,
        })
        .await
    }

    pub(crate) async fn page(&self, page: Page) -> Result<Vec<PetRow>, RepositoryError> {
        queue::ask(&self.sender, "reader threads", |reply| Read::Page {
            page,
            reply,
        })
        .await
    }
}

struct Reader {
    pool: Pool,
    generations: Generations,
    health: StoreHealth,
    url: DatabaseUrl,
    queue: Arc<Mutex<queue::Receiver<Read>>>,
}

impl Reader {
    fn run(self) {
        while let Some(group) = self.take_group() {
            self.answer(group);
        }
    }

    /// Takes the next group; `None` once the queue closed.
    fn take_group(&self) -> Option<Vec<Queued<Read>>> {
        let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        queue::take_group(&mut queue, MAX_GROUP)
    }

    fn answer(&self, group: Vec<Queued<Read>>) {
        let span = queue::span_of(&group);
        let _in_span = span.enter();
        let mut finds: HashMap<i64, Vec<Reply<Option<PetRow>>>> = HashMap::new();
        let mut pages: HashMap<Page, Vec<Reply<Vec<PetRow>>>> = HashMap::new();
        for queued in group {
            match queued.request {
                Read::Find { id, reply } => finds.entry(id).or_default().push(reply),
                Read::Page { page, reply } => pages.entry(page).or_default().push(reply),
            }
        }
        // A caller that went away needs no answer.
        finds.retain(|_, replies| {
            replies.retain(|reply| !reply.is_closed());
            !replies.is_empty()
        });
        pages.retain(|_, replies| {
            replies.retain(|reply| !reply.is_closed());
            !replies.is_empty()
        });
        if !finds.is_empty() {
            let ids: Vec<i64> = finds.keys().copied().collect();
            match self.query(|conn| find_all(conn, &ids)) {
                Ok(rows) => {
                    let mut rows: HashMap<i64, PetRow> =
                        rows.into_iter().map(|row| (row.id, row)).collect();
                    for (id, replies) in finds {
                        let row = rows.remove(&id);
                        for reply in replies {
                            let _ = reply.send(Ok(row.clone()));
                        }
                    }
                }
                Err(error) => {
                    for reply in finds.into_values().flatten() {
                        let _ = reply.send(Err(error.replicate()));
                    }
                }
            }
        }
        for (page, replies) in pages {
            let outcome = self.query(|conn| load_page(conn, page));
            for reply in replies {
                let _ = reply.send(match &outcome {
                    Ok(rows) => Ok(rows.clone()),
                    Err(error) => Err(error.replicate()),
                });
            }
        }
    }

    /// Runs `query` on a pooled connection, trying once more on a new one if it was closed.
    fn query<T>(
        &self,
        query: impl Fn(&mut AnyConnection) -> QueryResult<T>,
    ) -> Result<T, GroupError> {
        read_with_retry(&self.pool, &self.generations, &self.health, query).map_err(|failure| {
            match from_read(failure, &self.url) {
                RepositoryError::Unavailable(source) => GroupError::Unavailable(source.to_string()),
                RepositoryError::Unexpected(source) => GroupError::Unexpected(source.to_string()),
            }
        })
    }
}

/// A failure shared by every read of a group: each gets a [`RepositoryError`] of its own.
enum GroupError {
    Unavailable(String),
    Unexpected(String),
}

impl GroupError {
    fn replicate(&self) -> RepositoryError {
        match self {
            Self::Unavailable(message) => {
                RepositoryError::Unavailable(Box::new(ScrubbedMessage(message.clone())))
            }
            Self::Unexpected(message) => {
                RepositoryError::Unexpected(Box::new(ScrubbedMessage(message.clone())))
            }
        }
    }
}

fn find_all(conn: &mut AnyConnection, ids: &[i64]) -> QueryResult<Vec<PetRow>> {
    let query = pets::table
        .filter(pets::id.eq_any(ids))
        .filter(pets::removed_at.is_null())
        .select(PetRow::COLUMNS);
    on_connection!(conn, |c| query.load(c))
}

/// One page in id order. Two fixed statements rather than one built per call, run on the
/// concrete connection, so both stay prepared and are found by their type.
pub(crate) fn load_page(conn: &mut AnyConnection, page: Page) -> QueryResult<Vec<PetRow>> {
    match page.status {
        Some(status) => {
            let query = pets::table
                .select(PetRow::COLUMNS)
                .filter(pets::status.eq(status))
                .filter(pets::id.gt(page.after))
                .filter(pets::removed_at.is_null())
                .order(pets::id.asc())
                .limit(page.limit);
            on_connection!(conn, |c| query.load(c))
        }
        None => {
            let query = pets::table
                .select(PetRow::COLUMNS)
                .filter(pets::id.gt(page.after))
                .filter(pets::removed_at.is_null())
                .order(pets::id.asc())
                .limit(page.limit);
            on_connection!(conn, |c| query.load(c))
        }
    }
}
