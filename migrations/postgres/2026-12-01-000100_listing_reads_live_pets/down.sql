LOCK TABLE pets IN ACCESS EXCLUSIVE MODE;
CREATE INDEX pets_status_id ON pets (status, id);
DROP INDEX pets_status_live;
DROP INDEX pets_live_id;
