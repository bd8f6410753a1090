//! `Accept-Encoding: gzip`: large pages, the documents, Swagger UI's files and the metrics come
//! gzip-encoded to a client that asks, byte for byte the same once decoded; small bodies, errors
//! and clients that do not ask get the body as it is. Swagger UI's files cost no compression
//! per request.

use std::io::Read as _;

use awc::http::header::HeaderMap;
use serde_json::{json, Value};

use petstore_test_support::on_backends;
use petstore_test_support::{client, Backend, TestApp};

/// A response as it came over the wire: the body is not decoded.
pub(crate) struct RawResponse {
    pub(crate) status: u16,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Vec<u8>,
}

impl RawResponse {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|value| value.to_str().ok())
    }

    pub(crate) fn varies_by_encoding(&self) -> bool {
        self.headers
            .get_all("vary")
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .any(|name| name.trim().eq_ignore_ascii_case("accept-encoding"))
    }

    fn gunzipped(&self) -> Vec<u8> {
        assert_eq!(self.header("content-encoding"), Some("gzip"));
        let mut decoded = Vec::new();
        flate2::read::GzDecoder::new(&self.body[..])
            .read_to_end(&mut decoded)
            .expect("a whole gzip stream");
        decoded
    }
}

/// `request` sent with `Accept-Encoding: accept_encoding` (none without one), read whole.
pub(crate) async fn fetch(
    request: awc::ClientRequest,
    accept_encoding: Option<&str>,
) -> RawResponse {
    let request = match accept_encoding {
        Some(value) => request.insert_header(("Accept-Encoding", value)),
        None => request,
    };
    let mut response = request.send().await.expect("an answer");
    let body = response
        .body()
        .limit(16 * 1024 * 1024)
        .await
        .expect("a whole body");
    RawResponse {
        status: response.status().as_u16(),
        headers: response.headers().clone(),
        body: body.to_vec(),
    }
}

async fn a_page_of_100_pets_comes_gzipped_to_a_client_that_asks(app: TestApp) {
    for n in 0..100 {
        app.create_pet(json!({"name": format!("Rex {n}"), "categoryId": 1}))
            .await;
    }
    let plain = fetch(app.get("/v1/pets?limit=100"), None).await;
    let gzipped = fetch(app.get("/v1/pets?limit=100"), Some("gzip, deflate, br")).await;

    assert_eq!((plain.status, gzipped.status), (200, 200));
    assert_eq!(plain.header("content-encoding"), None);
    let page: Value = serde_json::from_slice(&plain.body).expect("JSON");
    assert_eq!(page.as_array().map(Vec::len), Some(100));
    assert_eq!(gzipped.gunzipped(), plain.body);
    assert!(
        gzipped.body.len() * 4 < plain.body.len(),
        "{} bytes gzipped of {}",
        gzipped.body.len(),
        plain.body.len()
    );
    assert_eq!(
        gzipped.header("content-length"),
        Some(gzipped.body.len().to_string().as_str())
    );
    assert!(plain.varies_by_encoding() && gzipped.varies_by_encoding());
    // The other headers are the page's own either way.
    assert_eq!(plain.header("link"), gzipped.header("link"));
    assert_eq!(plain.header("content-type"), gzipped.header("content-type"));
}

async fn small_bodies_and_errors_come_as_they_are(app: TestApp) {
    let pet = app
        .create_pet(json!({"name": "Rex", "categoryId": 1}))
        .await;
    let one_pet = fetch(app.get(&format!("/v1/pets/{}", pet["id"])), Some("gzip")).await;
    assert_eq!(one_pet.status, 200);
    assert_eq!(one_pet.header("content-encoding"), None);
    assert!(!one_pet.varies_by_encoding());
    assert_eq!(
        serde_json::from_slice::<Value>(&one_pet.body).expect("a pet")["id"],
        pet["id"]
    );

    let error = fetch(app.get("/v1/pets?limit=0"), Some("gzip")).await;
    assert_eq!(error.status, 400);
    assert_eq!(error.header("content-encoding"), None);
    let error: Value = serde_json::from_slice(&error.body).expect("a JSON Error");
    assert_eq!(error["code"], "invalid_parameter");
}

async fn gzip_refused_by_weight_gets_the_body_as_it_is(app: TestApp) {
    for n in 0..30 {
        app.create_pet(json!({"name": format!("Tom {n}"), "categoryId": 2}))
            .await;
    }
    for refusal in ["gzip;q=0", "identity", "br, zstd", "*;q=0"] {
        let page = fetch(app.get("/v1/pets?limit=30"), Some(refusal)).await;
        assert_eq!(page.status, 200, "{refusal}");
        assert_eq!(page.header("content-encoding"), None, "{refusal}");
        let pets: Value = serde_json::from_slice(&page.body).expect(refusal);
        assert_eq!(pets.as_array().map(Vec::len), Some(30), "{refusal}");
    }
    let wildcard = fetch(app.get("/v1/pets?limit=30"), Some("*")).await;
    let pets: Value = serde_json::from_slice(&wildcard.gunzipped()).expect("a page");
    assert_eq!(pets.as_array().map(Vec::len), Some(30));
}

async fn the_openapi_document_comes_gzipped(app: TestApp) {
    let plain = fetch(client().get(app.url("/v1/openapi.json")), None).await;
    let gzipped = fetch(client().get(app.url("/v1/openapi.json")), Some("gzip")).await;
    assert_eq!((plain.status, gzipped.status), (200, 200));
    assert_eq!(gzipped.gunzipped(), plain.body);
    assert!(gzipped.body.len() * 4 < plain.body.len());
}

/// 1.5 MB: gzip-encoded to a client that asks, the same bytes once decoded, with its length;
/// as it is to one that does not.
async fn the_documentation_script_comes_gzipped(app: TestApp) {
    let path = "/docs/swagger-ui-bundle.js";
    let plain = fetch(client().get(app.url(path)), None).await;
    let gzipped = fetch(client().get(app.url(path)), Some("gzip")).await;
    let again = fetch(client().get(app.url(path)), Some("br, gzip;q=0.5")).await;
    assert_eq!(
        (plain.status, gzipped.status, again.status),
        (200, 200, 200)
    );
    assert!(plain.body.len() > 1_000_000, "{}", plain.body.len());
    assert_eq!(plain.header("content-encoding"), None);
    assert_eq!(gzipped.gunzipped(), plain.body);
    assert_eq!(again.body, gzipped.body);
    assert!(gzipped.body.len() * 2 < plain.body.len());
    for response in [&plain, &gzipped] {
        assert_eq!(
            response.header("content-length"),
            Some(response.body.len().to_string().as_str())
        );
        assert_eq!(
            response
                .headers
                .get_all("vary")
                .flat_map(|value| value.to_str().unwrap_or_default().split(','))
                .filter(|name| name.trim().eq_ignore_ascii_case("accept-encoding"))
                .count(),
            1,
            "Vary names Accept-Encoding once"
        );
        assert_eq!(
            response.header("content-type"),
            plain.header("content-type")
        );
        assert!(response.header("content-security-policy").is_some());
    }
}

/// The page's other files too, whether or not they are worth compressing.
async fn every_documentation_file_decodes_to_the_file_as_it_is(app: TestApp) {
    for path in [
        "/docs/",
        "/docs/swagger-ui.css",
        "/docs/swagger-initializer.js",
        "/docs/favicon-32x32.png",
    ] {
        let plain = fetch(client().get(app.url(path)), None).await;
        let gzipped = fetch(client().get(app.url(path)), Some("gzip")).await;
        assert_eq!((plain.status, gzipped.status), (200, 200), "{path}");
        assert_eq!(plain.header("content-encoding"), None, "{path}");
        let decoded = if gzipped.header("content-encoding").is_some() {
            gzipped.gunzipped()
        } else {
            gzipped.body.clone()
        };
        assert_eq!(decoded, plain.body, "{path}");
        assert_eq!(
            plain.header("content-type"),
            gzipped.header("content-type"),
            "{path}"
        );
    }
}

/// What anyone can ask for without a key must not cost the service a compression each time:
/// the script asked for gzip-encoded takes no more of the server's CPU than asked for as it is
/// (which sends more bytes), within twice that and a tick of the clock.
#[actix_web::test]
async fn the_gzipped_documentation_script_costs_no_more_cpu_than_the_plain_one() {
    const REQUESTS: usize = 30;
    let app = TestApp::spawn_process(Backend::Memory).await;
    let path = "/docs/swagger-ui-bundle.js";
    let cpu_seconds = || async {
        let scrape = fetch(client().get(app.url("/metrics")), None).await;
        let exposition = String::from_utf8(scrape.body).expect("text");
        exposition
            .lines()
            .find_map(|line| line.strip_prefix("process_cpu_seconds_total "))
            .and_then(|value| value.trim().parse::<f64>().ok())
            .expect("process_cpu_seconds_total")
    };
    let cpu_of = |accept_encoding: Option<&'static str>| {
        let cpu_seconds = &cpu_seconds;
        let app = &app;
        async move {
            let before = cpu_seconds().await;
            for _ in 0..REQUESTS {
                let response = fetch(client().get(app.url(path)), accept_encoding).await;
                assert_eq!(response.status, 200);
                assert_eq!(
                    response.header("content-encoding"),
                    accept_encoding,
                    "{accept_encoding:?}"
                );
            }
            cpu_seconds().await - before
        }
    };
    // Whatever is done once, on first use, is done before the measured requests.
    cpu_of(Some("gzip")).await;
    cpu_of(None).await;

    let gzipped = cpu_of(Some("gzip")).await;
    let plain = cpu_of(None).await;
    // A tick of the kernel's CPU clock (10 ms) either way, beside the plain cost itself.
    assert!(
        gzipped <= 2.0 * plain + 0.05,
        "{REQUESTS} gzipped: {gzipped:.3} s of CPU; plain: {plain:.3} s"
    );
}

on_backends!(
    [memory]
    the_documentation_script_comes_gzipped,
    every_documentation_file_decodes_to_the_file_as_it_is,
    a_page_of_100_pets_comes_gzipped_to_a_client_that_asks,
    small_bodies_and_errors_come_as_they_are,
    gzip_refused_by_weight_gets_the_body_as_it_is,
    the_openapi_document_comes_gzipped,
);

/// Prometheus scrapes with `Accept-Encoding: gzip`.
#[actix_web::test]
async fn a_scrape_comes_gzipped_to_prometheus() {
    let app = TestApp::spawn_process(Backend::Sqlite).await;
    app.create_pet(json!({"name": "Rex", "categoryId": 1}))
        .await;
    let scrape = fetch(client().get(app.url("/metrics")), Some("gzip")).await;
    assert_eq!(scrape.status, 200);
    let exposition = String::from_utf8(scrape.gunzipped()).expect("text");
    assert!(
        exposition.contains("petstore_http_requests_total"),
        "{exposition}"
    );
}
