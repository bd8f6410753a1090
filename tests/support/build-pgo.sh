#!/usr/bin/env bash
# `make pgo-profile`: trains the profile the release build is optimised with (profile-guided
# optimisation), deploy/pgo/petstore.profdata (PGO_PROFILE). Two steps: a build that counts
# where its code goes (target/pgo/generate), then the load of tests/support/pgo-train.sh on it
# (PostgreSQL too when run under tests/support/with-postgres.sh, as the Makefile does). The
# counts are merged by the llvm-profdata of the LLVM rustc is built on, keeping only the
# functions the load ran (`--sparse`: a fifth of the size). `make release` and `make image`
# then lay out the hot paths together and the cold ones apart. What it gains is in
# docs/benchmarks.md (*Profile-guided builds*).
set -euo pipefail
cd "$(dirname "$0")/../.."
CARGO=${CARGO:-cargo}
profile=${PGO_PROFILE:-$PWD/deploy/pgo/petstore.profdata}

llvm_major=$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')
profdata=llvm-profdata-$llvm_major
command -v "$profdata" >/dev/null || {
    echo "no $profdata (rustc is built on LLVM $llvm_major): make deps-pgo installs it" >&2
    exit 1
}
# An explicit target keeps the flags off build scripts and procedural macros, which run only
# while building.
host=$(rustc -vV | sed -n 's/^host: //p')
out=$PWD/target/pgo
raw=$out/raw
rm -rf "$raw"
mkdir -p "$raw"

echo "1/2 the instrumented build" >&2
RUSTFLAGS="-Cprofile-generate=$raw" "$CARGO" build --release --bin petstore \
    --target "$host" --target-dir "$out/generate"

echo "2/2 the training load" >&2
bash tests/support/pgo-train.sh "$out/generate/$host/release/petstore"
mkdir -p "$(dirname "$profile")"
"$profdata" merge --sparse -o "$profile" "$raw"
echo "wrote $profile: make release builds with it" >&2
