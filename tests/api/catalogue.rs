//! What a storefront needs, end to end on every backend: a pet created with every catalogue
//! field and read back as sent (normalised), a pet of the spec's fields alone answered exactly
//! as before, the listing filtered by category, tag and name (alone, combined, paged with
//! cursors bound to the filters), a PATCH clearing fields, and an order keeping its price.

use serde_json::{json, Value};

use petstore_test_support::on_backends;
use petstore_test_support::{send, TestApp};

async fn create(app: &TestApp, body: Value) -> Value {
    let created = send(app.post_json("/v1/pets"), Some(body.to_string())).await;
    assert_eq!(created.status, 201, "{}", created.body);
    created.json()
}

fn names(page: &Value) -> Vec<&str> {
    page.as_array()
        .expect("a page")
        .iter()
        .map(|pet| pet["name"].as_str().expect("a name"))
        .collect()
}

async fn a_pet_with_every_field_reads_back_as_sent(app: TestApp) {
    let rex = create(
        &app,
        json!({
            "name": "Rex", "categoryId": 3,
            "price": {"amount": "12.5", "currency": "EUR"},
            "description": "A good dog.\nHouse-trained.",
            "photoUrls": ["https://example.com/rex.jpg"],
            "tags": [" Friendly ", "Small  Dog"]
        }),
    )
    .await;
    assert_eq!(rex["price"], json!({"amount": "12.50", "currency": "EUR"}));
    assert_eq!(rex["tags"], json!(["friendly", "small dog"]));
    assert_eq!(rex["description"], "A good dog.\nHouse-trained.");
    let id = rex["id"].as_i64().expect("an id");
    let listed = send(app.get(&format!("/v1/pets?id={id}")), None)
        .await
        .json();
    assert_eq!(listed, json!([rex]));

    // The spec's fields alone: exactly the spec's members back, nothing more.
    let tom = create(&app, json!({"name": "Tom", "categoryId": 1})).await;
    let members: Vec<&String> = tom.as_object().expect("an object").keys().collect();
    assert_eq!(members, ["categoryId", "id", "name", "status"]);

    // PATCH: `null` clears a detail, a value sets it.
    let staff = app.staff_key().await;
    let patched = send(
        app.client
            .patch(app.url(&format!("/v1/pets/{id}")))
            .bearer_auth(&staff)
            .insert_header(("Content-Type", "application/merge-patch+json")),
        Some(json!({"description": null, "tags": ["calm"], "price": {"amount": "15", "currency": "EUR"}}).to_string()),
    )
    .await;
    assert_eq!(patched.status, 200, "{}", patched.body);
    let patched = patched.json();
    assert!(patched.get("description").is_none(), "{patched}");
    assert_eq!(patched["tags"], json!(["calm"]));
    assert_eq!(patched["price"]["amount"], "15.00");
}

async fn bad_catalogue_fields_are_400_naming_each(app: TestApp) {
    let refused = send(
        app.post_json("/v1/pets"),
        Some(
            json!({
                "name": "Rex", "categoryId": 3,
                "price": {"amount": 12.5, "currency": "EUR"},
                "photoUrls": ["https://example.com/a.jpg", "http://example.com/b.jpg"],
                "tags": ["ok", ""]
            })
            .to_string(),
        ),
    )
    .await;
    let message = refused.assert_error(400, "validation_failed");
    for named in ["`price.amount`", "`photoUrls[1]`", "`tags[1]`"] {
        assert!(message.contains(named), "{named}: {message}");
    }
    send(app.get("/v1/pets?tag="), None)
        .await
        .assert_error(400, "invalid_parameter");
    send(app.get("/v1/pets?categoryId=x"), None)
        .await
        .assert_error(400, "invalid_parameter");
}

async fn the_listing_filters_by_category_tag_and_name_and_pages(app: TestApp) {
    for (name, category, tags) in [
        ("Zoë", 1, json!(["cat"])),
        ("zorro", 2, json!(["Good  Dog"])),
        ("ZOLTAN", 1, json!(["Good  Dog"])),
        ("Rex", 1, json!(["Good  Dog"])),
        ("Zed", 2, json!([])),
    ] {
        create(
            &app,
            json!({"name": name, "categoryId": category, "tags": tags}),
        )
        .await;
    }
    let page = |query: &str| send(app.get(&format!("/v1/pets?{query}")), None);
    // A search by name is in name order: folded, code point by code point (`ë` after `r`).
    assert_eq!(
        names(&page("name=ZO").await.json()),
        ["ZOLTAN", "zorro", "Zoë"]
    );
    assert_eq!(names(&page("name=zo%C3%AB").await.json()), ["Zoë"]);
    assert_eq!(
        names(&page("categoryId=1").await.json()),
        ["Zoë", "ZOLTAN", "Rex"]
    );
    assert_eq!(
        names(&page("tag=good%20dog").await.json()),
        ["zorro", "ZOLTAN", "Rex"]
    );
    assert_eq!(
        names(&page("tag=GOOD%20DOG&categoryId=1&name=z").await.json()),
        ["ZOLTAN"]
    );
    assert!(names(&page("tag=good+dog&status=sold").await.json()).is_empty());

    // Paged by `Link`, the filters kept (a space in a tag percent-encoded); a cursor used with
    // other filters is refused.
    let first = page("tag=good%20dog&limit=2").await;
    assert_eq!(names(&first.json()), ["zorro", "ZOLTAN"]);
    let link = first.header("link").expect("a next link").to_owned();
    let next = link
        .trim_start_matches('<')
        .split('>')
        .next()
        .expect("a URL")
        .to_owned();
    assert!(next.contains("tag=good%20dog"), "{next}");
    let second = send(app.get(&next), None).await;
    assert_eq!(names(&second.json()), ["Rex"]);
    assert!(second.header("link").is_none());
    let other_filter = next.replace("tag=good%20dog", "tag=cat");
    send(app.get(&other_filter), None)
        .await
        .assert_error(400, "invalid_parameter");

    // Paged in name order: the cursor holds the last name, so renaming that pet before the
    // next page moves nothing; the cursor is refused with another name.
    let first = page("name=z&limit=2").await;
    let first_page = first.json();
    assert_eq!(names(&first_page), ["Zed", "ZOLTAN"]);
    let next = first
        .header("link")
        .expect("a next link")
        .trim_start_matches('<')
        .split('>')
        .next()
        .expect("a URL")
        .to_owned();
    let staff = app.staff_key().await;
    let zoltan = first_page[1]["id"].as_i64().expect("an id");
    let renamed = send(
        app.client
            .patch(app.url(&format!("/v1/pets/{zoltan}")))
            .bearer_auth(&staff)
            .insert_header(("Content-Type", "application/merge-patch+json")),
        Some(json!({"name": "Aaron"}).to_string()),
    )
    .await;
    assert_eq!(renamed.status, 200, "{}", renamed.body);
    let second = send(app.get(&next), None).await;
    assert_eq!(names(&second.json()), ["zorro", "Zoë"]);
    assert!(second.header("link").is_none());
    send(app.get(&next.replace("name=z", "name=zo")), None)
        .await
        .assert_error(400, "invalid_parameter");
}

async fn an_order_keeps_the_price_it_was_placed_at(app: TestApp) {
    let rex = create(
        &app,
        json!({"name": "Rex", "categoryId": 1, "price": {"amount": "1200", "currency": "JPY"}}),
    )
    .await;
    let id = rex["id"].as_i64().expect("an id");
    let placed = send(
        app.post_json("/v1/store/orders"),
        Some(json!({"petId": id}).to_string()),
    )
    .await;
    assert_eq!(placed.status, 201, "{}", placed.body);
    let order = placed.json();
    assert_eq!(order["price"], json!({"amount": "1200", "currency": "JPY"}));
    let staff = app.staff_key().await;
    let dearer = send(
        app.client
            .patch(app.url(&format!("/v1/pets/{id}")))
            .bearer_auth(&staff)
            .insert_header(("Content-Type", "application/merge-patch+json")),
        Some(json!({"price": {"amount": "9999", "currency": "JPY"}}).to_string()),
    )
    .await;
    assert_eq!(dearer.status, 200, "{}", dearer.body);
    let kept = send(app.get(&format!("/v1/store/orders/{}", order["id"])), None)
        .await
        .json();
    assert_eq!(kept["price"], json!({"amount": "1200", "currency": "JPY"}));
}

on_backends!(
    [memory, sqlite, postgres]
    a_pet_with_every_field_reads_back_as_sent,
    the_listing_filters_by_category_tag_and_name_and_pages,
    an_order_keeps_the_price_it_was_placed_at,
);

mod refused {
    use super::*;
    on_backends!([memory] bad_catalogue_fields_are_400_naming_each);
}
