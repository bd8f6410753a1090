//! The events resource: `listEvents` on `/v1/events`, the feed of every change in commit order;
//! its DTOs, parameters, route and part of the OpenAPI document ([`EventsApi`]). Any key reads
//! it, and sees the pet and category events and the order events of the orders it may see.
//!
//! An event carries its resource as the resource's own operations answer it. Those
//! representations belong to their resources, which this one does not import: the app hands
//! them in as [`Payloads`].

mod body;
mod dto;
mod handlers;
mod params;

use actix_web::http::Method;
use petstore_domain::{Category, KeyScope, Order, Pet};
use utoipa::OpenApi;

use crate::routing::common_responses::CommonResponses;
use crate::routing::table::{Access, Operation, Routes};
pub(crate) use body::JsonEventBodies;
use dto::{CategoryEventDto, EventDto, OrderEventDto, PetEventDto};

/// listEvents.
const EVENTS_PATH: &str = "/v1/events";

/// A resource written as JSON, kept as written (its members in its own order).
pub(crate) type Payload = Box<serde_json::value::RawValue>;

/// How each resource is written in an event's `data`: as its own operations answer it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Payloads {
    pub(crate) pet: fn(Pet) -> Payload,
    pub(crate) order: fn(Order) -> Payload,
    pub(crate) category: fn(Category) -> Payload,
}

/// The feed's operation and schemas, with the responses all operations share.
#[derive(OpenApi)]
#[openapi(
    paths(handlers::list_events),
    components(schemas(EventDto, PetEventDto, OrderEventDto, CategoryEventDto)),
    modifiers(&CommonResponses),
)]
pub(crate) struct EventsApi;

/// The feed's operation: the router, the metrics' labels and which paths need a key read it
/// from here.
pub(crate) static ROUTES: Routes = Routes {
    operations: &[Operation {
        id: "listEvents",
        method: Method::GET,
        path: EVENTS_PATH,
        access: Access::Key(KeyScope::Read),
        handler: |route| route.to(handlers::list_events),
    }],
    every_response_header: None,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_lives_under_the_version_prefix() {
        assert!(EVENTS_PATH.starts_with(&format!("{}/", crate::BASE_PATH)));
    }
}
