//! What each measured operation sends (method, path, body, headers, key), prepared on the
//! running server it is about to measure: the pets updatePet changes are created for it, and
//! getPet 304 asks with the tag the pet has. Shared by `make bench` and the paired mode, so
//! both measure the same requests.

use petstore_test_support::{client, send, TestApp};
use serde_json::json;

use crate::wrk;
use crate::Operation;

/// How many pets updatePet changes, each wrk thread its own half: as many as the most
/// connections of a run, so the changes spread over rows instead of queueing on one.
const UPDATED_PETS: usize = 256;

/// The pet getPet reads: the first the createPet runs made, or [`with_a_page_of_pets`] when
/// they did not run.
const READ_PET: &str = "/v1/pets/1";

/// The body of every created pet.
fn new_pet() -> String {
    json!({"name": "Rex", "categoryId": 3, "status": "available"}).to_string()
}

/// `POST /v1/pets` of JSON to `app` with its key, on `client`: a fresh one where the app's own
/// may have sat idle through the earlier runs.
fn post_pet(client: &awc::Client, app: &TestApp) -> awc::ClientRequest {
    client
        .post(app.url("/v1/pets"))
        .bearer_auth(&app.api_key)
        .insert_header(("Content-Type", "application/json"))
}

/// Creates a page of pets (the first of them [`READ_PET`]) unless `app` has them: the reads are
/// measured on the pets the createPet runs made, and on their own (`BENCH_OPERATIONS`, or a
/// base build whose creates failed) on these.
async fn with_a_page_of_pets(app: &TestApp) {
    let read = send(
        client().get(app.url(READ_PET)).bearer_auth(&app.api_key),
        None,
    )
    .await;
    if read.status.as_u16() != 404 {
        return;
    }
    let client = client();
    for _ in 0..20 {
        let created = send(post_pet(&client, app), Some(new_pet())).await;
        assert_eq!(created.status.as_u16(), 201, "{}", created.body);
    }
}

/// One operation's requests, ready for wrk.
pub struct Shape {
    method: &'static str,
    path: String,
    json_body: Option<String>,
    bearer: String,
    header: Option<(&'static str, String)>,
    rotation: Vec<(String, String)>,
}

impl Shape {
    fn new(method: &'static str, path: &str, bearer: &str) -> Self {
        Self {
            method,
            path: path.to_owned(),
            json_body: None,
            bearer: bearer.to_owned(),
            header: None,
            rotation: Vec::new(),
        }
    }

    /// The wrk load against `app`, with a fresh `Idempotency-Key` per request when
    /// `idempotency_keys` names a prefix.
    pub fn load<'a>(&'a self, app: &TestApp, idempotency_keys: Option<&'a str>) -> wrk::Load<'a> {
        wrk::Load {
            method: self.method,
            url: app.url(&self.path),
            bearer: Some(&self.bearer),
            json_body: self.json_body.as_deref(),
            idempotency_keys,
            accept_encoding: None,
            header: self
                .header
                .as_ref()
                .map(|(name, value)| (*name, value.as_str())),
            rotation: &self.rotation,
        }
    }
}

/// The requests of `operation` on `app`, or `None` when `app` lacks the operation (a base build
/// older than it, in a paired run), which is then skipped.
pub async fn prepare(app: &TestApp, operation: Operation) -> Option<Shape> {
    let key = app.api_key.as_str();
    Some(match operation {
        Operation::CreatePet | Operation::CreatePetWithKey => Shape {
            json_body: Some(new_pet()),
            ..Shape::new("POST", "/v1/pets", key)
        },
        Operation::CreatePetWithDetails => {
            let body = json!({
                "name": "Rex", "categoryId": 3, "status": "available",
                "price": {"amount": "249.50", "currency": "EUR"},
                "description": "A good dog.\nHouse-trained, fine with cats.",
                "photoUrls": ["https://example.com/rex-1.jpg", "https://example.com/rex-2.jpg"],
                "tags": ["friendly", "small dog", "puppy"]
            })
            .to_string();
            // A base build without the fields answers 400: skipped there.
            let tried = send(post_pet(&client(), app), Some(body.clone())).await;
            if tried.status.as_u16() != 201 {
                return None;
            }
            Shape {
                json_body: Some(body),
                ..Shape::new("POST", "/v1/pets", key)
            }
        }
        Operation::ListPets => {
            with_a_page_of_pets(app).await;
            Shape::new("GET", "/v1/pets?limit=20", key)
        }
        Operation::GetPet => {
            with_a_page_of_pets(app).await;
            Shape::new("GET", READ_PET, key)
        }
        Operation::GetPetNotModified => {
            with_a_page_of_pets(app).await;
            Shape {
                header: Some(("If-None-Match", current_tag(app).await?)),
                ..Shape::new("GET", READ_PET, key)
            }
        }
        Operation::UpdatePet => changes_of_new_pets(app).await?,
    })
}

/// The pet's `ETag`, once a request naming it answers 304: otherwise the scenario would
/// measure 200s.
async fn current_tag(app: &TestApp) -> Option<String> {
    let get = || client().get(app.url(READ_PET)).bearer_auth(&app.api_key);
    let read = send(get(), None).await;
    assert_eq!(read.status.as_u16(), 200, "{}", read.body);
    let tag = read.header("etag")?.to_owned();
    let again = send(get().insert_header(("If-None-Match", tag.as_str())), None).await;
    (again.status.as_u16() == 304).then_some(tag)
}

/// Renames of [`UPDATED_PETS`] pets created for it, by a `store` key, without `If-Match`: each
/// pet's name alternates between two, so that every request changes the pet (a patch that
/// changes nothing writes nothing).
async fn changes_of_new_pets(app: &TestApp) -> Option<Shape> {
    let staff = app.staff_key().await;
    // A client of its own: the app's has sat idle through the earlier runs.
    let client = client();
    let mut paths = Vec::with_capacity(UPDATED_PETS);
    for n in 0..UPDATED_PETS {
        let created = send(
            post_pet(&client, app),
            Some(json!({"name": format!("Bench {n}"), "categoryId": 3}).to_string()),
        )
        .await;
        assert_eq!(created.status.as_u16(), 201, "{}", created.body);
        paths.push(format!("/v1/pets/{}", created.json()["id"]));
    }
    let rename = |name: &str| json!({ "name": name }).to_string();
    let first = send(
        client
            .patch(app.url(&paths[0]))
            .bearer_auth(&staff)
            .insert_header(("Content-Type", "application/json")),
        Some(rename("Bench renamed")),
    )
    .await;
    if first.status.as_u16() != 200 {
        return None;
    }
    let rotation = ["Bench A", "Bench B"]
        .iter()
        .flat_map(|name| paths.iter().map(|path| (path.clone(), rename(name))))
        .collect();
    Some(Shape {
        rotation,
        ..Shape::new("PATCH", "/v1/pets", &staff)
    })
}
