//! The webhook operations' handlers and their part of the OpenAPI document: every status listed
//! is one these handlers (or `Authorized`, the body reader and the error mapping) can answer.

use actix_web::http::{header, StatusCode};
use actix_web::web::Payload;
use actix_web::{HttpRequest, HttpResponse};
use petstore_application::webhooks::{CreatedEndpoint, RotatedSecret, WebhookError};
use petstore_application::StoredResponse;
use petstore_domain::{Delivery, WebhookEndpoint};

use super::dto::{
    DeliveryDto, DeliveryStatusDto, EndpointDto, EndpointPatchDto, EndpointWithSecretDto,
    NewEndpointDto, RotatedSecretDto,
};
use super::params::{
    delivery_id, delivery_list_link, endpoint_id, endpoint_list_link, parse_delivery_list,
    parse_endpoint_list,
};
use super::{delivery_path, endpoint_path};
use crate::error::{ApiError, ErrorBody, ErrorCode};
use crate::idempotency::{self, json_response, Rendering};
use crate::state::{Authorized, HttpState, Store};
use crate::wire::body::{
    read_limited, require_json_content_type, require_merge_patch_content_type,
};
use crate::wire::json::json_object;
use crate::wire::query;

/// A missing endpoint or delivery is 404; the endpoint limit, a disabled endpoint and an
/// attempt in flight are 409 `conflict`.
impl From<WebhookError> for ApiError {
    fn from(err: WebhookError) -> Self {
        match err {
            WebhookError::NotFound(_) | WebhookError::DeliveryNotFound { .. } => {
                Self::not_found(err.to_string())
            }
            WebhookError::TooManyEndpoints
            | WebhookError::EndpointDisabled(_)
            | WebhookError::InFlight(_) => Self::new(ErrorCode::Conflict, err.to_string()),
            WebhookError::Repository(err) => err.into(),
        }
    }
}

/// One page of endpoints, ascending by id.
#[utoipa::path(
    get,
    path = "/webhook-endpoints",
    operation_id = "listWebhookEndpoints",
    tag = "webhooks",
    summary = "List webhook endpoints",
    description = "One page of the endpoints in ascending `id` order, as a bare array, with \
        `Link: <...>; rel=\"next\"` when more follow. Never their secrets. Any query parameter \
        other than `limit` and `cursor` is 400.",
    params(
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 100,
            description = "1 to 100, default 20."),
        ("cursor" = Option<String>, Query, min_length = 1,
            description = "Opaque: copy it from the previous page's `Link: rel=\"next\"`."),
    ),
    security(("bearerAuth" = ["store"])),
    responses(
        (status = 200, description = "A page of endpoints (possibly empty).",
            body = Vec<EndpointDto>,
            headers(("Link" = String, description = "Only when more endpoints follow."))),
        (status = 400, description = "`invalid_parameter`.", body = ErrorBody),
        (status = 401, description = "`unauthorized`.", body = ErrorBody),
        (status = 403, description = "`forbidden`: not a `store` key.", body = ErrorBody),
        (status = 503, description = "`service_unavailable`.", body = ErrorBody),
    ),
)]
pub(crate) async fn list_endpoints(
    caller: Authorized<Store>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let query = parse_endpoint_list(req.query_string(), caller.cursors())?;
    let page = caller
        .webhooks()
        .list_endpoints(query.after, query.limit)
        .await?;
    let mut response = HttpResponse::Ok();
    if let Some(last) = page.next_after {
        response.insert_header((
            header::LINK,
            endpoint_list_link(&query, last, caller.cursors()),
        ));
    }
    let endpoints: Vec<EndpointDto> = page.endpoints.into_iter().map(EndpointDto::from).collect();
    Ok(response.json(endpoints))
}

/// Adds an endpoint and answers its signing secret, once.
#[utoipa::path(
    post,
    path = "/webhook-endpoints",
    operation_id = "createWebhookEndpoint",
    tag = "webhooks",
    summary = "Add a webhook endpoint",
    description = "Stores an endpoint and answers 201 with it and its signing `secret`, which \
        is answered this once (a retry with the same `Idempotency-Key` gets the endpoint \
        without it; lost, rotate it). Events written from now on whose type it takes are \
        posted to it, signed per Standard Webhooks 1.0. At most 50 endpoints (409 beyond). \
        The URL is checked here for what it shows (scheme, host, an internal address); its \
        name is resolved and each address checked at every delivery.",
    request_body(content = NewEndpointDto, content_type = "application/json"),
    security(("bearerAuth" = ["store"])),
    responses(
        (status = 201, description = "The endpoint was stored; `secret` is answered once.",
            body = EndpointWithSecretDto,
            headers(("Location" = String, description = "`/v1/webhook-endpoints/{id}`."))),
        (status = 400, description = "`malformed_json` or `validation_failed`.", body = ErrorBody),
        (status = 401, description = "`unauthorized`.", body = ErrorBody),
        (status = 403, description = "`forbidden`: not a `store` key.", body = ErrorBody),
        (status = 409, description = "`conflict`: the store has 50 endpoints.", body = ErrorBody),
        (status = 415, description = "`unsupported_media_type`.", body = ErrorBody),
        (status = 503, description = "`service_unavailable`.", body = ErrorBody),
    ),
)]
pub(crate) async fn create_endpoint(
    caller: Authorized<Store>,
    req: HttpRequest,
    payload: Payload,
) -> Result<HttpResponse, ApiError> {
    query::none_taken(req.query_string(), "createWebhookEndpoint")?;
    require_json_content_type(&req)?;
    let body = read_limited(&req, payload, HttpState::JSON_LIMIT, caller.body_timeout()).await?;
    let creating = |plan| async {
        let request = NewEndpointDto::parse(&json_object(&body)?, caller.webhook_urls())?;
        Ok(caller.webhooks().create_endpoint(request, plan).await?)
    };
    let rendering = Rendering::secret_once(created_with_secret, created);
    idempotency::write(&caller, &req, &body, rendering, creating).await
}

fn created_with_secret(created: &CreatedEndpoint) -> StoredResponse {
    json_response(
        StatusCode::CREATED,
        &[(header::LOCATION, endpoint_path(created.endpoint.id))],
        &EndpointWithSecretDto::of(created),
    )
}

/// What a retry of a create gets: the endpoint without its secret.
fn created(created: &CreatedEndpoint) -> StoredResponse {
    json_response(
        StatusCode::CREATED,
        &[(header::LOCATION, endpoint_path(created.endpoint.id))],
        &EndpointDto::from(created.endpoint.clone()),
    )
}

/// One endpoint.
#[utoipa::path(
    get,
    path = "/webhook-endpoints/{endpointId}",
    operation_id = "getWebhookEndpoint",
    tag = "webhooks",
    summary = "Get a webhook endpoint",
    description = "The endpoint with its URL, types and whether it is enabled (and why not); \
        never its secret.",
    params(("endpointId" = i64, Path, minimum = 1, description = "The endpoint's `id`.")),
    security(("bearerAuth" = ["store"])),
    responses(
        (status = 200, description = "The endpoint.", body = EndpointDto),
        (status = 400, description = "`invalid_parameter`.", body = ErrorBody),
        (status = 401, description = "`unauthorized`.", body = ErrorBody),
        (status = 403, description = "`forbidden`: not a `store` key.", body = ErrorBody),
        (status = 404, description = "`not_found`.", body = ErrorBody),
        (status = 503, description = "`service_unavailable`.", body = ErrorBody),
    ),
)]
pub(crate) async fn get_endpoint(
    caller: Authorized<Store>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    query::none_taken(req.query_string(), "getWebhookEndpoint")?;
    let endpoint = caller.webhooks().get_endpoint(endpoint_id(&req)?).await?;
    Ok(HttpResponse::Ok().json(EndpointDto::from(endpoint)))
}

/// Changes an endpoint by JSON Merge Patch.
#[utoipa::path(
    patch,
    path = "/webhook-endpoints/{endpointId}",
    operation_id = "updateWebhookEndpoint",
    tag = "webhooks",
    summary = "Change a webhook endpoint",
    description = "Changes the members a JSON Merge Patch (RFC 7396) gives: `url`, \
        `eventTypes`, `enabled`. Disabling fails its pending deliveries (`endpoint_disabled`); \
        enabling makes it receive the events written from then on, also after the store \
        disabled it for failing.",
    params(("endpointId" = i64, Path, minimum = 1, description = "The endpoint's `id`.")),
    request_body(content = EndpointPatchDto, content_type = "application/json"),
    security(("bearerAuth" = ["store"])),
    responses(
        (status = 200, description = "The endpoint, as it is now.", body = EndpointDto),
        (status = 400, description = "`malformed_json`, `validation_failed` or \
            `invalid_parameter`.", body = ErrorBody),
        (status = 401, description = "`unauthorized`.", body = ErrorBody),
        (status = 403, description = "`forbidden`: not a `store` key.", body = ErrorBody),
        (status = 404, description = "`not_found`.", body = ErrorBody),
        (status = 415, description = "`unsupported_media_type`.", body = ErrorBody),
        (status = 503, description = "`service_unavailable`.", body = ErrorBody),
    ),
)]
pub(crate) async fn update_endpoint(
    caller: Authorized<Store>,
    req: HttpRequest,
    payload: Payload,
) -> Result<HttpResponse, ApiError> {
    query::none_taken(req.query_string(), "updateWebhookEndpoint")?;
    require_merge_patch_content_type(&req)?;
    let body = read_limited(&req, payload, HttpState::JSON_LIMIT, caller.body_timeout()).await?;
    let updating = |plan| async {
        let change = EndpointPatchDto::parse(&json_object(&body)?, caller.webhook_urls())?;
        let id = endpoint_id(&req)?;
        Ok(caller.webhooks().update_endpoint(id, change, plan).await?)
    };
    idempotency::write(&caller, &req, &body, Rendering::same(updated), updating).await
}

fn updated(endpoint: &WebhookEndpoint) -> StoredResponse {
    json_response(StatusCode::OK, &[], &EndpointDto::from(endpoint.clone()))
}

/// Deletes an endpoint and its deliveries.
#[utoipa::path(
    delete,
    path = "/webhook-endpoints/{endpointId}",
    operation_id = "deleteWebhookEndpoint",
    tag = "webhooks",
    summary = "Delete a webhook endpoint",
    description = "Deletes the endpoint with its deliveries: nothing more is posted to it. A \
        second DELETE is 404.",
    params(("endpointId" = i64, Path, minimum = 1, description = "The endpoint's `id`.")),
    security(("bearerAuth" = ["store"])),
    responses(
        (status = 204, description = "The endpoint was deleted."),
        (status = 400, description = "`invalid_parameter`.", body = ErrorBody),
        (status = 401, description = "`unauthorized`.", body = ErrorBody),
        (status = 403, description = "`forbidden`: not a `store` key.", body = ErrorBody),
        (status = 404, description = "`not_found`.", body = ErrorBody),
        (status = 503, description = "`service_unavailable`.", body = ErrorBody),
    ),
)]
pub(crate) async fn delete_endpoint(
    caller: Authorized<Store>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    query::none_taken(req.query_string(), "deleteWebhookEndpoint")?;
    caller
        .webhooks()
        .delete_endpoint(endpoint_id(&req)?)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// A new signing secret; the one before keeps signing for 24 hours.
#[utoipa::path(
    post,
    path = "/webhook-endpoints/{endpointId}/rotate-secret",
    operation_id = "rotateWebhookSecret",
    tag = "webhooks",
    summary = "Rotate a webhook endpoint's secret",
    description = "Makes a new signing secret, answered this once. For 24 hours each delivery \
        is signed with both the new and the previous secret (two `v1,` entries in \
        `webhook-signature`), so a receiver can switch without losing a delivery. A second \
        rotation within that window drops the oldest secret. No body.",
    params(("endpointId" = i64, Path, minimum = 1, description = "The endpoint's `id`.")),
    security(("bearerAuth" = ["store"])),
    responses(
        (status = 200, description = "The new secret, answered once.", body = RotatedSecretDto),
        (status = 400, description = "`invalid_parameter`.", body = ErrorBody),
        (status = 401, description = "`unauthorized`.", body = ErrorBody),
        (status = 403, description = "`forbidden`: not a `store` key.", body = ErrorBody),
        (status = 404, description = "`not_found`.", body = ErrorBody),
        (status = 503, description = "`service_unavailable`.", body = ErrorBody),
    ),
)]
pub(crate) async fn rotate_secret(
    caller: Authorized<Store>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    query::none_taken(req.query_string(), "rotateWebhookSecret")?;
    let rotating = |plan| async {
        let id = endpoint_id(&req)?;
        Ok(caller.webhooks().rotate_secret(id, plan).await?)
    };
    let rendering = Rendering::secret_once(rotated_with_secret, rotated);
    idempotency::write(&caller, &req, &[], rendering, rotating).await
}

fn rotated_with_secret(rotated: &RotatedSecret) -> StoredResponse {
    json_response(StatusCode::OK, &[], &RotatedSecretDto::of(rotated, true))
}

fn rotated(rotated: &RotatedSecret) -> StoredResponse {
    json_response(StatusCode::OK, &[], &RotatedSecretDto::of(rotated, false))
}

/// Sends a test event.
#[utoipa::path(
    post,
    path = "/webhook-endpoints/{endpointId}/ping",
    operation_id = "pingWebhookEndpoint",
    tag = "webhooks",
    summary = "Send a test event",
    description = "Adds a delivery of a `webhook.ping` event (never in the feed; its `data` is \
        `{\"endpointId\": n}`) and answers 202 with it, pending; follow its `Location` to see \
        its attempts. No body.",
    params(("endpointId" = i64, Path, minimum = 1, description = "The endpoint's `id`.")),
    security(("bearerAuth" = ["store"])),
    responses(
        (status = 202, description = "The ping's delivery, pending.", body = DeliveryDto,
            headers(("Location" = String, description = "The delivery."))),
        (status = 400, description = "`invalid_parameter`.", body = ErrorBody),
        (status = 401, description = "`unauthorized`.", body = ErrorBody),
        (status = 403, description = "`forbidden`: not a `store` key.", body = ErrorBody),
        (status = 404, description = "`not_found`.", body = ErrorBody),
        (status = 409, description = "`conflict`: the endpoint is disabled.", body = ErrorBody),
        (status = 503, description = "`service_unavailable`.", body = ErrorBody),
    ),
)]
pub(crate) async fn ping(
    caller: Authorized<Store>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    query::none_taken(req.query_string(), "pingWebhookEndpoint")?;
    let pinging = || async {
        let id = endpoint_id(&req)?;
        Ok(caller.webhooks().ping(id).await?)
    };
    idempotency::act(&caller, &req, &[], accepted, pinging).await
}

/// A delivery just made due: 202 with its `Location`.
fn accepted(delivery: &Delivery) -> StoredResponse {
    json_response(
        StatusCode::ACCEPTED,
        &[(
            header::LOCATION,
            delivery_path(delivery.endpoint_id, delivery.id),
        )],
        &DeliveryDto::from(delivery.clone()),
    )
}

/// One page of an endpoint's deliveries, newest first.
#[utoipa::path(
    get,
    path = "/webhook-endpoints/{endpointId}/deliveries",
    operation_id = "listWebhookDeliveries",
    tag = "webhooks",
    summary = "List an endpoint's deliveries",
    description = "One page of the endpoint's deliveries, newest first, each with its attempts \
        (time, status code, latency, error), as a bare array, with `Link: rel=\"next\"` when \
        more follow. `status` filters. Finished deliveries are kept as long as events are.",
    params(
        ("endpointId" = i64, Path, minimum = 1, description = "The endpoint's `id`."),
        ("status" = Option<DeliveryStatusDto>, Query,
            description = "Only the deliveries with this status."),
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 100,
            description = "1 to 100, default 20."),
        ("cursor" = Option<String>, Query, min_length = 1,
            description = "Opaque: copy it from the previous page's `Link: rel=\"next\"`."),
    ),
    security(("bearerAuth" = ["store"])),
    responses(
        (status = 200, description = "A page of deliveries (possibly empty).",
            body = Vec<DeliveryDto>,
            headers(("Link" = String, description = "Only when more deliveries follow."))),
        (status = 400, description = "`invalid_parameter`.", body = ErrorBody),
        (status = 401, description = "`unauthorized`.", body = ErrorBody),
        (status = 403, description = "`forbidden`: not a `store` key.", body = ErrorBody),
        (status = 404, description = "`not_found`: no endpoint has this id.", body = ErrorBody),
        (status = 503, description = "`service_unavailable`.", body = ErrorBody),
    ),
)]
pub(crate) async fn list_deliveries(
    caller: Authorized<Store>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let endpoint = endpoint_id(&req)?;
    let query = parse_delivery_list(endpoint, req.query_string(), caller.cursors())?;
    let page = caller
        .webhooks()
        .list_deliveries(endpoint, query.status, query.before, query.limit)
        .await?;
    let mut response = HttpResponse::Ok();
    if let Some(last) = page.next_before {
        response.insert_header((
            header::LINK,
            delivery_list_link(&query, last, caller.cursors()),
        ));
    }
    let deliveries: Vec<DeliveryDto> = page.deliveries.into_iter().map(DeliveryDto::from).collect();
    Ok(response.json(deliveries))
}

/// One delivery with its attempts.
#[utoipa::path(
    get,
    path = "/webhook-endpoints/{endpointId}/deliveries/{deliveryId}",
    operation_id = "getWebhookDelivery",
    tag = "webhooks",
    summary = "Get a delivery",
    description = "The delivery with its status and attempts: each attempt's time, the \
        endpoint's status code, the latency and why it failed.",
    params(
        ("endpointId" = i64, Path, minimum = 1, description = "The endpoint's `id`."),
        ("deliveryId" = i64, Path, minimum = 1, description = "The delivery's `id`."),
    ),
    security(("bearerAuth" = ["store"])),
    responses(
        (status = 200, description = "The delivery.", body = DeliveryDto),
        (status = 400, description = "`invalid_parameter`.", body = ErrorBody),
        (status = 401, description = "`unauthorized`.", body = ErrorBody),
        (status = 403, description = "`forbidden`: not a `store` key.", body = ErrorBody),
        (status = 404, description = "`not_found`.", body = ErrorBody),
        (status = 503, description = "`service_unavailable`.", body = ErrorBody),
    ),
)]
pub(crate) async fn get_delivery(
    caller: Authorized<Store>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    query::none_taken(req.query_string(), "getWebhookDelivery")?;
    let delivery = caller
        .webhooks()
        .get_delivery(endpoint_id(&req)?, delivery_id(&req)?)
        .await?;
    Ok(HttpResponse::Ok().json(DeliveryDto::from(delivery)))
}

/// Makes a delivery due now.
#[utoipa::path(
    post,
    path = "/webhook-endpoints/{endpointId}/deliveries/{deliveryId}/retry",
    operation_id = "retryWebhookDelivery",
    tag = "webhooks",
    summary = "Retry a delivery",
    description = "Makes the delivery pending and due now, keeping its attempts; answers 202 \
        with it. A delivery that had used up its schedule gets one more attempt; one failed \
        because its endpoint was disabled resumes its schedule. No body.",
    params(
        ("endpointId" = i64, Path, minimum = 1, description = "The endpoint's `id`."),
        ("deliveryId" = i64, Path, minimum = 1, description = "The delivery's `id`."),
    ),
    security(("bearerAuth" = ["store"])),
    responses(
        (status = 202, description = "The delivery, pending.", body = DeliveryDto,
            headers(("Location" = String, description = "The delivery."))),
        (status = 400, description = "`invalid_parameter`.", body = ErrorBody),
        (status = 401, description = "`unauthorized`.", body = ErrorBody),
        (status = 403, description = "`forbidden`: not a `store` key.", body = ErrorBody),
        (status = 404, description = "`not_found`.", body = ErrorBody),
        (status = 409, description = "`conflict`: the endpoint is disabled, or an attempt of \
            the delivery is being made.", body = ErrorBody),
        (status = 503, description = "`service_unavailable`.", body = ErrorBody),
    ),
)]
pub(crate) async fn retry_delivery(
    caller: Authorized<Store>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    query::none_taken(req.query_string(), "retryWebhookDelivery")?;
    let retrying = || async {
        let (endpoint, id) = (endpoint_id(&req)?, delivery_id(&req)?);
        Ok(caller.webhooks().retry_delivery(endpoint, id).await?)
    };
    idempotency::act(&caller, &req, &[], accepted, retrying).await
}
