DROP INDEX orders_pet_id_id;
DROP INDEX orders_status_id;
DROP TABLE orders;
