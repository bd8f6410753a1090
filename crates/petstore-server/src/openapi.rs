//! `petstore openapi`: prints the OpenAPI document exactly as `serve` would serve it with the
//! same server URLs. `make openapi` writes `docs/openapi.json` with it.

use std::io::Write;
use std::net::SocketAddr;

use petstore_http::openapi::document_json;
use petstore_http::{ApiServers, ServerUrl};

use crate::cli::{OpenapiArgs, DEFAULT_BIND};
use crate::AppError;

pub fn print(args: OpenapiArgs) -> Result<(), AppError> {
    let production = args.servers.public_url.unwrap_or_else(|| {
        let address: SocketAddr = DEFAULT_BIND
            .parse()
            .expect("the default bind address is valid");
        ServerUrl::for_address(address)
    });
    let servers = ApiServers::new(production, args.servers.staging_url);
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(document_json(&servers).as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(AppError::Output)
}
