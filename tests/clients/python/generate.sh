#!/usr/bin/env bash
# Generates the Python client from the committed docs/openapi.json (OpenAPI 3.1, which
# openapi-python-client reads) into target/clients/python/petstore_client, with the generator
# pinned in tests/clients/python/requirements.txt (installed into .venv/ when it changed).
# --fail-on-warning: a part of the document the generator cannot turn into code (and would skip
# with a warning) fails the run instead of leaving a client with pieces missing.
set -euo pipefail
cd "$(dirname "$0")/../../.."

OUT=${CLIENTS_TARGET_DIR:-target/clients}/python

bash tests/support/venv.sh tests/clients/python/requirements.txt
rm -rf "$OUT/petstore_client"
mkdir -p "$OUT"
# The generator formats its output with ruff (a post-generation hook), found on PATH.
PATH="$PWD/.venv/bin:$PATH" .venv/bin/openapi-python-client generate \
    --path docs/openapi.json \
    --meta none \
    --output-path "$OUT/petstore_client" \
    --fail-on-warning >"$OUT/generate.log" 2>&1 || {
    cat "$OUT/generate.log" >&2
    echo "openapi-python-client could not generate a client from docs/openapi.json" >&2
    exit 1
}
