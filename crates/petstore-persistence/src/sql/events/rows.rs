//! An event as stored, and back into the domain: its payload is its resource's row as JSON,
//! read with that resource's own row type.

use diesel::sql_types::{BigInt, Text};
use diesel::QueryableByName;
use petstore_application::RepositoryError;
use petstore_domain::{Event, EventId, EventSubject, EventType, FeedEntry, FeedPosition};

use crate::sql::categories::CategoryRow;
use crate::sql::engine::errors::ScrubbedMessage;
use crate::sql::orders::repository::OrderRow;
use crate::sql::pets::pet_row::PetRow;

/// The columns a feed read selects (`type` as `event_type`).
pub(super) const SELECTED: &str =
    "commit_position, sequence, id, type AS event_type, occurred_at, data";

#[derive(Debug, QueryableByName)]
pub(super) struct EventRow {
    #[diesel(sql_type = BigInt)]
    commit_position: i64,
    #[diesel(sql_type = BigInt)]
    sequence: i64,
    #[diesel(sql_type = Text)]
    id: String,
    #[diesel(sql_type = Text)]
    event_type: String,
    #[diesel(sql_type = BigInt)]
    occurred_at: i64,
    #[diesel(sql_type = Text)]
    data: String,
}

impl EventRow {
    pub(super) fn into_entry(self) -> Result<FeedEntry, RepositoryError> {
        let sequence = self.sequence;
        let corrupt = |what: &str| {
            RepositoryError::Unexpected(Box::new(ScrubbedMessage(format!(
                "stored event {sequence} has an invalid {what}"
            ))))
        };
        let event_type = EventType::parse(&self.event_type).map_err(|_| corrupt("type"))?;
        let subject = match event_type.resource() {
            "pet" => EventSubject::Pet(
                serde_json::from_str::<PetRow>(&self.data)
                    .map_err(|_| corrupt("pet"))?
                    .into_pet()?,
            ),
            "order" => EventSubject::Order(
                serde_json::from_str::<OrderRow>(&self.data)
                    .map_err(|_| corrupt("order"))?
                    .into_order()?,
            ),
            _ => EventSubject::Category(
                serde_json::from_str::<CategoryRow>(&self.data)
                    .map_err(|_| corrupt("category"))?
                    .into_category()?,
            ),
        };
        let id = EventId::parse(&self.id).map_err(|_| corrupt("id"))?;
        let event = Event::new(id, event_type, self.occurred_at, subject)
            .map_err(|_| corrupt("payload"))?;
        Ok(FeedEntry {
            position: FeedPosition::new(self.commit_position, self.sequence),
            event,
        })
    }
}
