//! `petstore openapi`: prints the OpenAPI document exactly as `serve` would serve it with the
//! same server URLs (3.1, or with `--openapi-version 3.0` the 3.0.3 one). `make openapi` writes
//! `docs/openapi.json` and `docs/openapi-3.0.json` with it.

use std::io::Write;
use std::net::SocketAddr;

use petstore_http::openapi::{document_json, document_json_3_0};
use petstore_http::{ApiServers, ServerUrl};

use crate::cli::{OpenapiArgs, OpenapiVersion, DEFAULT_BIND};
use crate::AppError;

pub fn print(args: OpenapiArgs) -> Result<(), AppError> {
    let production = args.servers.public_url.unwrap_or_else(|| {
        let address: SocketAddr = DEFAULT_BIND
            .parse()
            .expect("the default bind address is valid");
        ServerUrl::for_address(address)
    });
    let servers = ApiServers::new(production, args.servers.staging_url);
    let document = match args.version {
        OpenapiVersion::V3_1 => document_json(&servers),
        OpenapiVersion::V3_0 => document_json_3_0(&servers),
    };
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(document.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(AppError::Output)
}
