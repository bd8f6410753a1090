//! Which lines are worth writing: `RUST_LOG`, `info` when unset or not understood.
//!
//! A list of `target=level` directives (every value but those naming spans or fields) becomes a
//! [`Targets`] filter, which decides once per call site and keeps nothing per span. `EnvFilter`,
//! needed only for span and field directives, takes a shared lock when each span is created,
//! entered, left and closed, which every request's span would pay.

use tracing_subscriber::filter::Targets;
use tracing_subscriber::EnvFilter;

/// The filter `RUST_LOG` asks for: exactly one of the two is `Some`.
pub(super) fn from_env() -> (Option<Targets>, Option<EnvFilter>) {
    from_directives(&std::env::var("RUST_LOG").unwrap_or_default())
}

fn from_directives(directives: &str) -> (Option<Targets>, Option<EnvFilter>) {
    let directives = match directives.trim() {
        "" => "info",
        directives => directives,
    };
    let info = || {
        (
            Some(Targets::new().with_default(tracing::Level::INFO)),
            None,
        )
    };
    let Ok(env_filter) = EnvFilter::try_new(directives) else {
        return info();
    };
    // Span and field directives are written in brackets; `Targets` would take one for a target.
    if directives.contains('[') {
        return (None, Some(env_filter));
    }
    match directives.parse::<Targets>() {
        Ok(targets) => (Some(targets), None),
        Err(_) => (None, Some(env_filter)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing::level_filters::LevelFilter;

    #[test]
    fn levels_and_targets_need_no_span_tracking() {
        for directives in [
            "info",
            "warn,petstore_http=debug",
            "actix_http=trace",
            "off",
        ] {
            let (targets, env) = from_directives(directives);
            assert!(targets.is_some() && env.is_none(), "{directives}");
        }
        let (targets, _) = from_directives("warn,petstore_http=debug");
        let targets = targets.expect("targets");
        assert_eq!(targets.default_level(), Some(LevelFilter::WARN));
        assert!(targets.would_enable("petstore_http::app", &tracing::Level::DEBUG));
        assert!(!targets.would_enable("petstore_persistence", &tracing::Level::INFO));
    }

    #[test]
    fn nothing_or_nonsense_is_info() {
        for directives in ["", "  ", "[unclosed"] {
            let (targets, env) = from_directives(directives);
            let targets = targets.expect(directives);
            assert!(env.is_none());
            assert_eq!(
                targets.default_level(),
                Some(LevelFilter::INFO),
                "{directives}"
            );
        }
    }

    #[test]
    fn span_and_field_directives_keep_env_filter() {
        let (targets, env) = from_directives("info,[request{request_id=abc}]=debug");
        assert!(targets.is_none() && env.is_some());
    }
}
