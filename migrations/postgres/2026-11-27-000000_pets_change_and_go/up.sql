-- Pets change and go, PostgreSQL dialect: the same schema as migrations/sqlite.
--
-- `version` moves on at every change of a pet (a PATCH, an order moving its status, its
-- removal); ETags and If-Match are derived from it. `removed_at` (seconds since the epoch) is
-- set when the pet is removed: a tombstone, since orders name their pet and a removal must stay
-- tellable. Expand-only: the release before ignores both columns, and its creates get version 1.
ALTER TABLE pets ADD COLUMN version BIGINT NOT NULL DEFAULT 1 CHECK (version >= 1);
ALTER TABLE pets ADD COLUMN removed_at BIGINT;
