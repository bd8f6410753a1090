#!/usr/bin/env bash
# Browser test of `GET /docs`, run by `make test`: headless Debian Chromium opens the live page
# served by the real `petstore serve` and checks it as a person would (tests/browser/docs_test.py).
# On a fresh machine it installs chromium and chromium-driver with apt-get (as root; otherwise it
# fails with the install command). It never skips: a docs page nobody checks is a broken one.
# DOCS_PATH (default /docs) points it elsewhere, e.g. to prove it fails on a missing page.
set -euo pipefail
cd "$(dirname "$0")/../.."

bash .ci/install-deps.sh browser
bash tests/support/venv.sh tests/browser/requirements.txt

source tests/support/test-server.sh
trap test_server_stop EXIT
test_server_start docs-browser

start=$(date +%s)
.venv/bin/python tests/browser/docs_test.py "$TEST_SERVER_ORIGIN" "$TEST_SERVER_KEY" "${DOCS_PATH:-/docs}"
echo "browser test: $(($(date +%s) - start)) s"
