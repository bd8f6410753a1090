//! `ChunkedLog`: a sequence added to at the back and taken from at the front, kept in chunks of
//! a fixed capacity. A single buffer of millions of items is copied whole each time it grows;
//! the memory store grows its event log under the lock every request takes, so each doubling
//! held every request up for as long as the copy took. A chunk is allocated full size once and
//! never grows, so adding an item never moves the ones kept.

use std::collections::VecDeque;

/// Items, oldest first, in chunks of at most `chunk_len`. No chunk is ever empty.
#[derive(Debug)]
pub(super) struct ChunkedLog<T> {
    chunks: VecDeque<VecDeque<T>>,
    chunk_len: usize,
}

impl<T> Default for ChunkedLog<T> {
    fn default() -> Self {
        Self::with_chunk_len(Self::CHUNK_LEN)
    }
}

impl<T> ChunkedLog<T> {
    /// Items a chunk holds: a copy of a chunk's worth is short, and the chunks' own list stays
    /// small beside the items.
    const CHUNK_LEN: usize = 4096;

    pub(super) fn with_chunk_len(chunk_len: usize) -> Self {
        Self {
            chunks: VecDeque::new(),
            chunk_len: chunk_len.max(1),
        }
    }

    pub(super) fn push_back(&mut self, item: T) {
        // A chunk's front may have been taken, so the last chunk can have room even after it
        // once filled; its buffer is `chunk_len` long either way, so it does not grow.
        match self.chunks.back_mut() {
            Some(last) if last.len() < self.chunk_len => last.push_back(item),
            _ => {
                let mut chunk = VecDeque::with_capacity(self.chunk_len);
                chunk.push_back(item);
                self.chunks.push_back(chunk);
            }
        }
    }

    pub(super) fn front(&self) -> Option<&T> {
        self.chunks.front().and_then(VecDeque::front)
    }

    pub(super) fn back(&self) -> Option<&T> {
        self.chunks.back().and_then(VecDeque::back)
    }

    pub(super) fn pop_front(&mut self) -> Option<T> {
        let first = self.chunks.front_mut()?;
        let item = first.pop_front();
        if first.is_empty() {
            self.chunks.pop_front();
        }
        item
    }

    /// The items after the leading run for which `before` holds, in order. `before` must hold
    /// for a prefix of the items and for none after it (as "at or before a position" does for
    /// items kept in position order): the run is found by binary search, not read through.
    pub(super) fn after<'a>(
        &'a self,
        before: impl Fn(&T) -> bool,
    ) -> impl Iterator<Item = &'a T> + 'a {
        let chunk = self
            .chunks
            .partition_point(|chunk| chunk.back().is_some_and(&before));
        let within = self
            .chunks
            .get(chunk)
            .map_or(0, |first| first.partition_point(&before));
        self.chunks
            .range(chunk..)
            .enumerate()
            .flat_map(move |(index, items)| items.range(if index == 0 { within } else { 0 }..))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(chunk_len: usize, items: impl IntoIterator<Item = u32>) -> ChunkedLog<u32> {
        let mut log = ChunkedLog::with_chunk_len(chunk_len);
        for item in items {
            log.push_back(item);
        }
        log
    }

    fn after(log: &ChunkedLog<u32>, last_seen: u32) -> Vec<u32> {
        log.after(|item| *item <= last_seen).copied().collect()
    }

    #[test]
    fn keeps_items_in_order_across_chunks() {
        let log = log(3, 1..=10);
        assert_eq!(after(&log, 0), (1..=10).collect::<Vec<_>>());
        assert_eq!(log.front(), Some(&1));
        assert_eq!(log.back(), Some(&10));
    }

    #[test]
    fn reads_after_any_item_whichever_chunk_it_is_in() {
        let log = log(3, 1..=10);
        for last_seen in 0..=10 {
            assert_eq!(
                after(&log, last_seen),
                (last_seen + 1..=10).collect::<Vec<_>>()
            );
        }
        assert!(after(&log, 99).is_empty());
    }

    #[test]
    fn taking_from_the_front_frees_chunks_and_keeps_the_rest_readable() {
        let mut log = log(3, 1..=7);
        for expected in 1..=4 {
            assert_eq!(log.pop_front(), Some(expected));
        }
        assert_eq!(log.chunks.len(), 2, "the first chunk, emptied, is dropped");
        assert_eq!(log.front(), Some(&5));
        assert_eq!(after(&log, 0), vec![5, 6, 7]);
        assert_eq!(after(&log, 5), vec![6, 7]);
        log.push_back(8);
        log.push_back(9);
        assert_eq!(after(&log, 6), vec![7, 8, 9]);
    }

    #[test]
    fn a_chunk_never_grows_past_its_length() {
        let mut log = log(2, 1..=2);
        assert_eq!(log.pop_front(), Some(1));
        log.push_back(3);
        log.push_back(4);
        assert!(log.chunks.iter().all(|chunk| chunk.len() <= 2));
        assert_eq!(after(&log, 0), vec![2, 3, 4]);
    }

    #[test]
    fn an_emptied_log_starts_again() {
        let mut log = log(2, 1..=3);
        while log.pop_front().is_some() {}
        assert!(log.front().is_none() && log.back().is_none());
        assert!(after(&log, 0).is_empty());
        log.push_back(4);
        assert_eq!(after(&log, 0), vec![4]);
    }
}
