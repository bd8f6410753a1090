#!/usr/bin/env bash
# Every Rust test of the workspace, as `make test` runs them.
#
# With cargo-nextest (on this project's machines): the suites run in parallel, each test in a
# process of its own, on one throwaway PostgreSQL cluster; then the outage tests, which stop and
# start their cluster, on a cluster of their own. They hold the service to deadlines of a second
# under a load of their own (`/readyz` answering while PostgreSQL is down), so they run once
# the other suites are done rather than beside them on the same cores. Without it: plain
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

status=0
bash tests/support/with-postgres.sh "$CARGO" nextest run --workspace -E "not ($OUTAGE)" || status=$?
echo "--- outage tests (their own cluster) ---"
outage_status=0
bash tests/support/with-postgres.sh "$CARGO" nextest run --workspace -E "$OUTAGE" ||
    outage_status=$?
if [[ $status -ne 0 || $outage_status -ne 0 ]]; then
    exit 1
fi
