DROP INDEX pets_name_folded_live;
CREATE INDEX pets_name_folded_id ON pets (name_folded, id);
