//! The `petstore` command line as an operator uses it: keys on stdout alone, production refusing
//! to start without a real secret, and migrations that can be run ahead of a deploy.

use std::process::Stdio;
use std::time::Duration;

use petstore_test_support::{send, Backend, StartupLine, TestApp, TestDatabase};

use petstore_test_support::{issue_key, petstore, poll_list_status, run_petstore, start_server};

#[test]
fn keys_issue_prints_the_key_alone_on_stdout() {
    let dir = tempfile::tempdir().expect("tempdir");
    let migrated = run_petstore(dir.path(), &[], &["migrate"]);
    assert!(migrated.status.success(), "{migrated:?}");
    let output = run_petstore(dir.path(), &[], &["keys", "issue", "--name", "me"]);
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8(output.stdout).expect("UTF-8");
    assert_eq!(stdout.lines().count(), 1, "{stdout:?}");
    assert_eq!(stdout.trim_end().split('.').count(), 3, "a JWT: {stdout:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("me"),
        "the human-readable part goes to stderr: {stderr}"
    );
}

#[test]
fn keys_issue_refuses_a_bad_lifetime_and_a_blank_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    for args in [
        &["keys", "issue", "--name", "me", "--expires-in", "forever"][..],
        &["keys", "issue", "--name", "me", "--expires-in", "30s"][..],
        &["keys", "issue", "--name", "  "][..],
    ] {
        let output = run_petstore(dir.path(), &[], args);
        assert!(!output.status.success(), "{args:?}");
        assert!(
            output.stdout.is_empty(),
            "nothing that looks like a key on stdout"
        );
    }
}

/// A key's name follows the rule for every human-entered name: `keys list` and the logs show
/// it, where hidden or reordered text would pass one holder off as another.
#[test]
fn keys_issue_refuses_a_name_that_hides_or_reorders_text() {
    let dir = tempfile::tempdir().expect("tempdir");
    let migrated = run_petstore(dir.path(), &[], &["migrate"]);
    assert!(migrated.status.success(), "{migrated:?}");
    for (name, code_point) in [
        ("partner\u{202e}a", "U+202E"),
        ("ops\u{200b}x", "U+200B"),
        ("ops\u{1b}[2J", "U+001B"),
        ("\u{2800}", "U+2800"),
    ] {
        let output = run_petstore(dir.path(), &[], &["keys", "issue", "--name", name]);
        assert!(!output.status.success(), "{name:?}: {output:?}");
        assert!(output.stdout.is_empty(), "{name:?}: a key on stdout");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("--name must not contain invisible or control characters")
                && stderr.contains(code_point),
            "{name:?}: {stderr}"
        );
    }
    let listed = run_petstore(dir.path(), &[], &["keys", "list", "--json"]);
    assert_eq!(String::from_utf8_lossy(&listed.stdout).trim(), "[]");
}

/// A key issued before the rule, under a name it now refuses, is still listed and still works.
#[actix_web::test]
async fn a_key_named_before_the_name_rule_is_listed_and_works() {
    let app = TestApp::spawn(Backend::Sqlite).await;
    let key = app.issue_key(&["--name", "partner a"]).await;
    let old_name = "partner\u{202e}a";
    app.execute_sql(&format!(
        "UPDATE api_keys SET name = '{old_name}' WHERE name = 'partner a'"
    ));
    let listed = app.run_keys_command(&["list", "--json"]);
    assert!(listed.status.success(), "{listed:?}");
    let keys: serde_json::Value = serde_json::from_slice(&listed.stdout).expect("JSON");
    assert!(
        keys.as_array()
            .expect("an array")
            .iter()
            .any(|listed| listed["name"] == old_name),
        "{keys}"
    );
    let table = app.run_keys_command(&["list"]);
    assert!(table.status.success(), "{table:?}");
    let response = send(app.client.get(app.url("/v1/pets")).bearer_auth(&key), None).await;
    assert_eq!(response.status.as_u16(), 200, "{}", response.body);
}

#[test]
fn production_refuses_to_start_without_a_long_enough_secret() {
    let dir = tempfile::tempdir().expect("tempdir");
    let database = format!("sqlite://{}", dir.path().join("pets.db").display());
    for secret in [None, Some("too-short")] {
        let mut command = petstore(dir.path(), &[]);
        command
            .args(["serve", "--bind", "127.0.0.1:0"])
            .env("PETSTORE_ENV", "production")
            .env("DATABASE_URL", &database)
            .stdout(Stdio::null());
        if let Some(secret) = secret {
            command.env("PETSTORE_KEY_SECRET", secret);
        }
        let output = command.output().expect("run petstore");
        assert!(!output.status.success(), "started with secret {secret:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("32"),
            "says how long a secret must be: {stderr}"
        );
    }
    assert!(
        !dir.path().join("dev-key-secret").exists(),
        "production must not fall back to a generated secret"
    );
}

#[test]
fn production_refuses_a_guessable_secret_or_one_others_can_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let database = format!("sqlite://{}", dir.path().join("pets.db").display());
    let serve = |secret_env: (&str, String)| {
        petstore(dir.path(), &[])
            .args(["serve", "--bind", "127.0.0.1:0"])
            .env("PETSTORE_ENV", "production")
            .env("DATABASE_URL", &database)
            .env(secret_env.0, secret_env.1)
            .stdout(Stdio::null())
            .output()
            .expect("run petstore")
    };
    for weak in [" ".repeat(32), "a".repeat(32), "abcd".repeat(10)] {
        let output = serve(("PETSTORE_KEY_SECRET", weak.clone()));
        assert!(!output.status.success(), "started with {weak:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("the API key secret in PETSTORE_KEY_SECRET is too guessable"),
            "{stderr}"
        );
        assert!(!stderr.contains("-0 bits"), "{stderr}");
    }

    let secret_file = dir.path().join("key-secret");
    std::fs::write(&secret_file, new_secret(dir.path())).expect("write the secret file");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let loose = std::fs::Permissions::from_mode(0o644);
        std::fs::set_permissions(&secret_file, loose).expect("chmod");
    }
    let output = serve((
        "PETSTORE_KEY_SECRET_FILE",
        secret_file.display().to_string(),
    ));
    assert!(
        !output.status.success(),
        "started with a world-readable secret file"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("chmod 600"), "{stderr}");
}

/// Of a current and several previous secrets, the refusal names the one that is weak (its place
/// in `PETSTORE_KEY_SECRET_PREVIOUS`), not its value.
#[test]
fn production_names_which_previous_secret_is_guessable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let weak = "a".repeat(32);
    let output = petstore(dir.path(), &[])
        .args(["serve", "--bind", "127.0.0.1:0"])
        .env("PETSTORE_ENV", "production")
        .env(
            "DATABASE_URL",
            format!("sqlite://{}", dir.path().join("pets.db").display()),
        )
        .env("PETSTORE_KEY_SECRET", new_secret(dir.path()))
        .env(
            "PETSTORE_KEY_SECRET_PREVIOUS",
            format!("{},{weak}", new_secret(dir.path())),
        )
        .stdout(Stdio::null())
        .output()
        .expect("run petstore");
    assert!(
        !output.status.success(),
        "started with a weak previous secret"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "the API key secret in entry 2 of PETSTORE_KEY_SECRET_PREVIOUS is too guessable: \
             its bytes carry about 0 bits"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains(&weak), "the secret leaked: {stderr}");
}

#[test]
fn production_refuses_the_webhook_settings_for_development() {
    let dir = tempfile::tempdir().expect("tempdir");
    let database = format!("sqlite://{}", dir.path().join("pets.db").display());
    let secret = new_secret(dir.path());
    for (name, value) in [
        ("PETSTORE_WEBHOOK_ALLOW_LOOPBACK", "true"),
        ("PETSTORE_WEBHOOK_HOSTS", "hooks.test=127.0.0.1"),
    ] {
        let output = petstore(dir.path(), &[])
            .args(["serve", "--bind", "127.0.0.1:0"])
            .env("PETSTORE_ENV", "production")
            .env("DATABASE_URL", &database)
            .env("PETSTORE_KEY_SECRET", &secret)
            .env(name, value)
            .stdout(Stdio::null())
            .output()
            .expect("run petstore");
        assert!(!output.status.success(), "started with {name}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(name), "names {name}: {stderr}");
    }
}

/// `petstore keys secret`: a new secret, alone on stdout.
fn new_secret(data_dir: &std::path::Path) -> String {
    let output = run_petstore(data_dir, &[], &["keys", "secret"]);
    assert!(output.status.success(), "{output:?}");
    let secret = String::from_utf8(output.stdout).expect("UTF-8");
    let secret = secret.trim_end_matches('\n').to_owned();
    assert_eq!(secret.len(), 64, "{secret:?}");
    assert!(secret.bytes().all(|b| b.is_ascii_hexdigit()), "{secret:?}");
    secret
}

/// GET /v1/pets with `key`, retried for up to `within` until the status is `expected`.
async fn status_becomes(address: &str, key: &str, expected: u16, within: Duration) -> u16 {
    poll_list_status(address, key, within, |status| status == expected)
        .await
        .0
}

/// The README's walk-through, as an operator runs it against a production server: a secret
/// from `keys secret`, a write key and a read key, `keys list`, `keys revoke`.
#[actix_web::test]
async fn an_operator_issues_lists_and_revokes_keys_on_a_production_server() {
    let dir = tempfile::tempdir().expect("tempdir");
    let secret = new_secret(dir.path());
    assert_ne!(secret, new_secret(dir.path()), "every secret is new");
    let database = format!("sqlite://{}", dir.path().join("pets.db").display());
    let env = [
        ("PETSTORE_ENV".to_owned(), "production".to_owned()),
        ("PETSTORE_KEY_SECRET".to_owned(), secret),
        ("DATABASE_URL".to_owned(), database.clone()),
    ];
    let (mut server, address) = start_server(dir.path(), &database, &env);

    let ops = issue_key(dir.path(), &env, &["--name", "ops"]);
    let dashboard = issue_key(
        dir.path(),
        &env,
        &["--name", "dashboard", "--scope", "read"],
    );
    let second = Duration::from_secs(1);
    assert_eq!(status_becomes(&address, &ops, 200, second).await, 200);
    assert_eq!(status_becomes(&address, &dashboard, 200, second).await, 200);

    let listed = run_petstore(dir.path(), &env, &["keys", "list", "--json"]);
    assert!(listed.status.success(), "{listed:?}");
    let keys: serde_json::Value = serde_json::from_slice(&listed.stdout).expect("JSON");
    let mut summary: Vec<(&str, &str, &str)> = keys
        .as_array()
        .expect("an array")
        .iter()
        .map(|key| {
            (
                key["name"].as_str().unwrap_or_default(),
                key["scope"].as_str().unwrap_or_default(),
                key["state"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    summary.sort_unstable();
    assert_eq!(
        summary,
        vec![("dashboard", "read", "active"), ("ops", "write", "active")]
    );
    assert!(
        keys[0]["expiresAt"].is_string(),
        "keys expire by default: {keys}"
    );
    assert!(
        keys[1]["expiresAt"].is_string(),
        "keys expire by default: {keys}"
    );
    let table = run_petstore(dir.path(), &env, &["keys", "list"]);
    let table = String::from_utf8_lossy(&table.stdout).into_owned();
    assert!(table.starts_with("ID "), "{table}");
    assert!(
        table.contains("dashboard") && table.contains("read"),
        "{table}"
    );

    let dashboard_entry = keys
        .as_array()
        .expect("an array")
        .iter()
        .find(|key| key["name"] == "dashboard")
        .expect("the dashboard key");
    let dashboard_id = dashboard_entry["id"].as_str().expect("id").to_owned();
    let revoked = run_petstore(dir.path(), &env, &["keys", "revoke", &dashboard_id]);
    assert!(revoked.status.success(), "{revoked:?}");
    assert_eq!(status_becomes(&address, &dashboard, 401, second).await, 401);
    assert_eq!(status_becomes(&address, &ops, 200, second).await, 200);
    let unknown = run_petstore(dir.path(), &env, &["keys", "revoke", &"0".repeat(32)]);
    assert!(!unknown.status.success(), "{unknown:?}");
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("no key"),
        "{unknown:?}"
    );

    server.kill().expect("kill");
    let _ = server.wait();
}

#[test]
fn key_commands_on_a_memory_database_say_where_the_key_is() {
    let dir = tempfile::tempdir().expect("tempdir");
    let env = [("DATABASE_URL".to_owned(), "memory:".to_owned())];
    let output = run_petstore(dir.path(), &env, &["keys", "issue", "--name", "x"]);
    assert!(!output.status.success(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("printed a key at start-up"), "{stderr}");
}

#[test]
fn migrate_applies_once_then_reports_up_to_date() {
    let dir = tempfile::tempdir().expect("tempdir");
    let database = format!("sqlite://{}", dir.path().join("fresh.db").display());
    let env = [("DATABASE_URL".to_owned(), database)];
    let first = run_petstore(dir.path(), &env, &["migrate"]);
    assert!(first.status.success(), "{first:?}");
    assert!(dir.path().join("fresh.db").exists());
    let second = run_petstore(dir.path(), &env, &["migrate"]);
    assert!(second.status.success(), "{second:?}");
    assert!(
        String::from_utf8_lossy(&second.stderr).contains("up to date"),
        "{second:?}"
    );
}

#[test]
fn an_unusable_database_url_is_a_clear_start_up_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let env = [(
        "DATABASE_URL".to_owned(),
        "mysql://localhost/pets".to_owned(),
    )];
    let output = run_petstore(dir.path(), &env, &["migrate"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("mysql"), "{stderr}");
}

#[test]
fn a_libpq_keyword_database_url_is_postgres_and_its_password_never_shows() {
    let dir = tempfile::tempdir().expect("tempdir");
    let database = TestDatabase::create();
    let password = "kw-secret-4711";
    let env = [("DATABASE_URL".to_owned(), database.keyword_dsn(password))];
    let output = petstore(dir.path(), &env)
        .current_dir(dir.path())
        .arg("migrate")
        .output()
        .expect("run petstore migrate");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("password=***"), "{stderr}");
    assert!(!stderr.contains(password), "{stderr}");
    // The schema is in PostgreSQL, and nothing was created beside the process.
    database.execute("SELECT count(*) FROM pets");
    let created: Vec<_> = std::fs::read_dir(dir.path())
        .expect("read the working directory")
        .map(|entry| entry.expect("entry").file_name())
        .collect();
    assert!(created.is_empty(), "{created:?}");
}

#[test]
fn a_database_url_that_is_no_known_form_is_refused_without_repeating_it() {
    for url in [
        "db.internal user=petstore password=hunter2",
        "sqlite://admin:hunter2@db.internal/pets.db",
        "host=db password='hunter2",
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let env = [("DATABASE_URL".to_owned(), url.to_owned())];
        let output = petstore(dir.path(), &env)
            .current_dir(dir.path())
            .arg("migrate")
            .output()
            .expect("run petstore migrate");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{url}: {stderr}");
        assert!(stderr.contains("invalid database URL"), "{url}: {stderr}");
        assert!(!stderr.contains("hunter2"), "{url}: {stderr}");
        let created = std::fs::read_dir(dir.path()).expect("read dir").count();
        assert_eq!(created, 0, "{url}: files were created");
    }
}

/// Last use is written off the request path (every minute, and when the server stops), so
/// `keys list` shows which keys are in use without a write per request.
#[actix_web::test]
async fn keys_list_shows_when_a_key_was_last_used() {
    let dir = tempfile::tempdir().expect("tempdir");
    let database = format!("sqlite://{}", dir.path().join("pets.db").display());
    let env = [("DATABASE_URL".to_owned(), database.clone())];
    let (mut server, address) = start_server(dir.path(), &database, &env);
    let used = issue_key(dir.path(), &env, &["--name", "used"]);
    let _unused = issue_key(dir.path(), &env, &["--name", "unused"]);
    let second = Duration::from_secs(1);
    assert_eq!(status_becomes(&address, &used, 200, second).await, 200);

    // SIGTERM: a graceful stop, after which the server writes what it has not yet written.
    let stopped = std::process::Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status()
        .expect("run kill");
    assert!(stopped.success());
    let status = server.wait().expect("reap the server");
    assert!(status.success(), "{status}");

    let listed = run_petstore(dir.path(), &env, &["keys", "list", "--json"]);
    let keys: serde_json::Value = serde_json::from_slice(&listed.stdout).expect("JSON");
    let last_used = |name: &str| {
        keys.as_array()
            .expect("an array")
            .iter()
            .find(|key| key["name"] == name)
            .map(|key| key["lastUsedAt"].clone())
            .expect("the key is listed")
    };
    assert!(last_used("used").is_string(), "{keys}");
    assert!(last_used("unused").is_null(), "{keys}");
}

/// What a file system tree holds, as sorted relative paths, to show what a command created.
fn tree(dir: &std::path::Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).expect("read dir") {
            let path = entry.expect("entry").path();
            found.push(
                path.strip_prefix(dir)
                    .expect("inside")
                    .display()
                    .to_string(),
            );
            if path.is_dir() {
                pending.push(path);
            }
        }
    }
    found.sort();
    found
}

#[test]
fn a_bare_word_database_url_is_refused_listing_the_accepted_forms() {
    for (word, hint) in [
        ("memory", "`memory:`"),
        ("postgres", "postgres://USER@HOST/DATABASE"),
        ("pets", "sqlite://PATH"),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let env = [("DATABASE_URL".to_owned(), word.to_owned())];
        let output = petstore(dir.path(), &env)
            .current_dir(dir.path())
            .args(["serve", "--bind", "127.0.0.1:0"])
            .output()
            .expect("run petstore serve");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{word}: served");
        assert!(stderr.contains("a bare word"), "{word}: {stderr}");
        assert!(stderr.contains(hint), "{word}: {stderr}");
        assert!(
            !tree(dir.path()).iter().any(|path| path.contains(word)),
            "{word}: a file was created: {:?}",
            tree(dir.path())
        );
    }
}

#[test]
fn an_explicit_sqlite_path_in_a_missing_directory_is_refused_and_nothing_is_created() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("no/such/dir/pets.db");
    let env = [(
        "DATABASE_URL".to_owned(),
        format!("sqlite://{}", missing.display()),
    )];
    for command in [&["migrate"][..], &["serve", "--bind", "127.0.0.1:0"][..]] {
        let output = run_petstore(dir.path(), &env, command);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{command:?}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "the directory {} of the SQLite database does not exist",
                dir.path().join("no/such/dir").display()
            )),
            "{command:?}: {stderr}"
        );
        assert!(!dir.path().join("no").exists(), "{command:?} created it");
    }
}

#[test]
fn the_default_data_directory_is_still_created() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data_dir = dir.path().join("fresh-data");
    let output = run_petstore(&data_dir, &[], &["migrate"]);
    assert!(output.status.success(), "{output:?}");
    assert!(
        data_dir.join("petstore.db").is_file(),
        "{:?}",
        tree(dir.path())
    );
}

#[test]
fn keys_commands_refuse_a_database_that_does_not_exist_and_create_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data_dir = dir.path().join("data");
    for command in [
        &["keys", "issue", "--name", "me"][..],
        &["keys", "list"][..],
        &["keys", "revoke", "0123456789abcdef0123456789abcdef"][..],
    ] {
        let output = petstore(&data_dir, &[])
            .current_dir(dir.path())
            .args(command)
            .output()
            .expect("run petstore");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{command:?}: {stderr}");
        assert!(
            output.stdout.is_empty(),
            "{command:?}: printed a key or a table"
        );
        assert!(
            stderr.contains(&format!(
                "there is no database at {}",
                data_dir.join("petstore.db").display()
            )),
            "{command:?}: {stderr}"
        );
        assert!(stderr.contains("DATABASE_URL"), "{command:?}: {stderr}");
        assert_eq!(
            tree(dir.path()),
            Vec::<String>::new(),
            "{command:?} created files"
        );
    }
}

#[test]
fn a_host_name_binds() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut server = petstore(dir.path(), &[])
        .args(["serve", "--bind", "localhost:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start petstore serve");
    let stdout = server.stdout.take().expect("piped stdout");
    let listening = std::io::BufRead::lines(std::io::BufReader::new(stdout))
        .map_while(Result::ok)
        .find_map(|line| StartupLine::listening_address(&line));
    let _ = server.kill();
    let _ = server.wait();
    let listening = listening.expect("the server said where it listens");
    assert!(listening.starts_with("http://127.0.0.1:"), "{listening}");
}

/// With JSON logs a log collector reads one stream of JSON objects: stdout's start-up lines
/// (where it listens, the start-up key) are JSON lines of the log's shape too, and so is the
/// last word of a server that cannot start.
#[actix_web::test]
async fn with_json_logs_every_line_on_stdout_and_stderr_is_a_json_object() {
    let dir = tempfile::tempdir().expect("tempdir");
    let json_logs = [("PETSTORE_LOG_FORMAT".to_owned(), "json".to_owned())];
    let mut server = petstore(dir.path(), &json_logs)
        .args(["serve", "--bind", "127.0.0.1:0", "--workers", "1"])
        .env("DATABASE_URL", "memory:")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start petstore serve");
    let stdout = server.stdout.take().expect("piped stdout");
    let stderr = server.stderr.take().expect("piped stderr");
    let stderr = std::thread::spawn(move || std::io::read_to_string(stderr).expect("stderr"));
    let mut stdout_lines = std::io::BufRead::lines(std::io::BufReader::new(stdout));
    let mut printed = Vec::new();
    let (address, key) = loop {
        let line = stdout_lines
            .next()
            .expect("a start-up line")
            .expect("UTF-8");
        printed.push(line.clone());
        if let StartupLine::Key(key) = StartupLine::parse(&line) {
            let address = printed
                .iter()
                .find_map(|line| StartupLine::listening_address(line))
                .expect("the address before the key");
            break (address, key);
        }
    };
    let listed = send(
        petstore_test_support::client()
            .get(format!("{address}/v1/pets"))
            .bearer_auth(&key),
        None,
    )
    .await;
    assert_eq!(listed.status.as_u16(), 200, "{}", listed.body);
    let stopped = std::process::Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status()
        .expect("kill");
    assert!(stopped.success());
    assert!(server.wait().expect("the server's end").success());
    printed.extend(stdout_lines.map_while(Result::ok));
    let logged = stderr.join().expect("the stderr reader");

    let lines: Vec<&str> = printed
        .iter()
        .map(String::as_str)
        .chain(logged.lines())
        .collect();
    assert!(lines.len() >= 6, "{lines:#?}");
    for line in &lines {
        let object: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|err| panic!("not a JSON line ({err}): {line}"));
        for field in ["timestamp", "level", "target", "message"] {
            assert!(object[field].is_string(), "{field} in {line}");
        }
    }
    let listening: serde_json::Value = serde_json::from_str(&printed[0]).expect("JSON");
    assert_eq!(listening["api_url"], format!("{address}/v1"));
    assert!(
        logged.contains("\"route\":\"/v1/pets\""),
        "the request's line: {logged}"
    );

    let refused = run_petstore(
        dir.path(),
        &[
            json_logs[0].clone(),
            ("DATABASE_URL".to_owned(), "mysql://nowhere".to_owned()),
        ],
        &["serve", "--bind", "127.0.0.1:0"],
    );
    assert!(!refused.status.success());
    let stderr = String::from_utf8(refused.stderr).expect("UTF-8");
    let last: serde_json::Value = serde_json::from_str(stderr.lines().last().unwrap_or_default())
        .unwrap_or_else(|err| panic!("the last word is a JSON line ({err}): {stderr}"));
    assert_eq!(last["level"], "ERROR", "{stderr}");
    assert!(
        last["message"].as_str().is_some_and(
            |message| message.starts_with("petstore: error: ") && message.contains("mysql")
        ),
        "{stderr}"
    );
}

#[test]
fn an_expiry_beyond_ten_years_is_refused_before_anything_is_stored() {
    let dir = tempfile::tempdir().expect("tempdir");
    assert!(run_petstore(dir.path(), &[], &["migrate"]).status.success());
    let output = run_petstore(
        dir.path(),
        &[],
        &[
            "keys",
            "issue",
            "--name",
            "forever",
            "--expires-in",
            "2930000d",
        ],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(output.stdout.is_empty(), "a key was printed");
    assert!(stderr.contains("at most 3650d"), "{stderr}");
    let listed = run_petstore(dir.path(), &[], &["keys", "list", "--json"]);
    assert!(listed.status.success(), "{listed:?}");
    assert_eq!(String::from_utf8_lossy(&listed.stdout).trim(), "[]");
}

#[test]
fn keys_list_shows_any_stored_row_and_never_a_last_use_before_the_creation() {
    let dir = tempfile::tempdir().expect("tempdir");
    let database = TestDatabase::create();
    let env = [("DATABASE_URL".to_owned(), database.url().to_owned())];
    issue_key(dir.path(), &env, &["--name", "odd"]);
    // As an older version or a hand-written row may have left it.
    database.execute(
        "UPDATE api_keys SET expires_at = 9223372036854775807, \
         last_used_at = created_at - 30",
    );
    for format in [&["keys", "list"][..], &["keys", "list", "--json"][..]] {
        let output = run_petstore(dir.path(), &env, format);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{format:?}: {output:?}");
        assert!(stdout.contains("@9223372036854775807"), "{stdout}");
    }
    let listed = run_petstore(dir.path(), &env, &["keys", "list", "--json"]);
    let keys: serde_json::Value = serde_json::from_slice(&listed.stdout).expect("JSON");
    assert_eq!(keys[0]["lastUsedAt"], keys[0]["createdAt"], "{keys}");
}

#[actix_web::test]
async fn a_clean_start_logs_no_warning() {
    // The warning came from a race at the first start on a new file, so a few starts are tried.
    for attempt in 0..3 {
        let dir = tempfile::tempdir().expect("tempdir");
        let log_path = dir.path().join("server.log");
        let log = std::fs::File::create(&log_path).expect("log file");
        let database = format!("sqlite://{}", dir.path().join("petstore.db").display());
        let started = petstore_test_support::start_server_logging_to(
            dir.path(),
            &database,
            &[("PETSTORE_LOG_FORMAT".to_owned(), "json".to_owned())],
            Stdio::from(log),
        );
        let mut server = started.child;
        let ready = send(
            petstore_test_support::client().get(format!("{}/readyz", started.address)),
            None,
        )
        .await;
        let _ = server.kill();
        let _ = server.wait();
        assert_eq!(ready.status.as_u16(), 200, "{}", ready.body);
        let log = std::fs::read_to_string(&log_path).expect("read the log");
        let warnings: Vec<&str> = log
            .lines()
            .filter(|line| {
                line.contains("\"level\":\"WARN\"") || line.contains("\"level\":\"ERROR\"")
            })
            .collect();
        assert!(warnings.is_empty(), "start {attempt}: {warnings:#?}");
    }
}

/// `petstore healthcheck` (the image's health check) exits 0 while the server answers and 1,
/// saying why, when nothing listens.
#[actix_web::test]
async fn healthcheck_exits_0_while_the_server_answers_and_1_when_it_does_not() {
    let app = TestApp::spawn(Backend::Memory).await;
    let bind = app.address.trim_start_matches("http://").to_owned();
    let dir = tempfile::tempdir().expect("a directory");
    let healthy = run_petstore(dir.path(), &[], &["healthcheck", "--bind", &bind]);
    assert!(healthy.status.success(), "{healthy:?}");

    drop(app);
    let unhealthy = run_petstore(dir.path(), &[], &["healthcheck", "--bind", &bind]);
    assert_eq!(unhealthy.status.code(), Some(1), "{unhealthy:?}");
    let stderr = String::from_utf8_lossy(&unhealthy.stderr);
    assert!(
        stderr.contains(&format!("unhealthy: no answer from http://{bind}/healthz")),
        "{stderr}"
    );
}
