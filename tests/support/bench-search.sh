#!/usr/bin/env bash
# listPets filtered against unfiltered on SQLite at N pets (1,000,000 by default): the figures
# of docs/benchmarks.md, *Search*. Seeds the file with sqlite3 (a tenth of the pets tagged
# `dog`, names `Pet <i>`, a hundred categories), starts the release binary, and runs wrk on each
# listing ROUNDS times (2), alternating, so each filter is compared with the unfiltered page of
# the same moment. Needs `cargo build --release --bin petstore`, sqlite3 and wrk
# (`make deps-bench`).
set -euo pipefail
cd "$(dirname "$0")/../.."
PETSTORE=${PETSTORE:-target/release/petstore}
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
         CASE i % 10 WHEN 0 THEN 'dog' END
  FROM n;
  INSERT INTO pet_tags (tag, pet_id) SELECT 'dog', id FROM pets WHERE tags = 'dog';"
KEY=$("$PETSTORE" keys issue --name bench --scope read --database-url "$DB")
PORT=18091
"$PETSTORE" serve --bind 127.0.0.1:$PORT --database-url "$DB" 2>"$DIR/server.log" &
SERVER=$!
trap 'kill $SERVER; rm -rf "$DIR"' EXIT
until curl -fsS http://127.0.0.1:$PORT/readyz >/dev/null 2>&1; do sleep 0.2; done
LUA="$DIR/key.lua"
printf 'wrk.headers["Authorization"] = "Bearer %s"\n' "$KEY" >"$LUA"
for round in $(seq "$ROUNDS"); do
    for query in "limit=20" "limit=20&categoryId=7" "limit=20&tag=dog" "limit=20&name=pet%2099" \
        "limit=20&tag=dog&categoryId=11&status=available"; do
        result=$(wrk -t2 -c64 -d"${SECONDS_EACH}s" --latency -s "$LUA" \
            "http://127.0.0.1:$PORT/v1/pets?$query")
        rate=$(echo "$result" | awk '/Requests\/sec/ {print $2}')
        p99=$(echo "$result" | awk '$1 == "99%" {print $2}')
        max=$(echo "$result" | awk '$1 == "Latency" {print $4}')
        printf 'round %s  %-50s %10s req/s  p99 %8s  max %8s\n' "$round" "$query" "$rate" "$p99" "$max"
    done
done
