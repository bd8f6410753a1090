#!/usr/bin/env bash
# The load a profile-guided build learns from (`tests/support/build-pgo.sh`):
# `pgo-train.sh BINARY` serves from BINARY (built with `-Cprofile-generate`) on the memory
# backend, on a SQLite file and, when TEST_DATABASE_URL names a PostgreSQL server, on a database
# of its own there, and drives each with wrk through the requests a shop sends most: reads,
# filtered listings, conditional reads, creates (plain, with every catalogue field, with a retry
# key), renames, the event feed and the inventory. Code this load never runs is laid out as
# cold, so a backend left out here would be served slower than by a build without a profile.
set -euo pipefail
binary=$1
port=${PGO_TRAIN_PORT:-18381}
seconds=${PGO_TRAIN_SECONDS:-4}

backends=(memory sqlite)
[[ -n ${TEST_DATABASE_URL:-} ]] && backends+=(postgres)

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

work=$(mktemp -d)
server=
cleanup() {
    [[ -n $server ]] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

for backend in "${backends[@]}"; do
    dir=$work/$backend
    mkdir -p "$dir"
    export PETSTORE_KEY_SECRET
    PETSTORE_KEY_SECRET=$("$binary" keys secret)
    case $backend in
        memory) url=memory: ;;
        sqlite) url=sqlite://$dir/petstore.db ;;
        postgres)
            database=pgo_train_$$
            "${TEST_PSQL:-psql}" -q "$TEST_DATABASE_URL" -c "CREATE DATABASE $database" >/dev/null
            url=${TEST_DATABASE_URL%/*}/$database
            ;;
    esac
    key=
    if [[ $backend != memory ]]; then
        "$binary" migrate --database-url "$url" >/dev/null 2>&1
        key=$("$binary" keys issue --name train --scope store --database-url "$url" 2>/dev/null |
            grep -o 'eyJ[A-Za-z0-9_.-]*' | head -n1)
    fi
    PETSTORE_DATA_DIR=$dir PETSTORE_RATE_LIMIT=100000000/s RUST_LOG=info \
        "$binary" serve --bind "127.0.0.1:$port" --database-url "$url" \
        >"$dir/stdout" 2>/dev/null &
    server=$!
    deadline=$((SECONDS + 60))
    until curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; do
        kill -0 "$server" 2>/dev/null || { echo "the $backend server exited" >&2; exit 1; }
        ((SECONDS < deadline)) || { echo "the $backend server did not start" >&2; exit 1; }
        sleep 0.2
    done
    # The memory backend's only key is the one it prints at start-up.
    until [[ -n $key ]]; do
        key=$(grep -o 'eyJ[A-Za-z0-9_.-]*' "$dir/stdout" | head -n1 || true)
        ((SECONDS < deadline)) || { echo "no key from the $backend server" >&2; exit 1; }
        [[ -n $key ]] || sleep 0.1
    done
    api=http://127.0.0.1:$port/v1
    auth="Authorization: Bearer $key"
    for _ in $(seq 20); do
        curl -fsS -H "$auth" -H 'Content-Type: application/json' -d "$details" "$api/pets" \
            >"$dir/pet.json"
    done
    pet_id=$(grep -o '"id":[^,}]*' "$dir/pet.json" | head -n1 | cut -d: -f2- | tr -d '"')
    etag=$(curl -fsS -D - -o /dev/null -H "$auth" "$api/pets/$pet_id" |
        awk -F': ' 'tolower($1) == "etag" { print $2 }' | tr -d '\r')

    # drive NAME PATH [LUA...]: wrk on PATH for the training's time, each LUA line added to its
    # script; prints the rate under NAME.
    drive() {
        local name=$1 path=$2
        shift 2
        local script=$dir/request.lua
        printf 'wrk.headers["Authorization"] = "Bearer %s"\n' "$key" >"$script"
        printf '%s\n' "$@" >>"$script"
        local summary
        summary=$(wrk -t2 -c64 -d"${seconds}s" -s "$script" "$api$path" |
            awk '/Requests\/sec/ { rate = $2 } /Non-2xx/ { failed = $NF }
                 END { printf "%s requests/s%s", rate, (failed ? ", " failed " not 2xx/3xx" : "") }')
        printf '  %-9s %-22s %s\n' "$backend" "$name" "$summary"
    }
    post=('wrk.method = "POST"' 'wrk.headers["Content-Type"] = "application/json"')
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
    kill "$server"
    wait "$server" 2>/dev/null || true
    server=
done
