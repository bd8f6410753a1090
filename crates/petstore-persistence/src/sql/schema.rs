//! The `pets` table as diesel sees it; must match both dialects under `migrations/`.

diesel::table! {
    pets (id) {
        id -> BigInt,
        name -> Text,
        category_id -> BigInt,
        status -> Text,
    }
}
