//! `DeliveryService::fan_out_round`: which events it reads, how it renders them and what it
//! hands the queue.

use petstore_domain::{
    Category, CategoryId, CategoryName, Event, EventSubject, EventType, FeedEntry, FeedPosition,
    VisibleOrders,
};

use super::deliver::settings;
use super::*;
use crate::events::{FeedRead, FeedReadError, MockEventFeed};
use crate::RepositoryError;

fn entry(sequence: i64, event_type: EventType) -> FeedEntry {
    let category = Category::new(
        CategoryId::parse(sequence).unwrap(),
        CategoryName::parse("Dogs").unwrap(),
    );
    FeedEntry {
        position: FeedPosition::new(3, sequence),
        event: Event::new(
            event_id(u8::try_from(sequence).unwrap()),
            event_type,
            NOW_MS - 1_000 + sequence,
            EventSubject::Category(category),
        )
        .unwrap(),
    }
}

/// The body the mocked renderer makes of an event: its sequence, so that each event's body is
/// its own.
fn body_of(event: &Event) -> Vec<u8> {
    format!("{{\"at\":{}}}", event.occurred_at_ms()).into_bytes()
}

fn fanned(entry: &FeedEntry) -> FannedEvent {
    FannedEvent {
        position: entry.position,
        event_id: entry.event.id().clone(),
        event_type: entry.event.event_type(),
        occurred_at_ms: entry.event.occurred_at_ms(),
        body: body_of(&entry.event),
    }
}

fn rendering_each_once(times: usize) -> MockEventBody {
    let mut bodies = MockEventBody::new();
    bodies.expect_event().times(times).returning(body_of);
    bodies
}

fn service(
    feed: MockEventFeed,
    queue: MockDeliveryQueue,
    bodies: MockEventBody,
) -> DeliveryService {
    DeliveryService::new(
        Arc::new(feed),
        Arc::new(queue),
        Arc::new(MockSecretVault::new()),
        Arc::new(bodies),
        Arc::new(MockWebhookSender::new()),
        clock(),
        settings(),
    )
}

fn stored_at(position: Option<FeedPosition>) -> MockDeliveryQueue {
    let mut queue = MockDeliveryQueue::new();
    queue
        .expect_fanned_out_to()
        .times(1)
        .returning(move || Ok(position));
    queue
}

/// [`stored_at`] a position, with enabled endpoints taking `types` (`None`: no endpoint).
fn subscribed(position: FeedPosition, types: Option<EventTypes>) -> MockDeliveryQueue {
    let mut queue = stored_at(Some(position));
    queue
        .expect_subscribed_types()
        .times(1)
        .returning(move || Ok(types));
    queue
}

/// A feed whose head (the newest readable event) is `head`.
fn feed_at(head: FeedPosition) -> MockEventFeed {
    let mut feed = MockEventFeed::new();
    feed.expect_head()
        .times(1)
        .returning(move || Ok(Some(head)));
    feed
}

#[tokio::test]
async fn a_round_reads_every_event_after_the_position_and_fans_each_out_rendered_once() {
    let read = vec![
        entry(5, EventType::CategoryCreated),
        entry(6, EventType::CategoryUpdated),
        entry(7, EventType::CategoryRemoved),
    ];
    let expected: Vec<FannedEvent> = read.iter().map(fanned).collect();
    let mut feed = feed_at(FeedPosition::new(3, 7));
    feed.expect_read()
        .withf(|query| {
            query.after == Some(FeedPosition::new(3, 4))
                && query.types == EventTypes::EVERY
                && query.visible == VisibleOrders::All
                && query.max == settings().fan_out_batch
        })
        .times(1)
        .return_once(move |_| {
            Ok(FeedRead {
                entries: read,
                after: FeedPosition::new(3, 4),
            })
        });
    let mut queue = subscribed(FeedPosition::new(3, 4), Some(EventTypes::EVERY));
    queue
        .expect_fan_out()
        .withf(move |from, to, events, now_ms| {
            *from == Some(FeedPosition::new(3, 4))
                && *to == FeedPosition::new(3, 7)
                && *events == expected
                && *now_ms == NOW_MS
        })
        .times(1)
        .returning(|_, _, _, _| Ok(true));

    let count = service(feed, queue, rendering_each_once(3))
        .fan_out_round()
        .await
        .unwrap();
    assert_eq!(count, 3);
}

#[tokio::test]
async fn a_first_round_starts_at_the_feeds_head_and_delivers_no_history() {
    let mut feed = MockEventFeed::new();
    feed.expect_head()
        .times(1)
        .returning(|| Ok(Some(FeedPosition::new(3, 9))));
    feed.expect_read().never();
    let mut queue = stored_at(None);
    queue
        .expect_fan_out()
        .withf(|from, to, events, _| {
            from.is_none() && *to == FeedPosition::new(3, 9) && events.is_empty()
        })
        .times(1)
        .returning(|_, _, _, _| Ok(true));

    let count = service(feed, queue, rendering_each_once(0))
        .fan_out_round()
        .await
        .unwrap();
    assert_eq!(count, 0);
}

#[tokio::test]
async fn a_first_round_on_an_empty_feed_starts_before_every_event() {
    let mut feed = MockEventFeed::new();
    feed.expect_head().times(1).returning(|| Ok(None));
    let mut queue = stored_at(None);
    queue
        .expect_fan_out()
        .withf(|from, to, events, _| {
            from.is_none() && *to == FeedPosition::START && events.is_empty()
        })
        .times(1)
        .returning(|_, _, _, _| Ok(true));

    service(feed, queue, rendering_each_once(0))
        .fan_out_round()
        .await
        .unwrap();
}

#[tokio::test]
async fn an_empty_read_fans_nothing_out() {
    let mut feed = feed_at(FeedPosition::new(3, 4));
    feed.expect_read().times(1).returning(|_| {
        Ok(FeedRead {
            entries: Vec::new(),
            after: FeedPosition::new(3, 4),
        })
    });
    let mut queue = subscribed(FeedPosition::new(3, 4), Some(EventTypes::EVERY));
    queue.expect_fan_out().never();

    let count = service(feed, queue, rendering_each_once(0))
        .fan_out_round()
        .await
        .unwrap();
    assert_eq!(count, 0);
}

#[tokio::test]
async fn a_purged_position_restarts_from_the_oldest_event_kept() {
    let read = vec![
        entry(9, EventType::CategoryCreated),
        entry(10, EventType::CategoryRemoved),
    ];
    let expected: Vec<FannedEvent> = read.iter().map(fanned).collect();
    let mut feed = feed_at(FeedPosition::new(3, 10));
    feed.expect_read()
        .withf(|query| query.after == Some(FeedPosition::new(3, 4)))
        .times(1)
        .returning(|_| Err(FeedReadError::Gone));
    feed.expect_read()
        .withf(|query| query.after.is_none() && query.visible == VisibleOrders::All)
        .times(1)
        .return_once(move |_| {
            Ok(FeedRead {
                entries: read,
                after: FeedPosition::new(3, 8),
            })
        });
    let mut queue = subscribed(FeedPosition::new(3, 4), Some(EventTypes::EVERY));
    // The position moves from where it was stored: another instance may have moved it first.
    queue
        .expect_fan_out()
        .withf(move |from, to, events, _| {
            *from == Some(FeedPosition::new(3, 4))
                && *to == FeedPosition::new(3, 10)
                && *events == expected
        })
        .times(1)
        .returning(|_, _, _, _| Ok(true));

    let count = service(feed, queue, rendering_each_once(2))
        .fan_out_round()
        .await
        .unwrap();
    assert_eq!(count, 2);
}

#[tokio::test]
async fn a_feed_failure_fans_nothing_out_and_is_passed_on() {
    let mut feed = feed_at(FeedPosition::new(3, 9));
    feed.expect_read().times(1).returning(|_| {
        Err(FeedReadError::Repository(RepositoryError::Unavailable(
            "pool timed out".into(),
        )))
    });
    let mut queue = subscribed(FeedPosition::new(3, 4), Some(EventTypes::EVERY));
    queue.expect_fan_out().never();

    let err = service(feed, queue, rendering_each_once(0))
        .fan_out_round()
        .await
        .unwrap_err();
    assert!(matches!(err, RepositoryError::Unavailable(_)), "{err}");
}

#[tokio::test]
async fn without_an_enabled_endpoint_nothing_is_read_and_the_position_moves_to_the_head() {
    let mut feed = feed_at(FeedPosition::new(3, 40));
    feed.expect_read().never();
    let mut queue = subscribed(FeedPosition::new(3, 4), None);
    queue
        .expect_fan_out()
        .withf(|from, to, events, _| {
            *from == Some(FeedPosition::new(3, 4))
                && *to == FeedPosition::new(3, 40)
                && events.is_empty()
        })
        .times(1)
        .returning(|_, _, _, _| Ok(true));

    let count = service(feed, queue, rendering_each_once(0))
        .fan_out_round()
        .await
        .unwrap();
    assert_eq!(count, 0);
}

#[tokio::test]
async fn only_the_subscribed_types_are_read_and_a_short_read_moves_to_the_head() {
    let read = vec![entry(6, EventType::CategoryCreated)];
    let expected: Vec<FannedEvent> = read.iter().map(fanned).collect();
    let categories = EventTypes::parse_list("category.*").unwrap();
    let mut feed = feed_at(FeedPosition::new(3, 30));
    feed.expect_read()
        .withf(move |query| query.types == categories)
        .times(1)
        .return_once(move |_| {
            Ok(FeedRead {
                entries: read,
                after: FeedPosition::new(3, 4),
            })
        });
    let mut queue = subscribed(FeedPosition::new(3, 4), Some(categories));
    queue
        .expect_fan_out()
        .withf(move |_, to, events, _| *to == FeedPosition::new(3, 30) && *events == expected)
        .times(1)
        .returning(|_, _, _, _| Ok(true));

    let count = service(feed, queue, rendering_each_once(1))
        .fan_out_round()
        .await
        .unwrap();
    assert_eq!(count, 1);
}
