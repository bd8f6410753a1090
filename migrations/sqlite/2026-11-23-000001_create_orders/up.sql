-- Orders, SQLite dialect: one order takes one pet. AUTOINCREMENT keeps ids unique and increasing
-- for keyset paging, as for pets.
CREATE TABLE orders (
    id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    pet_id BIGINT NOT NULL REFERENCES pets (id),
    quantity INTEGER NOT NULL CHECK (quantity = 1),
    status TEXT NOT NULL CHECK (status IN ('placed', 'approved', 'delivered', 'cancelled')),
    ship_date BIGINT
);

CREATE INDEX orders_status_id ON orders (status, id);
CREATE INDEX orders_pet_id_id ON orders (pet_id, id);
