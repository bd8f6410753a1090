//! What the store posts to an endpoint, for the OpenAPI 3.1 document's `webhooks` section: the
//! request body (an event as the feed has it, or a ping) and the Standard Webhooks headers a
//! receiver verifies. The 3.0 document, which has no such section, keeps the schemas.

use utoipa::openapi::path::{
    HttpMethod, OperationBuilder, ParameterBuilder, ParameterIn, PathItem, Paths, PathsBuilder,
};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Schema, Type};
use utoipa::openapi::{ContentBuilder, Ref, RefOr, Required};
use utoipa::{PartialSchema, ToSchema};

/// The name of the one webhook the document describes.
const WEBHOOK: &str = "webhookEvent";

/// The test event `pingWebhookEndpoint` sends (documentation only).
pub(crate) struct PingEventDto;

impl PartialSchema for PingEventDto {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .description(Some(
                "The test event of `pingWebhookEndpoint`: never in the feed, its `data` the \
                 endpoint's id.",
            ))
            .property(
                "id",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .pattern(Some("^evt_[0-9a-f]{32}$")),
            )
            .required("id")
            .property(
                "type",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .enum_values(Some(["webhook.ping"])),
            )
            .required("type")
            .property(
                "timestamp",
                ObjectBuilder::new().schema_type(Type::String).format(Some(
                    utoipa::openapi::SchemaFormat::KnownFormat(
                        utoipa::openapi::KnownFormat::DateTime,
                    ),
                )),
            )
            .required("timestamp")
            .property(
                "payloadVersion",
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .enum_values(Some([petstore_domain::EVENT_PAYLOAD_VERSION])),
            )
            .required("payloadVersion")
            .property(
                "data",
                ObjectBuilder::new()
                    .property(
                        "endpointId",
                        ObjectBuilder::new()
                            .schema_type(Type::Integer)
                            .minimum(Some(1)),
                    )
                    .required("endpointId"),
            )
            .required("data")
            .examples([serde_json::json!({
                "id": "evt_0b9d3c1e8f7a4b2c9d0e1f2a3b4c5d6e",
                "type": "webhook.ping",
                "timestamp": "2026-11-27T09:14:21.512Z",
                "payloadVersion": petstore_domain::EVENT_PAYLOAD_VERSION,
                "data": {"endpointId": 1},
            })])
            .into()
    }
}

impl ToSchema for PingEventDto {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("WebhookPing")
    }
}

fn header(name: &str, pattern: &str, description: &str) -> utoipa::openapi::path::Parameter {
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Header)
        .required(Required::True)
        .schema(Some(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some(pattern)),
        ))
        .description(Some(description))
        .build()
}

/// The `webhooks` section: one POST, what every delivery is.
pub(crate) fn section() -> Paths {
    let mut body = OneOfBuilder::new().description(Some(
        "An event exactly as `listEvents` answers it, or a ping.",
    ));
    for schema in ["PetEvent", "OrderEvent", "CategoryEvent", "WebhookPing"] {
        body = body.item(Ref::from_schema_name(schema));
    }
    let operation = OperationBuilder::new()
        .operation_id(Some(WEBHOOK))
        .tag("webhooks")
        .summary(Some("An event, posted to a webhook endpoint"))
        .description(Some(
            "Posted to each enabled endpoint whose `eventTypes` include the event's type, \
             signed per Standard Webhooks 1.0: verify `webhook-signature` (`v1,` and the \
             base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` keyed with the \
             base64-decoded part of the secret after `whsec_`; during a rotation two entries, \
             separated by a space) and reject a timestamp far from now. Delivered at least \
             once: the same event keeps its `webhook-id` on every attempt, so a receiver drops \
             repeats by it. Answer 2xx within 15 s; anything else (redirects too) is a failure, \
             retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h.",
        ))
        .parameter(header(
            "webhook-id",
            "^evt_[0-9a-f]{32}$",
            "The event's id: the same on every attempt and for every endpoint.",
        ))
        .parameter(header(
            "webhook-timestamp",
            "^[0-9]+$",
            "When this attempt was signed, in seconds since the Unix epoch.",
        ))
        .parameter(header(
            "webhook-signature",
            "^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)?$",
            "`v1,<signature>`, one per secret in use, space-separated.",
        ))
        .request_body(Some(
            RequestBodyBuilder::new()
                .content(
                    "application/json",
                    ContentBuilder::new().schema(Some(body)).build(),
                )
                .required(Some(Required::True))
                .build(),
        ))
        // The receiver checks the signature, not a key of ours: no security scheme applies.
        .securities(Some(
            Vec::<utoipa::openapi::security::SecurityRequirement>::new(),
        ))
        .response(
            "200",
            ResponseBuilder::new()
                .description("Any 2xx within 15 s acknowledges the delivery.")
                .build(),
        )
        .build();
    PathsBuilder::new()
        .path(WEBHOOK, PathItem::new(HttpMethod::Post, operation))
        .build()
}
