//! `RetrySchedule`: when a delivery's attempts are made, and when it is given up on.

use std::time::Duration;

/// The wait before each attempt of a delivery: the first entry before the first attempt (after
/// the event), each next one after the attempt before it failed. A delivery has as many
/// attempts as entries; when the last fails, the delivery has failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetrySchedule(Vec<Duration>);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RetryScheduleError {
    #[error("a retry schedule has 1 to {max} entries (got {actual})")]
    Length { max: usize, actual: usize },
    #[error("a retry schedule's waits are at most a day each (entry {position} is longer)")]
    TooLong { position: usize },
}

impl RetrySchedule {
    pub const MAX_ENTRIES: usize = 20;
    const MAX_WAIT: Duration = Duration::from_secs(24 * 60 * 60);

    pub fn parse(waits: Vec<Duration>) -> Result<Self, RetryScheduleError> {
        if waits.is_empty() || waits.len() > Self::MAX_ENTRIES {
            return Err(RetryScheduleError::Length {
                max: Self::MAX_ENTRIES,
                actual: waits.len(),
            });
        }
        if let Some(position) = waits.iter().position(|&wait| wait > Self::MAX_WAIT) {
            return Err(RetryScheduleError::TooLong {
                position: position + 1,
            });
        }
        Ok(Self(waits))
    }

    /// How many attempts a delivery gets.
    pub fn attempts(&self) -> u32 {
        u32::try_from(self.0.len()).unwrap_or(u32::MAX)
    }

    /// The wait after `attempts_made` failed attempts before the next one; `None` when that was
    /// the last attempt.
    pub fn wait_after(&self, attempts_made: u32) -> Option<Duration> {
        self.0.get(usize::try_from(attempts_made).ok()?).copied()
    }

    pub fn waits(&self) -> &[Duration] {
        &self.0
    }
}

impl Default for RetrySchedule {
    /// Immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h after each failure: eight
    /// attempts over about 27 and a half hours.
    fn default() -> Self {
        const MINUTE: u64 = 60;
        const HOUR: u64 = 60 * MINUTE;
        Self(
            [
                0,
                5,
                5 * MINUTE,
                30 * MINUTE,
                2 * HOUR,
                5 * HOUR,
                10 * HOUR,
                10 * HOUR,
            ]
            .into_iter()
            .map(Duration::from_secs)
            .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_default_makes_eight_attempts_over_a_day_and_more() {
        let schedule = RetrySchedule::default();
        assert_eq!(schedule.attempts(), 8);
        assert_eq!(schedule.wait_after(0), Some(Duration::ZERO));
        assert_eq!(schedule.wait_after(1), Some(Duration::from_secs(5)));
        assert_eq!(schedule.wait_after(7), Some(Duration::from_secs(36_000)));
        assert_eq!(schedule.wait_after(8), None);
        let total: Duration = schedule.waits().iter().sum();
        assert_eq!(total, Duration::from_secs(99_305));
    }

    #[test]
    fn a_schedule_has_one_to_twenty_waits_of_at_most_a_day() {
        assert!(RetrySchedule::parse(vec![]).is_err());
        assert!(RetrySchedule::parse(vec![Duration::ZERO; 21]).is_err());
        assert_eq!(
            RetrySchedule::parse(vec![Duration::ZERO, Duration::from_secs(86_401)]),
            Err(RetryScheduleError::TooLong { position: 2 })
        );
        let short = RetrySchedule::parse(vec![Duration::ZERO, Duration::from_millis(100)]);
        assert_eq!(short.unwrap().attempts(), 2);
    }
}
