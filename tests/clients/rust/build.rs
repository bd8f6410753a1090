//! Generates the client from the committed OpenAPI 3.0 document (progenitor refuses 3.1) into
//! `$OUT_DIR/petstore_client.rs`, which `src/main.rs` includes. The document is the one users
//! download: nothing is patched here, so a document a generated client cannot live with fails
//! this build.

use std::{env, fs, path::PathBuf};

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let document = manifest_dir.join("../../../docs/openapi-3.0.json");
    println!("cargo:rerun-if-changed={}", document.display());
    println!("cargo:rerun-if-changed=build.rs");

    let text = fs::read_to_string(&document)
        .unwrap_or_else(|e| panic!("reading {}: {e}", document.display()));
    let spec: openapiv3::OpenAPI = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{} is not an OpenAPI 3.0 document: {e}", document.display()));

    let mut generator = progenitor::Generator::default();
    let tokens = generator
        .generate_tokens(&spec)
        .unwrap_or_else(|e| panic!("progenitor refused {}: {e}", document.display()));
    let file: syn::File = syn::parse2(tokens).expect("progenitor generated invalid Rust");
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR")).join("petstore_client.rs");
    fs::write(&out, prettyplease::unparse(&file))
        .unwrap_or_else(|e| panic!("writing {}: {e}", out.display()));
}
