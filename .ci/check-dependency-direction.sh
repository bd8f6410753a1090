#!/usr/bin/env bash
# The hexagon's rule, checked on the resolved dependency graph (transitive, normal edges):
#   domain and application depend on no framework (actix, diesel, r2d2, tokio);
#   domain also not on serde_json; the http and persistence adapters never depend on each other;
#   the webhooks adapter depends on neither, nor on a web framework or a database, nor they on it.
# Then, over every crate of the build for every target: no aws-lc-sys (TLS uses ring).
set -euo pipefail
cd "$(dirname "$0")/.."

failed=0
forbid() {
  local crate=$1 pattern=$2
  local tree found
  # A cargo tree that fails, or lists nothing, must fail the check rather than pass it vacuously.
  if ! tree=$(cargo tree --quiet -p "$crate" -e normal --prefix none | awk '{print $1}'); then
    echo "cargo tree failed for $crate" >&2
    exit 1
  fi
  if ! grep -qx "$crate" <<<"$tree"; then
    echo "cargo tree did not list $crate itself; cannot check its dependencies" >&2
    exit 1
  fi
  found=$(grep -E "^($pattern)$" <<<"$tree" | sort -u | tr '\n' ' ' || true)
  if [ -n "$found" ]; then
    echo "dependency rule broken: $crate depends on $found" >&2
    failed=1
  else
    echo "ok: $crate does not depend on ${pattern//|/, }"
  fi
}

frameworks='actix-web|actix-http|actix-rt|awc|diesel|diesel_migrations|r2d2|tokio|libsqlite3-sys|pq-sys'
forbid petstore-domain "$frameworks|serde_json|petstore-application|petstore-http|petstore-persistence|petstore-server"
forbid petstore-application "$frameworks|petstore-http|petstore-persistence|petstore-server"
forbid petstore-http "petstore-persistence|petstore-webhooks|petstore-server|diesel|r2d2"
forbid petstore-persistence "petstore-http|petstore-webhooks|petstore-server|actix-web|actix-http"
forbid petstore-webhooks "actix-web|actix-http|awc|diesel|r2d2|libsqlite3-sys|pq-sys|petstore-http|petstore-persistence|petstore-server"

# rustls and its family default to aws-lc-rs, a large C build nothing here needs: one dependency
# left with its default features would bring it back.
if ! everything=$(cargo tree --quiet --workspace --target all -e normal,build,dev --prefix none | awk '{print $1}'); then
  echo "cargo tree failed for the workspace" >&2
  exit 1
fi
if grep -qx 'aws-lc-sys' <<<"$everything"; then
  echo "dependency rule broken: aws-lc-sys is in the build (a rustls-family dependency with its default features?)" >&2
  failed=1
else
  echo "ok: no crate depends on aws-lc-sys"
fi
exit $failed
