//! The tables as diesel sees them; must match both dialects under `migrations/`.

diesel::table! {
    pets (id) {
        id -> BigInt,
        name -> Text,
        category_id -> BigInt,
        status -> Text,
        version -> BigInt,
        removed_at -> Nullable<BigInt>,
        price_minor -> Nullable<BigInt>,
        price_currency -> Nullable<Text>,
        description -> Nullable<Text>,
        photo_urls -> Nullable<Text>,
        tags -> Nullable<Text>,
        name_folded -> Nullable<Text>,
    }
}

diesel::table! {
    pet_tags (tag, pet_id) {
        tag -> Text,
        pet_id -> BigInt,
        category_id -> Nullable<BigInt>,
        status -> Nullable<Text>,
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
        price_minor -> Nullable<BigInt>,
        price_currency -> Nullable<Text>,
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

// The tag filter reads `pet_tags` in a subquery of `pets`.
diesel::allow_tables_to_appear_in_same_query!(pets, pet_tags);
