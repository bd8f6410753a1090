//! `HttpState`: what every handler needs, shared by all workers.

use std::sync::Arc;

use petstore_application::PetService;

use crate::auth::ApiKeys;

/// The use cases, the key verifier and the HTTP settings. Cheap to clone (everything is behind
/// an `Arc`), as `HttpServer::new` clones it once per worker.
#[derive(Debug, Clone)]
pub struct HttpState {
    service: PetService,
    keys: Arc<ApiKeys>,
    json_limit: usize,
}

impl HttpState {
    /// Largest accepted JSON request body, in bytes: 64 KiB. A pet is well under 1 KiB; the
    /// limit only has to stop a client from making the server buffer megabytes.
    pub const DEFAULT_JSON_LIMIT: usize = 64 * 1024;

    pub fn new(service: PetService, keys: ApiKeys) -> Self {
        Self {
            service,
            keys: Arc::new(keys),
            json_limit: Self::DEFAULT_JSON_LIMIT,
        }
    }

    /// Replaces the JSON body limit (bytes); bodies over it get 413 `payload_too_large`.
    pub fn with_json_limit(mut self, bytes: usize) -> Self {
        self.json_limit = bytes;
        self
    }

    pub fn service(&self) -> &PetService {
        &self.service
    }

    pub fn keys(&self) -> &ApiKeys {
        &self.keys
    }

    pub fn json_limit(&self) -> usize {
        self.json_limit
    }
}
