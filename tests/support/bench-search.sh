#!/usr/bin/env bash
# listPets filtered against unfiltered on SQLite at N pets (1,000,000 by default), the search
# part of `make bench` (docs/benchmarks.md, *Search*). The pets are spread evenly over 100
# categories (`1 + i % 100`), the three statuses (`i % 3`) and 50 tags, one a pet
# (`tag<(i / 300) % 50>`, so a tag is independent of a category and a status), named `Pet <i>`.
# Seeds the file with sqlite3, starts the release binary, and runs wrk on each listing ROUNDS
# times (2), each filter right after an unfiltered run, so each is compared with the unfiltered
# page of the same moment. Needs the release `petstore` (or the build PETSTORE_BINARY names, as
# for the load benchmark), sqlite3 and wrk (`make deps-bench`).
set -euo pipefail
cd "$(dirname "$0")/../.."
PETSTORE=${PETSTORE_BINARY:-target/release/petstore}
N=${N:-1000000}
ROUNDS=${ROUNDS:-2}
SECONDS_EACH=${SECONDS_EACH:-5}
DIR=$(mktemp -d)
DB="sqlite://$DIR/petstore.db"
export PETSTORE_KEY_SECRET
PETSTORE_KEY_SECRET=$("$PETSTORE" keys secret)
"$PETSTORE" migrate --database-url "$DB" >/dev/null
sqlite3 "$DIR/petstore.db" "
  WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $N)
  INSERT INTO pets (name, name_folded, category_id, status, tags)
  SELECT 'Pet ' || i, 'pet ' || i, 1 + i % 100,
         CASE i % 3 WHEN 0 THEN 'available' WHEN 1 THEN 'pending' ELSE 'sold' END,
         'tag' || ((i / 300) % 50)
  FROM n;
  INSERT INTO pet_tags (tag, pet_id) SELECT tags, id FROM pets;"
KEY=$("$PETSTORE" keys issue --name bench --scope read --database-url "$DB")
PORT=${PORT:-18091}
PETSTORE_RATE_LIMIT=100000000/s "$PETSTORE" serve --bind 127.0.0.1:$PORT --database-url "$DB" \
    2>"$DIR/server.log" &
SERVER=$!
trap 'kill $SERVER; wait $SERVER 2>/dev/null; rm -rf "$DIR"' EXIT
until curl -fsS http://127.0.0.1:$PORT/readyz >/dev/null 2>&1; do sleep 0.2; done
LUA="$DIR/key.lua"
printf 'wrk.headers["Authorization"] = "Bearer %s"\n' "$KEY" >"$LUA"

# One wrk run of listing "$1": "<req/s> <p99> <max>"; a non-2xx answer fails the bench.
measure() {
    local result
    result=$(wrk -t2 -c64 -d"${SECONDS_EACH}s" --latency -s "$LUA" \
        "http://127.0.0.1:$PORT/v1/pets?limit=20$1")
    if grep -q "Non-2xx" <<<"$result"; then
        echo "bench-search: $1 answered errors" >&2
        exit 1
    fi
    echo "$(awk '/Requests\/sec/ {print $2}' <<<"$result")" \
        "$(awk '$1 == "99%" {print $2}' <<<"$result")" \
        "$(awk '$1 == "Latency" {print $4}' <<<"$result")"
}

echo "listPets limit=20 on SQLite, $N pets; each filter against the unfiltered run before it"
printf '%-6s %-40s %10s %10s %9s %9s\n' round filter "req/s" ratio p99 max
for round in $(seq "$ROUNDS"); do
    for filter in "&status=sold" "&categoryId=7" "&tag=tag7" "&name=pet%2099" \
        "&categoryId=7&status=sold" "&tag=tag7&status=sold" "&tag=tag7&categoryId=11" \
        "&tag=tag7&categoryId=11&status=available"; do
        unfiltered=$(measure "")
        filtered=$(measure "$filter")
        read -r plain _ _ <<<"$unfiltered"
        read -r rate p99 max <<<"$filtered"
        ratio=$(awk -v a="$rate" -v b="$plain" 'BEGIN {printf "%.3f", a / b}')
        printf '%-6s %-40s %10s %10s %9s %9s\n' "$round" "${filter#&}" "$rate" "$ratio" "$p99" "$max"
    done
done
