//! Keeping the data and moving it, as an operator does it with the `petstore` binary: `backup`
//! while 64 clients write, `restore` and its refusals, and `export` then `import` into each
//! backend, with every read answered the same afterwards and every bad file refused.

use std::cell::{Cell, RefCell};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::Duration;

use diesel::connection::SimpleConnection as _;
use diesel::prelude::*;
use diesel::sql_types::BigInt;
use futures_util::future::{join, join_all};
use serde_json::{json, Value};

use petstore_test_support::{
    client, eventually, petstore, run_petstore, send, start_server, try_send, Backend, TestApp,
    TestDatabase,
};

/// A secret no test server signs with: its keys are another's.
const OTHER_SECRET: &str = "6f1d0c9e83a24b57e0f4a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6";

/// Pets put straight into a source database: more than one page (1,000 rows) of an export.
const BULK_PETS: i64 = 2_500;

// ---------------------------------------------------------------------------------------------
// What the tests share

/// A petstore command's environment: the database and the key secret.
fn env(database_url: &str, secret: &str) -> Vec<(String, String)> {
    vec![
        ("DATABASE_URL".to_owned(), database_url.to_owned()),
        ("PETSTORE_KEY_SECRET".to_owned(), secret.to_owned()),
    ]
}

fn cli(data_dir: &Path, database_url: &str, secret: &str, args: &[&str]) -> Output {
    run_petstore(data_dir, &env(database_url, secret), args)
}

/// Everything a command said, on either stream.
fn said(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn succeeded(output: &Output) {
    assert!(output.status.success(), "{}", said(output));
}

fn refused(output: &Output, expected: &str) {
    assert!(!output.status.success(), "not refused: {}", said(output));
    assert!(said(output).contains(expected), "{}", said(output));
}

fn sqlite_path(database_url: &str) -> PathBuf {
    PathBuf::from(
        database_url
            .strip_prefix("sqlite://")
            .expect("a sqlite:// URL"),
    )
}

#[derive(QueryableByName)]
struct Number {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

fn open_sqlite(path: &Path) -> SqliteConnection {
    let mut conn = SqliteConnection::establish(path.to_str().expect("UTF-8 path"))
        .unwrap_or_else(|err| panic!("cannot open {}: {err}", path.display()));
    conn.batch_execute("PRAGMA busy_timeout = 5000;")
        .expect("busy timeout");
    conn
}

/// The numbers `sql` (`SELECT ... AS n`) answers in the SQLite file at `path`.
fn sqlite_numbers(path: &Path, sql: &str) -> Vec<i64> {
    diesel::sql_query(sql)
        .load::<Number>(&mut open_sqlite(path))
        .unwrap_or_else(|err| panic!("{sql}: {err}"))
        .into_iter()
        .map(|row| row.n)
        .collect()
}

fn mode_of(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path)
        .expect("metadata")
        .permissions()
        .mode()
        & 0o777
}

/// The server's secret, as `PETSTORE_KEY_SECRET` would carry it.
fn secret_of(app: &TestApp) -> String {
    String::from_utf8(app.key_secret()).expect("a UTF-8 secret")
}

/// Every item of a listing, following its `Link: <...>; rel="next"` headers.
async fn walk(address: &str, key: &str, first: &str) -> Vec<Value> {
    let mut next = Some(first.to_owned());
    let mut items = Vec::new();
    while let Some(path) = next.take() {
        let response = send(
            client().get(format!("{address}{path}")).bearer_auth(key),
            None,
        )
        .await;
        assert_eq!(response.status.as_u16(), 200, "{path}: {}", response.body);
        next = response.header("link").map(|link| {
            let start = link.find('<').expect("a link target") + 1;
            link[start..link.find('>').expect("a link target")].to_owned()
        });
        items.extend(response.json().as_array().expect("an array").clone());
        assert!(items.len() < 100_000, "the links never end");
    }
    items
}

/// Every event of the feed `key` reads, following `Link` until `X-More-Events: false`; and
/// the link to where the next read starts.
async fn feed(address: &str, key: &str) -> (Vec<Value>, String) {
    let mut path = "/v1/events?limit=100".to_owned();
    let mut events = Vec::new();
    loop {
        let response = send(
            client().get(format!("{address}{path}")).bearer_auth(key),
            None,
        )
        .await;
        assert_eq!(response.status.as_u16(), 200, "{path}: {}", response.body);
        let link = response.header("link").expect("every page links on");
        path = link[link.find('<').expect("a target") + 1..link.find('>').expect("a target")]
            .to_owned();
        events.extend(response.json().as_array().expect("an array").clone());
        if response.header("x-more-events") == Some("false") {
            return (events, path);
        }
    }
}

/// What the service answers to every read of a source's data: each listing in full, each of
/// the named pets and orders one by one (removed ones included), as `key` and as the staff.
async fn every_read(address: &str, key: &str, staff: &str, pets: &[i64], orders: &[i64]) -> Value {
    let mut one_by_one = Vec::new();
    for id in pets {
        let response = send(
            client()
                .get(format!("{address}/v1/pets/{id}"))
                .bearer_auth(key),
            None,
        )
        .await;
        one_by_one.push(json!([
            response.status.as_u16(),
            response.body,
            response.header("etag")
        ]));
    }
    for id in orders {
        let response = send(
            client()
                .get(format!("{address}/v1/store/orders/{id}"))
                .bearer_auth(staff),
            None,
        )
        .await;
        one_by_one.push(json!([response.status.as_u16(), response.body]));
    }
    json!({
        "pets": walk(address, key, "/v1/pets?limit=100").await,
        "available": walk(address, key, "/v1/pets?status=available&limit=100").await,
        "tagged": walk(address, key, "/v1/pets?tag=tag1&limit=100").await,
        "named": walk(address, key, "/v1/pets?name=ki&limit=100").await,
        "categories": walk(address, staff, "/v1/categories").await,
        "orders": walk(address, staff, "/v1/store/orders?limit=100").await,
        "own orders": walk(address, key, "/v1/store/orders?limit=100").await,
        "events": feed(address, staff).await.0,
        "own events": feed(address, key).await.0,
        "one by one": one_by_one,
    })
}

/// A SQLite server with a bit of everything: bulk pets, a category, pets changed and removed,
/// orders placed, approved and cancelled, a staff key and a revoked key.
struct Source {
    app: TestApp,
    staff: String,
    revoked: String,
    pets: Vec<i64>,
    orders: Vec<i64>,
}

async fn source() -> Source {
    let app = TestApp::spawn_process(Backend::Sqlite).await;
    app.execute_sql(&format!(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {BULK_PETS}) \
         INSERT INTO pets (name, category_id, status) \
         SELECT 'bulk ' || i, 1 + i % 3, CASE i % 3 WHEN 0 THEN 'sold' ELSE 'available' END FROM n"
    ));
    // Tags of the bulk pets, straight into the tags' table: more than a page of it too.
    app.execute_sql(&format!(
        "INSERT INTO pet_tags (tag, pet_id) SELECT 'tag' || (id % 4), id FROM pets \
         WHERE id <= {BULK_PETS}"
    ));
    let staff = app.staff_key().await;
    let revoked = app.issue_key(&["--name", "gone", "--scope", "read"]).await;
    let revoked_id = petstore_test_support::claims_of(&revoked)["jti"]
        .as_str()
        .expect("a jti")
        .to_owned();
    succeeded(&app.run_keys_command(&["revoke", &revoked_id]));
    let category = send(
        client()
            .post(app.url("/v1/categories"))
            .bearer_auth(&staff)
            .insert_header(("Content-Type", "application/json")),
        Some(json!({"name": "Dogs"}).to_string()),
    )
    .await;
    assert_eq!(category.status.as_u16(), 201, "{}", category.body);
    let mut pets = vec![1, BULK_PETS / 2, BULK_PETS];
    for name in ["Rex", "Tom", "Kit", "Bo"] {
        let pet = app
            .create_pet(
                json!({"name": name, "categoryId": 1, "tags": ["tag1", name],
                "description": format!("{name}, a fine pet"),
                "photoUrls": [format!("https://example.com/{name}.jpg")]}),
            )
            .await;
        pets.push(pet["id"].as_i64().expect("an id"));
    }
    let removed = send(
        client()
            .delete(app.url(&format!("/v1/pets/{}", pets[3])))
            .bearer_auth(&staff),
        None,
    )
    .await;
    assert!(removed.status.is_success(), "{}", removed.body);
    let mut orders = Vec::new();
    for pet in &pets[4..] {
        let placed = send(
            app.post_json("/v1/store/orders"),
            Some(json!({"petId": pet}).to_string()),
        )
        .await;
        assert_eq!(placed.status.as_u16(), 201, "{}", placed.body);
        orders.push(placed.json()["id"].as_i64().expect("an order id"));
    }
    for (order, action) in orders.iter().zip(["approve", "cancel"]) {
        let acted = send(
            client()
                .post(app.url(&format!("/v1/store/orders/{order}/{action}")))
                .bearer_auth(&staff),
            None,
        )
        .await;
        assert!(acted.status.is_success(), "{action}: {}", acted.body);
    }
    Source {
        app,
        staff,
        revoked,
        pets,
        orders,
    }
}

/// What a key gets from the pets' listing: 200 while it works, 401 once refused.
async fn status_with(address: &str, key: &str) -> u16 {
    send(
        client()
            .get(format!("{address}/v1/pets?limit=1"))
            .bearer_auth(key),
        None,
    )
    .await
    .status
    .as_u16()
}

// ---------------------------------------------------------------------------------------------
// backup

#[actix_web::test]
async fn a_backup_under_64_writing_clients_holds_every_write_acknowledged_before_it_began() {
    let app = TestApp::spawn_process(Backend::Sqlite).await;
    // Enough rows that the copy takes a while, with the writers going on all the time.
    app.execute_sql(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50000) \
         INSERT INTO pets (name, category_id, status) SELECT 'seed ' || i, 1, 'available' FROM n",
    );
    let secret = secret_of(&app);
    let backup = app.data_dir.path().join("backups").join("pets.backup");
    std::fs::create_dir(backup.parent().expect("a directory")).expect("mkdir");
    let acknowledged = RefCell::new(Vec::<i64>::new());
    let stop = Cell::new(false);
    let writers = (0..64).map(|writer| {
        let (app, acknowledged, stop) = (&app, &acknowledged, &stop);
        async move {
            let mut n = 0;
            while !stop.get() {
                n += 1;
                let body = json!({"name": format!("w{writer} n{n}"), "categoryId": 1});
                if let Ok(response) =
                    try_send(app.post_json("/v1/pets"), Some(body.to_string())).await
                {
                    if response.status.as_u16() == 201 {
                        let id = response.json()["id"].as_i64().expect("an id");
                        acknowledged.borrow_mut().push(id);
                    }
                }
            }
        }
    });
    let backing_up = async {
        eventually(
            Duration::from_secs(30),
            "the writers are under way",
            async || {
                let count = acknowledged.borrow().len();
                if count >= 256 {
                    Ok(())
                } else {
                    Err(count)
                }
            },
        )
        .await;
        let before = acknowledged.borrow().clone();
        let (data_dir, url, secret, to) = (
            app.data_dir.path().to_owned(),
            app.database_url.clone(),
            secret.clone(),
            backup.display().to_string(),
        );
        let output = actix_web::rt::task::spawn_blocking(move || {
            cli(&data_dir, &url, &secret, &["backup", "--to", &to])
        })
        .await
        .expect("the backup ran");
        let during = acknowledged.borrow().len() - before.len();
        stop.set(true);
        (before, output, during)
    };
    let (_, (before, output, during)) = join(join_all(writers), backing_up).await;
    succeeded(&output);
    assert!(during > 0, "no write was acknowledged while the backup ran");

    let copied: std::collections::HashSet<i64> =
        sqlite_numbers(&backup, "SELECT id AS n FROM pets")
            .into_iter()
            .collect();
    let missing: Vec<&i64> = before.iter().filter(|id| !copied.contains(id)).collect();
    assert!(
        missing.is_empty(),
        "acknowledged before the backup, not in it: {missing:?}"
    );
    assert_eq!(mode_of(&backup), 0o600);
    let leftovers: Vec<_> = std::fs::read_dir(backup.parent().expect("a directory"))
        .expect("read_dir")
        .map(|entry| entry.expect("entry").file_name())
        .collect();
    assert_eq!(leftovers, vec![std::ffi::OsString::from("pets.backup")]);

    // The copy passes the integrity check and serves: restored into a new data directory and
    // served with the same secret, the pets and the key are there.
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let url = format!(
        "sqlite://{}",
        elsewhere.path().join("petstore.db").display()
    );
    succeeded(&cli(
        elsewhere.path(),
        &url,
        &secret,
        &["restore", "--from", &backup.display().to_string()],
    ));
    let (mut server, address) = start_server(elsewhere.path(), &url, &env(&url, &secret)[1..]);
    let last = before.last().expect("some writes");
    let response = send(
        client()
            .get(format!("{address}/v1/pets/{last}"))
            .bearer_auth(&app.api_key),
        None,
    )
    .await;
    assert_eq!(response.status.as_u16(), 200, "{}", response.body);
    let _ = server.kill();
    let _ = server.wait();
}

#[test]
fn a_backup_onto_the_database_itself_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite://{}", dir.path().join("petstore.db").display());
    let secret = OTHER_SECRET.to_owned();
    succeeded(&cli(dir.path(), &url, &secret, &["migrate"]));
    let before = std::fs::read(dir.path().join("petstore.db")).expect("read");
    for onto in ["petstore.db", "./petstore.db", "petstore.db-wal"] {
        let to = format!(
            "{}/../{}/{onto}",
            dir.path().display(),
            dir.path().file_name().expect("a name").to_string_lossy()
        );
        refused(
            &cli(dir.path(), &url, &secret, &["backup", "--to", &to]),
            "is the database itself",
        );
    }
    assert_eq!(
        std::fs::read(dir.path().join("petstore.db")).expect("read"),
        before
    );
}

#[test]
fn backup_and_restore_on_postgresql_point_at_its_own_tools() {
    let database = TestDatabase::create();
    let dir = tempfile::tempdir().expect("tempdir");
    let to = dir.path().join("x.backup").display().to_string();
    let secret = OTHER_SECRET.to_owned();
    refused(
        &cli(
            dir.path(),
            database.url(),
            &secret,
            &["backup", "--to", &to],
        ),
        "pg_dump",
    );
    refused(
        &cli(
            dir.path(),
            database.url(),
            &secret,
            &["restore", "--from", &to],
        ),
        "pg_restore",
    );
    assert!(!dir.path().join("x.backup").exists());
}

/// A PostgreSQL client tool of the cluster's release: beside `psql` when the test cluster names
/// it, else on the PATH.
fn postgres_tool(name: &str) -> PathBuf {
    std::env::var_os("TEST_PSQL")
        .map(PathBuf::from)
        .and_then(|psql| psql.parent().map(|dir| dir.join(name)))
        .filter(|tool| tool.is_file())
        .unwrap_or_else(|| PathBuf::from(name))
}

fn run_tool(tool: &Path, args: &[&str]) {
    let output = std::process::Command::new(tool)
        .args(args)
        .output()
        .unwrap_or_else(|err| panic!("cannot run {}: {err}", tool.display()));
    succeeded(&output);
}

/// The procedure `docs/deployment.md` gives for PostgreSQL: `pg_dump --format=custom` of the
/// serving database, `pg_restore` into an empty one, and a server there answers as before.
#[actix_web::test]
async fn a_pg_dump_restored_with_pg_restore_serves_the_same_answers() {
    let app = TestApp::spawn_process(Backend::Postgres).await;
    let staff = app.staff_key().await;
    let mut pets = Vec::new();
    for name in ["Rex", "Tom", "Kit"] {
        let pet = app.create_pet(json!({"name": name, "categoryId": 1})).await;
        pets.push(pet["id"].as_i64().expect("an id"));
    }
    let placed = send(
        app.post_json("/v1/store/orders"),
        Some(json!({"petId": pets[0]}).to_string()),
    )
    .await;
    assert_eq!(placed.status.as_u16(), 201, "{}", placed.body);
    let orders = vec![placed.json()["id"].as_i64().expect("an order id")];
    let dump = app.data_dir.path().join("petstore.dump");
    let dump_arg = dump.display().to_string();
    run_tool(
        &postgres_tool("pg_dump"),
        &["--format=custom", "--file", &dump_arg, &app.database_url],
    );
    assert!(dump.is_file());

    let restored = TestDatabase::create();
    run_tool(
        &postgres_tool("pg_restore"),
        &[
            "--no-owner",
            "--exit-on-error",
            "--dbname",
            restored.url(),
            &dump_arg,
        ],
    );
    let secret = secret_of(&app);
    let expected = every_read(&app.address, &app.api_key, &staff, &pets, &orders).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut server, address) = start_server(dir.path(), restored.url(), &env("", &secret)[1..]);
    let answered = every_read(&address, &app.api_key, &staff, &pets, &orders).await;
    assert_eq!(answered, expected);
    let _ = server.kill();
    let _ = server.wait();
}

// ---------------------------------------------------------------------------------------------
// restore

#[actix_web::test]
async fn a_restored_backup_serves_what_was_backed_up_and_keeps_the_database_it_replaced() {
    let mut app = TestApp::spawn_process(Backend::Sqlite).await;
    let secret = secret_of(&app);
    let kept = app
        .create_pet(json!({"name": "Kept", "categoryId": 1}))
        .await;
    let backup = app
        .data_dir
        .path()
        .join("pets.backup")
        .display()
        .to_string();
    succeeded(&cli(
        app.data_dir.path(),
        &app.database_url,
        &secret,
        &["backup", "--to", &backup],
    ));
    let later = app
        .create_pet(json!({"name": "Later", "categoryId": 1}))
        .await;

    let refusal = cli(
        app.data_dir.path(),
        &app.database_url,
        &secret,
        &["restore", "--from", &backup],
    );
    refused(&refusal, "a server is using");

    app.terminate();
    app.wait_for_exit();
    let restored = cli(
        app.data_dir.path(),
        &app.database_url,
        &secret,
        &["restore", "--from", &backup],
    );
    succeeded(&restored);
    assert!(
        said(&restored).contains("work only with the same PETSTORE_KEY_SECRET"),
        "{}",
        said(&restored)
    );
    let database = sqlite_path(&app.database_url);
    let replaced: Vec<PathBuf> = std::fs::read_dir(database.parent().expect("a directory"))
        .expect("read_dir")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| {
            path.to_string_lossy().contains(".replaced-")
                && !path.to_string_lossy().ends_with("-journal")
                && !path.to_string_lossy().ends_with("-shm")
                && !path.to_string_lossy().ends_with("-wal")
        })
        .collect();
    assert_eq!(replaced.len(), 1, "{replaced:?}");
    assert_eq!(
        sqlite_numbers(&replaced[0], "SELECT COUNT(*) AS n FROM pets"),
        vec![2],
        "the replaced database is kept whole"
    );

    app.restart();
    let got = send(app.get(&format!("/v1/pets/{}", kept["id"])), None).await;
    assert_eq!(got.status.as_u16(), 200, "{}", got.body);
    let gone = send(app.get(&format!("/v1/pets/{}", later["id"])), None).await;
    assert_eq!(gone.status.as_u16(), 404, "{}", gone.body);
    let again = app
        .create_pet(json!({"name": "Again", "categoryId": 1}))
        .await;
    assert!(again["id"].as_i64() > kept["id"].as_i64());
}

#[actix_web::test]
async fn restore_refuses_a_corrupt_file_a_newer_schema_a_foreign_file_and_another_secret() {
    let app = TestApp::spawn_process(Backend::Sqlite).await;
    let secret = secret_of(&app);
    app.create_pet(json!({"name": "Rex", "categoryId": 1}))
        .await;
    let dir = app.data_dir.path();
    let backup = dir.join("good.backup");
    succeeded(&cli(
        dir,
        &app.database_url,
        &secret,
        &["backup", "--to", &backup.display().to_string()],
    ));

    let target = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite://{}", target.path().join("petstore.db").display());
    let restore = |file: &Path, extra: &[&str], secret: &str| {
        let from = file.display().to_string();
        cli(
            target.path(),
            &url,
            secret,
            &[&["restore", "--from", &from][..], extra].concat(),
        )
    };

    // Corrupt: a page in the middle of the file overwritten.
    let corrupt = dir.join("corrupt.backup");
    let mut bytes = std::fs::read(&backup).expect("read");
    let page = 4096;
    let middle = (bytes.len() / page / 2) * page;
    for byte in &mut bytes[middle..middle + page] {
        *byte = 0x5a;
    }
    std::fs::write(&corrupt, bytes).expect("write");
    let output = restore(&corrupt, &[], &secret);
    assert!(!output.status.success(), "{}", said(&output));
    assert!(
        said(&output).contains("integrity check")
            || said(&output).contains("not a SQLite database"),
        "{}",
        said(&output)
    );

    // Newer: a migration this binary does not know.
    let newer = dir.join("newer.backup");
    std::fs::copy(&backup, &newer).expect("copy");
    open_sqlite(&newer)
        .batch_execute("INSERT INTO __diesel_schema_migrations (version) VALUES ('99991231000000')")
        .expect("a newer migration");
    refused(&restore(&newer, &[], &secret), "made by a newer petstore");

    // Foreign: not a database, and a SQLite database that is not petstore's.
    let text = dir.join("notes.txt");
    std::fs::write(&text, "not a database at all\n".repeat(200)).expect("write");
    refused(&restore(&text, &[], &secret), "is not a SQLite database");
    let other = dir.join("other.db");
    open_sqlite(&other)
        .batch_execute("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
        .expect("another database");
    refused(&restore(&other, &[], &secret), "is not a petstore database");

    // Another secret: refused unless told.
    let another = OTHER_SECRET.to_owned();
    refused(&restore(&backup, &[], &another), "--force-key-id");
    assert!(
        !target.path().join("petstore.db").exists(),
        "every refusal leaves the target as it was"
    );
    let leftovers = std::fs::read_dir(target.path()).expect("read_dir").count();
    assert!(leftovers <= 1, "only the development secret may be there");
    succeeded(&restore(&backup, &["--force-key-id"], &another));
    assert_eq!(
        sqlite_numbers(
            &target.path().join("petstore.db"),
            "SELECT COUNT(*) AS n FROM pets"
        ),
        vec![1]
    );
}

// ---------------------------------------------------------------------------------------------
// export and import

/// Exports `source`'s database to a file and returns its path.
fn export_of(source: &Source) -> PathBuf {
    let app = &source.app;
    let file = app.data_dir.path().join("pets.jsonl");
    succeeded(&cli(
        app.data_dir.path(),
        &app.database_url,
        &secret_of(app),
        &["export", "--to", &file.display().to_string()],
    ));
    assert_eq!(mode_of(&file), 0o600);
    file
}

/// Imports `file` into `url`, serves it and checks that it answers every read as `source` did.
async fn import_and_compare(source: &Source, file: &Path, url: &str) {
    let app = &source.app;
    let secret = secret_of(app);
    let dir = tempfile::tempdir().expect("tempdir");
    let imported = cli(
        dir.path(),
        url,
        &secret,
        &["import", "--from", &file.display().to_string()],
    );
    succeeded(&imported);
    let expected = every_read(
        &app.address,
        &app.api_key,
        &source.staff,
        &source.pets,
        &source.orders,
    )
    .await;
    let (_, source_end) = feed(&app.address, &app.api_key).await;
    let (mut server, address) = start_server(dir.path(), url, &env(url, &secret)[1..]);
    let answered = every_read(
        &address,
        &app.api_key,
        &source.staff,
        &source.pets,
        &source.orders,
    )
    .await;
    assert_eq!(
        answered["pets"].as_array().map(Vec::len),
        expected["pets"].as_array().map(Vec::len)
    );
    assert_eq!(answered, expected, "{url}");
    assert!(
        !answered["events"].as_array().expect("events").is_empty(),
        "the source's changes have their events, carried over and none added by the import"
    );
    assert_eq!(
        status_with(&address, &source.revoked).await,
        401,
        "still revoked"
    );
    let created = send(
        client()
            .post(format!("{address}/v1/pets"))
            .bearer_auth(&app.api_key)
            .insert_header(("Content-Type", "application/json")),
        Some(json!({"name": "New", "categoryId": 1}).to_string()),
    )
    .await;
    assert_eq!(created.status.as_u16(), 201, "{}", created.body);
    // A feed cursor of the source reads on in the moved data: only what happened since
    // (on PostgreSQL once every older transaction on the server ended: docs/api.md).
    let read_since = async || {
        let since = send(
            client()
                .get(format!("{address}{source_end}"))
                .bearer_auth(&app.api_key),
            None,
        )
        .await;
        assert_eq!(since.status.as_u16(), 200, "{}", since.body);
        let events = since.json();
        match events.as_array().map(Vec::len) {
            Some(1) => Ok(events),
            _ => Err(events),
        }
    };
    let since = if url.starts_with("postgres") {
        eventually(
            Duration::from_secs(10),
            "the new event readable",
            read_since,
        )
        .await
    } else {
        read_since().await.expect("the new event, at once")
    };
    assert_eq!(since[0]["type"], "pet.created");
    assert_eq!(since[0]["data"], created.json());
    let highest = source.pets.iter().max().expect("pets");
    assert!(
        created.json()["id"].as_i64().expect("an id") > *highest,
        "ids are not handed out again"
    );
    let _ = server.kill();
    let _ = server.wait();
}

#[actix_web::test]
async fn export_then_import_into_sqlite_answers_every_read_the_same() {
    let source = source().await;
    let file = export_of(&source);
    let target = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite://{}", target.path().join("moved.db").display());
    import_and_compare(&source, &file, &url).await;
}

#[actix_web::test]
async fn export_then_import_into_postgresql_answers_every_read_the_same() {
    let source = source().await;
    let file = export_of(&source);
    let database = TestDatabase::create();
    import_and_compare(&source, &file, database.url()).await;
    // The planner knows the imported pets from the first request: the import analysed them
    // (`last_analyze`; autovacuum's own rounds set `last_autoanalyze`).
    let analysed: Vec<Number> = diesel::sql_query(
        "SELECT count(*) AS n FROM pg_stat_user_tables \
         WHERE relname = 'pets' AND last_analyze IS NOT NULL",
    )
    .load(&mut PgConnection::establish(database.url()).expect("a connection"))
    .expect("pg_stats");
    assert_eq!(analysed.iter().map(|row| row.n).collect::<Vec<_>>(), [1]);
}

/// PostgreSQL's export, read back into SQLite, answers as the SQLite source did.
#[actix_web::test]
async fn an_export_of_postgresql_imports_into_sqlite() {
    let source = source().await;
    let file = export_of(&source);
    let secret = secret_of(&source.app);
    let database = TestDatabase::create();
    let dir = tempfile::tempdir().expect("tempdir");
    succeeded(&cli(
        dir.path(),
        database.url(),
        &secret,
        &["import", "--from", &file.display().to_string()],
    ));
    let again = dir.path().join("from-postgres.jsonl");
    succeeded(&cli(
        dir.path(),
        database.url(),
        &secret,
        &["export", "--to", &again.display().to_string()],
    ));
    let target = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite://{}", target.path().join("back.db").display());
    import_and_compare(&source, &again, &url).await;
}

#[actix_web::test]
async fn export_to_standard_output_imports_from_standard_input() {
    let source = source().await;
    let app = &source.app;
    let secret = secret_of(app);
    let exported = cli(
        app.data_dir.path(),
        &app.database_url,
        &secret,
        &["export", "--to", "-"],
    );
    succeeded(&exported);
    let target = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite://{}", target.path().join("moved.db").display());
    let mut import = petstore(target.path(), &env(&url, &secret))
        .args(["import", "--from", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start petstore import");
    import
        .stdin
        .take()
        .expect("stdin")
        .write_all(&exported.stdout)
        .expect("write the export");
    succeeded(&import.wait_with_output().expect("import"));
    let path = target.path().join("moved.db");
    assert_eq!(
        sqlite_numbers(&path, "SELECT COUNT(*) AS n FROM pets"),
        sqlite_numbers(
            &sqlite_path(&app.database_url),
            "SELECT COUNT(*) AS n FROM pets"
        ),
    );
}

#[actix_web::test]
async fn import_refuses_bad_files_a_used_or_filled_target_and_another_secret_leaving_it_as_it_was()
{
    let source = source().await;
    let file = export_of(&source);
    let secret = secret_of(&source.app);
    let text = std::fs::read_to_string(&file).expect("read the export");
    let lines: Vec<&str> = text.lines().collect();
    let dir = source.app.data_dir.path();
    let variant = |name: &str, content: String| {
        let path = dir.join(name);
        std::fs::write(&path, content).expect("write");
        path
    };
    let cut_mid_line = variant("cut.jsonl", text[..text.len() / 2].to_owned());
    let without_end = variant("no-end.jsonl", lines[..lines.len() - 1].join("\n") + "\n");
    // The last row (a key's, which no other row names), gone.
    let n = lines.len();
    let one_row_less = variant(
        "one-less.jsonl",
        [&lines[..n - 2], &lines[n - 1..]].concat().join("\n") + "\n",
    );
    let bad_row = variant(
        "bad-row.jsonl",
        text.replacen("\"status\":\"sold\"", "\"status\":17", 1),
    );
    let not_json = variant("garbage.jsonl", text.replacen("{\"table\"", "{table", 1));
    let foreign = variant("foreign.jsonl", "{\"hello\":\"world\"}\n".to_owned());
    let binary = sqlite_path(&source.app.database_url);

    let target = tempfile::tempdir().expect("tempdir");
    let url = format!("sqlite://{}", target.path().join("moved.db").display());
    let import = |path: &Path, extra: &[&str], secret: &str| {
        let from = path.display().to_string();
        cli(
            target.path(),
            &url,
            secret,
            &[&["import", "--from", &from][..], extra].concat(),
        )
    };
    for (path, expected) in [
        (&cut_mid_line, "cut short"),
        (&without_end, "cut short"),
        (&one_row_less, "counts"),
        (&bad_row, "not of its column's type"),
        (&not_json, "not JSON"),
        (&foreign, "not a petstore export"),
        (&binary, "not a petstore export"),
    ] {
        refused(&import(path, &[], &secret), expected);
        let moved = target.path().join("moved.db");
        if moved.exists() {
            assert_eq!(
                sqlite_numbers(&moved, "SELECT COUNT(*) AS n FROM pets"),
                vec![0],
                "{}: the target is left as it was",
                path.display()
            );
        }
    }
    let another = OTHER_SECRET.to_owned();
    refused(&import(&file, &[], &another), "--force-key-id");

    // A filled target, and one a server uses.
    succeeded(&import(&file, &[], &secret));
    refused(&import(&file, &[], &secret), "is not empty");
    let (mut server, _address) = start_server(target.path(), &url, &env(&url, &secret)[1..]);
    refused(&import(&file, &[], &secret), "a server is using");
    let _ = server.kill();
    let _ = server.wait();
    succeeded(&import(&file, &["--force"], &secret));
    assert_eq!(
        sqlite_numbers(
            &target.path().join("moved.db"),
            "SELECT COUNT(*) AS n FROM pets"
        ),
        sqlite_numbers(&binary, "SELECT COUNT(*) AS n FROM pets"),
        "--force replaces the rows"
    );
}

/// On PostgreSQL a server is seen by its sessions: an import into the database a server uses is
/// refused, and leaves it as it was.
#[actix_web::test]
async fn an_import_into_a_postgresql_database_a_server_uses_is_refused() {
    let source = source().await;
    let file = export_of(&source);
    let serving = TestApp::spawn_process(Backend::Postgres).await;
    let pet = serving
        .create_pet(json!({"name": "Stays", "categoryId": 1}))
        .await;
    let output = cli(
        serving.data_dir.path(),
        &serving.database_url,
        &secret_of(&source.app),
        &[
            "import",
            "--force-key-id",
            "--from",
            &file.display().to_string(),
        ],
    );
    refused(&output, "other sessions are connected");
    let got = send(serving.get(&format!("/v1/pets/{}", pet["id"])), None).await;
    assert_eq!(got.status.as_u16(), 200, "{}", got.body);
    assert_eq!(got.json()["name"], "Stays");
}

/// Starts `petstore import --from -` into `url` and writes the first half of `export` to it:
/// the write returns once the import has read nearly all of it (a pipe holds 64 KiB), so it
/// is in the middle of its transaction when killed.
fn kill_an_import_halfway(url: &str, secret: &str, export: &[u8]) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut import: Child = petstore(dir.path(), &env(url, secret))
        .args(["import", "--from", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start petstore import");
    let mut stdin = import.stdin.take().expect("stdin");
    if let Err(err) = stdin.write_all(&export[..export.len() / 2]) {
        let output = import.wait_with_output().expect("reap the import");
        panic!(
            "{url}: the import stopped reading ({err}): {}",
            said(&output)
        );
    }
    import.kill().expect("kill -9 the import");
    import.wait().expect("reap the import");
}

#[actix_web::test]
async fn an_import_killed_halfway_leaves_the_target_as_it_was() {
    let app = TestApp::spawn_process(Backend::Sqlite).await;
    app.execute_sql(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60000) \
         INSERT INTO pets (name, category_id, status) SELECT 'pet ' || i, 1, 'available' FROM n",
    );
    let secret = secret_of(&app);
    let exported = cli(
        app.data_dir.path(),
        &app.database_url,
        &secret,
        &["export", "--to", "-"],
    );
    succeeded(&exported);

    let sqlite = tempfile::tempdir().expect("tempdir");
    let sqlite_url = format!("sqlite://{}", sqlite.path().join("moved.db").display());
    let postgres = TestDatabase::create();
    for url in [sqlite_url.as_str(), postgres.url()] {
        kill_an_import_halfway(url, &secret, &exported.stdout);
        let dir = tempfile::tempdir().expect("tempdir");
        let after = cli(dir.path(), url, &secret, &["export", "--to", "-"]);
        succeeded(&after);
        let text = String::from_utf8(after.stdout).expect("UTF-8");
        let end: Value =
            serde_json::from_str(text.lines().last().expect("an end line")).expect("JSON");
        assert_eq!(
            end["end"]["rows"]["pets"], 0,
            "{url}: the target is left as it was"
        );
        // And a whole import of the same file goes through (the killed session may still be
        // seen on PostgreSQL for a moment, hence --force: the target was just shown empty).
        let mut import = petstore(dir.path(), &env(url, &secret))
            .args(["import", "--force", "--from", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start petstore import");
        import
            .stdin
            .take()
            .expect("stdin")
            .write_all(&exported.stdout)
            .expect("write the export");
        let output = import.wait_with_output().expect("import");
        succeeded(&output);
        assert!(said(&output).contains("60000 pets"), "{}", said(&output));
    }
}
