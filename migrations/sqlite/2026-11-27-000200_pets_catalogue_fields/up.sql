-- What a shop shows of a pet, and what an order was charged, SQLite dialect: the same schema as migrations/postgres (but for
-- the collation below). All optional, expand-only: the release before reads and writes pets as
-- it did, and its pets have none of them.
--
-- A price is exact: minor units and the ISO 4217 code. Photo URLs and tags are kept one per
-- line in the pet's row, which every read takes whole; `pet_tags` holds each tag again, keyed
-- by tag, for the listing's `tag` filter. `name_folded` is the name case-folded by the service
-- (`fold_case`: every letter lowercased, not only ASCII as SQLite's NOCASE would), compared
-- bytewise so that a prefix is a range of the index; a pet written by the release
-- before has none until the service next starts and fills it in.
ALTER TABLE pets ADD COLUMN price_minor BIGINT;
ALTER TABLE pets ADD COLUMN price_currency TEXT;
ALTER TABLE pets ADD COLUMN description TEXT;
ALTER TABLE pets ADD COLUMN photo_urls TEXT;
ALTER TABLE pets ADD COLUMN tags TEXT;
ALTER TABLE pets ADD COLUMN name_folded TEXT;

CREATE TABLE pet_tags (
    tag TEXT NOT NULL,
    pet_id BIGINT NOT NULL REFERENCES pets (id),
    PRIMARY KEY (tag, pet_id)
) WITHOUT ROWID;

-- The filters' keyset pages: `WHERE category_id = ? AND id > ? ORDER BY id`, and the name range.
CREATE INDEX pets_category_id_id ON pets (category_id, id);
CREATE INDEX pets_name_folded_id ON pets (name_folded, id);

-- An order keeps the price its pet had when it was placed.
ALTER TABLE orders ADD COLUMN price_minor BIGINT;
ALTER TABLE orders ADD COLUMN price_currency TEXT;
