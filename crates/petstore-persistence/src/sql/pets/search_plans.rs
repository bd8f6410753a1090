//! Every search of the listing as it runs, with the plan each database makes for it: each filter
//! is served by its index, and no page sorts its matches; and a change of a pet finds its own tag
//! rows by index. The statements are the ones the service sends (caught as the connection runs
//! them), not copies of them. And each search by category, tag and status answers the pets it
//! matches, page by page.

use std::sync::{Arc, Mutex, PoisonError};

use diesel::connection::{Instrumentation, InstrumentationEvent};
use diesel::prelude::*;
use diesel::sql_types::Text;
use petstore_domain::{CategoryId, NamePrefix, PetSearch, Tag};
use petstore_test_database::{TestDatabase, TestSqliteFile};

use super::search::{name_page, search_page};
use super::tags;
use crate::sql::engine::connection::{AnyConnection, Generations, SqliteRole};
use crate::sql::engine::pool::manager_for;
use crate::{DatabaseUrl, PoolSettings};

/// The SQL of every statement the connection starts, binds left out.
#[derive(Clone, Default)]
pub(super) struct Statements(Arc<Mutex<Vec<String>>>);

impl Statements {
    /// The statements started since the last call; none are kept.
    pub(super) fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl Instrumentation for Statements {
    fn on_connection_event(&mut self, event: InstrumentationEvent<'_>) {
        if let InstrumentationEvent::StartQuery { query, .. } = event {
            let text = query.to_string();
            let sql = text
                .split(" -- binds:")
                .next()
                .unwrap_or_default()
                .to_owned();
            self.0
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(sql);
        }
    }
}

/// A search of the listing, how each database's plan names the index that must serve it, and
/// how it is run.
struct Shape {
    what: &'static str,
    sqlite: &'static str,
    postgres: &'static str,
    run: fn(&mut AnyConnection) -> QueryResult<usize>,
}

fn name(prefix: &str) -> Option<NamePrefix> {
    Some(NamePrefix::parse(prefix).expect("a prefix"))
}

fn category(id: i64) -> Option<CategoryId> {
    Some(CategoryId::parse(id).expect("a category"))
}

fn tag(text: &str) -> Option<Tag> {
    Some(Tag::parse(text).expect("a tag"))
}

fn shapes() -> Vec<Shape> {
    vec![
        Shape {
            what: "a category",
            sqlite: "USING INDEX pets_category_live",
            postgres: "using pets_category_live",
            run: |conn| {
                let search = PetSearch {
                    category_id: category(7),
                    ..Default::default()
                };
                search_page(conn, None, &search, 10, 21).map(|rows| rows.len())
            },
        },
        Shape {
            what: "a category with a status",
            sqlite: "USING INDEX pets_category_live",
            postgres: "using pets_category_live",
            run: |conn| {
                let search = PetSearch {
                    category_id: category(7),
                    ..Default::default()
                };
                search_page(conn, Some("sold"), &search, 10, 21).map(|rows| rows.len())
            },
        },
        Shape {
            what: "a tag",
            sqlite: "SEARCH pet_tags USING PRIMARY KEY",
            postgres: "using pet_tags_pkey",
            run: |conn| {
                let search = PetSearch {
                    tag: tag("dog"),
                    ..Default::default()
                };
                search_page(conn, None, &search, 10, 21).map(|rows| rows.len())
            },
        },
        Shape {
            what: "a tag with a status",
            sqlite: "SEARCH pet_tags USING PRIMARY KEY",
            postgres: "using pet_tags_pkey",
            run: |conn| {
                let search = PetSearch {
                    tag: tag("dog"),
                    ..Default::default()
                };
                search_page(conn, Some("available"), &search, 10, 21).map(|rows| rows.len())
            },
        },
        Shape {
            what: "a tag with a category",
            sqlite: "SEARCH pet_tags USING COVERING INDEX pet_tags_tag_category",
            postgres: "using pet_tags_tag_category",
            run: |conn| {
                let search = PetSearch {
                    category_id: category(11),
                    tag: tag("dog"),
                    ..Default::default()
                };
                search_page(conn, None, &search, 10, 21).map(|rows| rows.len())
            },
        },
        Shape {
            what: "a tag with a category and a status",
            sqlite: "SEARCH pet_tags USING COVERING INDEX pet_tags_tag_category",
            postgres: "using pet_tags_tag_category",
            run: |conn| {
                let search = PetSearch {
                    category_id: category(11),
                    tag: tag("dog"),
                    ..Default::default()
                };
                search_page(conn, Some("available"), &search, 10, 21).map(|rows| rows.len())
            },
        },
        Shape {
            what: "a tag, with a category, a name and a status",
            sqlite: "SEARCH pet_tags USING PRIMARY KEY",
            postgres: "using pet_tags_pkey",
            run: |conn| {
                let search = PetSearch {
                    category_id: category(7),
                    tag: tag("dog"),
                    name: name("re"),
                };
                search_page(conn, Some("available"), &search, 10, 21).map(|rows| rows.len())
            },
        },
        Shape {
            what: "a name",
            sqlite: "INDEX pets_name_folded_live",
            postgres: "using pets_name_folded_live",
            run: |conn| {
                let search = PetSearch {
                    name: name("re"),
                    ..Default::default()
                };
                name_page(conn, None, &search, None, 21).map(|rows| rows.len())
            },
        },
        Shape {
            what: "a name after a position",
            sqlite: "INDEX pets_name_folded_live",
            postgres: "using pets_name_folded_live",
            run: |conn| {
                let search = PetSearch {
                    name: name("re"),
                    ..Default::default()
                };
                let after = Some(("rex".to_owned(), 10));
                name_page(conn, None, &search, after, 21).map(|rows| rows.len())
            },
        },
        Shape {
            what: "a name with a status",
            sqlite: "INDEX pets_name_folded_live",
            postgres: "using pets_name_folded_live",
            run: |conn| {
                let search = PetSearch {
                    name: name("re"),
                    ..Default::default()
                };
                name_page(conn, Some("available"), &search, None, 21).map(|rows| rows.len())
            },
        },
        Shape {
            what: "a name after a position, with a category and a status",
            sqlite: "INDEX pets_name_folded_live",
            postgres: "using pets_name_folded_live",
            run: |conn| {
                let search = PetSearch {
                    category_id: category(7),
                    name: name("re"),
                    ..Default::default()
                };
                let after = Some(("rex".to_owned(), 10));
                name_page(conn, Some("sold"), &search, after, 21).map(|rows| rows.len())
            },
        },
        Shape {
            what: "a pet's tag rows replaced",
            sqlite: "INDEX pet_tags_pet_id",
            postgres: "using pet_tags_pet_id",
            run: |conn| tags::delete_of(conn, 10).map(|()| 0),
        },
    ]
}

/// Runs each shape on `conn` and hands its statement to `plan`, which answers the plan's text;
/// `index` picks what the plan must say.
fn check_plans(
    conn: &mut AnyConnection,
    index: fn(&Shape) -> &'static str,
    plan: impl Fn(&mut AnyConnection, &str) -> String,
) {
    let statements = Statements::default();
    conn.set_instrumentation(statements.clone());
    for shape in shapes() {
        statements.take();
        (shape.run)(conn).unwrap_or_else(|err| panic!("{}: {err}", shape.what));
        let sent = statements.take();
        assert_eq!(
            sent.len(),
            1,
            "{}: one statement, sent {sent:?}",
            shape.what
        );
        let text = plan(conn, &sent[0]);
        assert!(
            text.contains(index(&shape)),
            "{}: not served by `{}`:\n{text}\n{}",
            shape.what,
            index(&shape),
            sent[0]
        );
        for sorted in ["TEMP B-TREE", "Sort"] {
            assert!(
                !text.contains(sorted),
                "{}: the page sorts its matches:\n{text}\n{}",
                shape.what,
                sent[0]
            );
        }
    }
}

#[derive(QueryableByName)]
struct SqlitePlanLine {
    #[diesel(sql_type = Text)]
    detail: String,
}

#[derive(QueryableByName)]
struct PostgresPlanLine {
    #[diesel(sql_type = Text, column_name = "QUERY PLAN")]
    line: String,
}

fn open(url: &str) -> AnyConnection {
    let url: DatabaseUrl = url.parse().expect("a database URL");
    manager_for(
        &url,
        &PoolSettings::default(),
        SqliteRole::ReadWrite,
        &Generations::default(),
    )
    .expect("a connection manager")
    .establish()
    .expect("a connection")
}

#[test]
fn sqlite_serves_every_search_from_its_index_in_its_order() {
    let file = TestSqliteFile::new();
    let url: DatabaseUrl = file.url().parse().expect("a database URL");
    crate::migrate(&url, &PoolSettings::default()).expect("migrated");
    let mut conn = open(&file.url());
    check_plans(
        &mut conn,
        |shape| shape.sqlite,
        |conn, sql| {
            // Parameters left unbound: with the query planner stability guarantee the plan does not
            // depend on their values.
            diesel::sql_query(format!("EXPLAIN QUERY PLAN {sql}"))
                .load::<SqlitePlanLine>(conn)
                .expect("a plan")
                .into_iter()
                .map(|line| line.detail)
                .collect::<Vec<_>>()
                .join("\n")
        },
    );
}

/// A migrated PostgreSQL database of its own, and a connection to it.
pub(super) fn migrated_postgres() -> (TestDatabase, AnyConnection) {
    let database = TestDatabase::migrated(|url| {
        let url: DatabaseUrl = url.parse().expect("a database URL");
        crate::migrate(&url, &PoolSettings::default()).expect("migrated");
    });
    let conn = open(database.url());
    (database, conn)
}

/// PostgreSQL's plan for `sql`, prepared after `settings` (statements, each ending in `;`) and
/// executed with `values` (none: `""`).
pub(super) fn postgres_plan(
    conn: &mut AnyConnection,
    settings: &str,
    sql: &str,
    values: &str,
) -> String {
    diesel::connection::SimpleConnection::batch_execute(
        conn,
        &format!("{settings} DEALLOCATE ALL; PREPARE plan_of AS {sql}"),
    )
    .expect("prepared");
    let execute = if values.is_empty() {
        "EXPLAIN EXECUTE plan_of".to_owned()
    } else {
        format!("EXPLAIN EXECUTE plan_of({values})")
    };
    diesel::sql_query(execute)
        .load::<PostgresPlanLine>(conn)
        .expect("a plan")
        .into_iter()
        .map(|line| line.line)
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn postgres_serves_every_search_from_its_index_in_its_order() {
    let (_database, mut conn) = migrated_postgres();
    // The plain listing's index serves any search in id order too, filtering row by row, and on
    // a table this small the planner would take it: it is set aside, to ask whether each
    // search's own index serves it (the listing's plan: `listing_plans.rs`).
    diesel::connection::SimpleConnection::batch_execute(&mut conn, "DROP INDEX pets_live_id")
        .expect("the listing's index set aside");
    check_plans(
        &mut conn,
        |shape| shape.postgres,
        |conn, sql| {
            // The plan for any values (a generic plan), with every way around an index priced out:
            // what is asked is whether an index can serve the search in its order, which a planner
            // looking at a nearly empty table would not bother to show.
            let parameters = (1..=20).filter(|n| sql.contains(&format!("${n}"))).count();
            let values = vec!["NULL"; parameters].join(", ");
            postgres_plan(
                conn,
                "SET plan_cache_mode = force_generic_plan; SET enable_seqscan = off; \
                 SET enable_bitmapscan = off; SET enable_sort = off;",
                sql,
                &values,
            )
        },
    );
}

/// A pet of [`seeded`]: id, category, status, tag (`None`: no tag).
type Seeded = (i64, i64, &'static str, Option<&'static str>);

/// Stores 60 pets of three categories, three statuses and two tags (or none), their tags in
/// `pet_tags` too, and answers them.
fn seeded(conn: &mut AnyConnection) -> Vec<Seeded> {
    let statuses = ["available", "pending", "sold"];
    let tags = [Some("dog"), None, Some("cat"), Some("dog"), None];
    let pets: Vec<Seeded> = (1..=60)
        .map(|id| {
            (
                id,
                1 + id % 3,
                statuses[(id % 7 % 3) as usize],
                tags[(id % 5) as usize],
            )
        })
        .collect();
    for (id, category, status, tag) in &pets {
        let tag_column = tag.map_or("NULL".to_owned(), |tag| format!("'{tag}'"));
        let mut statements = format!(
            "INSERT INTO pets (id, name, name_folded, category_id, status, tags) \
             VALUES ({id}, 'Pet {id}', 'pet {id}', {category}, '{status}', {tag_column});"
        );
        if let Some(tag) = tag {
            statements += &format!("INSERT INTO pet_tags (tag, pet_id) VALUES ('{tag}', {id});");
        }
        diesel::connection::SimpleConnection::batch_execute(conn, &statements).expect("seeded");
    }
    pets
}

/// Every search by category, tag and status (a fixed statement each) answers the pets it
/// matches, in id order, page after page; and again after pets change category and status as
/// an order or the release before changes them (their rows only, not their tag rows), and
/// their tag rows (which `seeded` writes without them) follow.
fn every_search_finds_its_pets_page_by_page(conn: &mut AnyConnection) {
    let mut pets = seeded(conn);
    every_search_finds(conn, &pets);
    diesel::connection::SimpleConnection::batch_execute(
        conn,
        "UPDATE pets SET status = 'sold' WHERE id % 4 = 0; \
         UPDATE pets SET category_id = 2 WHERE id % 6 = 1;",
    )
    .expect("changed");
    for (id, category, status, _) in &mut pets {
        if *id % 4 == 0 {
            *status = "sold";
        }
        if *id % 6 == 1 {
            *category = 2;
        }
    }
    every_search_finds(conn, &pets);
}

/// Every search by category, tag and status answers the pets of `pets` it matches.
fn every_search_finds(conn: &mut AnyConnection, pets: &[Seeded]) {
    for status in [None, Some("available"), Some("sold")] {
        for category_id in [None, Some(1), Some(2)] {
            for tag_asked in [None, Some("dog")] {
                if category_id.is_none() && tag_asked.is_none() {
                    continue;
                }
                let search = PetSearch {
                    category_id: category_id.and_then(category),
                    tag: tag_asked.and_then(tag),
                    ..Default::default()
                };
                let expected: Vec<i64> = pets
                    .iter()
                    .filter(|(_, c, s, t)| {
                        category_id.is_none_or(|asked| *c == asked)
                            && status.is_none_or(|asked| *s == asked)
                            && tag_asked.is_none_or(|asked| *t == Some(asked))
                    })
                    .map(|(id, ..)| *id)
                    .collect();
                let mut found = Vec::new();
                let mut after = i64::MIN;
                loop {
                    let page = search_page(conn, status, &search, after, 3).expect("a page");
                    found.extend(page.iter().map(|row| row.id));
                    match page.last() {
                        Some(last) if page.len() == 3 => after = last.id,
                        _ => break,
                    }
                }
                assert_eq!(found, expected, "{search:?} with status {status:?}");
                assert!(!expected.is_empty(), "{search:?} with status {status:?}");
            }
        }
    }
}

#[test]
fn sqlite_finds_every_search_page_by_page() {
    let file = TestSqliteFile::new();
    let url: DatabaseUrl = file.url().parse().expect("a database URL");
    crate::migrate(&url, &PoolSettings::default()).expect("migrated");
    every_search_finds_its_pets_page_by_page(&mut open(&file.url()));
}

#[test]
fn postgres_finds_every_search_page_by_page() {
    let (_database, mut conn) = migrated_postgres();
    every_search_finds_its_pets_page_by_page(&mut conn);
}
