//! The webhook benchmark's figures and the table they print as: createPet beside deliveries
//! against createPet alone (medians of the pairs, each pair's ratio listed), and the drain.

use std::fmt::Write as _;
use std::time::Duration;

use petstore_test_support::Backend;

use crate::wrk::Measured;

/// One pair of createPet runs back to back on one server.
#[derive(Debug)]
pub struct Pair {
    /// No endpoint registered: nothing is delivered.
    pub alone: Measured,
    /// One endpoint subscribed to `pet.created`: every create is delivered.
    pub subscribed: Measured,
    /// Deliveries that succeeded during the subscribed run.
    pub delivered_during: u64,
}

impl Pair {
    /// Subscribed over alone rate.
    fn ratio(&self) -> f64 {
        self.subscribed.per_second() / self.alone.per_second()
    }
}

/// A backlog made by a createPet load and drained after it.
#[derive(Debug)]
pub struct Drain {
    /// Pets created by the load, [`CONNECTIONS`](crate::CONNECTIONS) at a time, each one
    /// `pet.created` event.
    pub events: u64,
    pub load_seconds: f64,
    pub delivered_during_load: u64,
    /// Events not yet delivered when the load ended.
    pub backlog: u64,
    /// Deliveries that succeeded after the load ended, within the drain window.
    pub drained: u64,
    /// From the load's end to the last delivery seen (or the window's end).
    pub seconds: f64,
    /// The mean time of the drain's attempts to their answer's head, as the server measured
    /// it: the rest of a delivery's time is the server's own (claiming, recording).
    pub mean_attempt: Option<Duration>,
}

impl Drain {
    fn per_second(&self) -> f64 {
        self.drained as f64 / self.seconds
    }
}

/// Everything measured on one backend.
#[derive(Debug)]
pub struct BackendFigures {
    pub backend: Backend,
    pub pairs: Vec<Pair>,
    pub drain: Drain,
}

fn label(backend: Backend) -> &'static str {
    match backend {
        Backend::Memory => "memory",
        Backend::Sqlite => "SQLite",
        Backend::Postgres => "PostgreSQL",
    }
}

/// The median of `values` (the upper one of an even count); 0 for none.
fn median(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut sorted: Vec<f64> = values.into_iter().collect();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or_default()
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1_000.0
}

/// The longest of `durations`, in milliseconds.
fn longest<'a>(durations: impl IntoIterator<Item = &'a Duration>) -> f64 {
    durations.into_iter().max().map_or(0.0, |max| ms(*max))
}

/// Both tables, in Markdown.
pub fn table(figures: &[BackendFigures]) -> String {
    let mut out = String::from(
        "createPet at 64 connections on one server, one endpoint subscribed to `pet.created` \
         against none, back to back (median of the pairs; ratio subscribed / none, each pair):\n\n\
         | backend | pairs | none req/s | subscribed req/s | ratio | ratio of each pair | \
         p99 ms none / subscribed | max ms none / subscribed | deliveries/s beside the load |\n\
         |---|---:|---:|---:|---:|---|---:|---:|---:|\n",
    );
    for of in figures {
        let pairs = &of.pairs;
        let ratios: Vec<f64> = pairs.iter().map(Pair::ratio).collect();
        let each = ratios
            .iter()
            .map(|ratio| format!("{ratio:.2}"))
            .collect::<Vec<_>>()
            .join(", ");
        let _ = writeln!(
            out,
            "| {} | {} | {:.0} | {:.0} | {:.2} | {each} | {:.1} / {:.1} | {:.0} / {:.0} | {:.0} |",
            label(of.backend),
            pairs.len(),
            median(pairs.iter().map(|pair| pair.alone.per_second())),
            median(pairs.iter().map(|pair| pair.subscribed.per_second())),
            median(ratios.iter().copied()),
            median(pairs.iter().map(|pair| ms(pair.alone.p99))),
            median(pairs.iter().map(|pair| ms(pair.subscribed.p99))),
            longest(pairs.iter().map(|pair| &pair.alone.max)),
            longest(pairs.iter().map(|pair| &pair.subscribed.max)),
            median(
                pairs
                    .iter()
                    .map(|pair| pair.delivered_during as f64 / pair.subscribed.seconds)
            ),
        );
    }
    out.push_str(
        "\nOne endpoint's backlog, made by createPet 64 at a time and drained after it to a \
         receiver that answers 204 at once (attempt: the server's mean time to the answer's \
         head):\n\n\
         | backend | events | delivered during the load | backlog at its end | drained | \
         seconds | deliveries/s draining | attempt ms |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for of in figures {
        let drain = &of.drain;
        let left = drain.backlog.saturating_sub(drain.drained);
        let drained = if left == 0 {
            format!("{}", drain.drained)
        } else {
            format!("{} ({left} left)", drain.drained)
        };
        let _ = writeln!(
            out,
            "| {} | {} in {:.1} s | {} | {} | {drained} | {:.1} | {:.0} | {} |",
            label(of.backend),
            drain.events,
            drain.load_seconds,
            drain.delivered_during_load,
            drain.backlog,
            drain.seconds,
            drain.per_second(),
            drain
                .mean_attempt
                .map_or_else(|| "-".to_owned(), |mean| format!("{:.1}", ms(mean))),
        );
    }
    out
}
