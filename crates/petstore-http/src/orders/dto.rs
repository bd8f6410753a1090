//! The order resource's bodies: `Order` as answered, `NewOrder` as `placeOrder` takes it.

use std::time::{Duration, UNIX_EPOCH};

use petstore_domain::{NewOrder, Order, OrderQuantity, OrderQuantityError, OrderStatus, PetId};
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::error::ApiError;
use crate::wire::json::whole_i64;
use crate::wire::price::PriceDto;
use crate::wire::status_dto::status_dto;

/// An order as the API returns it (the classic Petstore's fields).
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Order, description = "An order for one pet. Experimental.", example = json!({
    "id": 4737615245817339_i64, "petId": 3, "quantity": 1, "shipDate": null, "status": "placed",
    "complete": false
}))]
#[serde(rename_all = "camelCase")]
pub(crate) struct OrderDto {
    /// Unique, assigned by the store at random from 1 to 2^53 - 1 (exact as a JavaScript
    /// number), so an id says nothing about other orders.
    // The range is in the description, not `minimum`/`maximum`: generated clients then keep
    // the plain int64 type they had (progenitor makes a `minimum: 1` a `NonZeroU64`).
    id: i64,
    /// The ordered pet.
    pet_id: i64,
    /// Always 1: an order is for one pet.
    #[schema(minimum = 1, maximum = 1)]
    quantity: u32,
    /// When it was delivered (RFC 3339, UTC); `null` until then.
    #[schema(value_type = Option<String>, format = DateTime)]
    ship_date: Option<String>,
    status: OrderStatusDto,
    /// Whether it was delivered.
    complete: bool,
    // The pet's price when the order was placed; absent for a pet without one (said in
    // `Price`'s description: a `$ref` carries none of its own in OpenAPI 3.0).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    price: Option<PriceDto>,
}

status_dto!(
    /// The wire form of the domain's `OrderStatus`.
    OrderStatusDto for OrderStatus,
    schema "OrderStatus",
    "Where an order is in its life cycle: `placed -> approved -> delivered`, or `cancelled` from\n`placed` or `approved`."
);

impl From<Order> for OrderDto {
    fn from(order: Order) -> Self {
        let ship_date = order.ship_date().map(|seconds| {
            let at = UNIX_EPOCH + Duration::from_secs(u64::try_from(seconds).unwrap_or(0));
            humantime::format_rfc3339_seconds(at).to_string()
        });
        Self {
            id: order.id().get(),
            pet_id: order.pet_id().get(),
            quantity: u32::from(order.quantity().get()),
            ship_date,
            status: order.status().into(),
            complete: order.is_complete(),
            price: order.price().map(PriceDto::from),
        }
    }
}

/// The body of `placeOrder`: `{"petId": 3}`, optionally `"quantity": 1`. Parsed by hand
/// ([`NewOrderDto::parse`]); its schema is written out below so that it says what the parser
/// refuses (other members).
#[derive(Debug)]
pub(crate) struct NewOrderDto;

impl utoipa::PartialSchema for NewOrderDto {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{
            AdditionalProperties, KnownFormat, ObjectBuilder, SchemaFormat, Type,
        };
        ObjectBuilder::new()
            .description(Some(
                "An order to place. Members other than `petId` and `quantity` are refused.",
            ))
            .property(
                "petId",
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
                    .description(Some("The pet to order; it must be `available`.")),
            )
            .required("petId")
            .property(
                "quantity",
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .minimum(Some(1))
                    .maximum(Some(1))
                    .description(Some("1 when given: an order is for one pet.")),
            )
            .additional_properties(Some(AdditionalProperties::FreeForm(false)))
            .examples([serde_json::json!({"petId": 3})])
            .into()
    }
}

impl ToSchema for NewOrderDto {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("NewOrder")
    }
}

impl NewOrderDto {
    /// The domain's `NewOrder` from a parsed JSON object, or a 400 naming every problem.
    pub(crate) fn parse(fields: &Map<String, Value>) -> Result<NewOrder, ApiError> {
        let mut problems = Vec::new();
        let mut unknown: Vec<&str> = fields
            .keys()
            .map(String::as_str)
            .filter(|key| !["petId", "quantity"].contains(key))
            .collect();
        unknown.sort_unstable();
        for key in unknown {
            problems.push(format!(
                "unknown field `{key}`; allowed fields are `petId`, `quantity`"
            ));
        }
        let pet_id = match fields.get("petId") {
            None => Err("`petId` is required".to_owned()),
            Some(Value::Number(number)) => whole_i64(number)
                .map(PetId::new)
                .map_err(|_| "`petId` must be an int64 integer".to_owned()),
            Some(_) => Err("`petId` must be an int64 integer".to_owned()),
        };
        let quantity = match fields.get("quantity") {
            None => Ok(OrderQuantity::ONE),
            Some(Value::Number(number)) => whole_i64(number)
                .map_err(|_| OrderQuantityError)
                .and_then(OrderQuantity::parse),
            Some(_) => Err(OrderQuantityError),
        }
        .map_err(|error| format!("`quantity` {error}"));
        match (pet_id, quantity) {
            (Ok(pet_id), Ok(quantity)) if problems.is_empty() => {
                Ok(NewOrder::new(pet_id, quantity))
            }
            (pet_id, quantity) => {
                problems.extend(quantity.err());
                problems.extend(pet_id.err());
                Err(ApiError::validation(problems.join("; ")))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use petstore_domain::OrderId;

    use super::*;

    /// The key that placed an order is the store's business, never in a body.
    #[test]
    fn an_order_body_never_names_its_key() {
        let key = petstore_domain::KeyId::parse(&"a".repeat(32)).unwrap();
        let order =
            NewOrder::new(PetId::new(3), OrderQuantity::ONE).into_order(OrderId::new(1), key);
        let body = serde_json::to_value(OrderDto::from(order)).unwrap();
        assert_eq!(
            body,
            serde_json::json!({"id": 1, "petId": 3, "quantity": 1, "shipDate": null,
                               "status": "placed", "complete": false})
        );
    }

    #[test]
    fn ship_dates_are_rfc_3339_in_utc() {
        let delivered_at = |seconds| {
            let order = Order::restore(
                OrderId::new(1),
                PetId::new(3),
                OrderQuantity::ONE,
                OrderStatus::Delivered,
                Some(seconds),
                None,
            );
            OrderDto::from(order).ship_date.unwrap()
        };
        assert_eq!(delivered_at(0), "1970-01-01T00:00:00Z");
        assert_eq!(delivered_at(1_800_000_000), "2027-01-15T08:00:00Z");
        assert_eq!(delivered_at(951_782_400), "2000-02-29T00:00:00Z");
    }

    /// A `petId` outside int64 is refused like every other out-of-range id, on either side,
    /// including the one just below it, which a float parse would round to the smallest int64.
    #[test]
    fn a_pet_id_outside_int64_is_refused_not_clamped() {
        let parse = |text: &str| {
            let json: Value = serde_json::from_str(text).unwrap();
            NewOrderDto::parse(json.as_object().unwrap())
        };
        assert_eq!(
            parse(r#"{"petId": -9223372036854775808}"#).unwrap(),
            NewOrder::new(PetId::new(i64::MIN), OrderQuantity::ONE)
        );
        for body in [
            r#"{"petId": -9223372036854775809}"#,
            r#"{"petId": -9223372036854775900}"#,
            r#"{"petId": 9223372036854775808}"#,
            r#"{"petId": -1e19}"#,
        ] {
            let error = parse(body).unwrap_err();
            assert_eq!(
                error.code(),
                crate::error::ErrorCode::ValidationFailed,
                "{body}"
            );
            assert!(
                error.message().contains("`petId` must be an int64"),
                "{body}: {}",
                error.message()
            );
        }
    }

    #[test]
    fn a_new_order_needs_a_pet_id_and_takes_quantity_1_only() {
        let parse = |json: Value| NewOrderDto::parse(json.as_object().unwrap());
        assert_eq!(
            parse(serde_json::json!({"petId": 3})).unwrap(),
            NewOrder::new(PetId::new(3), OrderQuantity::ONE)
        );
        assert!(parse(serde_json::json!({"petId": 3, "quantity": 1})).is_ok());
        let whole_double: Value = serde_json::from_str(r#"{"petId": 2251799813685247.0}"#).unwrap();
        assert_eq!(
            parse(whole_double).unwrap(),
            NewOrder::new(PetId::new(2_251_799_813_685_247), OrderQuantity::ONE)
        );
        assert_eq!(
            parse(serde_json::json!({"petId": -5.0, "quantity": 1.0})).unwrap(),
            NewOrder::new(PetId::new(-5), OrderQuantity::ONE)
        );
        for (body, says) in [
            (serde_json::json!({}), "`petId` is required"),
            (
                serde_json::json!({"petId": "3"}),
                "`petId` must be an int64",
            ),
            (
                serde_json::json!({"petId": 3, "quantity": 2}),
                "`quantity` must be 1",
            ),
            (
                serde_json::json!({"petId": 3, "shipDate": "x"}),
                "unknown field `shipDate`",
            ),
        ] {
            let err = parse(body.clone()).unwrap_err();
            assert!(err.message().contains(says), "{body}: {}", err.message());
        }
    }
}
