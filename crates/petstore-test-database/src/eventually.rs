//! Waiting for what the service does in its own time (a log thread's line, a probe's recovery,
//! a process's exit): the one poll every suite uses, so a test waits exactly as long as it must
//! and a failure says what it waited for and what it saw last.
//!
//! A condition answers `Ok(value)` once it holds and `Err(observation)` until then; the
//! observation is what the failure message shows.

use std::fmt::Debug;
use std::time::{Duration, Instant};

/// When to give up: a time from now (a [`Duration`]), or an [`Instant`] for a bound that counts
/// from an earlier event (a signal sent, a key revoked).
#[derive(Debug, Clone, Copy)]
pub struct Deadline(Instant);

impl From<Duration> for Deadline {
    fn from(within: Duration) -> Self {
        Self(Instant::now() + within)
    }
}

impl From<Instant> for Deadline {
    fn from(at: Instant) -> Self {
        Self(at)
    }
}

/// Checks `condition` until it holds and returns what it produced; panics once `deadline` has
/// passed, naming `what` was awaited and the last observation. A condition that holds at once
/// returns even with no time left, so `Duration::ZERO` means "right now".
pub async fn eventually<T, O: Debug>(
    deadline: impl Into<Deadline>,
    what: &str,
    mut condition: impl AsyncFnMut() -> Result<T, O>,
) -> T {
    let poll = Poll::new(deadline.into());
    loop {
        match condition().await {
            Ok(value) => return value,
            Err(seen) => tokio::time::sleep(poll.pause_or_give_up(what, &seen)).await,
        }
    }
}

/// [`eventually`] for a test without a runtime: sleeps the thread between checks.
pub fn eventually_blocking<T, O: Debug>(
    deadline: impl Into<Deadline>,
    what: &str,
    mut condition: impl FnMut() -> Result<T, O>,
) -> T {
    let poll = Poll::new(deadline.into());
    loop {
        match condition() {
            Ok(value) => return value,
            Err(seen) => std::thread::sleep(poll.pause_or_give_up(what, &seen)),
        }
    }
}

struct Poll {
    started: Instant,
    deadline: Instant,
    /// A hundredth of the time given: when a condition came true is known to about 1 % of its
    /// budget, and an expensive check (a scrape, a `psql`) is not repeated needlessly often.
    every: Duration,
}

impl Poll {
    fn new(Deadline(deadline): Deadline) -> Self {
        let started = Instant::now();
        let budget = deadline.saturating_duration_since(started);
        Self {
            started,
            deadline,
            every: (budget / 100).clamp(Duration::from_millis(1), Duration::from_millis(50)),
        }
    }

    /// How long to wait before the next check (never past the deadline, so the last check is
    /// made at it); panics once the deadline has passed.
    fn pause_or_give_up(&self, what: &str, seen: &impl Debug) -> Duration {
        let now = Instant::now();
        assert!(
            now < self.deadline,
            "gave up after {:?} waiting for {what}; last seen: {seen:?}",
            now - self.started
        );
        self.every.min(self.deadline - now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// Counts up by one at every check: holds from the third.
    fn counter() -> impl FnMut() -> Result<u32, u32> {
        let checks = Cell::new(0);
        move || {
            checks.set(checks.get() + 1);
            if checks.get() >= 3 {
                Ok(checks.get())
            } else {
                Err(checks.get())
            }
        }
    }

    #[tokio::test]
    async fn returns_what_the_condition_produced_once_it_holds() {
        let mut count = counter();
        let value = eventually(Duration::from_secs(5), "the third check", async || count()).await;
        assert_eq!(value, 3);
    }

    #[tokio::test]
    #[should_panic(expected = "waiting for a thousand checks; last seen: ")]
    async fn gives_up_at_the_deadline_with_the_last_observation() {
        let checks = Cell::new(0);
        eventually(Duration::from_millis(30), "a thousand checks", async || {
            checks.set(checks.get() + 1);
            Err::<(), _>(checks.get())
        })
        .await;
    }

    #[tokio::test]
    async fn a_condition_that_holds_at_once_needs_no_time() {
        let past = Instant::now() - Duration::from_secs(1);
        assert_eq!(
            eventually(past, "nothing", async || Ok::<_, ()>(7)).await,
            7
        );
    }

    #[test]
    fn blocking_returns_what_the_condition_produced_once_it_holds() {
        assert_eq!(
            eventually_blocking(Duration::from_secs(5), "the third check", counter()),
            3
        );
    }

    #[test]
    #[should_panic(expected = "waiting for a condition that never holds; last seen: \"no\"")]
    fn blocking_gives_up_at_the_deadline_with_the_last_observation() {
        eventually_blocking(
            Duration::from_millis(30),
            "a condition that never holds",
            || Err::<(), _>("no"),
        );
    }
}
