#!/usr/bin/env bash
# Browser tests, run by `make test`: headless Debian Chromium opens `GET /docs` served by the real
# `petstore serve` and checks it as a person would (tests/browser/docs_test.py), then calls the API
# from a page on another origin (tests/browser/cors_test.py).
# On a fresh machine it installs chromium and chromium-driver with apt-get (as root; otherwise it
# fails with the install command). It never skips: a docs page nobody checks is a broken one.
# DOCS_PATH (default /docs) points it elsewhere, e.g. to prove it fails on a missing page.
set -euo pipefail
cd "$(dirname "$0")/../.."

bash .ci/install-deps.sh browser
bash tests/support/venv.sh tests/browser/requirements.txt

# The cross-origin test serves a page on this port; the API allows that origin and no other.
PAGE_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export PETSTORE_CORS_ORIGINS="http://127.0.0.1:$PAGE_PORT"

source tests/support/test-server.sh
trap test_server_stop EXIT
test_server_start docs-browser

start=$(date +%s)
.venv/bin/python tests/browser/docs_test.py "$TEST_SERVER_ORIGIN" "$TEST_SERVER_KEY" "${DOCS_PATH:-/docs}"
(cd tests/browser && ../../.venv/bin/python cors_test.py "$TEST_SERVER_ORIGIN" "$TEST_SERVER_KEY" "$PAGE_PORT")
echo "browser test: $(($(date +%s) - start)) s"
