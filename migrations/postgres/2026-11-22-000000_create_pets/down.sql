DROP INDEX pets_status_id;
DROP TABLE pets;
