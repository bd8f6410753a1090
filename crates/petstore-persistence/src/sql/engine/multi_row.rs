//! Multi-row statements diesel keeps prepared. `sql_query` is never cached, so a group's
//! `INSERT ... VALUES (...), (...)` would be parsed and planned again for every group, a cost
//! the writer thread pays on every commit (`docs/benchmarks.md`). A statement of this type has
//! the same text for the same number of rows, and diesel's statement cache keeps one prepared
//! statement per text, without bound: so rows go in parts of power-of-two sizes ([`in_parts`]),
//! at most nine shapes of a statement per connection, which keeps each connection's memory
//! bounded whatever group sizes come.

use diesel::backend::Backend;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::Untyped;
use diesel::{QueryResult, RunQueryDsl};

/// The values of one row.
pub(crate) trait BindValues<DB: Backend> {
    /// Pushes the row's values as bind parameters, separated by `, `.
    fn push_binds<'b>(&'b self, out: &mut AstPass<'_, 'b, DB>) -> QueryResult<()>;
}

/// `{head} VALUES (row), (row), ... {tail}`.
pub(crate) struct MultiRow<'a, R> {
    pub(crate) head: &'static str,
    pub(crate) rows: &'a [R],
    pub(crate) tail: &'static str,
}

impl<DB, R> QueryFragment<DB> for MultiRow<'_, R>
where
    DB: Backend,
    R: BindValues<DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql(self.head);
        out.push_sql(" VALUES ");
        for (at, row) in self.rows.iter().enumerate() {
            if at > 0 {
                out.push_sql(", ");
            }
            out.push_sql("(");
            row.push_binds(&mut out)?;
            out.push_sql(")");
        }
        if !self.tail.is_empty() {
            out.push_sql(" ");
            out.push_sql(self.tail);
        }
        Ok(())
    }
}

impl<R> QueryId for MultiRow<'_, R> {
    type QueryId = ();
    // The text depends on the row count: diesel keys its cache by the text instead.
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<R> Query for MultiRow<'_, R> {
    type SqlType = Untyped;
}

impl<R, Conn> RunQueryDsl<Conn> for MultiRow<'_, R> {}

/// `rows` in parts whose sizes are powers of two, largest first (23 rows: 16, 4, 2, 1).
pub(crate) fn in_parts<T>(rows: &[T]) -> impl Iterator<Item = &[T]> {
    let mut rest = rows;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let size = 1 << rest.len().ilog2();
        let (part, after) = rest.split_at(size);
        rest = after;
        Some(part)
    })
}

#[cfg(test)]
mod tests {
    use super::in_parts;

    #[test]
    fn parts_are_powers_of_two_largest_first_and_cover_every_row_once() {
        let sizes = |n: usize| -> Vec<usize> {
            let rows: Vec<usize> = (0..n).collect();
            let parts: Vec<&[usize]> = in_parts(&rows).collect();
            assert_eq!(parts.concat(), rows, "{n} rows");
            parts.iter().map(|part| part.len()).collect()
        };
        assert_eq!(sizes(0), Vec::<usize>::new());
        assert_eq!(sizes(1), [1]);
        assert_eq!(sizes(23), [16, 4, 2, 1]);
        assert_eq!(sizes(256), [256]);
        assert_eq!(sizes(255), [128, 64, 32, 16, 8, 4, 2, 1]);
    }
}
