#!/usr/bin/env bash
# Builds the TypeScript client of `make contract` into target/clients/typescript/ (or
# $CLIENTS_TARGET_DIR/typescript): installs the tools pinned in package-lock.json (`npm ci`, the
# machine's Node.js), generates the types from the committed docs/openapi.json (OpenAPI 3.1,
# which openapi-typescript reads) into generated/petstore-api.d.ts, and compiles walkthrough.ts
# with tsc --strict (tsconfig.json) into dist/walkthrough.js, which tests/clients/run.sh runs with
# `node`. A warning from the generator (a part of the document it cannot type) fails the build,
# as --fail-on-warning does for the Python client.
set -euo pipefail
cd "$(dirname "$0")/../../.."

SRC=$PWD/tests/clients/typescript
OUT=${CLIENTS_TARGET_DIR:-target/clients}/typescript
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

bash .ci/install-deps.sh node
start=$(date +%s%N)
(cd "$SRC" && npm ci --silent --no-audit --no-fund --ignore-scripts)
installed=$(date +%s%N)

# The service's licence policy (.ci/deny.toml: permissive licences only) for what npm installed,
# as the lockfile records it; argparse (js-yaml's, under the PSF licence, Python-2.0, permissive)
# is allowed by name. A package under any other licence fails the build.
node - "$SRC/package-lock.json" <<'JS'
const lock = JSON.parse(require("fs").readFileSync(process.argv[2], "utf8"));
const allowed = new Set(["MIT", "Apache-2.0", "Apache-2.0 WITH LLVM-exception", "BSD-2-Clause",
  "BSD-3-Clause", "ISC", "Zlib", "Unicode-3.0", "Unlicense", "BSL-1.0"]);
const byName = new Map([["argparse", "Python-2.0"]]);
// An SPDX expression without nesting: one of its OR alternatives has only allowed licences.
const ok = (expression) => expression.replace(/[()]/g, "").split(" OR ")
  .some((alternative) => alternative.split(" AND ").every((id) => allowed.has(id.trim())));
const refused = Object.entries(lock.packages).filter(([path]) => path !== "")
  .map(([path, { version, license }]) => [path.replace(/.*node_modules\//, ""), version, license])
  .filter(([name, , license]) => !(license && (ok(license) || byName.get(name) === license)));
for (const [name, version, license] of refused) {
  console.error(`npm package ${name}@${version}: licence ${license ?? "(none)"} is not allowed`);
}
process.exit(refused.length ? 1 : 0);
JS

rm -rf "$OUT/generated" "$OUT/dist"
mkdir -p "$OUT/generated"
if ! "$SRC/node_modules/.bin/openapi-typescript" docs/openapi.json \
    --output "$OUT/generated/petstore-api.d.ts" >"$OUT/generate.log" 2>&1 ||
    grep -q '⚠' "$OUT/generate.log"; then
    cat "$OUT/generate.log" >&2
    echo "openapi-typescript could not generate types from docs/openapi.json (above)" >&2
    exit 1
fi
generated=$(date +%s%N)

# The compiled walk-through is an ES module that imports openapi-fetch: beside it, a package.json
# saying so and the way to tests/clients/typescript/node_modules. Its tsconfig.json is the
# committed one, pointed at this directory.
printf '{ "private": true, "type": "module" }\n' >"$OUT/package.json"
ln -sfn "$SRC/node_modules" "$OUT/node_modules"
node -e '
const [src, out] = process.argv.slice(1);
const config = {
  extends: `${src}/tsconfig.json`,
  compilerOptions: { rootDirs: [src, `${out}/generated`], outDir: `${out}/dist` },
};
require("fs").writeFileSync(`${out}/tsconfig.json`, JSON.stringify(config, null, 2) + "\n");
' "$SRC" "$OUT"
"$SRC/node_modules/.bin/tsc" --project "$OUT/tsconfig.json" --pretty false || {
    echo "tsc: the walk-through does not compile against the types from docs/openapi.json" >&2
    exit 1
}
compiled=$(date +%s%N)

# Tenths of a second between two `date +%s%N` readings.
secs() { local ms=$((($2 - $1) / 1000000)); echo "$((ms / 1000)).$((ms % 1000 / 100))"; }
echo "clients: openapi-typescript types generated and compiled in $(secs "$start" "$compiled") s" \
    "(npm ci $(secs "$start" "$installed") s, generation $(secs "$installed" "$generated") s," \
    "tsc $(secs "$generated" "$compiled") s)" >&2
