#!/usr/bin/env bash
# The OpenAPI linters of `make lint`: Spectral and Redocly (pinned in .ci/openapi-lint, installed
# from the npm registry with the machine's Node.js) on both committed documents. Any error, and
# any warning not turned off with its reason in .ci/openapi-lint/.spectral.yaml or redocly.yaml,
# fails. The documents are the served ones: tests/api/openapi.rs keeps them equal.
set -euo pipefail
bash "$(dirname "$0")/install-deps.sh" node
cd "$(dirname "$0")/openapi-lint"
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
npm ci --silent --no-audit --no-fund --ignore-scripts
documents=(../../docs/openapi.json ../../docs/openapi-3.0.json)
./node_modules/.bin/spectral lint --fail-severity=warn --ruleset .spectral.yaml "${documents[@]}"
# Redocly exits 0 on warnings: its summary is read for them.
report=$(./node_modules/.bin/redocly lint --config redocly.yaml --format=summary "${documents[@]}" 2>&1) || {
    echo "$report" >&2
    exit 1
}
if grep -qE "^(warning|error) " <<<"$report"; then
    echo "$report" >&2
    echo "redocly: warnings (above)" >&2
    exit 1
fi
echo "ok: Spectral and Redocly, both OpenAPI documents, no errors or warnings"
