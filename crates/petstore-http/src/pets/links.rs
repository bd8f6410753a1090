//! OpenAPI links from createPet's 201 to the operations on the pet it made (getPet, updatePet,
//! deletePet): a client or a stateful fuzzer (Schemathesis) learns from the document that the
//! new pet's `id` is the `petId` they take, and chains them.

use utoipa::openapi::link::LinkBuilder;
use utoipa::openapi::{OpenApi, RefOr};
use utoipa::Modify;

/// The operations on one pet that createPet's answer leads to, with what each does with it.
const LINKED: [(&str, &str); 3] = [
    ("getPet", "Read the new pet."),
    ("updatePet", "Change the new pet."),
    ("deletePet", "Remove the new pet."),
];

/// Where the new pet's `id` is in createPet's 201 (a runtime expression, OpenAPI 3.1 4.8.20.4).
const NEW_PET_ID: &str = "$response.body#/id";

/// Adds the links to createPet's 201.
pub(super) struct CreatedPetLinks;

impl Modify for CreatedPetLinks {
    fn modify(&self, openapi: &mut OpenApi) {
        let created = openapi
            .paths
            .paths
            // As createPet's `#[utoipa::path]` writes it: relative to the servers' `/v1`.
            .get_mut("/pets")
            .and_then(|item| item.post.as_mut())
            .and_then(|operation| operation.responses.responses.get_mut("201"));
        let Some(RefOr::T(created)) = created else {
            return;
        };
        for (operation_id, description) in LINKED {
            let link = LinkBuilder::new()
                .operation_id(operation_id)
                .parameter("petId", NEW_PET_ID)
                .description(description)
                .build();
            created.links.insert(operation_id.to_owned(), link.into());
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::Value;
    use utoipa::OpenApi as _;

    use super::*;
    use crate::pets::PetsApi;

    #[test]
    fn create_pet_links_to_each_operation_on_the_pet_with_its_id_as_pet_id() {
        let doc = serde_json::to_value(PetsApi::openapi()).unwrap();
        let links = &doc["paths"]["/pets"]["post"]["responses"]["201"]["links"];
        let pet = &doc["paths"]["/pets/{petId}"];
        for (operation_id, _) in LINKED {
            let link = &links[operation_id];
            assert_eq!(link["operationId"], operation_id);
            assert_eq!(link["parameters"]["petId"], NEW_PET_ID);
            // The target exists and takes `petId` in its path.
            let target = pet
                .as_object()
                .unwrap()
                .values()
                .find(|op| op["operationId"] == operation_id)
                .unwrap_or_else(|| panic!("no operation {operation_id} on /pets/{{petId}}"));
            let takes_pet_id = target["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["name"] == "petId" && p["in"] == "path");
            assert!(takes_pet_id, "{operation_id} takes no petId in its path");
        }
        // The expression points at a field the 201's pet has.
        let pet_schema = &doc["components"]["schemas"]["Pet"];
        assert!(pet_schema["properties"]["id"].is_object());
        assert!(pet_schema["required"]
            .as_array()
            .unwrap()
            .contains(&Value::from("id")));
    }
}
