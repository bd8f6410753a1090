//! The wire form of a domain status enum (`PetStatus`, `OrderStatus`): the domain's `as_str`
//! going out, and a schema that lists the domain's `ALL`, so that every status is spelled once,
//! in the domain, and the document cannot list one the code does not know.

/// Defines `$dto`, the wire form of `$status` (which has `ALL` and `as_str`), with the schema
/// named `$schema_name` and described by `$description`.
macro_rules! status_dto {
    ($(#[$doc:meta])* $dto:ident for $status:ty, schema $schema_name:literal, $description:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) struct $dto(pub(crate) $status);

        impl From<$status> for $dto {
            fn from(status: $status) -> Self {
                Self(status)
            }
        }

        impl serde::Serialize for $dto {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.0.as_str())
            }
        }

        impl utoipa::PartialSchema for $dto {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::Type::String)
                    .description(Some($description))
                    .enum_values(Some(<$status>::ALL.map(<$status>::as_str)))
                    .examples([serde_json::json!(<$status>::ALL[0].as_str())])
                    .into()
            }
        }

        impl utoipa::ToSchema for $dto {
            fn name() -> std::borrow::Cow<'static, str> {
                std::borrow::Cow::Borrowed($schema_name)
            }
        }
    };
}

pub(crate) use status_dto;
