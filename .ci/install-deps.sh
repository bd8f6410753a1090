#!/usr/bin/env bash
# Installs the system packages a target needs, only when they are missing.
#   build: libpq (PostgreSQL client library the diesel PostgreSQL backend links against)
#   test:  PostgreSQL server binaries (initdb, pg_ctl) for the throwaway test cluster; promtool
#          (Debian's prometheus package) to check what /metrics exposes
#   bench: wrk, the HTTP load generator `make bench` drives the servers with; valgrind, whose
#          callgrind counts instructions per request (`make bench-instructions`)
#   pgo:   wrk and python3 for the training load of `make pgo-profile`, and the LLVM tools of
#          the LLVM version rustc is built on (llvm-profdata merges its profile); Debian's
#          package of that version
#   browser: Debian's Chromium and ChromeDriver for the /docs browser test (never a downloaded build)
#   node:  Node.js and npm, for the OpenAPI linters of `make lint` and the TypeScript client of
#          `make contract` (the machine's own when it has them)
#   python: python3 with venv support, for the virtualenv of the contract and browser tests
#   image: podman with Debian's runc (crun refuses this machine's cgroup layout) to build and run
#          the container image; podman-compose (Debian's, the one an operator on Debian installs)
#          to run the compose file; haproxy for the rolling-restart test; systemd-analyze for
#          the unit
# SQLite needs nothing: it is compiled into the binary.
set -euo pipefail

need=()
case "${1:-}" in
  build)
    bash "$(dirname "$0")/ensure-toolchain.sh"
    if ! { ldconfig -p 2>/dev/null | grep -q 'libpq\.so ' || [ -e /usr/lib/x86_64-linux-gnu/libpq.so ]; }; then
      need+=(libpq-dev)
    fi
    ;;
  test)
    if ! command -v initdb >/dev/null && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
      need+=(postgresql)
    fi
    if ! command -v psql >/dev/null; then
      need+=(postgresql-client)
    fi
    command -v promtool >/dev/null || need+=(prometheus)
    ;;
  bench)
    command -v wrk >/dev/null || need+=(wrk)
    command -v sqlite3 >/dev/null || need+=(sqlite3)
    command -v valgrind >/dev/null || need+=(valgrind)
    ;;
  pgo)
    command -v wrk >/dev/null || need+=(wrk)
    # tests/support/test-server.sh, which the training load starts its servers with, checks
    # the key it hands out with python3.
    command -v python3 >/dev/null || need+=(python3)
    llvm_major=$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')
    command -v "llvm-profdata-$llvm_major" >/dev/null || need+=("llvm-$llvm_major")
    ;;
  browser)
    [ -x /usr/bin/chromium ] || need+=(chromium)
    [ -x /usr/bin/chromedriver ] || need+=(chromium-driver)
    ;;
  node)
    command -v npm >/dev/null || need+=(nodejs npm)
    ;;
  python)
    command -v python3 >/dev/null || need+=(python3)
    # `python3 -m venv` needs ensurepip, which Debian ships separately in python3-venv.
    python3 -c 'import ensurepip' >/dev/null 2>&1 || need+=(python3-venv)
    ;;
  image)
    command -v podman >/dev/null || need+=(podman)
    command -v runc >/dev/null || need+=(runc)
    command -v podman-compose >/dev/null || need+=(podman-compose)
    command -v haproxy >/dev/null || need+=(haproxy)
    command -v systemd-analyze >/dev/null || need+=(systemd)
    ;;
  *)
    echo "usage: $0 build|test|bench|pgo|browser|node|python|image" >&2
    exit 2
    ;;
esac

[ ${#need[@]} -eq 0 ] && exit 0

install_cmd="apt-get install -y --no-install-recommends ${need[*]}"
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  echo "missing system packages: ${need[*]}; install them with: sudo $install_cmd" >&2
  exit 1
fi
echo "installing ${need[*]} ..." >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
$install_cmd >/dev/null
