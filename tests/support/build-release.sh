#!/usr/bin/env bash
# `make release`: the release `petstore` optimised with the committed profile
# deploy/pgo/petstore.profdata (PGO_PROFILE), installed at target/pgo/petstore. Built exactly as
# the profile's instrumented build was (tests/support/build-pgo.sh): with `--release` and an
# explicit `--target`, since both change the symbols the profile names its functions by, and a
# function the profile does not find is laid out as if there were no profile. The explicit
# target also keeps the flag off build scripts and procedural macros.
set -euo pipefail
cd "$(dirname "$0")/../.."
CARGO=${CARGO:-cargo}
profile=${PGO_PROFILE:-$PWD/deploy/pgo/petstore.profdata}
host=$(rustc -vV | sed -n 's/^host: //p')

RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-use=$profile" "$CARGO" build --release --bin petstore \
    --target "$host"
mkdir -p target/pgo
install -m 0755 "target/$host/release/petstore" target/pgo/petstore
echo "built target/pgo/petstore" >&2
