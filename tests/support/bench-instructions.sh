#!/usr/bin/env bash
# Instructions per request (`make bench-instructions BASE=COMMIT`, `main` by default): the release
# `petstore` of BASE and of the working tree each serve the same requests on the memory backend,
# one worker, under valgrind's callgrind, and the user-space instructions each spent per request
# are printed with their ratio. Unlike requests a second, the count moves by well under 1 %
# between runs, so a change of a few percent in the service's own work shows; the kernel's work
# and any waiting are left out (`make bench-paired` measures those). Each build's profile is kept
# in target/bench-paired/ for `callgrind_annotate --inclusive=yes --tree=calling`.
#
# OPERATIONS (default `getPet listPets createPet`) picks the scenarios; SECONDS_PER_RUN (default
# 10) how long wrk sends each, with 4 connections.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash tests/support/build-pair.sh
out=$PWD/target/bench-paired
seconds=${SECONDS_PER_RUN:-10}
operations=${OPERATIONS:-getPet listPets createPet}

# Prints the instructions per request of BINARY answering OPERATION, and keeps its profile.
measure() {
    local binary=$1 name=$2 operation=$3 port=18390
    local dir
    dir=$(mktemp -d)
    local secret
    secret=$("$binary" keys secret)
    PETSTORE_KEY_SECRET=$secret PETSTORE_DATA_DIR=$dir RUST_LOG=info PETSTORE_WORKERS=1 \
        PETSTORE_RATE_LIMIT=100000000/s \
        valgrind --tool=callgrind --callgrind-out-file="$dir/callgrind.out" \
        "$binary" serve --bind "127.0.0.1:$port" --database-url memory: \
        2>/dev/null >"$dir/stdout" &
    local server=$!
    local deadline=$((SECONDS + 120))
    until curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || { echo "bench-instructions: $name did not start" >&2; exit 1; }
        sleep 0.5
    done
    local key
    key=$(grep -o 'eyJ[A-Za-z0-9_.-]*' "$dir/stdout" | head -1)
    local base_url=http://127.0.0.1:$port/v1
    local pet='{"name":"Rex","categoryId":3,"status":"available"}'
    for _ in $(seq 20); do
        curl -fsS -X POST -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
            -d "$pet" "$base_url/pets" >/dev/null
    done
    local path=/pets/1 script=$dir/request.lua
    printf 'wrk.headers["Authorization"] = "Bearer %s"\n' "$key" >"$script"
    case $operation in
        getPet) ;;
        listPets) path=/pets?limit=20 ;;
        createPet)
            path=/pets
            printf '%s\n' 'wrk.method = "POST"' \
                'wrk.headers["Content-Type"] = "application/json"' \
                "wrk.body = '$pet'" \
                >>"$script"
            ;;
        *) echo "bench-instructions: unknown operation $operation" >&2; exit 2 ;;
    esac
    wrk -t1 -c4 -d2s -s "$script" "$base_url$path" >/dev/null
    callgrind_control -z "$server" >/dev/null 2>&1
    local requests
    requests=$(wrk -t1 -c4 -d"${seconds}s" -s "$script" "$base_url$path" |
        awk '/requests in/ {print $1} /Non-2xx/ {print "failed"; exit}')
    callgrind_control -d "$server" >/dev/null 2>&1
    kill "$server"
    wait "$server" 2>/dev/null || true
    if [[ $requests == *failed* ]]; then
        echo "bench-instructions: $name answered errors to $operation" >&2
        exit 1
    fi
    # The dump asked for above is callgrind.out.1; callgrind.out is the one written at exit.
    local profile
    profile=$(ls "$dir"/callgrind.out.* | head -1)
    cp "$profile" "$out/callgrind-$name-$operation.out"
    local total
    total=$(callgrind_annotate "$profile" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1; exit}')
    rm -rf "$dir"
    echo $((total / requests))
}

printf '%-10s %12s %12s %7s\n' operation base head ratio
for operation in $operations; do
    base=$(measure "$out/petstore-base" base "$operation")
    head=$(measure "$out/petstore-head" head "$operation")
    printf '%-10s %12d %12d %7s\n' "$operation" "$base" "$head" \
        "$(awk -v b="$base" -v h="$head" 'BEGIN {printf "%.3f", h / b}')"
done
