-- The event feed, SQLite dialect: the same schema as migrations/postgres. One row per change,
-- written in the change's own transaction. One writer commits at a time, so `sequence` is the
-- commit order and the feed is read in its order; AUTOINCREMENT never hands a purged sequence
-- out again, even once every event is purged. `commit_position` is PostgreSQL's ordering
-- column, kept so both dialects carry the same columns; it is 0 here.
--
-- `id` is `evt_` and 128 random bits in hex. `occurred_at` is milliseconds since the epoch.
-- `order_audience` is NULL for pet and category events (every key reads them), and for an
-- order's event the placing key's id, or '' for an order placed before orders had owners (the
-- staff only). `data` is the resource after the change, as JSON in its resource's stored form.
--
-- `event_horizon` holds one row once events were purged: the position of the last purged
-- event. A reader positioned before it has missed events. Expand-only: new tables.
CREATE TABLE events (
    sequence INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    commit_position BIGINT NOT NULL DEFAULT 0,
    id TEXT NOT NULL,
    type TEXT NOT NULL,
    occurred_at BIGINT NOT NULL,
    order_audience TEXT,
    data TEXT NOT NULL
);

CREATE TABLE event_horizon (
    singleton INTEGER PRIMARY KEY NOT NULL CHECK (singleton = 1),
    commit_position BIGINT NOT NULL,
    sequence BIGINT NOT NULL
);
