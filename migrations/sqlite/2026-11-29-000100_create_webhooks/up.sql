-- Webhooks, SQLite dialect: the same schema as migrations/postgres. AUTOINCREMENT keeps ids unique
-- and increasing and never hands one out again, even once its row is deleted.
--
-- `webhook_endpoints`: where events are posted. `event_types` is the set of types as
-- `EventTypes::bits` (one bit per type in `EventType::ALL`'s order), matched with `&`.
-- `disabled_reason` is NULL while enabled, else 'manual' or 'failing'. Secrets are stored
-- sealed by the service's key; the previous one signs too until `previous_secret_expires_ms`.
-- `failing_since_ms` is when the first failed attempt after a success was made. Times are
-- milliseconds since the epoch.
--
-- `webhook_fanout` holds one row once events were fanned out: the feed position deliveries were
-- made up to, moved by compare-and-set so two instances never fan one event out twice.
--
-- `webhook_deliveries`: one event (or ping) for one endpoint, with the body posted on every
-- attempt. `status` is 'pending', 'succeeded' or 'failed' (`failure` then 'exhausted' or
-- 'endpoint_disabled'). A claim leases a pending row to one instance until `lease_until_ms`
-- and increments `lease_token`, which the attempt's settlement must show. `webhook_attempts`:
-- each attempt of a delivery, numbered from 1. Deleting an endpoint deletes its deliveries and
-- their attempts. Expand-only: new tables.
CREATE TABLE webhook_endpoints (
    id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    url TEXT NOT NULL,
    event_types BIGINT NOT NULL,
    disabled_reason TEXT CHECK (disabled_reason IN ('manual', 'failing')),
    secret_sealed TEXT NOT NULL,
    previous_secret_sealed TEXT,
    previous_secret_expires_ms BIGINT,
    failing_since_ms BIGINT,
    created_at_ms BIGINT NOT NULL,
    updated_at_ms BIGINT NOT NULL
);

CREATE TABLE webhook_fanout (
    singleton INTEGER PRIMARY KEY NOT NULL CHECK (singleton = 1),
    commit_position BIGINT NOT NULL,
    sequence BIGINT NOT NULL
);

CREATE TABLE webhook_deliveries (
    id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    endpoint_id BIGINT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    event_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    body BLOB NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    failure TEXT CHECK (failure IN ('exhausted', 'endpoint_disabled')),
    attempts_made INTEGER NOT NULL DEFAULT 0,
    next_attempt_ms BIGINT,
    lease_owner TEXT,
    lease_until_ms BIGINT,
    lease_token BIGINT NOT NULL DEFAULT 0,
    created_at_ms BIGINT NOT NULL,
    UNIQUE (endpoint_id, event_id)
);

-- Claims take the pending rows due first.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_ms)
    WHERE status = 'pending';

-- An endpoint's deliveries, newest first; also what deleting an endpoint finds its rows by.
CREATE INDEX webhook_deliveries_listing ON webhook_deliveries (endpoint_id, id);

CREATE TABLE webhook_attempts (
    delivery_id BIGINT NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    number INTEGER NOT NULL,
    at_ms BIGINT NOT NULL,
    status_code INTEGER,
    latency_ms BIGINT NOT NULL,
    error TEXT,
    PRIMARY KEY (delivery_id, number)
);
