-- Categories, SQLite dialect: the same schema as migrations/postgres. AUTOINCREMENT keeps ids
-- unique and increasing for keyset paging, as for pets.
--
-- `name_folded` is the name case-folded by the service (`petstore_domain::fold_case`, beyond
-- ASCII, which NOCASE is not): names are unique by it among the live categories. `removed_at`
-- (seconds since the epoch) is set when a category is removed: a tombstone, so a removal stays
-- tellable; its name is free again, hence the partial index. Nothing references the table:
-- pets keep their `category_id` whatever becomes of a category. Expand-only: a new table.
CREATE TABLE categories (
    id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    name_folded TEXT NOT NULL,
    removed_at BIGINT
);

CREATE UNIQUE INDEX categories_live_name_folded ON categories (name_folded)
    WHERE removed_at IS NULL;
