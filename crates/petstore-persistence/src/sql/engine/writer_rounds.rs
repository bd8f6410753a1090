//! How the writer thread takes its work off its one queue, a round at a time: the creates
//! queued (stored together as one group), the writes queued that share a commit (run together
//! in one transaction after the creates) and the other write transactions queued (run one by
//! one after those), each kind in the order it was queued.
//!
//! A round holds at most [`Limits::creates`] creates, [`Limits::shared`] writes that share a
//! commit and [`Limits::jobs`] other writes. The first request that does not fit waits, at the
//! head of the queue, for the next round, so the queue's order holds across rounds: a write of
//! one kind waits behind at most one round of the others, however many of them keep coming.
//! All the requests of a round were waiting at the same time (none was answered before another
//! was asked), so running the kinds one after the other breaks no order a client could see.

use super::queue::{Queued, Receiver};

/// A request on the writer's queue.
#[derive(Debug)]
pub(crate) enum Write<C, J> {
    /// A create, stored with the others of its round in one transaction.
    Create(C),
    /// A write that shares one transaction and its commit with the others of its round.
    Shared(J),
    /// Another write transaction, run on its own.
    Job(J),
}

/// Most requests of each kind one round takes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) creates: usize,
    pub(crate) shared: usize,
    pub(crate) jobs: usize,
}

/// What the writer does in one round, each kind in queue order.
#[derive(Debug)]
pub(crate) struct Round<C, J> {
    pub(crate) creates: Vec<Queued<C>>,
    pub(crate) shared: Vec<Queued<J>>,
    pub(crate) jobs: Vec<Queued<J>>,
}

impl<C, J> Round<C, J> {
    fn has_room_for(&self, write: &Write<C, J>, limits: Limits) -> bool {
        match write {
            Write::Create(_) => self.creates.len() < limits.creates,
            Write::Shared(_) => self.shared.len() < limits.shared,
            Write::Job(_) => self.jobs.len() < limits.jobs,
        }
    }

    fn push(&mut self, queued: Queued<Write<C, J>>) {
        let (write, span) = queued.into_parts();
        match write {
            Write::Create(create) => self.creates.push(Queued::from_parts(create, span)),
            Write::Shared(job) => self.shared.push(Queued::from_parts(job, span)),
            Write::Job(job) => self.jobs.push(Queued::from_parts(job, span)),
        }
    }
}

/// The writer's queue, read a round at a time.
pub(crate) struct Rounds<C, J> {
    queue: Receiver<Write<C, J>>,
    limits: Limits,
    /// The request the last round had no room for: the first of the next.
    next: Option<Queued<Write<C, J>>>,
}

impl<C, J> Rounds<C, J> {
    pub(crate) fn new(queue: Receiver<Write<C, J>>, limits: Limits) -> Self {
        Self {
            queue,
            limits: Limits {
                creates: limits.creates.max(1),
                shared: limits.shared.max(1),
                jobs: limits.jobs.max(1),
            },
            next: None,
        }
    }

    /// Waits for a request, then takes every one queued behind it until one does not fit;
    /// `None` once every sender is gone and nothing is left.
    pub(crate) fn next_round(&mut self) -> Option<Round<C, J>> {
        let first = match self.next.take() {
            Some(first) => first,
            None => self.queue.blocking_recv()?,
        };
        let mut round = Round {
            creates: Vec::new(),
            shared: Vec::new(),
            jobs: Vec::new(),
        };
        round.push(first);
        while let Ok(queued) = self.queue.try_recv() {
            if !round.has_room_for(&queued.request, self.limits) {
                self.next = Some(queued);
                break;
            }
            round.push(queued);
        }
        Some(round)
    }
}

#[cfg(test)]
mod tests {
    use tokio::sync::mpsc;

    use super::*;

    type Queue = (mpsc::Sender<Queued<Write<u32, char>>>, Rounds<u32, char>);

    fn queue(creates: usize, jobs: usize) -> Queue {
        queue_sharing(creates, 8, jobs)
    }

    fn queue_sharing(creates: usize, shared: usize, jobs: usize) -> Queue {
        let (sender, receiver) = mpsc::channel(64);
        let limits = Limits {
            creates,
            shared,
            jobs,
        };
        (sender, Rounds::new(receiver, limits))
    }

    fn send(sender: &mpsc::Sender<Queued<Write<u32, char>>>, writes: Vec<Write<u32, char>>) {
        for write in writes {
            sender
                .try_send(Queued::new(write))
                .expect("room in the queue");
        }
    }

    fn contents(round: &Round<u32, char>) -> (Vec<u32>, Vec<char>) {
        (
            round.creates.iter().map(|queued| queued.request).collect(),
            round.jobs.iter().map(|queued| queued.request).collect(),
        )
    }

    #[test]
    fn a_round_takes_everything_queued_each_kind_in_queue_order() {
        let (sender, mut rounds) = queue(8, 8);
        send(
            &sender,
            vec![
                Write::Create(1),
                Write::Job('a'),
                Write::Create(2),
                Write::Job('b'),
                Write::Create(3),
            ],
        );
        let round = rounds.next_round().expect("a round");
        assert_eq!(contents(&round), (vec![1, 2, 3], vec!['a', 'b']));
    }

    #[test]
    fn other_writes_past_a_rounds_share_wait_behind_the_next_group_of_creates() {
        let (sender, mut rounds) = queue(8, 2);
        send(
            &sender,
            vec![
                Write::Job('a'),
                Write::Job('b'),
                Write::Job('c'),
                Write::Create(1),
                Write::Job('d'),
            ],
        );
        let first = rounds.next_round().expect("a first round");
        assert_eq!(contents(&first), (vec![], vec!['a', 'b']));
        // The create queued behind `c` is stored before anything queued after it.
        let second = rounds.next_round().expect("a second round");
        assert_eq!(contents(&second), (vec![1], vec!['c', 'd']));
    }

    #[test]
    fn creates_past_a_group_wait_for_the_next_round_and_keep_their_order() {
        let (sender, mut rounds) = queue(2, 8);
        send(
            &sender,
            vec![
                Write::Create(1),
                Write::Create(2),
                Write::Create(3),
                Write::Job('a'),
                Write::Create(4),
            ],
        );
        let first = rounds.next_round().expect("a first round");
        assert_eq!(contents(&first), (vec![1, 2], vec![]));
        let second = rounds.next_round().expect("a second round");
        assert_eq!(contents(&second), (vec![3, 4], vec!['a']));
    }

    #[test]
    fn writes_that_share_a_commit_gather_apart_from_those_that_run_alone() {
        let (sender, mut rounds) = queue_sharing(8, 2, 8);
        send(
            &sender,
            vec![
                Write::Shared('s'),
                Write::Job('a'),
                Write::Create(1),
                Write::Shared('t'),
                Write::Shared('u'),
                Write::Job('b'),
            ],
        );
        let first = rounds.next_round().expect("a first round");
        let shared = |round: &Round<u32, char>| -> Vec<char> {
            round.shared.iter().map(|queued| queued.request).collect()
        };
        assert_eq!(contents(&first), (vec![1], vec!['a']));
        assert_eq!(shared(&first), ['s', 't']);
        // The third shared write waits for the next round, and what was queued behind it too.
        let second = rounds.next_round().expect("a second round");
        assert_eq!(contents(&second), (vec![], vec!['b']));
        assert_eq!(shared(&second), ['u']);
    }

    #[test]
    fn the_rounds_end_once_every_sender_is_gone_and_nothing_is_left() {
        let (sender, mut rounds) = queue(1, 1);
        send(&sender, vec![Write::Create(1), Write::Create(2)]);
        drop(sender);
        assert_eq!(contents(&rounds.next_round().expect("a round")).0, vec![1]);
        assert_eq!(contents(&rounds.next_round().expect("a round")).0, vec![2]);
        assert!(rounds.next_round().is_none());
    }
}
