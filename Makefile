# The two commands a new user needs are `make run` and `make test`; the rest serve development.
# Every target installs what it needs itself (on a fresh Debian machine, as root, with apt-get).

CARGO ?= cargo
export CARGO_TERM_COLOR ?= never

.PHONY: run test contract lint fmt migrate key bench openapi deps-build deps-test deps-bench check-deps clean-data help

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

run: deps-build ## Serve the API on http://127.0.0.1:8080/v1 with SQLite in ./data
	$(CARGO) run --bin petstore -- serve

test: deps-build deps-test ## Every test: unit, contract (memory/SQLite/PostgreSQL), end-to-end, /docs in Chromium
	CARGO=$(CARGO) bash tests/support/run-tests.sh
	bash tests/browser/run.sh

contract: deps-build ## Schemathesis fuzzes the live server against its served /v1/openapi.json
	bash tests/contract/run.sh

lint: deps-build ## Formatting, clippy with warnings as errors, the crate dependency rule, licences
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	bash .ci/check-dependency-direction.sh
	bash .ci/check-licences.sh

fmt: ## Format the code
	$(CARGO) fmt --all

migrate: deps-build ## Apply pending migrations to DATABASE_URL (default: the SQLite file)
	$(CARGO) run --bin petstore -- migrate

key: deps-build ## Print a new API key for the local server (NAME=me)
	@$(CARGO) run -q --bin petstore -- keys issue --name $(or $(NAME),me)

bench: deps-build deps-test deps-bench ## Load benchmark: every backend against a bare actix-web ceiling (docs/benchmarks.md)
	PG_DURABLE=1 bash tests/support/with-postgres.sh $(CARGO) bench -p petstore-server --bench http_load

# The committed docs/openapi.json lists these fixed servers, so regenerating it gives the same bytes
# on every machine; tests/api/openapi.rs serves the document with the same two URLs and fails
# when it differs from the file.
OPENAPI_SERVERS = --public-url https://petstore.example.com/v1 --staging-url https://staging.petstore.example.com/v1

openapi: deps-build ## Regenerate docs/openapi.json and docs/openapi-3.0.json from the code (commit them with the change)
	$(CARGO) run -q --bin petstore -- openapi $(OPENAPI_SERVERS) > docs/openapi.json.tmp
	mv docs/openapi.json.tmp docs/openapi.json
	$(CARGO) run -q --bin petstore -- openapi --openapi-version 3.0 $(OPENAPI_SERVERS) > docs/openapi-3.0.json.tmp
	mv docs/openapi-3.0.json.tmp docs/openapi-3.0.json

deps-build: ## Install the C libraries the build links (libpq)
	@bash .ci/install-deps.sh build

deps-bench: ## Install wrk, the load generator of make bench
	@bash .ci/install-deps.sh bench

deps-test: ## Install the PostgreSQL server the tests start
	@bash .ci/install-deps.sh test

clean-data: ## Delete the local SQLite database and development key secret
	rm -rf data
