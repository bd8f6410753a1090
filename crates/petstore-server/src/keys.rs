//! `petstore keys issue`: prints a new API key, and nothing else, on stdout.

use petstore_http::ApiKeys;
use secrecy::ExposeSecret as _;

use crate::cli::IssueKeyArgs;
use crate::{key_secret, AppError};

/// A new API key as `args` ask for it, signed with the configured secret.
pub fn issue_key(args: &IssueKeyArgs) -> Result<String, AppError> {
    let name = args.name.trim();
    if name.is_empty() {
        return Err(AppError::Usage("--name must not be blank".to_owned()));
    }
    let secret = key_secret::resolve(&args.keys, &args.data_dir)?;
    Ok(ApiKeys::new(secret.expose_secret()).issue(name, args.expires_in)?)
}

pub fn issue(args: IssueKeyArgs) -> Result<(), AppError> {
    let key = issue_key(&args)?;
    println!("{key}");
    let name = args.name.trim();
    match args.expires_in {
        Some(ttl) => eprintln!(
            "issued an API key for `{name}`, valid for {}s",
            ttl.as_secs()
        ),
        None => eprintln!("issued an API key for `{name}` that does not expire"),
    }
    Ok(())
}
