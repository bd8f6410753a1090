//! The outbox: a change's events, written in the change's own transaction, so the change and
//! its events commit together or not at all. A resource hands its events over with their
//! payload already in its own stored form ([`NewEvent::data`]); the feed (`sql/events/`) reads
//! them back.

use diesel::backend::Backend;
use diesel::prelude::*;
use diesel::query_builder::AstPass;
use diesel::result::Error as DieselError;
use diesel::serialize::ToSql;
use diesel::sql_types::{BigInt, HasSqlType, Nullable, Text};
use petstore_domain::{EventType, KeyId};

use super::connection::AnyConnection;
use super::errors::ScrubbedMessage;
use super::multi_row::{in_parts, BindValues, MultiRow};
use crate::event_stamp::{count_written, new_event_ids, now_ms};

/// Who may read an order event besides the staff, as stored: the placing key's id, or `""`
/// for an order placed before orders had owners (the staff only). Other events store `NULL`:
/// every key reads them.
pub(crate) fn order_audience(placed_by: Option<&KeyId>) -> String {
    placed_by.map_or_else(String::new, |key| key.as_str().to_owned())
}

/// `row` as an event's payload.
pub(crate) fn payload(row: &impl serde::Serialize) -> QueryResult<String> {
    serde_json::to_string(row).map_err(|error| DieselError::SerializationError(Box::new(error)))
}

/// One event to write.
#[derive(Debug, Clone)]
pub(crate) struct NewEvent {
    pub(crate) event_type: EventType,
    /// [`order_audience`] for an order's event, `None` for the others.
    pub(crate) order_audience: Option<String>,
    /// The resource after the change, as JSON in its resource's stored form.
    pub(crate) data: String,
}

/// A [`NewEvent`] with its id and time.
struct EventValues {
    id: String,
    event_type: EventType,
    occurred_at: i64,
    order_audience: Option<String>,
    data: String,
}

/// Writes `events`, in order, into the open transaction of `conn`.
pub(crate) fn append(conn: &mut AnyConnection, events: Vec<NewEvent>) -> QueryResult<()> {
    if events.is_empty() {
        return Ok(());
    }
    let occurred_at = now_ms();
    let ids = new_event_ids(events.len()).map_err(|error| {
        DieselError::SerializationError(Box::new(ScrubbedMessage(error.to_string())))
    })?;
    let rows: Vec<EventValues> = events
        .into_iter()
        .zip(ids)
        .map(|(event, id)| EventValues {
            id: id.as_str().to_owned(),
            event_type: event.event_type,
            occurred_at,
            order_audience: event.order_audience,
            data: event.data,
        })
        .collect();
    for part in in_parts(&rows) {
        let insert = MultiRow {
            head: "INSERT INTO events (id, type, occurred_at, order_audience, data)",
            rows: part,
            tail: "",
        };
        match conn {
            AnyConnection::Postgresql(pg) => insert.execute(pg),
            AnyConnection::Sqlite(sqlite) => insert.execute(sqlite),
        }?;
    }
    for row in &rows {
        count_written(row.event_type);
    }
    Ok(())
}

impl<DB> BindValues<DB> for EventValues
where
    DB: Backend + HasSqlType<Text> + HasSqlType<BigInt>,
    str: ToSql<Text, DB>,
    i64: ToSql<BigInt, DB>,
    Option<String>: ToSql<Nullable<Text>, DB>,
{
    fn push_binds<'b>(&'b self, out: &mut AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_bind_param::<Text, str>(&self.id)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, str>(self.event_type.as_str())?;
        out.push_sql(", ");
        out.push_bind_param::<BigInt, i64>(&self.occurred_at)?;
        out.push_sql(", ");
        out.push_bind_param::<Nullable<Text>, Option<String>>(&self.order_audience)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, str>(&self.data)
    }
}
