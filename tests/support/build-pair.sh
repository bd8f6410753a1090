#!/usr/bin/env bash
# The two builds a paired measurement compares: the release `petstore` of BASE (a commit, `main`
# by default) and of the working tree, copied to target/bench-paired/petstore-base and
# petstore-head. Used by bench-paired.sh and bench-instructions.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
CARGO=${CARGO:-cargo}
BASE=${BASE:-main}

commit=$(git rev-parse --verify --quiet "$BASE^{commit}") || {
    echo "bench-paired: BASE=$BASE names no commit" >&2
    exit 2
}
out=target/bench-paired
source_dir=$out/src-$commit
mkdir -p "$out"
if [[ ! -f $source_dir/Cargo.toml ]]; then
    rm -rf "$source_dir"
    mkdir -p "$source_dir"
    git archive "$commit" | tar -x -C "$source_dir"
fi

# Both build with the release settings of this tree (Cargo.toml's `[profile.release]`, repeated
# here), whatever the base's own manifest says, so that the pair differs in its code only. Both
# take this tree's .cargo/config.toml too (SQLite's compile options): Cargo reads it from the
# directory it runs in, which is this one for the base as well.
export CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1

# The base builds in a target directory of its own: its crates have the same names and the same
# paths relative to their workspace as the working tree's, so in a shared one Cargo would take
# one build's crates for the other's.
echo "bench-paired: building the base, $BASE ($commit)" >&2
"$CARGO" build --release --bin petstore --manifest-path "$source_dir/Cargo.toml" \
    --target-dir "$out/target"
cp "$out/target/release/petstore" "$out/petstore-base"
echo "bench-paired: building the working tree" >&2
"$CARGO" build --release --bin petstore
cp target/release/petstore "$out/petstore-head"
if cmp -s "$out/petstore-base" "$out/petstore-head"; then
    echo "bench-paired: both builds are the same binary; the ratios measure only noise" >&2
fi
