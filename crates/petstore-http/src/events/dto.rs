//! The feed's body: each event as `{"id", "type", "timestamp", "payloadVersion", "data"}`, its
//! `data` the resource after the change, written as that resource's own operations answer it.
//! The document describes an event per resource (`PetEvent`, `OrderEvent`, `CategoryEvent`),
//! told apart by `type`.

use std::time::{Duration, UNIX_EPOCH};

use petstore_domain::{Event, EventSubject, EventType, FeedEntry, EVENT_PAYLOAD_VERSION};
use serde::Serialize;
use utoipa::openapi::schema::{
    Discriminator, KnownFormat, ObjectBuilder, OneOfBuilder, Schema, SchemaFormat, Type,
};
use utoipa::openapi::{Ref, RefOr};
use utoipa::{PartialSchema, ToSchema};

use super::{Payload, Payloads};

/// One event as the feed answers it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EventDto {
    id: String,
    #[serde(rename = "type")]
    event_type: &'static str,
    timestamp: String,
    payload_version: u32,
    data: Payload,
}

impl EventDto {
    pub(crate) fn of(entry: FeedEntry, payloads: &Payloads) -> Self {
        Self::of_event(entry.event, payloads)
    }

    /// The event as the feed answers it, and as a webhook delivers it.
    pub(crate) fn of_event(event: Event, payloads: &Payloads) -> Self {
        let at =
            UNIX_EPOCH + Duration::from_millis(u64::try_from(event.occurred_at_ms()).unwrap_or(0));
        Self {
            id: event.id().as_str().to_owned(),
            event_type: event.event_type().as_str(),
            timestamp: humantime::format_rfc3339_millis(at).to_string(),
            payload_version: EVENT_PAYLOAD_VERSION,
            data: match event.subject().clone() {
                EventSubject::Pet(pet) => (payloads.pet)(pet),
                EventSubject::Order(order) => (payloads.order)(order),
                EventSubject::Category(category) => (payloads.category)(category),
            },
        }
    }
}

/// An example of an event about `resource` (`data` an example of the resource).
fn example(resource: &str) -> serde_json::Value {
    let (event_type, data) = match resource {
        "pet" => (
            "pet.updated",
            serde_json::json!({"id": 3, "name": "Rex", "categoryId": 1, "status": "sold"}),
        ),
        "order" => (
            "order.placed",
            serde_json::json!({"id": 4737615245817339_i64, "petId": 3, "quantity": 1,
                "shipDate": null, "status": "placed", "complete": false}),
        ),
        _ => (
            "category.created",
            serde_json::json!({"id": 3, "name": "Dogs"}),
        ),
    };
    serde_json::json!({
        "id": "evt_5f0c2a9e41b7d3866e1a0f4c9b2d7e31",
        "type": event_type,
        "timestamp": "2026-11-27T09:14:21.512Z",
        "payloadVersion": EVENT_PAYLOAD_VERSION,
        "data": data,
    })
}

/// The resources an event can be about: the schema of each one's events, and its `data`.
const RESOURCES: [(&str, &str, &str); 3] = [
    ("pet", "PetEvent", "Pet"),
    ("order", "OrderEvent", "Order"),
    ("category", "CategoryEvent", "Category"),
];

/// The schema of the events about `resource`, whose `data` is the schema `data`.
fn event_schema(resource: &str, data: &str) -> Schema {
    let types: Vec<&str> = EventType::ALL
        .into_iter()
        .filter(|kind| kind.resource() == resource)
        .map(EventType::as_str)
        .collect();
    ObjectBuilder::new()
        .description(Some(format!(
            "A change of a {resource}: `data` is the {resource} as it was right after it, as \
             the {resource}'s own operations answer it (a removed one as it was when removed)."
        )))
        .property(
            "id",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some("^evt_[0-9a-f]{32}$"))
                .description(Some(
                    "Unique; random, so it says nothing about how many changes others made. \
                     The same event keeps its id wherever it is delivered.",
                )),
        )
        .required("id")
        .property(
            "type",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some(types))
                .description(Some("What happened.")),
        )
        .required("type")
        .property(
            "timestamp",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
                .description(Some(
                    "When the change was written (RFC 3339, UTC, milliseconds).",
                )),
        )
        .required("timestamp")
        .property(
            "payloadVersion",
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .enum_values(Some([EVENT_PAYLOAD_VERSION]))
                .description(Some(
                    "The version of this shape. A change a reader could misread comes with a \
                     new version.",
                )),
        )
        .required("payloadVersion")
        .property("data", Ref::from_schema_name(data))
        .required("data")
        .examples([example(resource)])
        .into()
}

macro_rules! event_schema_of {
    ($dto:ident, $at:expr) => {
        /// The schema of one resource's events (documentation only).
        pub(crate) struct $dto;

        impl PartialSchema for $dto {
            fn schema() -> RefOr<Schema> {
                let (resource, _, data) = RESOURCES[$at];
                event_schema(resource, data).into()
            }
        }

        impl ToSchema for $dto {
            fn name() -> std::borrow::Cow<'static, str> {
                std::borrow::Cow::Borrowed(RESOURCES[$at].1)
            }
        }
    };
}

event_schema_of!(PetEventDto, 0);
event_schema_of!(OrderEventDto, 1);
event_schema_of!(CategoryEventDto, 2);

impl PartialSchema for EventDto {
    fn schema() -> RefOr<Schema> {
        let mut discriminator = Discriminator::new("type");
        for kind in EventType::ALL {
            let (_, schema, _) = RESOURCES
                .into_iter()
                .find(|(resource, _, _)| *resource == kind.resource())
                .unwrap_or(RESOURCES[0]);
            discriminator.mapping.insert(
                kind.as_str().to_owned(),
                format!("#/components/schemas/{schema}"),
            );
        }
        let mut one_of = OneOfBuilder::new()
            .description(Some(
                "One change in the feed. `type` tells which resource `data` is, and what \
                 happened to it.",
            ))
            .discriminator(Some(discriminator))
            .examples([example("pet")]);
        for (_, schema, _) in RESOURCES {
            one_of = one_of.item(Ref::from_schema_name(schema));
        }
        one_of.into()
    }
}

impl ToSchema for EventDto {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("Event")
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use petstore_domain::{
        CategoryId, Event, EventId, FeedPosition, Pet, PetId, PetName, PetStatus, PetVersion,
    };
    use serde_json::json;

    use super::*;

    fn payloads() -> Payloads {
        Payloads {
            pet: |pet| {
                serde_json::value::to_raw_value(
                    &json!({"id": pet.id().get(), "name": pet.name().as_str()}),
                )
                .unwrap()
            },
            order: |_| serde_json::value::to_raw_value("an order").unwrap(),
            category: |_| serde_json::value::to_raw_value("a category").unwrap(),
        }
    }

    #[test]
    fn an_event_is_written_with_its_resource_as_the_resource_writes_it() {
        let pet = Pet::restore(
            PetId::new(7),
            PetName::parse("Rex").unwrap(),
            CategoryId::parse(1).unwrap(),
            PetStatus::Available,
            PetVersion::parse(1).unwrap(),
        );
        let entry = FeedEntry {
            position: FeedPosition::new(0, 1),
            event: Event::new(
                EventId::from_random([0xab; 16]),
                EventType::PetCreated,
                1_795_000_000_123,
                EventSubject::Pet(pet),
            )
            .unwrap(),
        };
        assert_eq!(
            serde_json::to_value(EventDto::of(entry, &payloads())).unwrap(),
            json!({
                "id": format!("evt_{}", "ab".repeat(16)),
                "type": "pet.created",
                "timestamp": "2026-11-18T11:06:40.123Z",
                "payloadVersion": 1,
                "data": {"id": 7, "name": "Rex"}
            })
        );
    }

    #[test]
    fn every_type_maps_to_the_schema_of_its_resource() {
        let schema = serde_json::to_value(EventDto::schema()).unwrap();
        let mapping = &schema["discriminator"]["mapping"];
        assert_eq!(
            mapping["order.delivered"],
            "#/components/schemas/OrderEvent"
        );
        assert_eq!(
            mapping["category.removed"],
            "#/components/schemas/CategoryEvent"
        );
        assert_eq!(mapping.as_object().unwrap().len(), EventType::ALL.len());
    }
}
