//! The lines `petstore serve` prints on stdout once it accepts connections, read back in either
//! format: text (`PETSTORE_LOG_FORMAT=text`) or JSON lines (the default when stderr is not a
//! terminal, as in every test).

use serde_json::Value;

/// One start-up line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartupLine {
    /// `http://ADDRESS`, without `/v1`.
    Listening(String),
    /// `http://ADDRESS` of `/metrics` on an address of its own.
    Metrics(String),
    /// The in-memory registry's start-up key.
    Key(String),
    /// The hint to issue a key (no key printed).
    IssueKeyHint,
    /// The documentation's address, or a line that is none of these.
    Other,
}

impl StartupLine {
    /// The address (`http://ADDRESS`) `line` says the server listens on, if it says that.
    pub fn listening_address(line: &str) -> Option<String> {
        match Self::parse(line) {
            Self::Listening(address) => Some(address),
            _ => None,
        }
    }

    pub fn parse(line: &str) -> Self {
        match serde_json::from_str::<Value>(line) {
            Ok(object) => Self::from_json(&object),
            Err(_) => Self::from_text(line),
        }
    }

    fn from_json(object: &Value) -> Self {
        let field = |name: &str| object.get(name).and_then(Value::as_str);
        if let Some(url) = field("api_url") {
            Self::Listening(url.trim_end_matches("/v1").to_owned())
        } else if let Some(url) = field("metrics_url") {
            Self::Metrics(url.trim_end_matches("/metrics").to_owned())
        } else if let Some(key) = field("api_key") {
            Self::Key(key.to_owned())
        } else if field("command").is_some() {
            Self::IssueKeyHint
        } else {
            Self::Other
        }
    }

    fn from_text(line: &str) -> Self {
        if let Some(url) = line.strip_prefix("petstore listening on ") {
            Self::Listening(url.trim_end_matches("/v1").to_owned())
        } else if let Some(url) = line.strip_prefix("metrics on ") {
            Self::Metrics(url.trim_end_matches("/metrics").to_owned())
        } else if let Some((_, key)) = line
            .strip_prefix("API key (")
            .and_then(|rest| rest.split_once(", in-memory registry"))
        {
            // The scope's word differs between builds (`store`, earlier `write`): the paired
            // benchmark starts older builds too.
            Self::Key(key.rsplit(' ').next().unwrap_or_default().to_owned())
        } else if line.starts_with("issue an API key with") {
            Self::IssueKeyHint
        } else {
            Self::Other
        }
    }
}

#[cfg(test)]
mod tests {
    use super::StartupLine;

    #[test]
    fn reads_the_start_up_key_whatever_its_scope_is_called() {
        for line in [
            "API key (store, in-memory registry, valid 90 days): abc.def.ghi",
            "API key (write, in-memory registry, valid 90 days): abc.def.ghi",
        ] {
            assert!(
                matches!(StartupLine::parse(line), StartupLine::Key(key) if key == "abc.def.ghi"),
                "{line}"
            );
        }
        assert!(matches!(
            StartupLine::parse("API key rotation is due"),
            StartupLine::Other
        ));
    }
}
