#!/usr/bin/env bash
# `make image`: the release binary (`make release`'s, optimised with the committed profile),
# stripped, and what it needs, staged into target/image-context and built FROM scratch with
# podman, pulling nothing. Prints the image's name and size. IMAGE names it (default
# localhost/petstore:<version>); IMAGE_BINARY takes another build instead of building one.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CONTAINERS_CONF="$PWD/deploy/container/containers.conf"
CARGO=${CARGO:-cargo}

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)
image=${IMAGE:-localhost/petstore:$version}
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
if ! git diff --quiet HEAD 2>/dev/null; then
    revision="$revision-dirty"
fi
source_url=${IMAGE_SOURCE:-$(git remote get-url origin 2>/dev/null || echo unknown)}

if [[ -z ${IMAGE_BINARY:-} ]]; then
    CARGO=$CARGO bash tests/support/build-release.sh
    IMAGE_BINARY=target/pgo/petstore
fi
binary=target/image-binary/petstore
mkdir -p "${binary%/*}"
strip --strip-all -o "$binary" "$IMAGE_BINARY"

context=target/image-context
rm -rf "$context"
mkdir -p "$context/root/etc/ssl/certs" "$context/data/data"
install -m 0755 "$binary" "$context/root/petstore"
# The dynamic loader and every library it resolves for the binary, at the same paths.
for library in $(ldd "$binary" | grep -oE '/[^ ]+'); do
    cp -L --parents "$library" "$context/root/"
done
cp -L /etc/ssl/certs/ca-certificates.crt "$context/root/etc/ssl/certs/"
echo 'petstore:x:10001:10001:petstore:/data:/nonexistent' >"$context/root/etc/passwd"
echo 'petstore:x:10001:' >"$context/root/etc/group"

# Docker's format, not plain OCI: OCI images have no HEALTHCHECK, and podman and Docker run
# the image's own check only from it. Every registry and runtime accepts both.
# The labels of this build go on with --label: they are set on the image even when podman
# takes every layer from its cache (build arguments would not change a cached LABEL).
podman build --quiet --format docker \
    --label org.opencontainers.image.version="$version" \
    --label org.opencontainers.image.revision="$revision" \
    --label org.opencontainers.image.source="$source_url" \
    --label org.opencontainers.image.created="$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    -f deploy/container/Containerfile -t "$image" "$context" >/dev/null
size=$(podman image inspect --format '{{.Size}}' "$image")
echo "$image: $((size / 1000000)) MB"
