//! [`Authorized`]: the extractor every `/v1` handler declares, and the only way a handler reaches
//! the use cases. Declared as a handler's first argument, it runs before anything about the
//! request (path, query, body) is looked at: it authenticates the bearer key, checks that the
//! key's scope allows the operation and that the key is within its rate limit, and keeps the
//! key's claims (for the request's log line) and its rate-limit headers (for the response) in
//! the request's extensions. A handler without it cannot compile a call to a use case. It also
//! carries who the caller is (the key's id and its scope, [`Caller`]), which the order use
//! cases need: a key sees only its own orders.

use std::future::{ready, Ready};
use std::marker::PhantomData;
use std::ops::Deref;

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::web::Data;
use actix_web::{FromRequest, HttpMessage, HttpRequest};
use futures_util::future::{Either, LocalBoxFuture};
use petstore_application::{
    CategoryService, EventService, InventoryService, OrderService, PetService,
};
use petstore_domain::{Caller, KeyId, KeyScope};

use super::HttpState;
use crate::error::{ApiError, ErrorCode};
use crate::observability::metrics;
use crate::security::auth::{authenticate, look_up, KeyCheck, KeyClaims, Verdict};
use crate::security::rate_limit::{Decision, RATE_LIMIT, RATE_LIMIT_POLICY};

/// The scope an operation needs, as a type: `Authorized<Read>`, `Authorized<Write>` or
/// `Authorized<Store>`.
pub(crate) trait Scope {
    const NEEDED: KeyScope;
}

/// Listing and getting: any valid key.
pub(crate) enum Read {}

/// Creating and changing: a `write` key.
pub(crate) enum Write {}

/// The store's staff's work (approving and delivering orders): a `store` key.
pub(crate) enum Store {}

impl Scope for Read {
    const NEEDED: KeyScope = KeyScope::Read;
}

impl Scope for Write {
    const NEEDED: KeyScope = KeyScope::Write;
}

impl Scope for Store {
    const NEEDED: KeyScope = KeyScope::Store;
}

/// A request whose key was accepted for scope `S`; derefs to the [`HttpState`] and gives the use
/// cases.
pub(crate) struct Authorized<S: Scope> {
    state: Data<HttpState>,
    caller: Caller,
    scope: PhantomData<S>,
}

impl<S: Scope> Authorized<S> {
    pub(crate) fn pets(&self) -> &PetService {
        &self.state.pets
    }

    /// The order use cases. Order routes are registered only when the state has them.
    pub(crate) fn orders(&self) -> &OrderService {
        self.state
            .orders
            .as_ref()
            .expect("order routes exist only with an order service")
    }

    /// The category use cases. Category routes are registered only when the state has them.
    pub(crate) fn categories(&self) -> &CategoryService {
        self.state
            .categories
            .as_ref()
            .expect("category routes exist only with a category service")
    }

    /// The event feed. Its route is registered only when the state has it.
    pub(crate) fn events(&self) -> &EventService {
        self.state
            .events
            .as_ref()
            .expect("the feed's route exists only with an event service")
    }

    /// The webhook use cases. Their routes are registered only when the state has them.
    pub(crate) fn webhooks(&self) -> &petstore_application::WebhookService {
        &self
            .state
            .webhooks
            .as_ref()
            .expect("webhook routes exist only with a webhook service")
            .0
    }

    /// The rule a webhook endpoint's URL follows.
    pub(crate) fn webhook_urls(&self) -> petstore_domain::AddressPolicy {
        self.state
            .webhooks
            .as_ref()
            .map_or_else(petstore_domain::AddressPolicy::default, |(_, urls)| *urls)
    }

    /// The inventory use case. Its route is registered only when the state has it.
    pub(crate) fn inventory(&self) -> &InventoryService {
        self.state
            .inventory
            .as_ref()
            .expect("the inventory route exists only with an inventory service")
    }

    /// Who is asking: the key's id and its whole scope (which may allow more than `S`).
    pub(crate) fn caller(&self) -> &Caller {
        &self.caller
    }

    /// The key check; a key this instance does not know yet sends the rest to [`look_up`].
    fn check(req: &HttpRequest) -> CheckFuture<S> {
        let state = req
            .app_data::<Data<HttpState>>()
            .expect("the app registers its HttpState")
            .clone();
        match authenticate(req, &state.keys, &state.key_directory, S::NEEDED) {
            Ok(KeyCheck::NotKnownHere(verified)) => {
                let req = req.clone();
                Either::Right(Box::pin(async move {
                    let directory = state.key_directory.clone();
                    let verdict = look_up(verified, directory, S::NEEDED).await?;
                    Self::decide(&req, state, verdict)
                }))
            }
            Ok(KeyCheck::Judged(verdict)) => Either::Left(ready(Self::decide(req, state, verdict))),
            Err(refused) => Either::Left(ready(Err(refused))),
        }
    }

    /// Admits an accepted key; a key out of scope takes its refusal from its rate bucket too,
    /// so that probing which operations a key may do costs what doing them would.
    fn decide(
        req: &HttpRequest,
        state: Data<HttpState>,
        verdict: Verdict,
    ) -> Result<Self, ApiError> {
        match verdict {
            Verdict::Accepted(claims, scope) => Self::admit(req, state, claims, scope),
            Verdict::OutOfScope(claims, scope, refusal) => {
                Self::admit(req, state, claims, scope)?;
                Err(refusal)
            }
        }
    }

    /// Applies the key's rate limit and keeps its claims for the request's log line.
    fn admit(
        req: &HttpRequest,
        state: Data<HttpState>,
        claims: KeyClaims,
        scope: KeyScope,
    ) -> Result<Self, ApiError> {
        // The directory found the key under this id, so it is one; anything else is a bug.
        let key = KeyId::parse(&claims.jti)
            .map_err(|error| ApiError::internal("an accepted key without a valid id", &error))?;
        let decision = state
            .rate_limiter
            .as_deref()
            .map(|limiter| limiter.check(&claims.jti));
        req.extensions_mut().insert(claims);
        match decision {
            None => {}
            Some(Decision::Allowed(headers)) => {
                req.extensions_mut().insert(headers);
            }
            Some(Decision::Limited {
                headers,
                retry_after_secs,
            }) => {
                metrics::rate_limited(metrics::operation(req));
                return Err(ApiError::new(
                    ErrorCode::RateLimited,
                    format!(
                        "this API key has used up its rate limit; retry in {retry_after_secs} s"
                    ),
                )
                .with_header(header::RETRY_AFTER, &retry_after_secs.to_string())
                .with_header_value(RATE_LIMIT_POLICY, headers.policy)
                .with_header_value(RATE_LIMIT, headers.state));
            }
        }
        Ok(Self {
            state,
            caller: Caller::new(key, scope),
            scope: PhantomData,
        })
    }
}

impl<S: Scope> Deref for Authorized<S> {
    type Target = HttpState;

    fn deref(&self) -> &HttpState {
        &self.state
    }
}

/// Ready at once for a key the directory knows (every request but a new key's first); a boxed
/// lookup otherwise.
type CheckFuture<S> = Either<
    Ready<Result<Authorized<S>, ApiError>>,
    LocalBoxFuture<'static, Result<Authorized<S>, ApiError>>,
>;

impl<S: Scope + 'static> FromRequest for Authorized<S> {
    type Error = ApiError;
    type Future = CheckFuture<S>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        Self::check(req)
    }
}
