//! The route table: each resource declares its operations once, as a [`Routes`] of
//! [`Operation`]s (method, route template, operation id, the key it needs, handler), and
//! everything that must know them reads them from there: the router ([`Routes::register`]: one
//! actix resource per path, 405 with `Allow` for the other methods), the metrics' `operation`
//! label and the log line's `route` ([`matched`]), and which paths a key answers for
//! ([`KeyedPaths`]). `app/route_table_tests.rs` checks the table against the OpenAPI document.

use std::rc::Rc;

use actix_web::http::Method;
use actix_web::middleware::DefaultHeaders;
use actix_web::web::{self, ServiceConfig};
use actix_web::{HttpRequest, HttpResponse, Route};
use petstore_domain::KeyScope;

use super::get;
use crate::error::ApiError;

/// Who may call an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Anyone, without a key (health, metrics, the documents).
    Open,
    /// A key allowing this scope. The handler's `Authorized<S>` enforces it; the table says it
    /// for the rest (the per-address rate limit, the check against the document).
    Key(KeyScope),
}

/// One operation: a method on a route template, served by a handler.
pub(crate) struct Operation {
    /// The OpenAPI `operationId` (for the service's own endpoints, their name): the `operation`
    /// label of the metrics and of the log line.
    pub(crate) id: &'static str,
    /// GET also answers HEAD.
    pub(crate) method: Method,
    /// The router's pattern, and the log line's `route`.
    pub(crate) path: &'static str,
    pub(crate) access: Access,
    /// Puts the handler on the route that `method` guards: `|route| route.to(handlers::x)`.
    pub(crate) handler: fn(Route) -> Route,
}

/// A resource's operations, in the order the router tries them, and what every response on
/// their paths carries.
pub(crate) struct Routes {
    pub(crate) operations: &'static [Operation],
    /// A header on every response of these paths, key refusals and 405s included.
    pub(crate) every_response_header: Option<(&'static str, &'static str)>,
}

/// What a routed request carries (as its resource's data): the operations of its path.
struct Routed(Vec<&'static Operation>);

impl Routes {
    /// One actix resource per path, in the order the paths first appear: its operations' routes,
    /// and 405 listing their methods for any other.
    pub(crate) fn register(&'static self, config: &mut ServiceConfig) {
        let mut paths: Vec<&'static str> = Vec::new();
        for operation in self.operations {
            if !paths.contains(&operation.path) {
                paths.push(operation.path);
            }
        }
        for path in paths {
            let here: Vec<&'static Operation> = self
                .operations
                .iter()
                .filter(|operation| operation.path == path)
                .collect();
            let allowed: Rc<[Method]> = here
                .iter()
                .flat_map(|operation| answered(&operation.method))
                .collect();
            let resource = here.iter().fold(
                web::resource(path).default_service(method_not_allowed(allowed)),
                |resource, operation| {
                    resource.route((operation.handler)(guarded(&operation.method)))
                },
            );
            let resource = resource.app_data(Routed(here));
            match self.every_response_header {
                Some(header) => config.service(resource.wrap(DefaultHeaders::new().add(header))),
                None => config.service(resource),
            };
        }
    }
}

/// The methods an operation answers: HEAD too wherever GET is.
fn answered(method: &Method) -> Vec<Method> {
    if *method == Method::GET {
        vec![Method::GET, Method::HEAD]
    } else {
        vec![method.clone()]
    }
}

/// A route for `method`: GET and HEAD together (`routing::get`).
fn guarded(method: &Method) -> Route {
    if *method == Method::GET {
        get()
    } else {
        web::method(method.clone())
    }
}

/// The default service of a resource: 405 listing `allowed`.
fn method_not_allowed(allowed: Rc<[Method]>) -> Route {
    web::to(move |req: HttpRequest| {
        let allowed = Rc::clone(&allowed);
        async move {
            Err::<HttpResponse, _>(ApiError::method_not_allowed(
                req.method(),
                req.path(),
                &allowed,
            ))
        }
    })
}

/// The operation `req` was routed to: its path's operation with the request's method (GET's
/// for HEAD), else the path's first; `None` when no route matched.
pub(crate) fn matched(req: &HttpRequest) -> Option<&'static Operation> {
    let Routed(here) = req.app_data::<Routed>()?;
    let method = req.method();
    here.iter()
        .copied()
        .find(|operation| {
            operation.method == method
                || (operation.method == Method::GET && method == Method::HEAD)
        })
        .or_else(|| here.first().copied())
}

/// The paths a key answers for: each keyed operation's template up to its first parameter
/// (`/v1/pets` for `/v1/pets/{petId}`), and every path under it, routed or not, so that a
/// mistyped id under a resource is not charged to the anonymous per-address bucket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeyedPaths(Vec<&'static str>);

impl KeyedPaths {
    pub(crate) fn of(routes: impl IntoIterator<Item = &'static Routes>) -> Self {
        let mut starts: Vec<&'static str> = Vec::new();
        for operation in routes.into_iter().flat_map(|routes| routes.operations) {
            if operation.access == Access::Open {
                continue;
            }
            let fixed = operation.path.split('{').next().unwrap_or_default();
            let start = fixed.trim_end_matches('/');
            if !starts.contains(&start) {
                starts.push(start);
            }
        }
        Self(starts)
    }

    /// Whether `path` is, or lies under, one of the keyed paths.
    pub(crate) fn contain(&self, path: &str) -> bool {
        self.0.iter().any(|start| {
            path.strip_prefix(start)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static THINGS: Routes = Routes {
        operations: &[
            Operation {
                id: "listThings",
                method: Method::GET,
                path: "/v1/things",
                access: Access::Key(KeyScope::Read),
                handler: |route| route.to(HttpResponse::Ok),
            },
            Operation {
                id: "approveThing",
                method: Method::POST,
                path: "/v1/things/{thingId}/approve",
                access: Access::Key(KeyScope::Store),
                handler: |route| route.to(HttpResponse::Ok),
            },
            Operation {
                id: "status",
                method: Method::GET,
                path: "/status",
                access: Access::Open,
                handler: |route| route.to(HttpResponse::Ok),
            },
        ],
        every_response_header: None,
    };

    #[test]
    fn a_keyed_template_covers_its_fixed_start_and_everything_under_it() {
        let keyed = KeyedPaths::of([&THINGS]);
        assert_eq!(keyed, KeyedPaths(vec!["/v1/things"]));
        for path in [
            "/v1/things",
            "/v1/things/7",
            "/v1/things/7/approve",
            "/v1/things/x/y",
        ] {
            assert!(keyed.contain(path), "{path}");
        }
        for path in ["/status", "/v1/thingsx", "/v1", "/"] {
            assert!(!keyed.contain(path), "{path}");
        }
    }

    #[test]
    fn get_answers_head_too() {
        assert_eq!(answered(&Method::GET), [Method::GET, Method::HEAD]);
        assert_eq!(answered(&Method::POST), [Method::POST]);
    }
}
