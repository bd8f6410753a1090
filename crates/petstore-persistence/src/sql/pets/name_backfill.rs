//! `name_folded` for pets written without it (by the release before the column): filled in
//! after the migrations, a batch per transaction, so the name search finds them too.

use diesel::prelude::*;
use petstore_domain::fold_case;

use crate::sql::engine::connection::AnyConnection;
use crate::sql::schema::pets;

/// Pets folded per transaction.
const BATCH: i64 = 1_000;

/// Folds the name of every pet that has no `name_folded`; how many.
pub(crate) fn fill_name_folded(conn: &mut AnyConnection) -> QueryResult<usize> {
    let mut filled = 0;
    loop {
        let rows: Vec<(i64, String)> = pets::table
            .filter(pets::name_folded.is_null())
            .select((pets::id, pets::name))
            .order(pets::id)
            .limit(BATCH)
            .load(conn)?;
        if rows.is_empty() {
            return Ok(filled);
        }
        conn.transaction(|conn| {
            for (id, name) in &rows {
                diesel::update(pets::table.find(id))
                    .set(pets::name_folded.eq(fold_case(name)))
                    .execute(conn)?;
            }
            QueryResult::Ok(())
        })?;
        filled += rows.len();
    }
}
