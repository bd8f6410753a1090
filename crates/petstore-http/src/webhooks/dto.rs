//! The webhook resources' bodies: `WebhookEndpoint` as answered (with its `secret` on the first
//! answer of a create or rotation only), `NewWebhookEndpoint` and `WebhookEndpointPatch` as
//! taken (read by hand from the JSON object, so every unknown or bad member is named), and
//! `WebhookDelivery` with its attempts.

use std::time::{Duration, UNIX_EPOCH};

use petstore_application::webhooks::{
    CreatedEndpoint, EndpointChange, EndpointRequest, RotatedSecret,
};
use petstore_domain::{
    AddressPolicy, Attempt, Delivery, DeliveryStatus, EventType, EventTypes, WebhookEndpoint,
    WebhookUrl,
};
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::openapi::schema::{AdditionalProperties, ArrayBuilder, ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::ToSchema;

use crate::error::ApiError;

/// Milliseconds since the epoch as RFC 3339 in UTC with milliseconds.
fn timestamp(ms: i64) -> String {
    let at = UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0));
    humantime::format_rfc3339_millis(at).to_string()
}

/// A webhook endpoint as the API returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = WebhookEndpoint, description = "Where the store posts its events, signed per \
    Standard Webhooks 1.0. Its signing secret is answered once, by the create and by each \
    rotation.", example = json!({"id": 1, "url": "https://hooks.example.com/petstore",
    "eventTypes": ["pet.created", "order.placed"], "enabled": true, "disabledReason": null,
    "createdAt": "2026-11-27T09:14:21.512Z", "updatedAt": "2026-11-27T09:14:21.512Z"}))]
pub(crate) struct EndpointDto {
    #[schema(minimum = 1)]
    id: i64,
    /// Where each event is posted: `https`, never an internal address.
    url: String,
    /// The event types posted to it.
    event_types: Vec<&'static str>,
    /// `false`: nothing is posted; pending deliveries were failed when it was disabled.
    enabled: bool,
    /// Why it is disabled: `manual` (a client) or `failing` (every attempt failed for 5 days).
    #[schema(value_type = Option<String>, nullable = true)]
    disabled_reason: Option<&'static str>,
    #[schema(format = DateTime)]
    created_at: String,
    #[schema(format = DateTime)]
    updated_at: String,
}

impl From<WebhookEndpoint> for EndpointDto {
    fn from(endpoint: WebhookEndpoint) -> Self {
        Self {
            id: endpoint.id.get(),
            url: endpoint.url.to_string(),
            event_types: endpoint.event_types.iter().map(EventType::as_str).collect(),
            enabled: endpoint.is_enabled(),
            disabled_reason: endpoint.disabled.map(|reason| reason.as_str()),
            created_at: timestamp(endpoint.created_at_ms),
            updated_at: timestamp(endpoint.updated_at_ms),
        }
    }
}

/// An endpoint with its new signing secret: the first answer of a create.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = WebhookEndpointWithSecret, example = json!({"id": 1,
    "url": "https://hooks.example.com/petstore", "eventTypes": ["pet.created"],
    "enabled": true, "disabledReason": null, "createdAt": "2026-11-27T09:14:21.512Z",
    "updatedAt": "2026-11-27T09:14:21.512Z",
    "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwXjJZKnbpE0U="}))]
pub(crate) struct EndpointWithSecretDto {
    #[serde(flatten)]
    endpoint: EndpointDto,
    /// `whsec_` and the base64 of 32 random bytes: verify each delivery's `webhook-signature`
    /// with it. Answered this once: a retry with the same `Idempotency-Key` gets the endpoint
    /// without it. Lost? Rotate it.
    // Not required in the schema: the replay's 201 is documented by this schema too.
    #[schema(pattern = "^whsec_[A-Za-z0-9+/]{43}=$", required = false)]
    secret: String,
}

impl EndpointWithSecretDto {
    pub(crate) fn of(created: &CreatedEndpoint) -> Self {
        Self {
            endpoint: EndpointDto::from(created.endpoint.clone()),
            secret: created.secret.expose().to_owned(),
        }
    }
}

/// A rotation's answer: the endpoint, the new secret (once) and until when the previous one
/// still signs.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = WebhookSecretRotation, example = json!({"endpoint": {"id": 1,
    "url": "https://hooks.example.com/petstore", "eventTypes": ["pet.created"],
    "enabled": true, "disabledReason": null, "createdAt": "2026-11-27T09:14:21.512Z",
    "updatedAt": "2026-11-28T10:00:00.000Z"},
    "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwXjJZKnbpE0U=",
    "previousSecretExpiresAt": "2026-11-29T10:00:00.000Z"}))]
pub(crate) struct RotatedSecretDto {
    endpoint: EndpointDto,
    /// The new secret; answered this once. A retry with the same `Idempotency-Key` gets the
    /// answer without it.
    #[schema(pattern = "^whsec_[A-Za-z0-9+/]{43}=$")]
    #[serde(skip_serializing_if = "Option::is_none")]
    secret: Option<String>,
    /// Until then each delivery is signed with both secrets (two `v1,` entries).
    #[schema(format = DateTime)]
    previous_secret_expires_at: String,
}

impl RotatedSecretDto {
    pub(crate) fn of(rotated: &RotatedSecret, with_secret: bool) -> Self {
        Self {
            endpoint: EndpointDto::from(rotated.endpoint.clone()),
            secret: with_secret.then(|| rotated.secret.expose().to_owned()),
            previous_secret_expires_at: timestamp(rotated.previous_expires_ms),
        }
    }
}

/// One attempt of a delivery.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = WebhookAttempt, example = json!({"number": 1, "at": "2026-11-27T09:14:21.900Z",
    "statusCode": 503, "latencyMs": 48, "error": "status"}))]
pub(crate) struct AttemptDto {
    /// 1 for the first.
    #[schema(minimum = 1)]
    number: u32,
    #[schema(format = DateTime)]
    at: String,
    /// The endpoint's status code, when an answer arrived.
    #[schema(nullable = true)]
    status_code: Option<u16>,
    latency_ms: u32,
    /// Why it failed (`null`: a 2xx): `dns`, `blocked_address`, `connect`, `tls`, `timeout`,
    /// `redirect`, `status`, `protocol`.
    #[schema(value_type = Option<String>, nullable = true)]
    error: Option<&'static str>,
}

impl From<Attempt> for AttemptDto {
    fn from(attempt: Attempt) -> Self {
        Self {
            number: attempt.number,
            at: timestamp(attempt.at_ms),
            status_code: attempt.status_code,
            latency_ms: attempt.latency_ms,
            error: attempt.error.map(|error| error.as_str()),
        }
    }
}

/// One event's delivery to one endpoint.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = WebhookDelivery, example = json!({"id": 7,
    "eventId": "evt_5f0c2a9e41b7d3866e1a0f4c9b2d7e31", "eventType": "pet.created",
    "status": "pending", "failure": null, "createdAt": "2026-11-27T09:14:21.600Z",
    "nextAttemptAt": "2026-11-27T09:14:26.900Z", "attempts": [{"number": 1,
    "at": "2026-11-27T09:14:21.900Z", "statusCode": 503, "latencyMs": 48,
    "error": "status"}]}))]
pub(crate) struct DeliveryDto {
    #[schema(minimum = 1)]
    id: i64,
    /// The event's id, sent as `webhook-id` on every attempt.
    event_id: String,
    /// The event's type, or `webhook.ping`.
    event_type: String,
    #[schema(value_type = DeliveryStatusDto)]
    status: &'static str,
    /// Why it failed: `exhausted` (its last attempt failed) or `endpoint_disabled`.
    #[schema(value_type = Option<String>, nullable = true)]
    failure: Option<&'static str>,
    #[schema(format = DateTime)]
    created_at: String,
    /// When the next attempt is due, while pending.
    #[schema(format = DateTime, nullable = true)]
    next_attempt_at: Option<String>,
    /// Oldest first.
    attempts: Vec<AttemptDto>,
}

impl From<Delivery> for DeliveryDto {
    fn from(delivery: Delivery) -> Self {
        Self {
            id: delivery.id.get(),
            event_id: delivery.event_id.as_str().to_owned(),
            event_type: delivery.event_type,
            status: delivery.status.as_str(),
            failure: delivery.failure.map(|failure| failure.as_str()),
            created_at: timestamp(delivery.created_at_ms),
            next_attempt_at: delivery.next_attempt_ms.map(timestamp),
            attempts: delivery
                .attempts
                .into_iter()
                .map(AttemptDto::from)
                .collect(),
        }
    }
}

/// The delivery statuses, in the order of their life.
const DELIVERY_STATUSES: [DeliveryStatus; 3] = [
    DeliveryStatus::Pending,
    DeliveryStatus::Succeeded,
    DeliveryStatus::Failed,
];

/// The schema of a delivery's `status`, answered and taken by listWebhookDeliveries' filter.
pub(crate) struct DeliveryStatusDto;

impl utoipa::PartialSchema for DeliveryStatusDto {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some(
                "Where a delivery stands: `pending` (an attempt is due), `succeeded` (an attempt \
                 was answered with a 2xx) or `failed` (given up on).",
            ))
            .enum_values(Some(DELIVERY_STATUSES.map(DeliveryStatus::as_str)))
            .examples([serde_json::json!("pending")])
            .into()
    }
}

impl ToSchema for DeliveryStatusDto {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("WebhookDeliveryStatus")
    }
}

/// What an `eventTypes` item may be, made from the event types themselves: a type, or `.*`
/// after a resource that has types.
fn event_type_pattern() -> String {
    let mut resources = EventType::ALL.map(EventType::resource).to_vec();
    resources.dedup();
    let one = resources
        .iter()
        .map(|resource| {
            let actions: Vec<&str> = EventType::ALL
                .into_iter()
                .filter(|kind| kind.resource() == *resource)
                .filter_map(|kind| kind.as_str().split_once('.').map(|(_, action)| action))
                .collect();
            format!("{resource}\\.(\\*|{})", actions.join("|"))
        })
        .collect::<Vec<_>>()
        .join("|");
    format!("^({one})$")
}

const URL_RULE: &str = "Where events are posted: an absolute `https` URL with a host, at most \
    2,048 bytes, without user name, password or fragment. Never `localhost` nor an internal \
    address (loopback, private, link-local, carrier-grade NAT, cloud metadata, or an IPv6 form \
    of one); a name is resolved at every delivery and each of its addresses checked then.";

const TYPES_RULE: &str = "The event types to post, each a type (`pet.created`) or every type \
    of a resource (`order.*`); at least one. Without it, every type there is now. A type \
    added to the API later is posted only to endpoints that list it.";

fn types_schema() -> ArrayBuilder {
    ArrayBuilder::new()
        .items(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some(event_type_pattern())),
        )
        .min_items(Some(1))
        .description(Some(TYPES_RULE))
}

/// The body of `createWebhookEndpoint`. Parsed by hand ([`NewEndpointDto::parse`]).
#[derive(Debug)]
pub(crate) struct NewEndpointDto;

impl utoipa::PartialSchema for NewEndpointDto {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .description(Some(
                "An endpoint to add. Members other than these are refused.",
            ))
            .property(
                "url",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .max_length(Some(WebhookUrl::MAX_BYTES))
                    .description(Some(URL_RULE)),
            )
            .required("url")
            .property("eventTypes", types_schema())
            .property(
                "enabled",
                ObjectBuilder::new()
                    .schema_type(Type::Boolean)
                    .description(Some("`false` adds it disabled. Default `true`.")),
            )
            .additional_properties(Some(AdditionalProperties::FreeForm(false)))
            .examples([
                serde_json::json!({"url": "https://hooks.example.com/petstore",
                "eventTypes": ["pet.*", "order.placed"]}),
            ])
            .into()
    }
}

impl ToSchema for NewEndpointDto {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("NewWebhookEndpoint")
    }
}

/// The body of `updateWebhookEndpoint`, a JSON Merge Patch. Parsed by hand.
#[derive(Debug)]
pub(crate) struct EndpointPatchDto;

impl utoipa::PartialSchema for EndpointPatchDto {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .description(Some(
                "A JSON Merge Patch (RFC 7396) of an endpoint: the members given are changed, \
                 the others kept; none may be `null`. `enabled: false` disables it (its \
                 pending deliveries fail as `endpoint_disabled`); `enabled: true` enables it \
                 again, also after the store disabled it for failing.",
            ))
            .property(
                "url",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .max_length(Some(WebhookUrl::MAX_BYTES))
                    .description(Some(URL_RULE)),
            )
            .property("eventTypes", types_schema())
            .property("enabled", ObjectBuilder::new().schema_type(Type::Boolean))
            .additional_properties(Some(AdditionalProperties::FreeForm(false)))
            .examples([serde_json::json!({"enabled": true})])
            .into()
    }
}

impl ToSchema for EndpointPatchDto {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("WebhookEndpointPatch")
    }
}

const FIELDS: [&str; 3] = ["url", "eventTypes", "enabled"];

/// The members a patch or a create reads, each parsed, with every problem named.
#[derive(Default)]
struct Members {
    url: Option<WebhookUrl>,
    event_types: Option<EventTypes>,
    enabled: Option<bool>,
    problems: Vec<String>,
}

fn read_members(fields: &Map<String, Value>, policy: AddressPolicy) -> Members {
    let mut members = Members::default();
    for name in fields
        .keys()
        .filter(|name| !FIELDS.contains(&name.as_str()))
    {
        members.problems.push(format!(
            "unknown field `{name}`; the fields are `url`, `eventTypes` and `enabled`"
        ));
    }
    match fields.get("url") {
        None => {}
        Some(Value::String(raw)) => match WebhookUrl::parse(raw, policy) {
            Ok(url) => members.url = Some(url),
            Err(error) => members.problems.push(format!("`url` {error}")),
        },
        Some(_) => members.problems.push("`url` must be a string".to_owned()),
    }
    match fields.get("eventTypes") {
        None => {}
        Some(Value::Array(items)) if !items.is_empty() => {
            let names: Option<Vec<&str>> = items.iter().map(Value::as_str).collect();
            match names.map(|names| EventTypes::parse_list(&names.join(","))) {
                Some(Ok(types)) if !names_have_commas(items) => members.event_types = Some(types),
                _ => members.problems.push(
                    "`eventTypes` must be event types (`pet.created`) or every type of a \
                     resource (`order.*`)"
                        .to_owned(),
                ),
            }
        }
        Some(_) => members
            .problems
            .push("`eventTypes` must be an array of at least one event type".to_owned()),
    }
    match fields.get("enabled") {
        None => {}
        Some(Value::Bool(enabled)) => members.enabled = Some(*enabled),
        Some(_) => members
            .problems
            .push("`enabled` must be true or false".to_owned()),
    }
    members
}

/// A name with a comma would be read as two by the list parser: refused as one bad name.
fn names_have_commas(items: &[Value]) -> bool {
    items
        .iter()
        .any(|item| item.as_str().is_some_and(|name| name.contains(',')))
}

impl NewEndpointDto {
    pub(crate) fn parse(
        fields: &Map<String, Value>,
        policy: AddressPolicy,
    ) -> Result<EndpointRequest, ApiError> {
        let mut members = read_members(fields, policy);
        if !fields.contains_key("url") {
            members.problems.push("`url` is required".to_owned());
        }
        match members.url {
            Some(url) if members.problems.is_empty() => Ok(EndpointRequest {
                url,
                event_types: members.event_types.unwrap_or(EventTypes::EVERY),
                enabled: members.enabled.unwrap_or(true),
            }),
            _ => Err(ApiError::validation(members.problems.join("; "))),
        }
    }
}

impl EndpointPatchDto {
    pub(crate) fn parse(
        fields: &Map<String, Value>,
        policy: AddressPolicy,
    ) -> Result<EndpointChange, ApiError> {
        let members = read_members(fields, policy);
        if members.problems.is_empty() {
            Ok(EndpointChange {
                url: members.url,
                event_types: members.event_types,
                enabled: members.enabled,
            })
        } else {
            Err(ApiError::validation(members.problems.join("; ")))
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;

    use super::*;

    const STRICT: AddressPolicy = AddressPolicy {
        allow_loopback: false,
    };

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    fn refusal<T: std::fmt::Debug>(result: Result<T, ApiError>) -> String {
        result.unwrap_err().message().to_owned()
    }

    #[test]
    fn the_documented_event_type_pattern_matches_exactly_the_types_a_create_takes() {
        let pattern = regex::Regex::new(&event_type_pattern()).unwrap();
        let wildcards = ["pet.*", "order.*", "category.*"];
        for name in EventType::ALL
            .map(EventType::as_str)
            .iter()
            .chain(&wildcards)
        {
            assert!(pattern.is_match(name), "{name}");
            assert!(EventTypes::parse_list(name).is_ok(), "{name}");
        }
        for name in [
            "pet.sold",
            "pet.a",
            "user.*",
            "pet.created,pet.removed",
            "pet.*x",
        ] {
            assert!(!pattern.is_match(name), "{name}");
            assert!(refusal(NewEndpointDto::parse(
                &object(json!({"url": "https://e.com/", "eventTypes": [name]})),
                STRICT
            ))
            .contains("`eventTypes`"));
        }
    }

    #[test]
    fn the_documented_delivery_statuses_are_the_ones_the_filter_takes() {
        for status in DELIVERY_STATUSES {
            assert_eq!(DeliveryStatus::parse(status.as_str()), Some(status));
        }
    }

    #[test]
    fn a_new_endpoint_takes_every_type_and_is_enabled_by_default() {
        let request =
            NewEndpointDto::parse(&object(json!({"url": "https://example.com/h"})), STRICT)
                .unwrap();
        assert_eq!(request.url.as_str(), "https://example.com/h");
        assert!(request.event_types.is_every());
        assert!(request.enabled);
        let picky = NewEndpointDto::parse(
            &object(
                json!({"url": "https://example.com/h", "eventTypes": ["order.*",
                "pet.created"], "enabled": false}),
            ),
            STRICT,
        )
        .unwrap();
        assert_eq!(
            picky.event_types,
            EventTypes::parse_list("pet.created,order.*").unwrap()
        );
        assert!(!picky.enabled);
    }

    #[test]
    fn every_bad_member_is_named() {
        let message = refusal(NewEndpointDto::parse(
            &object(
                json!({"url": "http://example.com", "eventTypes": ["pet.sold"],
                "enabled": "yes", "secret": "x"}),
            ),
            STRICT,
        ));
        assert!(message.contains("unknown field `secret`"), "{message}");
        assert!(message.contains("`url` must be an https URL"), "{message}");
        assert!(
            message.contains("`eventTypes` must be event types"),
            "{message}"
        );
        assert!(
            message.contains("`enabled` must be true or false"),
            "{message}"
        );
        assert!(refusal(NewEndpointDto::parse(&object(json!({})), STRICT))
            .contains("`url` is required"));
        assert!(refusal(NewEndpointDto::parse(
            &object(json!({"url": "https://169.254.169.254/"})),
            STRICT
        ))
        .contains("link-local"));
        assert!(refusal(NewEndpointDto::parse(
            &object(json!({"url": "https://e.com/", "eventTypes": []})),
            STRICT
        ))
        .contains("at least one"));
        assert!(refusal(NewEndpointDto::parse(
            &object(json!({"url": "https://e.com/", "eventTypes": ["pet.created,pet.removed"]})),
            STRICT
        ))
        .contains("`eventTypes`"));
    }

    #[test]
    fn a_patch_changes_only_what_it_names() {
        let change = EndpointPatchDto::parse(&object(json!({"enabled": true})), STRICT).unwrap();
        assert_eq!(
            change,
            EndpointChange {
                enabled: Some(true),
                ..EndpointChange::default()
            }
        );
        assert_eq!(
            EndpointPatchDto::parse(&object(json!({})), STRICT).unwrap(),
            EndpointChange::default()
        );
        assert!(refusal(EndpointPatchDto::parse(
            &object(json!({"url": null})),
            STRICT
        ))
        .contains("`url` must be a string"));
    }
}
