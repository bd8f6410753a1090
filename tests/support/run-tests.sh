#!/usr/bin/env bash
# Every Rust test of the workspace, as `make test` runs them.
#
# With cargo-nextest (on this project's machines): the suites run in parallel, each test in a
# process of its own, on one throwaway PostgreSQL cluster; the outage tests, which stop and
# start their cluster, run at the same time on a cluster of their own. Without it: plain
# `cargo test`, one test binary after another, on one cluster (the outage tests are binaries of
# their own and so never overlap another PostgreSQL test).
set -euo pipefail
cd "$(dirname "$0")/../.."
CARGO=${CARGO:-cargo}

if ! "$CARGO" nextest --version >/dev/null 2>&1; then
    echo "run-tests: cargo-nextest not found; running the tests one binary at a time" >&2
    exec bash tests/support/with-postgres.sh "$CARGO" test --workspace
fi

OUTAGE='binary(outage) | binary(postgres_outage)'
"$CARGO" nextest run --workspace --no-run

outage_log=$(mktemp "${TMPDIR:-/tmp}/petstore-outage-tests.XXXXXX")
trap 'rm -f "$outage_log"' EXIT
bash tests/support/with-postgres.sh "$CARGO" nextest run --workspace -E "$OUTAGE" \
    >"$outage_log" 2>&1 &
outage=$!

status=0
bash tests/support/with-postgres.sh "$CARGO" nextest run --workspace -E "not ($OUTAGE)" || status=$?
outage_status=0
wait "$outage" || outage_status=$?
echo "--- outage tests (their own cluster) ---"
cat "$outage_log"
if [[ $status -ne 0 || $outage_status -ne 0 ]]; then
    exit 1
fi
