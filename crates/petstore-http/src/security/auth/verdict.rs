//! The verdict on a request's key: its token checked, then the key directory's answer about the
//! key, then its scope against the operation's, each refusal counted.

use actix_web::{HttpMessage as _, HttpRequest};
use petstore_application::{KeyDirectory, KeyRefusal, LookupError};
use petstore_domain::KeyScope;

use super::bearer::{verify_bearer, PresentedKeyId};
use super::challenge::{insufficient_scope, invalid_token};
use super::token::{KeyClaims, VerifiedToken};
use super::token_check::ApiKeys;
use crate::error::ApiError;
use crate::observability::metrics::{self, Refusal};

/// What the key directory's answer makes of a usable, correctly signed key.
#[derive(Debug)]
pub(crate) enum Verdict {
    /// The key may do what was asked; its scope, which may allow more, says what else.
    Accepted(KeyClaims, KeyScope),
    /// A usable key whose scope does not cover the operation: the 403 to answer, once the
    /// refusal has been taken from the key's rate bucket (probing scopes is not free).
    OutOfScope(KeyClaims, KeyScope, ApiError),
}

/// What [`authenticate`] found.
#[derive(Debug)]
pub(crate) enum KeyCheck {
    /// The directory knew the key.
    Judged(Verdict),
    /// Correctly signed, but its key is not in this instance's directory: issued a moment ago
    /// by another process, or never. [`look_up`] says which.
    NotKnownHere(VerifiedToken),
}

/// Checks the request's `Authorization: Bearer <key>` header, then that the directory knows the
/// key as usable and that its scope allows `needed`. Called first by every `/v1` handler, so
/// nothing about the request is looked at before the caller is known. Costs no I/O: a key the
/// directory does not know comes back as [`KeyCheck::NotKnownHere`] for [`look_up`].
pub(crate) fn authenticate(
    req: &HttpRequest,
    keys: &ApiKeys,
    directory: &KeyDirectory,
    needed: KeyScope,
) -> Result<KeyCheck, ApiError> {
    let verified = verify_bearer(req, keys).map_err(|(refusal, error)| {
        metrics::key_refused(refusal);
        error
    })?;
    match directory.check(&verified.claims.jti, &verified.digest) {
        Err(KeyRefusal::Unknown) if directory.worth_looking_up(&verified.claims.jti) => {
            Ok(KeyCheck::NotKnownHere(verified))
        }
        Err(refusal) => {
            // A refused key's id goes on the request's log line (only then: no cost otherwise).
            if let Some(presented) = PresentedKeyId::from_id(&verified.claims.jti) {
                req.extensions_mut().insert(presented);
            }
            judge(verified.claims, Err(refusal), needed).map(KeyCheck::Judged)
        }
        answer => judge(verified.claims, answer, needed).map(KeyCheck::Judged),
    }
}

/// Looks up in the registry a correctly signed key the directory did not know, on a thread that
/// may block, and judges it like [`authenticate`]. A registry that cannot be read is a 503: the
/// key may well be valid.
pub(crate) async fn look_up(
    verified: VerifiedToken,
    directory: KeyDirectory,
    needed: KeyScope,
) -> Result<Verdict, ApiError> {
    let VerifiedToken { claims, digest } = verified;
    let id = claims.jti.clone();
    // In the request's span, so what the registry logs belongs to the request.
    let span = tracing::Span::current();
    let answer = actix_web::web::block(move || span.in_scope(|| directory.look_up(&id, &digest)))
        .await
        .map_err(|blocking| ApiError::internal("the key lookup did not run", &blocking))?;
    let answer = match answer {
        Ok(scope) => {
            metrics::key_looked_up("found");
            Ok(scope)
        }
        Err(LookupError::Refused(refusal)) => {
            if refusal == KeyRefusal::Unknown {
                metrics::key_looked_up("unknown");
            } else {
                metrics::key_looked_up("found");
            }
            Err(refusal)
        }
        Err(LookupError::Repository(error)) => {
            metrics::key_looked_up("failed");
            return Err(error.into());
        }
    };
    judge(claims, answer, needed)
}

/// Accepted (with the key's whole scope) when the directory's `answer` about the key lets it
/// do `needed`; out of scope (the 403 to answer) or the 401 of a refused key otherwise, counted.
fn judge(
    claims: KeyClaims,
    answer: Result<KeyScope, KeyRefusal>,
    needed: KeyScope,
) -> Result<Verdict, ApiError> {
    let scope = answer.map_err(|refusal| {
        tracing::debug!(key = %claims.jti, reason = %refusal, "rejected an API key");
        metrics::key_refused(match refusal {
            KeyRefusal::Unknown => Refusal::Unknown,
            KeyRefusal::Revoked => Refusal::Revoked,
            KeyRefusal::Expired => Refusal::Expired,
            KeyRefusal::NotIssued => Refusal::NotIssued,
        });
        invalid_token()
    })?;
    if !scope.allows(needed) {
        metrics::key_refused(Refusal::Scope);
        return Ok(Verdict::OutOfScope(
            claims,
            scope,
            insufficient_scope(needed),
        ));
    }
    Ok(Verdict::Accepted(claims, scope))
}
