#!/usr/bin/env bash
# Makes the toolchain rust-toolchain.toml pins available to rustup before any cargo command
# reads that file. When the Rust already installed is that version (as on this project's
# machines, whose network reaches crates.io but not static.rust-lang.org), it is linked under the
# pinned name instead of downloaded; otherwise rustup installs it. Without rustup (a distribution's
# cargo) the file is not read and there is nothing to do.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
command -v rustup >/dev/null || exit 0
pinned=$(sed -n 's/^channel *= *"\(.*\)"/\1/p' "$root/rust-toolchain.toml")
# Outside the project, so that rustup answers with the default toolchain, not the pinned one.
cd /
if rustup toolchain list | grep -q "^$pinned-"; then
    exit 0
fi
if [[ "$(rustc --version | awk '{print $2}')" == "$pinned" ]]; then
    # `rustup toolchain link` refuses a version number as a name, so the link is made by hand:
    # a toolchain is a directory under rustup's home named after the version and the host.
    host=$(rustc -vV | sed -n 's/^host: //p')
    ln -sfn "$(rustc --print sysroot)" "${RUSTUP_HOME:-$HOME/.rustup}/toolchains/$pinned-$host"
    echo "ensure-toolchain: the installed Rust $pinned serves as the pinned toolchain"
else
    rustup toolchain install "$pinned" --profile minimal --component rustfmt,clippy
fi
