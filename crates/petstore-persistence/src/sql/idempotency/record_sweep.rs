//! PostgreSQL's purge of expired idempotency records: a sweep over the table's blocks, a slice
//! of them per round, in place of an index on `stored_at`, which every keyed write would pay
//! for (`docs/benchmarks.md`). PostgreSQL's heap reuses the space a purge frees, so its
//! physical order is not arrival order (SQLite's rowid order is, and it purges by it): the sweep
//! reads every block in turn instead, each slice by a TID range scan.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};

/// At most this many rounds sweep the whole table: with a round a minute, a record is purged
/// within half an hour after its retention ends (until then it answers for nothing: a write
/// replaces an expired record, and none is replayed).
const ROUNDS_PER_SWEEP: i64 = 30;

/// Fewest blocks a round reads (1 MiB), so that a small table is swept whole in one round.
const MIN_BLOCKS_PER_ROUND: i64 = 128;

/// Where the next round starts, shared by the clones of one store. Each instance sweeps on its
/// own; two sweeping at once delete each record once all the same.
#[derive(Debug, Clone, Default)]
pub(crate) struct RecordSweep {
    next_block: Arc<AtomicI64>,
}

impl RecordSweep {
    /// Removes up to `max` records stored before `cutoff` from the next slice of the table; how
    /// many. The sweep moves on once a slice has no more to remove (fewer than `max` went).
    pub(crate) fn purge(&self, pg: &mut PgConnection, cutoff: i64, max: i64) -> QueryResult<usize> {
        let blocks: i64 = diesel::select(sql::<BigInt>(
            "pg_relation_size('idempotency_records') / current_setting('block_size')::bigint",
        ))
        .get_result(pg)?;
        let span = (blocks / ROUNDS_PER_SWEEP).max(MIN_BLOCKS_PER_ROUND);
        let from = match self.next_block.load(Ordering::Relaxed) {
            past_the_end if past_the_end >= blocks => 0,
            next => next,
        };
        let to = from.saturating_add(span);
        let removed = diesel::sql_query(
            "DELETE FROM idempotency_records WHERE ctid = ANY(ARRAY(SELECT ctid FROM \
             idempotency_records WHERE ctid >= $1::text::tid AND ctid < $2::text::tid \
             AND stored_at < $3 LIMIT $4))",
        )
        .bind::<Text, _>(format!("({from},0)"))
        .bind::<Text, _>(format!("({to},0)"))
        .bind::<BigInt, _>(cutoff)
        .bind::<BigInt, _>(max)
        .execute(pg)?;
        if i64::try_from(removed).unwrap_or(i64::MAX) < max {
            let next = if to >= blocks { 0 } else { to };
            self.next_block.store(next, Ordering::Relaxed);
        }
        Ok(removed)
    }
}
