//! Keys are bound to the one token issued for them: the registry keeps its SHA-256, so a token
//! minted with the signing secret for a recorded key id is refused (tests/api/auth.rs has that
//! probe on every backend). Keys recorded before tokens were bound keep working, are listed as
//! `unbound` and are warned about at start-up until they are rotated.

use std::process::Stdio;
use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
use petstore_http::security::auth::key_id;
use serde_json::Value;

use petstore_test_support::{
    claims_of, client, issue_key, run_petstore, send, start_server_logging_to, TestDatabase,
};

const SECRET: &str = "token-binding-test-secret-of-32-bytes-or-more";

/// A token signed with [`SECRET`] for `key`'s id, with a subject and lifetime of its own.
fn minted_for(key: &str) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs();
    let claims = serde_json::json!({
        "sub": "mallory",
        "jti": claims_of(key)["jti"],
        "iat": now,
        "exp": now + 10 * 365 * 86_400,
    });
    let mut header = Header::new(Algorithm::HS256);
    header.kid = Some(key_id(SECRET.as_bytes()));
    encode(
        &header,
        &claims,
        &EncodingKey::from_secret(SECRET.as_bytes()),
    )
    .expect("sign")
}

#[actix_web::test]
async fn a_key_recorded_before_tokens_were_bound_keeps_working_and_is_listed_and_warned_about() {
    let dir = tempfile::tempdir().expect("tempdir");
    let database = TestDatabase::create();
    let env = [
        ("DATABASE_URL".to_owned(), database.url().to_owned()),
        ("PETSTORE_KEY_SECRET".to_owned(), SECRET.to_owned()),
    ];
    let bound = issue_key(dir.path(), &env, &["--name", "bound"]);
    let legacy = issue_key(dir.path(), &env, &["--name", "legacy"]);
    // What the migration leaves for a key recorded by an earlier version.
    database.execute("UPDATE api_keys SET token_sha256 = NULL WHERE name = 'legacy'");

    let log_path = dir.path().join("server.log");
    let started = start_server_logging_to(
        dir.path(),
        database.url(),
        &[
            env[1].clone(),
            ("PETSTORE_LOG_FORMAT".to_owned(), "json".to_owned()),
        ],
        Stdio::from(std::fs::File::create(&log_path).expect("log file")),
    );
    let mut server = started.child;
    let status_with = |token: String| {
        let request = client()
            .get(format!("{}/v1/pets", started.address))
            .bearer_auth(token);
        async move { send(request, None).await.status.as_u16() }
    };
    let answers = [
        (
            "the bound key's own token",
            status_with(bound.clone()).await,
        ),
        (
            "minted for the bound key",
            status_with(minted_for(&bound)).await,
        ),
        (
            "the unbound key's own token",
            status_with(legacy.clone()).await,
        ),
        (
            "minted for the unbound key",
            status_with(minted_for(&legacy)).await,
        ),
    ];
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(
        answers.map(|(what, status)| (what, status)),
        [
            ("the bound key's own token", 200),
            ("minted for the bound key", 401),
            ("the unbound key's own token", 200),
            // The hole an unbound key keeps until it is rotated, which is why it is flagged.
            ("minted for the unbound key", 200),
        ]
    );

    let listed = run_petstore(dir.path(), &env, &["keys", "list", "--json"]);
    assert!(listed.status.success(), "{listed:?}");
    let keys: Value = serde_json::from_slice(&listed.stdout).expect("JSON");
    let token_of = |name: &str| {
        keys.as_array()
            .expect("an array")
            .iter()
            .find(|key| key["name"] == name)
            .map(|key| key["token"].clone())
    };
    assert_eq!(token_of("bound"), Some("bound".into()), "{keys}");
    assert_eq!(token_of("legacy"), Some("unbound".into()), "{keys}");

    let log = std::fs::read_to_string(&log_path).expect("read the log");
    let warning = log
        .lines()
        .find(|line| line.contains("\"level\":\"WARN\"") && line.contains("unbound"));
    assert!(
        warning.is_some_and(|line| line.contains("\"keys\":1")),
        "no warning about the one unbound key in:\n{log}"
    );
}
