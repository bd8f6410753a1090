//! The listing's plan on PostgreSQL before the table has statistics: a table of 100,000 pets
//! filled faster than autovacuum analyses it still has each page read in order from an index,
//! not every row read and sorted. The statements are the ones the service sends, planned as the
//! service's prepared statements are (a custom plan for the values first, later a generic one).

use diesel::connection::SimpleConnection;
use diesel::prelude::*;

use super::group_read::{load_page, Page};
use super::search_plans::{migrated_postgres, postgres_plan, Statements};
use crate::sql::engine::connection::AnyConnection;

/// Pets enough that reading them all costs far more than an index's first page (a smaller table
/// may be read whole until it is analysed, `docs/benchmarks.md`).
const PETS: u32 = 100_000;

/// The statement `page` sends, and the plans PostgreSQL makes for it: with the page's values,
/// then for any values.
fn plans(conn: &mut AnyConnection, statements: &Statements, page: Page) -> [String; 2] {
    statements.take();
    let rows = load_page(conn, page).expect("a page");
    assert_eq!(rows.len(), 20, "a whole page of {page:?}");
    let sent = statements.take();
    assert_eq!(sent.len(), 1, "one statement, sent {sent:?}");
    let values = match page.status {
        Some(status) => format!("'{status}', {}, {}", page.after, page.limit),
        None => format!("{}, {}", page.after, page.limit),
    };
    ["auto", "force_generic_plan"].map(|mode| {
        postgres_plan(
            conn,
            &format!("SET plan_cache_mode = {mode};"),
            &sent[0],
            &values,
        )
    })
}

#[test]
fn postgres_lists_live_pets_in_order_from_an_index_before_any_analyze() {
    let (_database, mut conn) = migrated_postgres();
    // Autovacuum would analyse the table at its own moment; this test is about before it does.
    conn.batch_execute(&format!(
        "ALTER TABLE pets SET (autovacuum_enabled = false); \
         INSERT INTO pets (name, category_id, status, name_folded) \
         SELECT 'pet ' || n, 1 + n % 7, (ARRAY['available', 'pending', 'sold'])[1 + n % 3], \
         'pet ' || n FROM generate_series(1, {PETS}) AS n"
    ))
    .expect("pets stored");
    let statements = Statements::default();
    conn.set_instrumentation(statements.clone());
    for (status, index) in [
        (None, "pets_live_id"),
        (Some("pending"), "pets_status_live"),
    ] {
        let page = Page {
            status,
            after: i64::MIN,
            limit: 20,
        };
        for plan in plans(&mut conn, &statements, page) {
            assert!(
                plan.contains(&format!("Index Scan using {index} on pets")),
                "{page:?} not read from {index}:\n{plan}"
            );
            assert!(!plan.contains("Sort"), "{page:?} sorts its pets:\n{plan}");
        }
    }
}
