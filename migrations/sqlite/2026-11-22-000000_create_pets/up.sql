-- Pets, SQLite dialect. AUTOINCREMENT (not just INTEGER PRIMARY KEY) so that the id of a deleted
-- newest row is never handed out again: ids stay unique and increasing for clients' keyset paging.
CREATE TABLE pets (
    id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    category_id BIGINT NOT NULL CHECK (category_id >= 1),
    status TEXT NOT NULL CHECK (status IN ('available', 'pending', 'sold'))
);

-- Serves `WHERE status = ? AND id > ? ORDER BY id LIMIT ?` without a sort.
CREATE INDEX pets_status_id ON pets (status, id);
