//! The tables as diesel sees them; must match both dialects under `migrations/`.

diesel::table! {
    pets (id) {
        id -> BigInt,
        name -> Text,
        category_id -> BigInt,
        status -> Text,
        version -> BigInt,
        removed_at -> Nullable<BigInt>,
    }
}

diesel::table! {
    api_keys (id) {
        id -> Text,
        name -> Text,
        scope -> Text,
        created_at -> BigInt,
        expires_at -> Nullable<BigInt>,
        revoked_at -> Nullable<BigInt>,
        last_used_at -> Nullable<BigInt>,
        revision -> BigInt,
        token_sha256 -> Nullable<Binary>,
    }
}

diesel::table! {
    orders (id) {
        id -> BigInt,
        pet_id -> BigInt,
        quantity -> Integer,
        status -> Text,
        ship_date -> Nullable<BigInt>,
        placed_by -> Nullable<Text>,
    }
}

diesel::table! {
    idempotency_records (owner, key) {
        owner -> Text,
        key -> Text,
        fingerprint -> Binary,
        status -> Integer,
        headers -> Text,
        body -> Binary,
        stored_at -> BigInt,
    }
}
