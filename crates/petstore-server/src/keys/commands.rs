//! The `petstore keys` commands, run by an operator against the registry of the configured
//! database: what they print on stdout is for scripts (a key, a table, JSON), what they print on
//! stderr is for the person.

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use petstore_application::{KeyDirectory, Revocation, SystemClock};
use petstore_domain::{ApiKey, KeyId, KeyName, KeyState};
use petstore_persistence::DatabaseUrl;

use super::{check_lifetime, unix_now, IssueError, KeyIssuer};
use crate::cli::{IssueKeyArgs, ListKeysArgs, RevokeKeyArgs, StorageArgs};
use crate::{key_secret, AppError};

/// `petstore keys issue`: records a key and prints its token alone on stdout.
pub fn issue(args: IssueKeyArgs) -> Result<(), AppError> {
    // Everything that can be refused is, before anything is opened or stored.
    KeyName::parse(&args.name).map_err(IssueError::from)?;
    check_lifetime(args.expires_in.duration())?;
    let directory = open_directory(&args.storage)?;
    let secrets = key_secret::resolve(&args.keys, &args.storage.data_dir)?;
    let issuer = KeyIssuer::new(directory, Arc::new(secrets.current));
    let issued = issuer.issue(&args.name, args.scope, args.expires_in.duration())?;
    println!("{}", issued.token);
    let key = &issued.key;
    eprintln!(
        "issued {} key {} for `{}`, {}",
        key.scope,
        key.id,
        key.name,
        match key.expires_at {
            Some(at) => format!("valid until {}", timestamp(at)),
            None => "that never expires".to_owned(),
        }
    );
    Ok(())
}

/// `petstore keys list`: every key, as a table or (`--json`) one JSON array.
pub fn list(args: ListKeysArgs) -> Result<(), AppError> {
    let keys = open_directory(&args.storage)?
        .list()
        .map_err(AppError::KeyRegistry)?;
    let now = unix_now();
    if args.json {
        let json: Vec<_> = keys.iter().map(|key| key_json(key, now)).collect();
        println!("{}", serde_json::Value::Array(json));
    } else {
        print!("{}", table(&keys, now));
    }
    Ok(())
}

/// `petstore keys revoke ID`: revokes once; again is harmless and says so.
pub fn revoke(args: RevokeKeyArgs) -> Result<(), AppError> {
    let id = KeyId::parse(args.id.trim())
        .map_err(|err| AppError::Usage(format!("`{}` is not a key id: {err}", args.id)))?;
    let directory = open_directory(&args.storage)?;
    match directory.revoke(&id).map_err(AppError::KeyRegistry)? {
        Revocation::Revoked(key) => println!(
            "revoked key {} (`{}`); every instance refuses it within a second",
            key.id, key.name
        ),
        Revocation::AlreadyRevoked(key) => println!(
            "key {} (`{}`) was already revoked at {}; nothing changed",
            key.id,
            key.name,
            key.revoked_at.map_or_else(String::new, timestamp)
        ),
        Revocation::NotFound => {
            return Err(AppError::Usage(format!("no key has the id {id}")));
        }
    }
    Ok(())
}

/// `petstore keys secret`: a new key secret, 32 random bytes as 64 hex digits, alone on stdout.
pub fn print_secret() -> Result<(), AppError> {
    let secret = crate::random::random_hex(key_secret::MIN_PRODUCTION_SECRET_BYTES)
        .map_err(|err| key_secret::KeySecretError::Random(err.to_string()))?;
    println!("{secret}");
    Ok(())
}

/// The directory over the configured database's registry (migrated first, as `serve` does).
/// A SQLite file that does not exist is not created: a key recorded in a database no server
/// reads would be handed out and never work.
fn open_directory(args: &StorageArgs) -> Result<KeyDirectory, AppError> {
    let url = args.database_url()?;
    if url == DatabaseUrl::Memory {
        return Err(AppError::Usage(
            "with DATABASE_URL=memory: the key registry lives inside the `petstore serve` \
             process, which printed a key at start-up; use that one"
                .to_owned(),
        ));
    }
    if let Some(path) = url.sqlite_path().filter(|path| !path.exists()) {
        return Err(AppError::Usage(format!(
            "there is no database at {}: `petstore keys` works on the database of your server; \
             run it where `petstore serve` runs, or point it there with DATABASE_URL (or \
             --data-dir). To start a new database there, run `petstore migrate` first",
            path.display()
        )));
    }
    let storage = petstore_persistence::open(&url, &args.pool_settings())?;
    KeyDirectory::load(storage.keys, Arc::new(SystemClock)).map_err(AppError::KeyRegistry)
}

/// The RFC 3339 time of a stored Unix timestamp; one outside the years 1970 to 9999 (written by
/// hand, or by an older version) as `@SECONDS` rather than a panic.
fn timestamp(unix_seconds: i64) -> String {
    /// 9999-12-31T23:59:59Z, the last second RFC 3339 can write.
    const LAST_WRITABLE: i64 = 253_402_300_799;
    match u64::try_from(unix_seconds) {
        Ok(seconds) if unix_seconds <= LAST_WRITABLE => {
            humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(seconds)).to_string()
        }
        _ => format!("@{unix_seconds}"),
    }
}

/// When the key was last used, never shown before it was created (uses are kept to the minute,
/// and older versions recorded the minute's start).
fn last_used(key: &ApiKey) -> Option<i64> {
    key.last_used_at.map(|at| at.max(key.created_at))
}

fn state(key: &ApiKey, now: i64) -> &'static str {
    match key.state_at(now) {
        KeyState::Active => "active",
        KeyState::Expired => "expired",
        KeyState::Revoked => "revoked",
    }
}

/// `bound`: only the token issued for the key passes; `unbound`: recorded before tokens were
/// bound, so any token signed with the secret and the key's id passes (rotate it: docs/api.md).
fn binding(key: &ApiKey) -> &'static str {
    if key.token_digest.is_some() {
        "bound"
    } else {
        "unbound"
    }
}

fn key_json(key: &ApiKey, now: i64) -> serde_json::Value {
    let time = |at: Option<i64>| at.map(timestamp);
    serde_json::json!({
        "id": key.id.as_str(),
        "name": key.name.as_str(),
        "scope": key.scope.as_str(),
        "state": state(key, now),
        "token": binding(key),
        "createdAt": timestamp(key.created_at),
        "expiresAt": time(key.expires_at),
        "revokedAt": time(key.revoked_at),
        "lastUsedAt": time(last_used(key)),
    })
}

/// Aligned columns, one key per line, a header first.
fn table(keys: &[ApiKey], now: i64) -> String {
    let time = |at: Option<i64>| at.map_or_else(|| "-".to_owned(), timestamp);
    let mut rows = vec![[
        "ID",
        "NAME",
        "SCOPE",
        "STATE",
        "TOKEN",
        "CREATED",
        "EXPIRES",
        "REVOKED",
        "LAST USED",
    ]
    .map(str::to_owned)];
    rows.extend(keys.iter().map(|key| {
        [
            key.id.to_string(),
            key.name.to_string(),
            key.scope.to_string(),
            state(key, now).to_owned(),
            binding(key).to_owned(),
            timestamp(key.created_at),
            time(key.expires_at),
            time(key.revoked_at),
            time(last_used(key)),
        ]
    }));
    let widths: Vec<usize> = (0..9)
        .map(|column| {
            rows.iter()
                .map(|row| row[column].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use petstore_domain::{KeyName, KeyScope};

    use super::*;

    fn key(revoked_at: Option<i64>) -> ApiKey {
        ApiKey {
            id: KeyId::parse("0123456789abcdef0123456789abcdef").unwrap(),
            name: KeyName::parse("partner a").unwrap(),
            scope: KeyScope::Read,
            token_digest: Some(petstore_domain::TokenDigest([1; 32])),
            created_at: 1_800_000_000,
            expires_at: Some(1_900_000_000),
            revoked_at,
            last_used_at: None,
        }
    }

    #[test]
    fn any_stored_time_is_listed_and_a_last_use_never_before_the_creation() {
        assert_eq!(timestamp(0), "1970-01-01T00:00:00Z");
        assert_eq!(timestamp(253_402_300_799), "9999-12-31T23:59:59Z");
        assert_eq!(timestamp(253_402_300_800), "@253402300800");
        assert_eq!(timestamp(i64::MAX), format!("@{}", i64::MAX));
        assert_eq!(timestamp(-5), "@-5");
        let mut early = key(None);
        early.created_at = 1_800_000_030;
        early.last_used_at = Some(1_800_000_000);
        early.expires_at = Some(i64::MAX);
        assert!(table(&[early.clone()], 1_800_000_100)
            .contains("2027-01-15T08:00:30Z  @9223372036854775807"));
        assert_eq!(
            key_json(&early, 1_800_000_100)["lastUsedAt"],
            "2027-01-15T08:00:30Z"
        );
    }

    #[test]
    fn the_table_has_a_header_and_aligned_columns() {
        let table = table(&[key(None), key(Some(1_800_000_100))], 1_800_000_200);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 3, "{table}");
        assert!(lines[0].starts_with("ID "), "{table}");
        let column = lines[0].find("SCOPE").unwrap();
        assert_eq!(&lines[1][column..column + 4], "read", "{table}");
        assert!(
            lines[1].contains("active") && lines[1].contains("2027-01-15T08:00:00Z"),
            "{table}"
        );
        assert!(lines[2].contains("revoked"), "{table}");
        let column = lines[0].find("TOKEN").unwrap();
        assert_eq!(&lines[1][column..column + 6], "bound ", "{table}");
        let unbound = ApiKey {
            token_digest: None,
            ..key(None)
        };
        assert!(super::table(std::slice::from_ref(&unbound), 1_800_000_200).contains(" unbound "));
        assert_eq!(key_json(&unbound, 1_800_000_200)["token"], "unbound");
    }

    #[test]
    fn json_has_one_object_per_key_with_null_for_what_did_not_happen() {
        let json = key_json(&key(None), 1_800_000_200);
        assert_eq!(json["id"], "0123456789abcdef0123456789abcdef");
        assert_eq!(json["scope"], "read");
        assert_eq!(json["state"], "active");
        assert_eq!(json["token"], "bound");
        assert_eq!(json["createdAt"], "2027-01-15T08:00:00Z");
        assert!(json["revokedAt"].is_null());
        assert!(json["lastUsedAt"].is_null());
    }
}
