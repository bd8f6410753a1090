# Sourced by tests/contract/run.sh and tests/browser/run.sh: builds and starts the real
# `petstore serve` on a free loopback port, in a throwaway data directory, and issues an API key.
#
#   source tests/support/test-server.sh
#   trap test_server_stop EXIT     # stops the server on success, failure and Ctrl-C alike
#   test_server_start NAME         # sets TEST_SERVER_ORIGIN (http://127.0.0.1:PORT) and TEST_SERVER_KEY
#
# The key is a `write` key unless TEST_SERVER_SCOPE says otherwise (`store` for a suite that
# approves and delivers orders). On the memory backend no other process can issue one: the key
# is the `store` key the server prints at start-up.
#
# DATABASE_URL defaults to a SQLite file in the throwaway directory: the default backend is the
# one users run. Set TEST_SERVER_DATABASE_URL (e.g. memory:) to change it, and TEST_SERVER_BIN to
# run an already built binary instead of building target/debug/petstore. The server's log is
# kept, and its path printed, when the caller fails.

TEST_SERVER_PID=
TEST_SERVER_DIR=

# Every client of the test server (Schemathesis, the generated clients, Selenium, the key check
# below) talks to loopback: never through a proxy configured for reaching package registries.
export NO_PROXY=127.0.0.1,localhost${NO_PROXY:+,$NO_PROXY}
export no_proxy=$NO_PROXY

test_server_start() {
    local name=$1
    local bin=${TEST_SERVER_BIN:-}
    if [[ -z $bin ]]; then
        ${CARGO:-cargo} build --quiet --bin petstore
        bin=${CARGO_TARGET_DIR:-target}/debug/petstore
    fi

    TEST_SERVER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/petstore-$name.XXXXXX")
    export PETSTORE_DATA_DIR=$TEST_SERVER_DIR
    export DATABASE_URL=${TEST_SERVER_DATABASE_URL:-sqlite://$TEST_SERVER_DIR/petstore.db}
    export RUST_LOG=${RUST_LOG:-info}

    # Port 0: the kernel picks a free port, so parallel runs and a running `make run` never clash.
    "$bin" serve --bind 127.0.0.1:0 >"$TEST_SERVER_DIR/stdout" 2>"$TEST_SERVER_DIR/server.log" &
    TEST_SERVER_PID=$!

    # Once it accepts connections the server prints `petstore listening on http://ADDR/v1`, as
    # text or (stderr being a file here, so JSON logs) in a JSON line's `message`.
    local addr= i
    for i in $(seq 1 600); do
        addr=$(sed -n 's#^.*petstore listening on http://\([^/"]*\)/v1.*#\1#p' "$TEST_SERVER_DIR/stdout")
        [[ -n $addr ]] && break
        if ! kill -0 "$TEST_SERVER_PID" 2>/dev/null; then
            echo "petstore serve exited during start-up; its log:" >&2
            cat "$TEST_SERVER_DIR/server.log" >&2
            return 1
        fi
        sleep 0.1
    done
    if [[ -z $addr ]]; then
        echo "petstore serve did not report its address within 60 s" >&2
        return 1
    fi
    TEST_SERVER_ORIGIN="http://$addr"
    if [[ $DATABASE_URL == memory:* ]]; then
        TEST_SERVER_KEY=
        for i in $(seq 1 100); do
            TEST_SERVER_KEY=$(sed -n 's/^.*"api_key":"\([^"]*\)".*/\1/p' "$TEST_SERVER_DIR/stdout")
            [[ -n $TEST_SERVER_KEY ]] && break
            sleep 0.1
        done
    else
        TEST_SERVER_KEY=$("$bin" keys issue --name "$name" --scope "${TEST_SERVER_SCOPE:-write}" \
            2>"$TEST_SERVER_DIR/keys.log")
    fi
    # A key issued by another process works on its first request (the server looks a signed key
    # it does not know up in the registry): checked once, so that a key that does not work fails
    # here rather than as every request of the suite.
    if ! python3 - "$TEST_SERVER_ORIGIN" "$TEST_SERVER_KEY" <<'PY'
import sys, urllib.error, urllib.request
origin, key = sys.argv[1:]
request = urllib.request.Request(origin + "/v1/pets?limit=1", headers={"Authorization": "Bearer " + key})
try:
    urllib.request.urlopen(request, timeout=5)
except urllib.error.HTTPError as err:
    sys.exit(f"the server answered {err.code} to the key just issued")
PY
    then
        return 1
    fi
    echo "petstore serving at $TEST_SERVER_ORIGIN/v1 (data in $TEST_SERVER_DIR)" >&2
}

# Trap handler: keeps the caller's exit status.
test_server_stop() {
    local rc=$? i
    if [[ -n $TEST_SERVER_PID ]] && kill -0 "$TEST_SERVER_PID" 2>/dev/null; then
        kill -TERM "$TEST_SERVER_PID" 2>/dev/null || true
        # Graceful shutdown drains requests; do not let a stuck one hang CI.
        for i in $(seq 1 100); do
            kill -0 "$TEST_SERVER_PID" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$TEST_SERVER_PID" 2>/dev/null || true
        wait "$TEST_SERVER_PID" 2>/dev/null || true
    fi
    TEST_SERVER_PID=
    if [[ -n $TEST_SERVER_DIR ]]; then
        if [[ $rc -eq 0 ]]; then
            rm -rf "$TEST_SERVER_DIR"
        else
            echo "server log kept: $TEST_SERVER_DIR/server.log" >&2
        fi
    fi
    return $rc
}
