#!/usr/bin/env bash
# `make contract`, after Schemathesis: our webhooks verified by a receiver in another language
# with the official library (tests/webhooks/receiver.py, `standardwebhooks` pinned in
# tests/webhooks/requirements.txt). Starts a `petstore serve` of its own (SQLite, throwaway),
# not the contract run's: this one may deliver to loopback over plain http and retries within
# seconds, settings that would change what Schemathesis sees. Fails when a delivery is refused,
# missing, or not the feed's event; prints one summary line. TEST_SERVER_BIN and
# TEST_SERVER_DATABASE_URL work as for tests/contract/run.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."

bash tests/support/venv.sh tests/webhooks/requirements.txt

source tests/support/test-server.sh
trap test_server_stop EXIT
# Webhook endpoints are the staff's: a `store` key.
export TEST_SERVER_SCOPE=store
# tests/contract/run.sh, which runs this, exports its own server's webhook settings: none is
# carried over to this one.
for name in $(compgen -e | grep '^PETSTORE_WEBHOOK_' || true); do unset "$name"; done
export PETSTORE_WEBHOOK_ALLOW_LOOPBACK=true PETSTORE_WEBHOOK_RETRY_SCHEDULE=0s,1s,2s
test_server_start webhooks

.venv/bin/python tests/webhooks/receiver.py "$TEST_SERVER_ORIGIN" "$TEST_SERVER_KEY"
