//! The order resource's bodies: `Order` as answered, `NewOrder` as `placeOrder` takes it.

use petstore_domain::{NewOrder, Order, OrderStatus, PetId};
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::edge::json::whole_i64;
use crate::error::ApiError;

/// An order as the API returns it (the classic Petstore's fields).
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Order, description = "An order for one pet. Experimental.", example = json!({
    "id": 1, "petId": 3, "quantity": 1, "shipDate": null, "status": "placed", "complete": false
}))]
#[serde(rename_all = "camelCase")]
pub(crate) struct OrderDto {
    /// Assigned by the store; increasing.
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
}

/// Where an order is in its life cycle: `placed -> approved -> delivered`, or `cancelled` from
/// `placed` or `approved`.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[schema(as = OrderStatus)]
#[serde(rename_all = "lowercase")]
pub enum OrderStatusDto {
    Placed,
    Approved,
    Delivered,
    Cancelled,
}

impl From<OrderStatus> for OrderStatusDto {
    fn from(status: OrderStatus) -> Self {
        match status {
            OrderStatus::Placed => Self::Placed,
            OrderStatus::Approved => Self::Approved,
            OrderStatus::Delivered => Self::Delivered,
            OrderStatus::Cancelled => Self::Cancelled,
        }
    }
}

impl From<Order> for OrderDto {
    fn from(order: Order) -> Self {
        let ship_date = order.ship_date.map(|seconds| {
            let at = std::time::UNIX_EPOCH
                + std::time::Duration::from_secs(u64::try_from(seconds).unwrap_or(0));
            httpdate_rfc3339(at)
        });
        Self {
            id: order.id.get(),
            pet_id: order.pet_id.get(),
            quantity: order.quantity,
            ship_date,
            status: order.status.into(),
            complete: order.is_complete(),
        }
    }
}

/// RFC 3339 in UTC with seconds (`2026-11-23T12:00:00Z`).
fn httpdate_rfc3339(at: std::time::SystemTime) -> String {
    let seconds = at
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    let days = seconds / 86_400;
    let (hour, minute, second) = (seconds % 86_400 / 3600, seconds % 3600 / 60, seconds % 60);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = i64::try_from(days).unwrap_or(0) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}Z")
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
        match fields.get("quantity") {
            None => {}
            Some(Value::Number(number)) if whole_i64(number) == Ok(1) => {}
            Some(_) => problems.push("`quantity` must be 1: an order is for one pet".to_owned()),
        }
        match pet_id {
            Ok(pet_id) if problems.is_empty() => Ok(NewOrder { pet_id }),
            pet_id => {
                problems.extend(pet_id.err());
                Err(ApiError::validation(problems.join("; ")))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ship_dates_are_rfc_3339_in_utc() {
        let at = |seconds| std::time::UNIX_EPOCH + std::time::Duration::from_secs(seconds);
        assert_eq!(httpdate_rfc3339(at(0)), "1970-01-01T00:00:00Z");
        assert_eq!(httpdate_rfc3339(at(1_800_000_000)), "2027-01-15T08:00:00Z");
        assert_eq!(httpdate_rfc3339(at(951_782_400)), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn a_new_order_needs_a_pet_id_and_takes_quantity_1_only() {
        let parse = |json: Value| NewOrderDto::parse(json.as_object().unwrap());
        assert_eq!(
            parse(serde_json::json!({"petId": 3})).unwrap(),
            NewOrder {
                pet_id: PetId::new(3)
            }
        );
        assert!(parse(serde_json::json!({"petId": 3, "quantity": 1})).is_ok());
        let whole_double: Value = serde_json::from_str(r#"{"petId": 2251799813685247.0}"#).unwrap();
        assert_eq!(
            parse(whole_double).unwrap(),
            NewOrder {
                pet_id: PetId::new(2_251_799_813_685_247)
            }
        );
        assert_eq!(
            parse(serde_json::json!({"petId": -5.0, "quantity": 1.0})).unwrap(),
            NewOrder {
                pet_id: PetId::new(-5)
            }
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
