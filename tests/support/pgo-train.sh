#!/usr/bin/env bash
# The load a profile-guided build learns from (`tests/support/build-pgo.sh`):
# `pgo-train.sh BINARY` serves from BINARY (built with `-Cprofile-generate`) on the memory
# backend, on a SQLite file and, when TEST_DATABASE_URL names a PostgreSQL server, on a database
# of its own there, and drives each with wrk through the requests a shop sends most: reads,
# filtered listings, conditional reads, creates (plain, with every catalogue field, with a retry
# key), renames, the event feed and the inventory. Code this load never runs is laid out as
# cold, so a backend left out here would be served slower than by a build without a profile.
set -euo pipefail
export TEST_SERVER_BIN TEST_SERVER_SCOPE=store
TEST_SERVER_BIN=$(realpath "$1")
cd "$(dirname "$0")/../.."
source tests/support/test-server.sh
export PETSTORE_KEY_SECRET PETSTORE_RATE_LIMIT=100000000/s
PETSTORE_KEY_SECRET=$("$TEST_SERVER_BIN" keys secret)
seconds=${PGO_TRAIN_SECONDS:-4}

urls=(memory: "")
database=pgo_train_$$
psql=${TEST_PSQL:-psql}
if [[ -n ${TEST_DATABASE_URL:-} ]]; then
    "$psql" -q "$TEST_DATABASE_URL" -c "CREATE DATABASE $database" >/dev/null
    urls+=("${TEST_DATABASE_URL%/*}/$database")
fi
finish() {
    test_server_stop
    local rc=$?
    if [[ -n ${TEST_DATABASE_URL:-} ]]; then
        "$psql" -q "$TEST_DATABASE_URL" -c "DROP DATABASE IF EXISTS $database" >/dev/null || true
    fi
    return $rc
}
trap finish EXIT

pet='{"name":"Rex","categoryId":3,"status":"available"}'
details='{"name":"Rex","categoryId":3,"status":"available","price":{"amount":"249.50","currency":"EUR"},"description":"A good dog.\\nHouse-trained, fine with cats.","photoUrls":["https://example.com/rex-1.jpg","https://example.com/rex-2.jpg"],"tags":["friendly","small dog","puppy"]}'
# Each wrk thread has a Lua state of its own: the thread's number keeps their retry keys apart.
keyed='threads = 0
function setup(thread) threads = threads + 1; thread:set("thread_id", threads) end
counter = 0
function request()
  counter = counter + 1
  wrk.headers["Idempotency-Key"] = "train-" .. thread_id .. "-" .. counter
  return wrk.format()
end'
post=('wrk.method = "POST"' 'wrk.headers["Content-Type"] = "application/json"')

for url in "${urls[@]}"; do
    # An empty URL is test-server.sh's default, a SQLite file in the server's directory.
    export TEST_SERVER_DATABASE_URL=$url
    test_server_start pgo-train
    backend=${DATABASE_URL%%:*}
    api=$TEST_SERVER_ORIGIN/v1
    auth="Authorization: Bearer $TEST_SERVER_KEY"
    for _ in $(seq 20); do
        curl -fsS -H "$auth" -H 'Content-Type: application/json' -d "$details" "$api/pets" \
            >"$TEST_SERVER_DIR/pet.json"
    done
    pet_id=$(grep -o '"id":[^,}]*' "$TEST_SERVER_DIR/pet.json" | head -n1 | cut -d: -f2- | tr -d '"')
    etag=$(curl -fsS -D - -o /dev/null -H "$auth" "$api/pets/$pet_id" |
        awk -F': ' 'tolower($1) == "etag" { print $2 }' | tr -d '\r')

    # drive NAME PATH [LUA...]: wrk on PATH for the training's time, each LUA line added to its
    # script; prints the rate under NAME.
    drive() {
        local name=$1 path=$2
        shift 2
        local script=$TEST_SERVER_DIR/request.lua
        printf 'wrk.headers["Authorization"] = "Bearer %s"\n' "$TEST_SERVER_KEY" >"$script"
        printf '%s\n' "$@" >>"$script"
        local summary
        summary=$(wrk -t2 -c64 -d"${seconds}s" -s "$script" "$api$path" |
            awk '/Requests\/sec/ { rate = $2 } /Non-2xx/ { failed = $NF }
                 END { printf "%s requests/s%s", rate, (failed ? ", " failed " not 2xx/3xx" : "") }')
        printf '  %-9s %-22s %s\n' "$backend" "$name" "$summary"
    }
    drive getPet "/pets/$pet_id"
    drive "getPet 304" "/pets/$pet_id" "wrk.headers[\"If-None-Match\"] = '$etag'"
    drive listPets "/pets?limit=20"
    drive "listPets, 3 filters" "/pets?limit=20&status=available&tag=puppy&categoryId=3"
    drive "listPets, name" "/pets?limit=20&name=re"
    drive createPet /pets "${post[@]}" "wrk.body = '$pet'"
    drive "createPet, catalogue" /pets "${post[@]}" "wrk.body = '$details'"
    drive "createPet, retry key" /pets "${post[@]}" "wrk.body = '$pet'" "$keyed"
    drive updatePet "/pets/$pet_id" 'wrk.method = "PATCH"' \
        'wrk.headers["Content-Type"] = "application/merge-patch+json"' \
        "wrk.body = '{\"name\":\"Max\"}'"
    drive events "/events?limit=20"
    drive inventory /store/inventory
    test_server_stop
done
