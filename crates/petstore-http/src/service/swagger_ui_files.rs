//! Swagger UI's files as `/docs` serves them, kept in memory: each is read (its settings
//! rendered, for `swagger-initializer.js`) on its first request and gzip-encoded on its first
//! request that accepts gzip, once for the process. Anyone may ask for them without a key, so
//! no request for them may cost a compression: every later one is served from these bytes.

use std::collections::HashMap;
use std::error::Error;
use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use actix_web::http::header::{self, HeaderMap, HeaderValue};
use actix_web::web::{self, Bytes};
use actix_web::HttpResponse;
use utoipa_swagger_ui::Config;

use crate::wire::compression::{
    accepts_gzip, gzip_once, is_compressible, EncodingChosen, MIN_COMPRESSED_BYTES,
};

/// Swagger UI's files for one set of its settings, each kept once it has been asked for.
pub(crate) struct SwaggerUiFiles {
    config: Arc<Config<'static>>,
    /// By the name asked for; only names Swagger UI has are kept, so this stays as small as its
    /// distribution whatever clients ask for.
    files: RwLock<HashMap<Box<str>, Arc<StaticFile>>>,
}

impl SwaggerUiFiles {
    pub(crate) fn new(config: Arc<Config<'static>>) -> Self {
        Self {
            config,
            files: RwLock::default(),
        }
    }

    /// The file called `name` (`""` for `index.html`), or `None` when Swagger UI has none.
    pub(crate) fn file(&self, name: &str) -> Result<Option<Arc<StaticFile>>, Box<dyn Error>> {
        if let Some(file) = self
            .files
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(name)
        {
            return Ok(Some(Arc::clone(file)));
        }
        let Some(found) = utoipa_swagger_ui::serve(name, Arc::clone(&self.config))? else {
            return Ok(None);
        };
        let file = Arc::new(StaticFile::new(&found.content_type, found.bytes));
        let mut files = self.files.write().unwrap_or_else(PoisonError::into_inner);
        // Another request may have read it meanwhile: every caller gets the one kept.
        Ok(Some(Arc::clone(files.entry(name.into()).or_insert(file))))
    }
}

/// One file: its bytes as they are and, for a type worth it, their gzip encoding.
pub(crate) struct StaticFile {
    content_type: HeaderValue,
    identity: Bytes,
    /// `None` for a file not worth compressing (an image, a small file); else its gzip
    /// encoding once made (itself `None` if that was no smaller).
    gzip: Option<OnceLock<Option<Bytes>>>,
    /// How many times the file was gzip-encoded.
    #[cfg(test)]
    compressions: std::sync::atomic::AtomicUsize,
}

impl StaticFile {
    fn new(content_type: &str, bytes: std::borrow::Cow<'static, [u8]>) -> Self {
        let identity = match bytes {
            std::borrow::Cow::Borrowed(bytes) => Bytes::from_static(bytes),
            std::borrow::Cow::Owned(bytes) => Bytes::from(bytes),
        };
        let worth_compressing =
            identity.len() >= MIN_COMPRESSED_BYTES && is_compressible(content_type);
        Self {
            content_type: HeaderValue::from_str(content_type)
                .unwrap_or_else(|_| HeaderValue::from_static("application/octet-stream")),
            identity,
            gzip: worth_compressing.then(OnceLock::new),
            #[cfg(test)]
            compressions: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// `200 OK` with the file for a request with `request_headers`: gzip-encoded if the request
    /// accepts gzip and the file is worth it, as it is otherwise; `Vary: Accept-Encoding` when
    /// the answer depends on it. The response compressor leaves it as it is.
    pub(crate) async fn response(self: Arc<Self>, request_headers: &HeaderMap) -> HttpResponse {
        let mut response = HttpResponse::Ok();
        response.insert_header((header::CONTENT_TYPE, self.content_type.clone()));
        let mut body = self.identity.clone();
        if self.gzip.is_some() {
            response.insert_header((header::VARY, HeaderValue::from_static("accept-encoding")));
            if accepts_gzip(request_headers) {
                if let Some(encoded) = self.gzipped().await {
                    response.insert_header((
                        header::CONTENT_ENCODING,
                        HeaderValue::from_static("gzip"),
                    ));
                    body = encoded;
                }
            }
        }
        let mut response = response.body(body);
        EncodingChosen::mark(&mut response);
        response
    }

    /// The gzip encoding: the one kept, or made on the blocking pool the first time (a worker
    /// must not spend milliseconds on it while its other connections wait).
    async fn gzipped(self: &Arc<Self>) -> Option<Bytes> {
        if let Some(kept) = self.gzip.as_ref()?.get() {
            return kept.clone();
        }
        let file = Arc::clone(self);
        web::block(move || file.gzip_now()).await.ok().flatten()
    }

    /// The gzip encoding, made now unless it was; requests asking meanwhile wait for this one.
    fn gzip_now(&self) -> Option<Bytes> {
        self.gzip
            .as_ref()?
            .get_or_init(|| {
                #[cfg(test)]
                self.compressions
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                gzip_once(&self.identity).map(Bytes::from)
            })
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use actix_web::body::MessageBody as _;
    use actix_web::test::TestRequest;
    use futures_util::future::join_all;

    use super::*;
    use crate::service::docs::swagger_ui_config;

    const SCRIPT: &str = "swagger-ui-bundle.js";

    fn asking_for_gzip() -> HeaderMap {
        TestRequest::default()
            .insert_header((header::ACCEPT_ENCODING, "gzip, deflate, br"))
            .to_http_request()
            .headers()
            .clone()
    }

    fn body(response: HttpResponse) -> Bytes {
        response
            .into_body()
            .try_into_bytes()
            .expect("a body in memory")
    }

    fn gunzip(bytes: &[u8]) -> Vec<u8> {
        let mut decoded = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(bytes), &mut decoded)
            .expect("a whole gzip stream");
        decoded
    }

    #[actix_web::test]
    async fn the_script_is_compressed_once_for_any_number_of_requests_that_accept_gzip() {
        let files = SwaggerUiFiles::new(swagger_ui_config());
        let script = files.file(SCRIPT).unwrap().expect("Swagger UI's script");
        let headers = asking_for_gzip();

        // Eight at once on first use, then eight more one after the other.
        let mut responses = join_all((0..8).map(|_| Arc::clone(&script).response(&headers))).await;
        for _ in 0..8 {
            let file = files.file(SCRIPT).unwrap().unwrap();
            responses.push(file.response(&headers).await);
        }

        assert_eq!(script.compressions.load(Ordering::Relaxed), 1);
        let bodies: Vec<Bytes> = responses
            .into_iter()
            .map(|response| {
                assert_eq!(
                    response.headers().get(header::CONTENT_ENCODING).unwrap(),
                    "gzip"
                );
                body(response)
            })
            .collect();
        // The one buffer made once, not equal copies.
        assert!(bodies
            .iter()
            .all(|body| body.as_ptr() == bodies[0].as_ptr()));
        assert_eq!(gunzip(&bodies[0]), script.identity);
    }

    #[actix_web::test]
    async fn a_client_that_does_not_accept_gzip_gets_the_file_as_it_is_without_a_compression() {
        let files = SwaggerUiFiles::new(swagger_ui_config());
        let script = files.file(SCRIPT).unwrap().unwrap();
        let original = utoipa_swagger_ui::serve(SCRIPT, swagger_ui_config())
            .unwrap()
            .unwrap();

        for refusal in [None, Some("identity"), Some("gzip;q=0"), Some("br")] {
            let mut request = TestRequest::default();
            if let Some(refusal) = refusal {
                request = request.insert_header((header::ACCEPT_ENCODING, refusal));
            }
            let response = Arc::clone(&script)
                .response(request.to_http_request().headers())
                .await;
            assert_eq!(response.headers().get(header::CONTENT_ENCODING), None);
            assert_eq!(
                response.headers().get(header::VARY).unwrap(),
                "accept-encoding"
            );
            assert_eq!(
                response.headers().get(header::CONTENT_TYPE).unwrap(),
                original.content_type.as_str()
            );
            assert_eq!(body(response), original.bytes.as_ref(), "{refusal:?}");
        }
        assert_eq!(script.compressions.load(Ordering::Relaxed), 0);
    }

    #[actix_web::test]
    async fn an_image_goes_out_as_it_is_to_a_client_that_accepts_gzip() {
        let files = SwaggerUiFiles::new(swagger_ui_config());
        let icon = files.file("favicon-32x32.png").unwrap().expect("an icon");
        let response = Arc::clone(&icon).response(&asking_for_gzip()).await;
        assert_eq!(response.headers().get(header::CONTENT_ENCODING), None);
        assert_eq!(response.headers().get(header::VARY), None);
        assert_eq!(body(response), icon.identity);
        assert_eq!(icon.compressions.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn the_settings_are_rendered_into_the_initializer() {
        let files = SwaggerUiFiles::new(swagger_ui_config());
        let initializer = files.file("swagger-initializer.js").unwrap().unwrap();
        let text = std::str::from_utf8(&initializer.identity).unwrap();
        assert!(text.contains("/v1/openapi.json"), "{text}");
        assert!(!text.contains("{{config}}"), "{text}");
    }

    #[test]
    fn only_names_swagger_ui_has_are_kept() {
        let files = SwaggerUiFiles::new(swagger_ui_config());
        for name in ["nothing.js", "../Cargo.toml", "swagger-ui-bundle.js.map.gz"] {
            assert!(files.file(name).unwrap().is_none(), "{name}");
        }
        assert!(files.file("").unwrap().is_some());
        assert!(Arc::ptr_eq(
            &files.file(SCRIPT).unwrap().unwrap(),
            &files.file(SCRIPT).unwrap().unwrap()
        ));
        assert_eq!(files.files.read().unwrap().len(), 2);
    }
}
