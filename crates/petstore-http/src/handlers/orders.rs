//! The store's orders (experimental): `placeOrder`, `listOrders`, `getOrder`, and the moves
//! `approveOrder`, `deliverOrder`, `cancelOrder`. Reading needs a `read` key, placing and moving
//! a `write` key. Every response carries `X-API-Stability: experimental`.

use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::web::{Data, Payload, Query};
use actix_web::{HttpRequest, HttpResponse};
use petstore_application::OrderFilter;
use petstore_domain::{KeyScope, OrderAction, OrderId, OrderStatus, PetId};

use super::authorize;
use crate::body::{read_limited, require_json_content_type};
use crate::dto::json_object;
use crate::dto::order::{NewOrderDto, OrderDto, OrderStatusDto};
use crate::error::{ApiError, ErrorBody};
use crate::paths::{order_path, ORDERS_PATH};
use crate::state::HttpState;

/// Says on every order response that the resource may still change.
pub const STABILITY: HeaderName = HeaderName::from_static("x-api-stability");

/// Largest page of orders, and the default.
const MAX_LIMIT: usize = 100;
const DEFAULT_LIMIT: usize = 20;

fn experimental(mut response: HttpResponse) -> HttpResponse {
    response
        .headers_mut()
        .insert(STABILITY, HeaderValue::from_static("experimental"));
    response
}

fn respond(result: Result<HttpResponse, ApiError>) -> HttpResponse {
    experimental(result.unwrap_or_else(|err| actix_web::ResponseError::error_response(&err)))
}

/// Places an order for an available pet: the pet becomes `pending` and the order `placed`,
/// together. An order for a pet that is not available is 409 `conflict`.
#[utoipa::path(
    post,
    path = "/store/orders",
    operation_id = "placeOrder",
    tag = "store",
    summary = "Place an order (experimental)",
    request_body(content = NewOrderDto, content_type = "application/json"),
    security(("bearerAuth" = [])),
    responses(
        (status = 201, description = "The order was placed; its pet is now `pending`.",
            body = OrderDto, headers(("Location" = String, description = "The new order."))),
        (status = 400, description = "`malformed_json` or `validation_failed`.", body = ErrorBody),
        (status = 401, description = "`unauthorized`.", body = ErrorBody),
        (status = 403, description = "`forbidden`: a `read` key.", body = ErrorBody),
        (status = 404, description = "`not_found`: no pet has `petId`.", body = ErrorBody),
        (status = 409, description = "`conflict`: the pet is not `available`.", body = ErrorBody),
        (status = 415, description = "`unsupported_media_type`.", body = ErrorBody),
        (status = 503, description = "`service_unavailable`.", body = ErrorBody),
    ),
)]
pub(crate) async fn place_order(
    state: Data<HttpState>,
    req: HttpRequest,
    payload: Payload,
) -> HttpResponse {
    respond(
        async {
            authorize(&req, &state, KeyScope::Write, "placeOrder")?;
            require_json_content_type(&req)?;
            let body =
                read_limited(&req, payload, HttpState::JSON_LIMIT, state.body_timeout()).await?;
            let new = NewOrderDto::parse(&json_object(&body)?)?;
            let order = state.orders().place(new).await?;
            Ok(HttpResponse::Created()
                .insert_header((header::LOCATION, order_path(order.id)))
                .json(OrderDto::from(order)))
        }
        .await,
    )
}

/// One page of orders, ascending by id; `Link: rel="next"` when more follow.
#[utoipa::path(
    get,
    path = "/store/orders",
    operation_id = "listOrders",
    tag = "store",
    summary = "List orders (experimental)",
    params(
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 100,
            description = "1 to 100, default 20."),
        ("status" = Option<OrderStatusDto>, Query, description = "Only orders with this status."),
        ("petId" = Option<i64>, Query, description = "Only orders for this pet."),
        ("cursor" = Option<String>, Query, min_length = 1,
            description = "Opaque: copy it from the previous page's `Link: rel=\"next\"`; it is \
                signed and bound to the filters it was issued with."),
    ),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, description = "A page of orders.", body = Vec<OrderDto>),
        (status = 400, description = "`invalid_parameter`.", body = ErrorBody),
        (status = 401, description = "`unauthorized`.", body = ErrorBody),
        (status = 503, description = "`service_unavailable`.", body = ErrorBody),
    ),
)]
pub(crate) async fn list_orders(state: Data<HttpState>, req: HttpRequest) -> HttpResponse {
    respond(
        async {
            authorize(&req, &state, KeyScope::Read, "listOrders")?;
            let (filter, after, limit) = parse_list(&req, &state)?;
            let page = state.orders().list(filter, after, limit).await?;
            let mut response = HttpResponse::Ok();
            if let Some(next) = page.next_after {
                let mut target = format!("{ORDERS_PATH}?limit={limit}");
                if let Some(status) = filter.status {
                    target.push_str(&format!("&status={status}"));
                }
                if let Some(pet_id) = filter.pet_id {
                    target.push_str(&format!("&petId={pet_id}"));
                }
                let cursor = state.cursors().encode_scoped(next.get(), &scope(filter));
                target.push_str(&format!("&cursor={cursor}"));
                response.insert_header((header::LINK, format!("<{target}>; rel=\"next\"")));
            }
            let orders: Vec<OrderDto> = page.orders.into_iter().map(OrderDto::from).collect();
            Ok(response.json(orders))
        }
        .await,
    )
}

/// The cursor scope of an order listing: a byte no pet status uses, then the filters.
fn scope(filter: OrderFilter) -> Vec<u8> {
    let mut scope = vec![0xFF];
    scope.push(filter.status.map_or(0, |status| {
        OrderStatus::ALL
            .iter()
            .position(|known| *known == status)
            .map_or(0, |at| u8::try_from(at + 1).unwrap_or(0))
    }));
    if let Some(pet_id) = filter.pet_id {
        scope.extend_from_slice(&pet_id.get().to_be_bytes());
    }
    scope
}

fn parse_list(
    req: &HttpRequest,
    state: &HttpState,
) -> Result<(OrderFilter, Option<OrderId>, usize), ApiError> {
    let pairs = Query::<Vec<(String, String)>>::from_query(req.query_string())
        .map_err(|_| ApiError::invalid_parameter("the query string is not valid"))?
        .into_inner();
    let mut filter = OrderFilter::default();
    let (mut limit, mut cursor) = (DEFAULT_LIMIT, None);
    for (name, value) in pairs {
        let bad =
            |rule: &str| ApiError::invalid_parameter(format!("query parameter `{name}` {rule}"));
        match name.as_str() {
            "limit" => {
                limit = value
                    .parse::<usize>()
                    .ok()
                    .filter(|limit| (1..=MAX_LIMIT).contains(limit))
                    .ok_or_else(|| bad("must be an integer from 1 to 100"))?;
            }
            "status" => {
                filter.status =
                    Some(OrderStatus::parse(&value).map_err(|err| bad(&err.to_string()))?);
            }
            "petId" => {
                filter.pet_id = Some(PetId::parse(&value).map_err(|err| bad(&err.to_string()))?);
            }
            "cursor" => cursor = Some(value),
            other => {
                return Err(ApiError::invalid_parameter(format!(
                    "unknown query parameter `{other}`; listOrders takes `limit`, `status`, \
                     `petId` and `cursor`"
                )))
            }
        }
    }
    let after = cursor
        .map(|raw| {
            state
                .cursors()
                .decode_scoped(&raw, &scope(filter))
                .map(OrderId::new)
                .ok_or_else(|| {
                    ApiError::invalid_parameter(
                        "query parameter `cursor` is not a cursor this service issued for this \
                         listing; follow the `Link: rel=\"next\"` header of the previous page",
                    )
                })
        })
        .transpose()?;
    Ok((filter, after, limit))
}

fn order_id(req: &HttpRequest) -> Result<OrderId, ApiError> {
    let raw = req.match_info().get("orderId").unwrap_or_default();
    OrderId::parse(raw).ok_or_else(|| {
        ApiError::invalid_parameter(format!(
            "path parameter `orderId` must be an int64 integer written as digits (got `{raw}`)"
        ))
    })
}

/// The order with this id.
#[utoipa::path(
    get,
    path = "/store/orders/{orderId}",
    operation_id = "getOrder",
    tag = "store",
    summary = "Get an order (experimental)",
    params(("orderId" = i64, Path, description = "The order's `id`.")),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, description = "The order.", body = OrderDto),
        (status = 400, description = "`invalid_parameter`.", body = ErrorBody),
        (status = 401, description = "`unauthorized`.", body = ErrorBody),
        (status = 404, description = "`not_found`.", body = ErrorBody),
        (status = 503, description = "`service_unavailable`.", body = ErrorBody),
    ),
)]
pub(crate) async fn get_order(state: Data<HttpState>, req: HttpRequest) -> HttpResponse {
    respond(
        async {
            authorize(&req, &state, KeyScope::Read, "getOrder")?;
            let order = state.orders().get(order_id(&req)?).await?;
            Ok(HttpResponse::Ok().json(OrderDto::from(order)))
        }
        .await,
    )
}

async fn act(
    state: &HttpState,
    req: &HttpRequest,
    action: OrderAction,
    operation: &'static str,
) -> HttpResponse {
    respond(
        async {
            authorize(req, state, KeyScope::Write, operation)?;
            let order = state.orders().act(order_id(req)?, action).await?;
            Ok(HttpResponse::Ok().json(OrderDto::from(order)))
        }
        .await,
    )
}

/// `placed -> approved`; the pet stays `pending`.
#[utoipa::path(
    post,
    path = "/store/orders/{orderId}/approve",
    operation_id = "approveOrder",
    tag = "store",
    summary = "Approve an order (experimental)",
    params(("orderId" = i64, Path, description = "The order's `id`.")),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, description = "The approved order.", body = OrderDto),
        (status = 400, description = "`invalid_parameter`.", body = ErrorBody),
        (status = 401, description = "`unauthorized`.", body = ErrorBody),
        (status = 403, description = "`forbidden`: a `read` key.", body = ErrorBody),
        (status = 404, description = "`not_found`.", body = ErrorBody),
        (status = 409, description = "`conflict`: the order is not `placed`.", body = ErrorBody),
        (status = 503, description = "`service_unavailable`.", body = ErrorBody),
    ),
)]
pub(crate) async fn approve_order(state: Data<HttpState>, req: HttpRequest) -> HttpResponse {
    act(&state, &req, OrderAction::Approve, "approveOrder").await
}

/// `approved -> delivered`; the pet becomes `sold` and the order gets its `shipDate`.
#[utoipa::path(
    post,
    path = "/store/orders/{orderId}/deliver",
    operation_id = "deliverOrder",
    tag = "store",
    summary = "Deliver an order (experimental)",
    params(("orderId" = i64, Path, description = "The order's `id`.")),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, description = "The delivered order; its pet is `sold`.", body = OrderDto),
        (status = 400, description = "`invalid_parameter`.", body = ErrorBody),
        (status = 401, description = "`unauthorized`.", body = ErrorBody),
        (status = 403, description = "`forbidden`: a `read` key.", body = ErrorBody),
        (status = 404, description = "`not_found`.", body = ErrorBody),
        (status = 409, description = "`conflict`: the order is not `approved`.", body = ErrorBody),
        (status = 503, description = "`service_unavailable`.", body = ErrorBody),
    ),
)]
pub(crate) async fn deliver_order(state: Data<HttpState>, req: HttpRequest) -> HttpResponse {
    act(&state, &req, OrderAction::Deliver, "deliverOrder").await
}

/// `placed` or `approved` -> `cancelled`; the pet is `available` again.
#[utoipa::path(
    post,
    path = "/store/orders/{orderId}/cancel",
    operation_id = "cancelOrder",
    tag = "store",
    summary = "Cancel an order (experimental)",
    params(("orderId" = i64, Path, description = "The order's `id`.")),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, description = "The cancelled order; its pet is `available`.", body = OrderDto),
        (status = 400, description = "`invalid_parameter`.", body = ErrorBody),
        (status = 401, description = "`unauthorized`.", body = ErrorBody),
        (status = 403, description = "`forbidden`: a `read` key.", body = ErrorBody),
        (status = 404, description = "`not_found`.", body = ErrorBody),
        (status = 409, description = "`conflict`: the order is delivered or cancelled.", body = ErrorBody),
        (status = 503, description = "`service_unavailable`.", body = ErrorBody),
    ),
)]
pub(crate) async fn cancel_order(state: Data<HttpState>, req: HttpRequest) -> HttpResponse {
    act(&state, &req, OrderAction::Cancel, "cancelOrder").await
}
