#!/usr/bin/env bash
# `make contract`: schema-driven fuzzing of the live service against its own published contract.
# Builds and starts the real `petstore serve`, issues a key, and runs Schemathesis (pinned in
# tests/contract/requirements.txt, installed into .venv/) against the served /v1/openapi.json
# with every check, positive and negative data, and a fixed seed and example budget, so a run is
# reproducible and takes a few minutes on 2 cores. Any failure fails the target. Then a receiver
# using PyPI's `standardwebhooks` verifies every webhook a server of its own posts
# (tests/webhooks/run.sh).
#
# Extra arguments go to `st run` (e.g. --continue-on-failure). Knobs (environment):
# CONTRACT_SEED, CONTRACT_MAX_EXAMPLES, CONTRACT_WORKERS; CONTRACT_SCHEMA to fuzz another
# document (a file or URL) against the same live server, e.g. while developing.
# Reports (JUnit XML, NDJSON events) go to target/contract/.
set -euo pipefail
cd "$(dirname "$0")/../.."

SEED=${CONTRACT_SEED:-20261122}
MAX_EXAMPLES=${CONTRACT_MAX_EXAMPLES:-500}
WORKERS=${CONTRACT_WORKERS:-2}
REPORT_DIR=target/contract

bash tests/support/venv.sh tests/contract/requirements.txt

source tests/support/test-server.sh
trap test_server_stop EXIT
# A `store` key: Schemathesis sends one key to every operation, approveOrder and deliverOrder
# (the staff's) included. And a bound on open orders no run reaches, so that placeOrder keeps
# placing orders instead of answering 409 `too_many_open_orders` after the tenth (the bound has
# its own tests in tests/api/orders.rs).
export TEST_SERVER_SCOPE=store PETSTORE_MAX_OPEN_ORDERS_PER_KEY=100000
# createWebhookEndpoint's URLs (tests/contract/hooks.py) name a host resolved without DNS to a
# private address, which every delivery refuses before connecting: no run reaches the network.
# After the first attempt the next is a day away, so deliveries stay still during a run.
export PETSTORE_WEBHOOK_HOSTS=hooks.contract.test=10.0.0.1 PETSTORE_WEBHOOK_RETRY_SCHEDULE=0s,24h
test_server_start contract

# For tests/contract/hooks.py, which fetches real listPets cursors from the server.
export CONTRACT_BASE_URL=$TEST_SERVER_ORIGIN/v1 CONTRACT_API_KEY=$TEST_SERVER_KEY

schema=${CONTRACT_SCHEMA:-$TEST_SERVER_ORIGIN/v1/openapi.json}
rm -rf "$REPORT_DIR" && mkdir -p "$REPORT_DIR"

# --url: the document's `servers` name production and staging; requests must go to this server.
# --generation-database none: nothing carried over between runs, so the seed alone decides.
# The config file makes the warnings that mean "the run tested nothing real" fatal.
start=$(date +%s)
.venv/bin/st --config-file tests/contract/schemathesis.toml run "$schema" \
    --url "$TEST_SERVER_ORIGIN/v1" \
    --header "Authorization: Bearer $TEST_SERVER_KEY" \
    --checks all \
    --mode all \
    --seed "$SEED" \
    --max-examples "$MAX_EXAMPLES" \
    --workers "$WORKERS" \
    --generation-database none \
    --request-timeout 10 \
    --no-color \
    --report junit,ndjson --report-dir "$REPORT_DIR" \
    "$@"
echo "contract: passed in $(($(date +%s) - start)) s (seed $SEED, $MAX_EXAMPLES examples per operation)"
# One plain "N passed, N failed" line (per operation, plus the stateful run) for CI's summary.
.venv/bin/python - "$REPORT_DIR"/junit-*.xml <<'PY'
import sys, xml.etree.ElementTree as ET
suite = ET.parse(sys.argv[1]).getroot()
tests, failed = int(suite.get("tests")), int(suite.get("failures")) + int(suite.get("errors"))
print(f"contract: {tests - failed} passed, {failed} failed")
PY
bash tests/webhooks/run.sh # webhooks verified by Python's standardwebhooks, on a server of its own
