#!/usr/bin/env bash
# The paired benchmark (`make bench-paired BASE=COMMIT`, `main` by default): builds the release
# `petstore` of BASE and of the working tree, then measures them side by side in alternating
# rounds (crates/petstore-server/benches/http_load/paired.rs) and prints each scenario's ratio.
# Run it under tests/support/with-postgres.sh to include PostgreSQL (the Makefile does).
set -euo pipefail
cd "$(dirname "$0")/../.."
CARGO=${CARGO:-cargo}

bash tests/support/build-pair.sh
out=target/bench-paired

PAIRED_BASE=$PWD/$out/petstore-base PAIRED_HEAD=$PWD/$out/petstore-head \
    "$CARGO" bench -p petstore-server --bench http_load
