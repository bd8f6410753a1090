//! How every listing knows whether another page follows: it reads one row more than the page
//! holds, and that row, when it comes, is cut off here.

/// Cuts `rows`, read with one row more than `limit`, to `limit`, and says where the next page
/// starts: after the last row kept, or nowhere (`None`) when nothing was cut.
pub(crate) fn cut_page<T, Id>(
    rows: &mut Vec<T>,
    limit: usize,
    id: impl Fn(&T) -> Id,
) -> Option<Id> {
    if rows.len() <= limit {
        return None;
    }
    rows.truncate(limit);
    rows.last().map(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extra_row_is_cut_and_the_next_page_starts_after_the_last_kept() {
        let mut rows = vec![1, 2, 3];
        assert_eq!(cut_page(&mut rows, 2, |row| *row), Some(2));
        assert_eq!(rows, [1, 2]);

        let mut rows = vec![1, 2];
        assert_eq!(cut_page(&mut rows, 2, |row| *row), None);
        assert_eq!(rows, [1, 2]);
    }
}
