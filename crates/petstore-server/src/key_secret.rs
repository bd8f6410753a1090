//! Where the secret that signs API keys comes from. Production takes it only from explicit
//! configuration; development makes one on first use and keeps it in the data directory, so keys
//! keep working across restarts and `petstore keys issue` signs with the same secret as `serve`.
//!
//! Production refuses a secret that is short, guessable (`strength.rs`) or kept in a file other
//! users may read or write; development warns about the latter two, except that the secret file
//! it keeps itself must be strong, since nobody should have written it but petstore.

mod strength;

use secrecy::SecretSlice;
use std::fmt;
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
#[cfg(unix)]
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::cli::{Environment, KeySecretArgs};

pub use strength::MIN_ESTIMATED_BITS;

/// Shortest secret accepted in production: 256 bits, the size of HS256's hash.
pub const MIN_PRODUCTION_SECRET_BYTES: usize = 32;

const DEV_SECRET_FILE_NAME: &str = "dev-key-secret";

#[derive(Debug, thiserror::Error)]
pub enum KeySecretError {
    #[error(
        "PETSTORE_ENV=production needs an API key secret: set PETSTORE_KEY_SECRET (or \
         PETSTORE_KEY_SECRET_FILE) to at least {MIN_PRODUCTION_SECRET_BYTES} random bytes, \
         e.g. the output of `openssl rand -hex 32`"
    )]
    MissingInProduction,
    #[error(
        "the API key secret in {origin} is {actual} bytes long; production needs at least \
         {MIN_PRODUCTION_SECRET_BYTES}"
    )]
    TooShortForProduction { origin: SecretOrigin, actual: usize },
    #[error(
        "the API key secret in {origin} is too guessable: its bytes carry about \
         {estimated_bits} bits (at least {MIN_ESTIMATED_BITS:.0} are needed); use random \
         bytes, e.g. the output of `petstore keys secret` or `openssl rand -hex 32`"
    )]
    Weak {
        origin: SecretOrigin,
        /// Rounded down ([`strength::estimated_whole_bits`]).
        estimated_bits: u64,
    },
    #[error(
        "the key secret file {} can be read or written by other users (mode {mode:o}); \
         `chmod 600` it (or 640 with a group of the service's own)", path.display()
    )]
    ExposedFile { path: PathBuf, mode: u32 },
    #[error("the API key secret in {origin} is empty")]
    Empty { origin: SecretOrigin },
    #[error("cannot read the key secret file {path}: {source}")]
    ReadFile { path: PathBuf, source: io::Error },
    #[error("cannot keep the development key secret in {path}: {source}")]
    DevSecret { path: PathBuf, source: io::Error },
    #[error("cannot generate a key secret: {0}")]
    Random(String),
}

/// Where a configured secret came from, for an error that names it: the operator may have set
/// several. A file is named by its path; a secret's value never appears.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretOrigin {
    /// `PETSTORE_KEY_SECRET` (`--key-secret`).
    Variable,
    /// `PETSTORE_KEY_SECRET_FILE` (`--key-secret-file`).
    File(PathBuf),
    /// The entry of `PETSTORE_KEY_SECRET_PREVIOUS` at this place in the list, from 1.
    Previous(usize),
    /// One of the files of `PETSTORE_KEY_SECRET_PREVIOUS_FILE`.
    PreviousFile(PathBuf),
}

impl fmt::Display for SecretOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Variable => f.write_str("PETSTORE_KEY_SECRET"),
            Self::File(path) => write!(f, "PETSTORE_KEY_SECRET_FILE ({})", path.display()),
            Self::Previous(place) => write!(f, "entry {place} of PETSTORE_KEY_SECRET_PREVIOUS"),
            Self::PreviousFile(path) => {
                write!(f, "PETSTORE_KEY_SECRET_PREVIOUS_FILE ({})", path.display())
            }
        }
    }
}

/// The secret new keys are signed with, and the previous ones still accepted during a rotation;
/// all wiped from memory when dropped.
pub struct KeySecrets {
    pub current: SecretSlice<u8>,
    pub previous: Vec<SecretSlice<u8>>,
}

/// The secrets for the configured environment. Previous secrets pass the same checks as the
/// current one: a weak one would let anyone mint keys just the same.
pub fn resolve(args: &KeySecretArgs, data_dir: &Path) -> Result<KeySecrets, KeySecretError> {
    let current = resolve_bytes(args, data_dir).map(SecretSlice::from)?;
    let mut previous = Vec::new();
    for (index, secret) in args.key_secret_previous.iter().enumerate() {
        previous.push(check_explicit(
            secret.clone().into_bytes(),
            SecretOrigin::Previous(index + 1),
            args.environment,
        )?);
    }
    for path in &args.key_secret_previous_file {
        check_file_is_private(path, args.environment)?;
        previous.push(check_explicit(
            read_secret_file(path)?,
            SecretOrigin::PreviousFile(path.clone()),
            args.environment,
        )?);
    }
    Ok(KeySecrets {
        current,
        previous: previous.into_iter().map(SecretSlice::from).collect(),
    })
}

fn resolve_bytes(args: &KeySecretArgs, data_dir: &Path) -> Result<Vec<u8>, KeySecretError> {
    let environment = args.environment;
    let explicit = match (&args.key_secret, &args.key_secret_file) {
        (Some(secret), _) => Some((secret.clone().into_bytes(), SecretOrigin::Variable)),
        (None, Some(path)) => {
            check_file_is_private(path, environment)?;
            Some((read_secret_file(path)?, SecretOrigin::File(path.clone())))
        }
        (None, None) => None,
    };
    let Some((secret, origin)) = explicit else {
        return match environment {
            Environment::Production => Err(KeySecretError::MissingInProduction),
            Environment::Development => load_or_create_dev_secret(data_dir),
        };
    };
    check_explicit(secret, origin, environment)
}

/// A configured secret as the environment demands it: never empty; in production long and not
/// guessable (development only warns about the latter).
fn check_explicit(
    secret: Vec<u8>,
    origin: SecretOrigin,
    environment: Environment,
) -> Result<Vec<u8>, KeySecretError> {
    if secret.is_empty() {
        return Err(KeySecretError::Empty { origin });
    }
    if environment == Environment::Production && secret.len() < MIN_PRODUCTION_SECRET_BYTES {
        return Err(KeySecretError::TooShortForProduction {
            origin,
            actual: secret.len(),
        });
    }
    if !strength::is_strong(&secret) {
        let error = KeySecretError::Weak {
            origin,
            estimated_bits: strength::estimated_whole_bits(&secret),
        };
        match environment {
            Environment::Production => return Err(error),
            Environment::Development => tracing::warn!("{error}"),
        }
    }
    Ok(secret)
}

/// A secret file anyone else on the machine can read gives away every key; one they can write
/// lets them mint keys. Refused in production, a warning in development.
fn check_file_is_private(path: &Path, environment: Environment) -> Result<(), KeySecretError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
        let (mode, group) = match fs::metadata(path) {
            Ok(metadata) => (metadata.permissions().mode() & 0o777, metadata.gid()),
            // Reading it will fail with the reason.
            Err(_) => return Ok(()),
        };
        if is_exposed(mode, is_one_of_our_groups(group)) {
            let error = KeySecretError::ExposedFile {
                path: path.to_owned(),
                mode,
            };
            match environment {
                Environment::Production => return Err(error),
                Environment::Development => tracing::warn!("{error}"),
            }
        }
    }
    #[cfg(not(unix))]
    let _ = (path, environment);
    Ok(())
}

/// Whether a file with `mode` lets anyone but this service at it: any access by others, group
/// write, or group read by a group the service is not in. Group read by the service's own group
/// is how a Kubernetes Secret arrives (mode 0440, the pod's `fsGroup`) and how `root:petstore
/// 0640` files are shared with a service; only processes of that group can read them.
#[cfg(unix)]
fn is_exposed(mode: u32, group_is_ours: bool) -> bool {
    mode & 0o037 != 0 || (mode & 0o040 != 0 && !group_is_ours)
}

/// Whether `group` is this process's effective group or one of its supplementary groups.
#[cfg(unix)]
fn is_one_of_our_groups(group: u32) -> bool {
    rustix::process::getegid().as_raw() == group
        || rustix::process::getgroups()
            .is_ok_and(|groups| groups.iter().any(|ours| ours.as_raw() == group))
}

fn read_secret_file(path: &Path) -> Result<Vec<u8>, KeySecretError> {
    let text = fs::read_to_string(path).map_err(|source| KeySecretError::ReadFile {
        path: path.to_owned(),
        source,
    })?;
    Ok(text.trim_end_matches(['\r', '\n']).as_bytes().to_vec())
}

fn load_or_create_dev_secret(data_dir: &Path) -> Result<Vec<u8>, KeySecretError> {
    let path = data_dir.join(DEV_SECRET_FILE_NAME);
    let dev_error = |source| KeySecretError::DevSecret {
        path: path.clone(),
        source,
    };
    match fs::read_to_string(&path) {
        Ok(text) if !text.trim().is_empty() => {
            check_file_is_private(&path, Environment::Development)?;
            let secret = text.trim().as_bytes().to_vec();
            if !strength::is_strong(&secret) {
                return Err(dev_error(io::Error::other(format!(
                    "it holds a guessable secret (about {} bits); delete it and a strong one is \
                     made",
                    strength::estimated_whole_bits(&secret)
                ))));
            }
            return Ok(secret);
        }
        Ok(_) => return Err(dev_error(io::Error::other("the file is empty"))),
        Err(err) if err.kind() == io::ErrorKind::NotFound => {}
        Err(err) => return Err(dev_error(err)),
    }
    fs::create_dir_all(data_dir).map_err(dev_error)?;
    let secret = crate::random::random_hex(MIN_PRODUCTION_SECRET_BYTES)
        .map_err(|err| KeySecretError::Random(err.to_string()))?;
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    options.mode(0o600);
    match options.open(&path) {
        Ok(mut file) => {
            file.write_all(secret.as_bytes()).map_err(dev_error)?;
            file.sync_all().map_err(dev_error)?;
            tracing::info!(path = %path.display(), "generated a development API key secret");
            Ok(secret.into_bytes())
        }
        // Another process (a second `serve`, or `keys issue`) created it first: use theirs.
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {
            let text = fs::read_to_string(&path).map_err(dev_error)?;
            Ok(text.trim().as_bytes().to_vec())
        }
        Err(err) => Err(dev_error(err)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(secret: Option<&str>, environment: Environment) -> KeySecretArgs {
        KeySecretArgs {
            key_secret: secret.map(str::to_owned),
            key_secret_file: None,
            key_secret_previous: Vec::new(),
            key_secret_previous_file: Vec::new(),
            environment,
        }
    }

    #[test]
    fn previous_secrets_are_kept_in_order_and_checked_like_the_current_one() {
        use secrecy::ExposeSecret as _;
        let dir = tempfile::tempdir().unwrap();
        let current = crate::random::random_hex(32).unwrap();
        let (old, older) = (
            crate::random::random_hex(32).unwrap(),
            crate::random::random_hex(32).unwrap(),
        );
        let mut rotating = args(Some(&current), Environment::Production);
        rotating.key_secret_previous = vec![old.clone(), older.clone()];
        let secrets = resolve(&rotating, dir.path()).unwrap();
        assert_eq!(secrets.current.expose_secret(), current.as_bytes());
        let previous: Vec<&[u8]> = secrets.previous.iter().map(|s| s.expose_secret()).collect();
        assert_eq!(previous, vec![old.as_bytes(), older.as_bytes()]);

        rotating.key_secret_previous = vec!["a".repeat(40)];
        assert!(matches!(
            resolve(&rotating, dir.path()),
            Err(KeySecretError::Weak { .. })
        ));
    }

    /// A private file holding `secret`, in `dir`.
    fn secret_file(dir: &Path, name: &str, secret: &str) -> PathBuf {
        let path = dir.join(name);
        fs::write(&path, secret).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        }
        path
    }

    /// With a current and several previous secrets configured, the operator learns which one
    /// was refused (its setting, its file's path, its place in the list), never its value.
    #[test]
    fn a_refused_secret_is_named_by_where_it_was_configured() {
        let dir = tempfile::tempdir().unwrap();
        let weak = "a".repeat(40);
        let strong = crate::random::random_hex(32).unwrap();
        let refusal = |configured: &KeySecretArgs| {
            let message = resolve(configured, dir.path()).err().unwrap().to_string();
            assert!(!message.contains(&weak), "the secret leaked: {message}");
            message
        };

        assert_eq!(
            refusal(&args(Some(&weak), Environment::Production)),
            "the API key secret in PETSTORE_KEY_SECRET is too guessable: its bytes carry about \
             0 bits (at least 128 are needed); use random bytes, e.g. the output of `petstore \
             keys secret` or `openssl rand -hex 32`"
        );
        assert_eq!(
            refusal(&args(Some("too-short"), Environment::Production)),
            "the API key secret in PETSTORE_KEY_SECRET is 9 bytes long; production needs at \
             least 32"
        );

        let path = secret_file(dir.path(), "current", &weak);
        let mut from_file = args(None, Environment::Production);
        from_file.key_secret_file = Some(path.clone());
        let message = refusal(&from_file);
        assert!(
            message.starts_with(&format!(
                "the API key secret in PETSTORE_KEY_SECRET_FILE ({}) is too guessable",
                path.display()
            )),
            "{message}"
        );

        let mut rotating = args(Some(&strong), Environment::Production);
        rotating.key_secret_previous = vec![crate::random::random_hex(32).unwrap(), weak.clone()];
        let message = refusal(&rotating);
        assert!(
            message.starts_with(
                "the API key secret in entry 2 of PETSTORE_KEY_SECRET_PREVIOUS is too guessable"
            ),
            "{message}"
        );
        rotating.key_secret_previous = vec![String::new()];
        assert_eq!(
            refusal(&rotating),
            "the API key secret in entry 1 of PETSTORE_KEY_SECRET_PREVIOUS is empty"
        );

        let path = secret_file(dir.path(), "previous", &weak);
        rotating.key_secret_previous = Vec::new();
        rotating.key_secret_previous_file = vec![path.clone()];
        let message = refusal(&rotating);
        assert!(
            message.starts_with(&format!(
                "the API key secret in PETSTORE_KEY_SECRET_PREVIOUS_FILE ({}) is too guessable",
                path.display()
            )),
            "{message}"
        );
    }

    /// The bits shown are the estimate rounded down: a secret short of the bound by a fraction
    /// must not read as reaching it, and a secret of one repeated byte carries 0, not -0.
    #[test]
    fn the_estimate_shown_is_rounded_down_and_never_negative() {
        let dir = tempfile::tempdir().unwrap();
        // 127.7 bits by the estimate.
        let almost = "fec0c9669a08d61f659259742754b138b";
        let message = resolve(&args(Some(almost), Environment::Production), dir.path())
            .err()
            .unwrap()
            .to_string();
        assert!(
            message.contains("about 127 bits (at least 128 are needed)"),
            "{message}"
        );

        fs::write(dir.path().join(DEV_SECRET_FILE_NAME), "a".repeat(64)).unwrap();
        let message = resolve_bytes(&args(None, Environment::Development), dir.path())
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("(about 0 bits)") && !message.contains("-0"),
            "{message}"
        );
    }

    #[test]
    fn production_refuses_to_run_without_a_secret() {
        let dir = tempfile::tempdir().unwrap();
        let err = resolve_bytes(&args(None, Environment::Production), dir.path()).unwrap_err();
        assert!(matches!(err, KeySecretError::MissingInProduction));
        assert!(err.to_string().contains("PETSTORE_KEY_SECRET"));
        assert!(!dir.path().join(DEV_SECRET_FILE_NAME).exists());
    }

    #[test]
    fn production_refuses_a_short_secret_and_accepts_a_random_one() {
        let dir = tempfile::tempdir().unwrap();
        let short = "x".repeat(31);
        let err =
            resolve_bytes(&args(Some(&short), Environment::Production), dir.path()).unwrap_err();
        assert!(matches!(
            err,
            KeySecretError::TooShortForProduction { actual: 31, .. }
        ));
        let long = crate::random::random_hex(32).unwrap();
        let secret =
            resolve_bytes(&args(Some(&long), Environment::Production), dir.path()).unwrap();
        assert_eq!(secret, long.into_bytes());
    }

    #[test]
    fn production_refuses_a_long_but_guessable_secret() {
        let dir = tempfile::tempdir().unwrap();
        for weak in [" ".repeat(32), "a".repeat(32), "secret".repeat(8)] {
            let err =
                resolve_bytes(&args(Some(&weak), Environment::Production), dir.path()).unwrap_err();
            assert!(
                matches!(err, KeySecretError::Weak { .. }),
                "{weak:?}: {err}"
            );
            assert!(err.to_string().contains("petstore keys secret"), "{err}");
        }
        // Development accepts it (with a warning): local experiments may use anything.
        let weak = "a".repeat(32);
        let secret =
            resolve_bytes(&args(Some(&weak), Environment::Development), dir.path()).unwrap();
        assert_eq!(secret, weak.into_bytes());
    }

    #[cfg(unix)]
    #[test]
    fn group_read_is_private_only_for_a_group_of_the_service() {
        assert!(!is_exposed(0o400, false));
        assert!(!is_exposed(0o600, false));
        assert!(
            !is_exposed(0o440, true),
            "a Kubernetes Secret with the pod's fsGroup"
        );
        assert!(!is_exposed(0o640, true));
        assert!(
            is_exposed(0o640, false),
            "readable by a group the service is not in"
        );
        assert!(is_exposed(0o660, true), "writable by the group");
        assert!(is_exposed(0o604, true), "readable by anyone");
        assert!(is_one_of_our_groups(rustix::process::getegid().as_raw()));
    }

    #[cfg(unix)]
    #[test]
    fn a_secret_file_others_can_access_is_refused_in_production_only() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret");
        let secret = crate::random::random_hex(32).unwrap();
        fs::write(&path, &secret).unwrap();
        for mode in [0o604, 0o620, 0o660, 0o666] {
            fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
            let mut file_args = args(None, Environment::Production);
            file_args.key_secret_file = Some(path.clone());
            let err = resolve_bytes(&file_args, dir.path()).unwrap_err();
            assert!(
                matches!(err, KeySecretError::ExposedFile { .. }),
                "{mode:o}: {err}"
            );
            assert!(err.to_string().contains("chmod 600"), "{err}");
            file_args.environment = Environment::Development;
            assert_eq!(
                resolve_bytes(&file_args, dir.path()).unwrap(),
                secret.as_bytes()
            );
        }
        fs::set_permissions(&path, fs::Permissions::from_mode(0o400)).unwrap();
        let mut file_args = args(None, Environment::Production);
        file_args.key_secret_file = Some(path);
        assert_eq!(
            resolve_bytes(&file_args, dir.path()).unwrap(),
            secret.as_bytes()
        );
    }

    #[test]
    fn a_weak_development_secret_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(DEV_SECRET_FILE_NAME), "a".repeat(64)).unwrap();
        let err = resolve_bytes(&args(None, Environment::Development), dir.path()).unwrap_err();
        assert!(err.to_string().contains("guessable"), "{err}");
    }

    #[test]
    fn development_generates_a_secret_once_and_reuses_it() {
        let dir = tempfile::tempdir().unwrap();
        let data_dir = dir.path().join("nested/data");
        let first = resolve_bytes(&args(None, Environment::Development), &data_dir).unwrap();
        let second = resolve_bytes(&args(None, Environment::Development), &data_dir).unwrap();
        assert_eq!(first, second);
        assert_eq!(first.len(), 64, "32 random bytes, hex encoded");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(data_dir.join(DEV_SECRET_FILE_NAME))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o077, 0, "secret file readable by others: {mode:o}");
        }
    }

    #[test]
    fn a_secret_file_is_read_without_its_trailing_newline() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret");
        let secret = crate::random::random_hex(20).unwrap();
        fs::write(&path, format!("{secret}\n")).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        }
        let mut file_args = args(None, Environment::Production);
        file_args.key_secret_file = Some(path);
        assert_eq!(
            resolve_bytes(&file_args, dir.path()).unwrap(),
            secret.into_bytes()
        );
    }
}
