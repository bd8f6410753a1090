#![allow(clippy::unwrap_used)]

use std::time::{Duration, UNIX_EPOCH};

use petstore_domain::{
    CategoryId, Event, EventId, EventSubject, EventType, KeyId, KeyScope, Pet, PetId, PetName,
    PetStatus, PetVersion, VisibleOrders,
};

use super::*;
use crate::clock::MockClock;

fn entry(sequence: i64) -> FeedEntry {
    let pet = Pet::restore(
        PetId::new(sequence),
        PetName::parse("Rex").unwrap(),
        CategoryId::parse(1).unwrap(),
        PetStatus::Available,
        PetVersion::parse(1).unwrap(),
    );
    FeedEntry {
        position: FeedPosition::new(0, sequence),
        event: Event::new(
            EventId::from_random([1; 16]),
            EventType::PetCreated,
            sequence,
            EventSubject::Pet(pet),
        )
        .unwrap(),
    }
}

fn key(digit: char) -> KeyId {
    KeyId::parse(&digit.to_string().repeat(32)).unwrap()
}

fn clock_at(millis: u64) -> Arc<MockClock> {
    let mut clock = MockClock::new();
    clock
        .expect_now()
        .returning(move || UNIX_EPOCH + Duration::from_millis(millis));
    Arc::new(clock)
}

fn service(feed: MockEventFeed, retention: Duration) -> EventService {
    EventService::new(Arc::new(feed), clock_at(100_000), retention)
}

#[tokio::test]
async fn a_page_reads_one_more_and_continues_after_its_last_event() {
    let mut feed = MockEventFeed::new();
    feed.expect_read()
        .withf(|query| {
            query.after == Some(FeedPosition::new(0, 4))
                && query.max == 3
                && query.visible == VisibleOrders::PlacedBy(key('a'))
        })
        .returning(|_| {
            Ok(FeedRead {
                entries: vec![entry(5), entry(6), entry(7)],
                after: FeedPosition::new(0, 4),
            })
        });
    let page = service(feed, DEFAULT_EVENT_RETENTION)
        .list_events(
            &Caller::new(key('a'), KeyScope::Read),
            Some(FeedPosition::new(0, 4)),
            EventTypes::EVERY,
            PageLimit::parse(2).unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(page.events, [entry(5), entry(6)]);
    assert_eq!(page.next, FeedPosition::new(0, 6));
    assert!(page.more);
}

#[tokio::test]
async fn an_empty_page_continues_where_the_feed_started_and_staff_see_every_order() {
    let mut feed = MockEventFeed::new();
    feed.expect_read()
        .withf(|query| query.after.is_none() && query.visible == VisibleOrders::All)
        .returning(|_| {
            Ok(FeedRead {
                entries: Vec::new(),
                after: FeedPosition::new(0, 12),
            })
        });
    let page = service(feed, DEFAULT_EVENT_RETENTION)
        .list_events(
            &Caller::new(key('b'), KeyScope::Store),
            None,
            EventTypes::EVERY,
            PageLimit::DEFAULT,
        )
        .await
        .unwrap();
    assert!(page.events.is_empty());
    assert_eq!(page.next, FeedPosition::new(0, 12));
    assert!(!page.more);
}

#[tokio::test]
async fn a_purged_position_is_gone() {
    let mut feed = MockEventFeed::new();
    feed.expect_read().returning(|_| Err(FeedReadError::Gone));
    let refused = service(feed, DEFAULT_EVENT_RETENTION)
        .list_events(
            &Caller::new(key('c'), KeyScope::Read),
            Some(FeedPosition::new(0, 1)),
            EventTypes::EVERY,
            PageLimit::DEFAULT,
        )
        .await
        .unwrap_err();
    assert!(matches!(refused, EventError::Gone));
}

#[tokio::test]
async fn the_purge_deletes_what_is_older_than_the_retention() {
    let mut feed = MockEventFeed::new();
    feed.expect_purge()
        .withf(|before_ms, max| *before_ms == 40_000 && *max == 500)
        .returning(|_, _| Ok(500));
    let round = service(feed, Duration::from_secs(60))
        .purge_round(500)
        .await
        .unwrap();
    assert_eq!(
        round,
        PurgeRound {
            deleted: 500,
            full: true
        }
    );
}

#[tokio::test]
async fn the_lag_is_the_age_of_the_oldest_event_held_back() {
    let mut feed = MockEventFeed::new();
    feed.expect_held_back_since().returning(|| Ok(Some(97_500)));
    let lag = service(feed, DEFAULT_EVENT_RETENTION).lag().await.unwrap();
    assert_eq!(lag, Duration::from_millis(2_500));

    let mut feed = MockEventFeed::new();
    feed.expect_held_back_since().returning(|| Ok(None));
    let lag = service(feed, DEFAULT_EVENT_RETENTION).lag().await.unwrap();
    assert_eq!(lag, Duration::ZERO);
}
