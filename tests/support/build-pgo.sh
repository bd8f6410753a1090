#!/usr/bin/env bash
# `make release-pgo`: the release `petstore` optimised with a profile of itself under load
# (profile-guided optimisation), at target/pgo/petstore. Three steps: a build that counts where
# its code goes (target/pgo/generate), the load of tests/support/pgo-train.sh on it (PostgreSQL
# too when run under tests/support/with-postgres.sh, as the Makefile does), and the release
# build again with those counts, which lays out the hot paths together and the cold ones apart
# (target/pgo/use). The counts are merged by the llvm-profdata of the LLVM rustc is built on.
# What it gains is in docs/benchmarks.md (*Profile-guided builds*).
set -euo pipefail
cd "$(dirname "$0")/../.."
CARGO=${CARGO:-cargo}

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

echo "1/3 the instrumented build" >&2
RUSTFLAGS="-Cprofile-generate=$raw" "$CARGO" build --release --bin petstore \
    --target "$host" --target-dir "$out/generate"

echo "2/3 the training load" >&2
bash tests/support/pgo-train.sh "$out/generate/$host/release/petstore"
"$profdata" merge -o "$out/petstore.profdata" "$raw"

echo "3/3 the build with the profile" >&2
RUSTFLAGS="-Cprofile-use=$out/petstore.profdata" "$CARGO" build --release --bin petstore \
    --target "$host" --target-dir "$out/use"
install -m 0755 "$out/use/$host/release/petstore" "$out/petstore"
echo "built $out/petstore" >&2
