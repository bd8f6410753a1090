//! `petstore keys issue`: prints a new API key, and nothing else, on stdout.

use petstore_http::ApiKeys;

use crate::cli::IssueKeyArgs;
use secrecy::ExposeSecret as _;

use crate::{key_secret, AppError};

pub fn issue(args: IssueKeyArgs) -> Result<(), AppError> {
    let name = args.name.trim();
    if name.is_empty() {
        return Err(AppError::Usage("--name must not be blank".to_owned()));
    }
    let secret = key_secret::resolve(&args.keys, &args.data_dir)?;
    let key = ApiKeys::new(secret.expose_secret()).issue(name, args.expires_in)?;
    println!("{key}");
    match args.expires_in {
        Some(ttl) => eprintln!(
            "issued an API key for `{name}`, valid for {}s",
            ttl.as_secs()
        ),
        None => eprintln!("issued an API key for `{name}` that does not expire"),
    }
    Ok(())
}
