//! Conditional requests (RFC 9110 §13) as a client with a cache makes them: a page's `ETag` sent
//! back in `If-None-Match` answers 304 without a body while the page is unchanged, a change (a
//! new pet, an order moving a pet) gives the page a new tag, a gzipped page carries its tag with
//! `-gz` and either form revalidates it, and keyed reads may be kept only by their own client,
//! which revalidates them.

use serde_json::json;

use petstore_test_support::on_backends;
use petstore_test_support::{send, TestApp};

use crate::compression::{fetch, RawResponse};

/// The wire-level checks of a conditional answer.
trait Conditional {
    fn etag(&self) -> &str;
    fn assert_not_modified(&self, etag: &str);
}

impl Conditional for RawResponse {
    fn etag(&self) -> &str {
        self.header("etag").expect("an ETag")
    }

    /// Asserts a 304 as RFC 9110 §15.4.5 has it: no body, no content type or length, and the
    /// `ETag` and `Cache-Control` of the 200 it stands for.
    fn assert_not_modified(&self, etag: &str) {
        assert_eq!(
            self.status,
            304,
            "{:?}",
            String::from_utf8_lossy(&self.body)
        );
        assert!(self.body.is_empty(), "{:?}", self.body);
        assert_eq!(self.header("content-type"), None);
        assert_eq!(self.header("content-length"), None);
        assert_eq!(self.header("content-encoding"), None);
        assert_eq!(self.etag(), etag);
        assert_eq!(self.header("cache-control"), Some("private, no-cache"));
    }
}

/// `GET path` with the app's key and the given `If-None-Match` and `Accept-Encoding`.
async fn get(
    app: &TestApp,
    path: &str,
    if_none_match: Option<&str>,
    accept_encoding: Option<&str>,
) -> RawResponse {
    let mut request = app.get(path);
    if let Some(value) = if_none_match {
        request = request.insert_header(("If-None-Match", value));
    }
    fetch(request, accept_encoding).await
}

async fn a_page_sent_back_by_its_tag_answers_304_without_a_body(app: TestApp) {
    for name in ["Rex", "Tom", "Kit"] {
        app.create_pet(json!({"name": name, "categoryId": 1})).await;
    }
    let page = get(&app, "/v1/pets?limit=2", None, None).await;
    assert_eq!(page.status, 200);
    let etag = page.etag().to_owned();
    assert!(
        etag.starts_with('"') && etag.ends_with('"') && etag.len() > 2,
        "a strong tag: {etag}"
    );
    assert_eq!(page.header("cache-control"), Some("private, no-cache"));
    let link = page.header("link").expect("a next page").to_owned();

    let same = get(&app, "/v1/pets?limit=2", None, None).await;
    assert_eq!(same.etag(), etag, "an unchanged page keeps its tag");

    for if_none_match in [
        etag.clone(),
        format!("W/{etag}"),
        format!(r#""0000000000000000", {etag}"#),
        "*".to_owned(),
    ] {
        let revalidated = get(&app, "/v1/pets?limit=2", Some(&if_none_match), None).await;
        revalidated.assert_not_modified(&etag);
        assert_eq!(revalidated.header("link"), Some(link.as_str()));
    }
    let head = app
        .client
        .head(app.url("/v1/pets?limit=2"))
        .bearer_auth(&app.api_key)
        .insert_header(("If-None-Match", etag.as_str()))
        .send()
        .await
        .expect("an answer");
    assert_eq!(head.status().as_u16(), 304);

    // Another page, another tag, and a value that is no list of tags: answered in full.
    let other_page = get(&app, "/v1/pets?limit=3", Some(&etag), None).await;
    assert_eq!(other_page.status, 200);
    assert_ne!(other_page.etag(), etag);
    let malformed = get(&app, "/v1/pets?limit=2", Some("not a tag"), None).await;
    assert_eq!(malformed.status, 200);
    assert_eq!(malformed.etag(), etag);
}

async fn a_new_pet_gives_the_page_a_new_tag(app: TestApp) {
    app.create_pet(json!({"name": "Rex", "categoryId": 1}))
        .await;
    let before = get(&app, "/v1/pets", None, None).await;
    assert_eq!(before.status, 200);
    let old_tag = before.etag().to_owned();

    app.create_pet(json!({"name": "Tom", "categoryId": 2}))
        .await;
    let after = get(&app, "/v1/pets", Some(&old_tag), None).await;
    assert_eq!(after.status, 200, "the page changed: it is sent in full");
    let pets: serde_json::Value = serde_json::from_slice(&after.body).expect("JSON");
    assert_eq!(pets.as_array().map(Vec::len), Some(2));
    let new_tag = after.etag().to_owned();
    assert_ne!(new_tag, old_tag);

    get(&app, "/v1/pets", Some(&new_tag), None)
        .await
        .assert_not_modified(&new_tag);
}

/// An order moves its pet to `pending`: a page holding that pet is not answered 304 with the
/// tag it had before.
async fn an_order_gives_its_pets_page_a_new_tag(app: TestApp) {
    let pet = app
        .create_pet(json!({"name": "Rex", "categoryId": 1}))
        .await;
    let path = format!("/v1/pets?id={}", pet["id"]);
    let before = get(&app, &path, None, None).await;
    assert_eq!(before.status, 200);
    let old_tag = before.etag().to_owned();

    let placed = send(
        app.post_json("/v1/store/orders"),
        Some(json!({"petId": pet["id"]}).to_string()),
    )
    .await;
    assert_eq!(placed.status.as_u16(), 201, "{}", placed.body);

    let after = get(&app, &path, Some(&old_tag), None).await;
    assert_eq!(
        after.status, 200,
        "the pet changed: its page is sent in full"
    );
    let pets: serde_json::Value = serde_json::from_slice(&after.body).expect("JSON");
    assert_eq!(pets[0]["status"], "pending");
    assert_ne!(after.etag(), old_tag);
}

async fn a_gzipped_page_carries_its_tag_with_the_suffix_and_either_form_revalidates(app: TestApp) {
    for n in 0..40 {
        app.create_pet(json!({"name": format!("Rex {n}"), "categoryId": 1}))
            .await;
    }
    let plain = get(&app, "/v1/pets?limit=40", None, None).await;
    let gzipped = get(&app, "/v1/pets?limit=40", None, Some("gzip")).await;
    assert_eq!((plain.status, gzipped.status), (200, 200));
    assert_eq!(plain.header("content-encoding"), None);
    assert_eq!(gzipped.header("content-encoding"), Some("gzip"));
    let tag = plain.etag().to_owned();
    let gzip_tag = format!("{}-gz\"", tag.trim_end_matches('"'));
    assert_eq!(gzipped.etag(), gzip_tag);

    for sent in [&tag, &gzip_tag] {
        let for_gzip = get(&app, "/v1/pets?limit=40", Some(sent), Some("gzip")).await;
        for_gzip.assert_not_modified(&gzip_tag);
        assert!(for_gzip.varies_by_encoding(), "{sent}");

        let for_plain = get(&app, "/v1/pets?limit=40", Some(sent), None).await;
        for_plain.assert_not_modified(&tag);
        assert!(for_plain.varies_by_encoding(), "{sent}");
    }
}

async fn keyed_reads_are_kept_only_by_their_client_and_revalidated(app: TestApp) {
    let pet = app
        .create_pet(json!({"name": "Rex", "categoryId": 1}))
        .await;
    for path in [
        "/v1/pets".to_owned(),
        format!("/v1/pets/{}", pet["id"]),
        "/v1/pets/424242".to_owned(),
    ] {
        let read = get(&app, &path, None, None).await;
        assert_eq!(
            read.header("cache-control"),
            Some("private, no-cache"),
            "{path}"
        );
    }
    let write = app
        .post_json("/v1/pets")
        .send_body(json!({"name": "Tom", "categoryId": 1}).to_string())
        .await
        .expect("an answer");
    assert_eq!(write.status().as_u16(), 201);
    assert_eq!(
        write
            .headers()
            .get("cache-control")
            .and_then(|value| value.to_str().ok()),
        Some("no-store")
    );
}

on_backends!(
    [memory, sqlite, postgres]
    a_page_sent_back_by_its_tag_answers_304_without_a_body,
    a_new_pet_gives_the_page_a_new_tag,
    an_order_gives_its_pets_page_a_new_tag,
    a_gzipped_page_carries_its_tag_with_the_suffix_and_either_form_revalidates,
    keyed_reads_are_kept_only_by_their_client_and_revalidated,
);
