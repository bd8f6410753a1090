#!/usr/bin/env bash
# The hexagon's rule, checked on the resolved dependency graph (transitive, normal edges):
#   domain and application depend on no framework (actix, diesel, r2d2, tokio);
#   domain also not on serde_json; the http and persistence adapters never depend on each other.
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
forbid petstore-http "petstore-persistence|petstore-server|diesel|r2d2"
forbid petstore-persistence "petstore-http|petstore-server|actix-web|actix-http"
exit $failed
