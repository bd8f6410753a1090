//! The document in OpenAPI 3.0.3, derived from the 3.1 one, for the tools that read only 3.0
//! (progenitor, older generators). Served at `GET /v1/openapi-3.0.json`; `docs/openapi-3.0.json`
//! is a copy a test keeps equal to it.
//!
//! What 3.1 says that 3.0 cannot, rewritten: `"type": [T, "null"]` and a `oneOf` with a
//! `{"type": "null"}` branch become `nullable: true`; schema `examples` (an array) becomes
//! `example` (the first); `const` becomes a one-value `enum`; the licence's SPDX `identifier`
//! becomes its `url`; the scope an operation's bearer requirement names (3.1 allows role names
//! for any scheme, 3.0 only OAuth scopes) becomes its `x-required-scope`.

use serde_json::{json, Map, Value};

/// The version this module writes.
pub const VERSION: &str = "3.0.3";

/// `document` (OpenAPI 3.1, as JSON) in OpenAPI 3.0.3.
pub fn downgrade(mut document: Value) -> Value {
    if let Some(root) = document.as_object_mut() {
        root.insert("openapi".to_owned(), json!(VERSION));
        // 3.0 has no `webhooks`: the section moves to `x-webhooks`, the extension Redoc reads
        // for it, so the bodies' schemas stay in use.
        if let Some(webhooks) = root.remove("webhooks") {
            root.insert("x-webhooks".to_owned(), webhooks);
        }
        if let Some(license) = root
            .get_mut("info")
            .and_then(|info| info.get_mut("license"))
            .and_then(Value::as_object_mut)
        {
            if let Some(Value::String(identifier)) = license.remove("identifier") {
                license.insert(
                    "url".to_owned(),
                    json!(format!("https://spdx.org/licenses/{identifier}.html")),
                );
            }
        }
    }
    let types = component_types(&document);
    rewrite(&mut document, &types);
    if let Some(paths) = document.get_mut("paths").and_then(Value::as_object_mut) {
        paths
            .values_mut()
            .filter_map(Value::as_object_mut)
            .flat_map(|item| item.values_mut())
            .filter_map(Value::as_object_mut)
            .for_each(move_scopes_out_of_security);
    }
    document
}

/// Empties `operation`'s security requirements, naming their roles in `x-required-scope`.
fn move_scopes_out_of_security(operation: &mut Map<String, Value>) {
    let Some(Value::Array(requirements)) = operation.get_mut("security") else {
        return;
    };
    let mut scopes = Vec::new();
    for requirement in requirements.iter_mut().filter_map(Value::as_object_mut) {
        for roles in requirement.values_mut() {
            if let Value::Array(roles) = roles {
                scopes.append(roles);
            }
        }
    }
    if let [scope] = scopes.as_slice() {
        operation.insert("x-required-scope".to_owned(), scope.clone());
    }
}

/// The `type` of each component schema that has a single one, by its `$ref`.
fn component_types(document: &Value) -> Map<String, Value> {
    document
        .pointer("/components/schemas")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(name, schema)| {
            let kind = schema.get("type").filter(|kind| kind.is_string())?;
            Some((format!("#/components/schemas/{name}"), kind.clone()))
        })
        .collect()
}

fn rewrite(value: &mut Value, types: &Map<String, Value>) {
    match value {
        Value::Array(items) => items.iter_mut().for_each(|item| rewrite(item, types)),
        Value::Object(object) => {
            object.values_mut().for_each(|child| rewrite(child, types));
            rewrite_schema(object, types);
        }
        _ => {}
    }
}

/// Rewrites one object if it is a schema using 3.1-only keywords (children are done already).
/// `types` gives a nullable reference the type of what it refers to: 3.0 defines `nullable`
/// only beside a `type` (Spectral and Redocly refuse it alone).
fn rewrite_schema(object: &mut Map<String, Value>, types: &Map<String, Value>) {
    if let Some(Value::Array(types)) = object.get("type") {
        let non_null: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        if non_null.len() == 1 {
            let nullable = non_null.len() < types.len();
            object.insert("type".to_owned(), non_null[0].clone());
            if nullable {
                object.insert("nullable".to_owned(), json!(true));
            }
        }
    }
    let null_branch = json!({"type": "null"});
    if let Some(Value::Array(branches)) = object.get("oneOf") {
        if branches.contains(&null_branch) {
            let rest: Vec<Value> = branches
                .iter()
                .filter(|branch| **branch != null_branch)
                .cloned()
                .collect();
            object.remove("oneOf");
            match <[Value; 1]>::try_from(rest) {
                Ok([only]) => {
                    // 3.0 ignores everything beside a `$ref`: keep its description outside.
                    let mut only = only;
                    if let Some(description) = only
                        .as_object_mut()
                        .and_then(|only| only.remove("description"))
                    {
                        object.entry("description").or_insert(description);
                    }
                    let referred = only.get("$ref").and_then(Value::as_str);
                    if let Some(kind) = referred.and_then(|target| types.get(target)) {
                        object.insert("type".to_owned(), kind.clone());
                    }
                    object.insert("allOf".to_owned(), json!([only]));
                }
                Err(rest) => {
                    object.insert("oneOf".to_owned(), Value::Array(rest));
                }
            }
            object.insert("nullable".to_owned(), json!(true));
        }
    }
    if let Some(Value::Array(examples)) = object.get("examples") {
        let first = examples.first().cloned();
        object.remove("examples");
        if let Some(first) = first {
            object.insert("example".to_owned(), first);
        }
    }
    if let Some(constant) = object.remove("const") {
        object.insert("enum".to_owned(), json!([constant]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nullable_types_and_branches_become_nullable() {
        let document = json!({
            "openapi": "3.1.0",
            "info": {"license": {"name": "MIT", "identifier": "MIT"}},
            "a": {"type": ["string", "null"]},
            "b": {"oneOf": [{"$ref": "#/x", "description": "d"}, {"type": "null"}]},
            "f": {"oneOf": [{"$ref": "#/components/schemas/S"}, {"type": "null"}]},
            "components": {"schemas": {"S": {"type": "string", "enum": ["a"]}}},
            "c": {"type": "string", "examples": ["one", "two"]},
            "d": {"const": 3},
            "e": {"content": {"application/json": {"examples": {"x": {"value": 1}}}}},
            "paths": {"/a": {"get": {"security": [{"bearerAuth": ["store"]}]}}},
        });
        assert_eq!(
            downgrade(document),
            json!({
                "openapi": "3.0.3",
                "info": {"license": {"name": "MIT", "url": "https://spdx.org/licenses/MIT.html"}},
                "a": {"type": "string", "nullable": true},
                "b": {"allOf": [{"$ref": "#/x"}], "description": "d", "nullable": true},
                "f": {"allOf": [{"$ref": "#/components/schemas/S"}], "type": "string", "nullable": true},
                "components": {"schemas": {"S": {"type": "string", "enum": ["a"]}}},
                "c": {"type": "string", "example": "one"},
                "d": {"enum": [3]},
                "e": {"content": {"application/json": {"examples": {"x": {"value": 1}}}}},
                "paths": {"/a": {"get": {
                    "security": [{"bearerAuth": []}],
                    "x-required-scope": "store",
                }}},
            })
        );
    }
}
