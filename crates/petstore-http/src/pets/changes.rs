//! `updatePet` (`PATCH /v1/pets/{petId}`) and `deletePet` (`DELETE /v1/pets/{petId}`): the
//! store's staff change and remove pets, under the pet's version (`If-Match`).
//!
//! The `#[utoipa::path]` attributes are these operations' part of the OpenAPI document.

use actix_web::http::{header, StatusCode};
use actix_web::web::Payload;
use actix_web::{HttpRequest, HttpResponse};
use petstore_application::StoredResponse;
use petstore_domain::{Pet, PetId};

use super::dto::PetDto;
use super::json_body::PetJson;
use super::params::parse_pet_id;
use super::patch_dto::PetPatchDto;
use super::versions::{pet_etag, version_condition};
use crate::error::{ApiError, ErrorBody};
use crate::idempotency::{self, json_response, Rendering};
use crate::state::{Authorized, HttpState, Store};
use crate::wire::body::{read_limited, require_merge_patch_content_type};
use crate::wire::query;

fn pet_id(req: &HttpRequest) -> Result<PetId, ApiError> {
    parse_pet_id(req.match_info().get("petId").unwrap_or_default())
}

/// Changes the fields a JSON Merge Patch names; the staff's (`store`).
#[utoipa::path(
    patch,
    path = "/pets/{petId}",
    operation_id = "updatePet",
    tag = "pets",
    summary = "Change a pet",
    description = "Applies a JSON Merge Patch (RFC 7396) to the pet and answers 200 with the pet \
        as it is now and its new `ETag`. Each member sets its field; an absent one leaves it; \
        `null` would clear it, which no field of a pet allows. `status` moves only along the \
        life cycle (`available` -> `pending` -> `sold`, `pending` -> `available`) and only while \
        no order holds the pet (placed or approved): otherwise 409 naming the order. A patch \
        that changes nothing answers 200 and keeps the `ETag`. Send `If-Match` with the `ETag` \
        you read, so that a change made meanwhile by someone else is answered 412 instead of \
        overwritten. The store's staff's: needs a `store` key. Retry safely with \
        `Idempotency-Key`.",
    params(("petId" = i64, Path, description = "The pet's `id`."),
        ("If-Match" = Option<String>, Header, nullable = false,
            pattern = r#"^[ \t,]*(?:\*|(?:W/)?"[!#-~]*"(?:[ \t]*,[ \t,]*(?:W/)?"[!#-~]*")*)[ \t,]*$"#,
            description = "The pet's `ETag` as read \
            (`\"1.3\"`), or `*`: the change is made only if the pet is still at that version.")),
    request_body(content = PetPatchDto, content_type = "application/json",
        description = "The fields to change, a JSON Merge Patch; sent as \
            `application/merge-patch+json` it is the same. (Documented as `application/json`, \
            which every generated client can send.)"),
    security(("bearerAuth" = ["store"])),
    responses(
        (status = 200, description = "The pet, changed.", body = PetDto,
            headers(("ETag" = String, description = "The pet's new entity tag."))),
        (status = 400, description = "`malformed_json`: the body is not a JSON object; \
            `validation_failed`: a member is unknown, `id`, `null` or invalid; \
            `invalid_parameter`: `petId` or `If-Match` is malformed.", body = ErrorBody),
        (status = 401, description = "`unauthorized`.", body = ErrorBody),
        (status = 403, description = "`forbidden`: changing pets needs a `store` key.",
            body = ErrorBody),
        (status = 404, description = "`not_found`: no pet has this `id` (or it was removed).",
            body = ErrorBody),
        (status = 409, description = "`conflict`: the status cannot move there, or an order \
            holds the pet (its id is named).", body = ErrorBody),
        (status = 412, description = "`precondition_failed`: the pet changed since the \
            `If-Match` tag was read; nothing was changed.", body = ErrorBody),
        (status = 413, description = "`payload_too_large`.", body = ErrorBody),
        (status = 415, description = "`unsupported_media_type`: not JSON.", body = ErrorBody),
        (status = 428, description = "`precondition_required`: this server requires \
            `If-Match` on changes.", body = ErrorBody),
    ),
)]
pub(crate) async fn update_pet(
    caller: Authorized<Store>,
    req: HttpRequest,
    payload: Payload,
) -> Result<HttpResponse, ApiError> {
    query::none_taken(req.query_string(), "updatePet")?;
    let id = pet_id(&req)?;
    require_merge_patch_content_type(&req)?;
    let condition = version_condition(&caller, &req)?;
    let body = read_limited(&req, payload, HttpState::JSON_LIMIT, caller.body_timeout()).await?;
    let updating = |plan| async {
        let change = PetPatchDto::from_json(&body)?.try_into_domain()?;
        Ok(caller
            .pets()
            .update_pet(id, change, condition, plan)
            .await?)
    };
    idempotency::write(&caller, &req, &body, Rendering::same(changed), updating).await
}

/// updatePet's 200, as sent and as stored for a retry with the same `Idempotency-Key`.
fn changed(pet: &Pet) -> StoredResponse {
    json_response(
        StatusCode::OK,
        &[(header::ETAG, pet_etag(pet).to_string())],
        &PetJson(&PetDto::from(pet.clone())),
    )
}

/// Removes the pet; the staff's (`store`).
#[utoipa::path(
    delete,
    path = "/pets/{petId}",
    operation_id = "deletePet",
    tag = "pets",
    summary = "Remove a pet",
    description = "Removes the pet from the catalogue: afterwards getPet answers 404 and listPets \
        leaves it out; its orders stay readable. A pet an order holds (placed or approved) is \
        409 naming the order: deliver or cancel it first. A second DELETE is 404: the pet is \
        gone. Send `If-Match` with the `ETag` you read to remove only the pet you saw (412 \
        otherwise). The store's staff's: needs a `store` key.",
    params(("petId" = i64, Path, description = "The pet's `id`."),
        ("If-Match" = Option<String>, Header, nullable = false,
            pattern = r#"^[ \t,]*(?:\*|(?:W/)?"[!#-~]*"(?:[ \t]*,[ \t,]*(?:W/)?"[!#-~]*")*)[ \t,]*$"#,
            description = "The pet's `ETag` as read, or \
            `*`: the pet is removed only if it is still at that version.")),
    security(("bearerAuth" = ["store"])),
    responses(
        (status = 204, description = "The pet was removed."),
        (status = 400, description = "`invalid_parameter`: `petId` or `If-Match` is \
            malformed.", body = ErrorBody),
        (status = 401, description = "`unauthorized`.", body = ErrorBody),
        (status = 403, description = "`forbidden`: removing pets needs a `store` key.",
            body = ErrorBody),
        (status = 404, description = "`not_found`: no pet has this `id` (or it was removed \
            already).", body = ErrorBody),
        (status = 409, description = "`conflict`: an order holds the pet (its id is named).",
            body = ErrorBody),
        (status = 412, description = "`precondition_failed`: the pet changed since the \
            `If-Match` tag was read; it was not removed.", body = ErrorBody),
        (status = 428, description = "`precondition_required`: this server requires \
            `If-Match` on changes.", body = ErrorBody),
    ),
)]
pub(crate) async fn delete_pet(
    caller: Authorized<Store>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    query::none_taken(req.query_string(), "deletePet")?;
    let id = pet_id(&req)?;
    let condition = version_condition(&caller, &req)?;
    caller.pets().remove_pet(id, condition).await?;
    Ok(HttpResponse::NoContent().finish())
}
