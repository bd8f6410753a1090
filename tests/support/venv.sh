#!/usr/bin/env bash
# Ensures the project's Python virtualenv (.venv/, gitignored) holds the pinned packages of the
# given requirements files: `tests/support/venv.sh tests/contract/requirements.txt ...`.
# pip runs only when a file changed since its last install (a hash stamp in .venv/), so repeated
# `make test` / `make contract` runs cost nothing and CI's first run installs from scratch.
set -euo pipefail
cd "$(dirname "$0")/../.."

VENV=.venv
PYTHON=${PYTHON:-python3}

if [[ $PYTHON == python3 ]]; then
    bash .ci/install-deps.sh python
fi

if ! command -v "$PYTHON" >/dev/null; then
    echo "python3 not found; install it with: apt-get install -y python3 python3-venv" >&2
    exit 1
fi
if [[ ! -x $VENV/bin/python ]]; then
    # A half-made venv (e.g. python3-venv missing) must not be mistaken for a good one later.
    rm -rf "$VENV"
    if ! "$PYTHON" -m venv "$VENV"; then
        rm -rf "$VENV"
        echo "could not create $VENV; install venv support with: apt-get install -y python3-venv" >&2
        exit 1
    fi
fi

for req in "$@"; do
    stamp="$VENV/.installed-$(echo "$req" | tr '/' '_').sha256"
    sum=$(sha256sum "$req" | cut -d' ' -f1)
    if [[ -f $stamp && $(cat "$stamp") == "$sum" ]]; then
        continue
    fi
    echo "installing $req into $VENV ..." >&2
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
    echo "$sum" > "$stamp"
done
