//! The webhooks resource, the store's staff's (a `store` key): endpoints on
//! `/v1/webhook-endpoints` (list, create, get, change by JSON Merge Patch, delete, rotate the
//! signing secret, ping) and each endpoint's deliveries (list, get, retry); their DTOs,
//! parameters, routes and part of the OpenAPI document ([`WebhooksApi`]). The deliveries
//! themselves are made by the server's worker, not here.

mod dto;
mod handlers;
mod params;
mod posted;

use actix_web::http::Method;
use petstore_domain::{DeliveryId, EndpointId, KeyScope};
use utoipa::OpenApi;

use crate::idempotency::openapi::IdempotentPosts;
use crate::routing::common_responses::CommonResponses;
use crate::routing::table::{Access, Operation, Routes};
use dto::{
    AttemptDto, DeliveryDto, DeliveryStatusDto, EndpointDto, EndpointPatchDto,
    EndpointWithSecretDto, NewEndpointDto, RotatedSecretDto,
};
pub(crate) use posted::section as posted_section;
use posted::PingEventDto;

/// listWebhookEndpoints and createWebhookEndpoint.
const ENDPOINTS_PATH: &str = "/v1/webhook-endpoints";
const ENDPOINT_PATH: &str = "/v1/webhook-endpoints/{endpointId}";
const ROTATE_PATH: &str = "/v1/webhook-endpoints/{endpointId}/rotate-secret";
const PING_PATH: &str = "/v1/webhook-endpoints/{endpointId}/ping";
const DELIVERIES_PATH: &str = "/v1/webhook-endpoints/{endpointId}/deliveries";
const DELIVERY_PATH: &str = "/v1/webhook-endpoints/{endpointId}/deliveries/{deliveryId}";
const RETRY_PATH: &str = "/v1/webhook-endpoints/{endpointId}/deliveries/{deliveryId}/retry";

fn endpoint_path(id: EndpointId) -> String {
    format!("{ENDPOINTS_PATH}/{id}")
}

fn deliveries_path(endpoint: EndpointId) -> String {
    format!("{ENDPOINTS_PATH}/{endpoint}/deliveries")
}

fn delivery_path(endpoint: EndpointId, id: DeliveryId) -> String {
    format!("{ENDPOINTS_PATH}/{endpoint}/deliveries/{id}")
}

/// The webhook operations and schemas, with the responses all operations share.
#[derive(OpenApi)]
#[openapi(
    paths(
        handlers::list_endpoints,
        handlers::create_endpoint,
        handlers::get_endpoint,
        handlers::update_endpoint,
        handlers::delete_endpoint,
        handlers::rotate_secret,
        handlers::ping,
        handlers::list_deliveries,
        handlers::get_delivery,
        handlers::retry_delivery,
    ),
    components(schemas(
        EndpointDto,
        EndpointWithSecretDto,
        NewEndpointDto,
        EndpointPatchDto,
        RotatedSecretDto,
        DeliveryDto,
        DeliveryStatusDto,
        AttemptDto,
        PingEventDto,
    )),
    modifiers(&IdempotentPosts, &CommonResponses),
)]
pub(crate) struct WebhooksApi;

const fn store(
    id: &'static str,
    method: Method,
    path: &'static str,
    handler: fn(actix_web::Route) -> actix_web::Route,
) -> Operation {
    Operation {
        id,
        method,
        path,
        access: Access::Key(KeyScope::Store),
        handler,
    }
}

/// The webhook operations: the router, the metrics' labels and which paths need a key read
/// them from here.
pub(crate) static ROUTES: Routes = Routes {
    operations: &[
        store(
            "listWebhookEndpoints",
            Method::GET,
            ENDPOINTS_PATH,
            |route| route.to(handlers::list_endpoints),
        ),
        store(
            "createWebhookEndpoint",
            Method::POST,
            ENDPOINTS_PATH,
            |route| route.to(handlers::create_endpoint),
        ),
        store("getWebhookEndpoint", Method::GET, ENDPOINT_PATH, |route| {
            route.to(handlers::get_endpoint)
        }),
        store(
            "updateWebhookEndpoint",
            Method::PATCH,
            ENDPOINT_PATH,
            |route| route.to(handlers::update_endpoint),
        ),
        store(
            "deleteWebhookEndpoint",
            Method::DELETE,
            ENDPOINT_PATH,
            |route| route.to(handlers::delete_endpoint),
        ),
        store("rotateWebhookSecret", Method::POST, ROTATE_PATH, |route| {
            route.to(handlers::rotate_secret)
        }),
        store("pingWebhookEndpoint", Method::POST, PING_PATH, |route| {
            route.to(handlers::ping)
        }),
        store(
            "listWebhookDeliveries",
            Method::GET,
            DELIVERIES_PATH,
            |route| route.to(handlers::list_deliveries),
        ),
        store("getWebhookDelivery", Method::GET, DELIVERY_PATH, |route| {
            route.to(handlers::get_delivery)
        }),
        store("retryWebhookDelivery", Method::POST, RETRY_PATH, |route| {
            route.to(handlers::retry_delivery)
        }),
    ],
    every_response_header: None,
};

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// A create's replay answers 201 without the secret, under the same documented schema.
    #[test]
    fn the_create_answer_schema_does_not_require_the_secret() {
        let document = serde_json::to_value(WebhooksApi::openapi()).unwrap();
        let schema = &document["components"]["schemas"]["WebhookEndpointWithSecret"];
        let parts = schema["allOf"].as_array().unwrap();
        assert!(parts
            .iter()
            .any(|part| part["properties"]["secret"].is_object()));
        for part in parts {
            let required = part["required"].as_array().cloned().unwrap_or_default();
            assert!(!required.contains(&serde_json::json!("secret")), "{schema}");
        }
    }

    #[test]
    fn the_paths_live_under_the_version_prefix_and_agree() {
        assert!(ENDPOINTS_PATH.starts_with(&format!("{}/", crate::BASE_PATH)));
        let (endpoint, delivery) = (EndpointId::parse(7).unwrap(), DeliveryId::parse(9).unwrap());
        assert_eq!(
            endpoint_path(endpoint),
            ENDPOINT_PATH.replace("{endpointId}", "7")
        );
        assert_eq!(
            delivery_path(endpoint, delivery),
            DELIVERY_PATH
                .replace("{endpointId}", "7")
                .replace("{deliveryId}", "9")
        );
        assert_eq!(
            deliveries_path(endpoint),
            DELIVERIES_PATH.replace("{endpointId}", "7")
        );
        for path in [ROTATE_PATH, PING_PATH] {
            assert!(path.starts_with(ENDPOINT_PATH));
        }
        assert!(RETRY_PATH.starts_with(DELIVERY_PATH));
    }
}
