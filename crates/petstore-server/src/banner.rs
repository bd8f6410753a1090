//! What `petstore serve` prints on stdout once it accepts connections: where the API, its
//! documentation and its metrics are, and the start-up key (in-memory registry) or the command
//! that issues one. As text for people; with JSON logs, as JSON lines of the log's own shape
//! (`timestamp`, `level`, `target`, `message`, then the values as fields), because a container
//! runtime or systemd mixes stdout into the same stream as the log on stderr.

use std::io::Write as _;
use std::time::SystemTime;

use serde_json::{json, Map, Value};

use crate::logging::LogFormat;

/// The start-up lines, in the order they are printed.
#[derive(Debug)]
pub(crate) struct StartupBanner {
    /// `http://ADDRESS/v1`: the address bound.
    pub(crate) api_url: String,
    /// `PETSTORE_PUBLIC_URL`, when set: where clients reach the API (a published port, a proxy).
    pub(crate) public_url: Option<String>,
    pub(crate) docs_url: String,
    pub(crate) metrics_url: Option<String>,
    pub(crate) key: StartupKey,
}

/// The last line: how to get a key.
#[derive(Debug)]
pub(crate) enum StartupKey {
    /// The in-memory registry's key, issued at start-up: the only way to reach that server.
    Issued(String),
    /// The command that issues a key this server accepts.
    IssueWith(String),
}

/// `target` of the JSON lines, as the log's lines name theirs.
const TARGET: &str = "petstore_server::serve";

impl StartupBanner {
    /// Writes the lines to stdout, and flushes them: a supervisor (or a test) waits for them.
    pub(crate) fn print(&self, format: LogFormat) {
        let mut stdout = std::io::stdout().lock();
        for line in self.lines(format) {
            // Nothing to do when stdout is gone; the service still serves.
            let _ = writeln!(stdout, "{line}");
        }
        let _ = stdout.flush();
    }

    fn lines(&self, format: LogFormat) -> Vec<String> {
        let mut lines = vec![
            line(
                format,
                format!("petstore listening on {}", self.api_url),
                [("api_url", &self.api_url)],
            ),
            line(
                format,
                format!("API documentation on {}", self.docs_url),
                [("docs_url", &self.docs_url)],
            ),
        ];
        if let Some(public_url) = &self.public_url {
            lines.insert(
                1,
                line(
                    format,
                    format!("clients reach it at {public_url}"),
                    [("public_url", public_url)],
                ),
            );
        }
        if let Some(metrics_url) = &self.metrics_url {
            lines.push(line(
                format,
                format!("metrics on {metrics_url}"),
                [("metrics_url", metrics_url)],
            ));
        }
        lines.push(match &self.key {
            StartupKey::Issued(token) => line(
                format,
                format!("API key (store, in-memory registry, valid 90 days): {token}"),
                [("api_key", token)],
            ),
            StartupKey::IssueWith(command) => line(
                format,
                format!("issue an API key with: {command}"),
                [("command", command)],
            ),
        });
        lines
    }
}

/// `message` as text, or as a JSON log line with `fields` beside it.
fn line<const N: usize>(
    format: LogFormat,
    message: String,
    fields: [(&str, &String); N],
) -> String {
    match format {
        LogFormat::Text => message,
        LogFormat::Json => {
            let mut object = Map::new();
            object.insert(
                "timestamp".into(),
                humantime::format_rfc3339_micros(SystemTime::now())
                    .to_string()
                    .into(),
            );
            object.insert("level".into(), json!("INFO"));
            object.insert("target".into(), json!(TARGET));
            object.insert("message".into(), message.into());
            for (name, value) in fields {
                object.insert(name.into(), value.as_str().into());
            }
            Value::Object(object).to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn banner(key: StartupKey, metrics_url: Option<&str>) -> StartupBanner {
        StartupBanner {
            api_url: "http://127.0.0.1:8080/v1".into(),
            public_url: None,
            docs_url: "http://127.0.0.1:8080/docs".into(),
            metrics_url: metrics_url.map(Into::into),
            key,
        }
    }

    #[test]
    fn text_is_for_people() {
        let lines = banner(
            StartupKey::IssueWith("petstore keys issue --name me".into()),
            None,
        )
        .lines(LogFormat::Text);
        assert_eq!(
            lines,
            [
                "petstore listening on http://127.0.0.1:8080/v1",
                "API documentation on http://127.0.0.1:8080/docs",
                "issue an API key with: petstore keys issue --name me",
            ]
        );
    }

    #[test]
    fn json_lines_have_the_log_shape_and_the_values_as_fields() {
        let lines = banner(
            StartupKey::Issued("abc.def.ghi".into()),
            Some("http://127.0.0.1:9090/metrics"),
        )
        .lines(LogFormat::Json);
        let lines: Vec<Value> = lines
            .iter()
            .map(|line| serde_json::from_str(line).expect(line))
            .collect();
        assert_eq!(lines.len(), 4);
        for line in &lines {
            assert_eq!(line["level"], "INFO");
            assert_eq!(line["target"], TARGET);
            let timestamp = line["timestamp"].as_str().expect("a timestamp");
            humantime::parse_rfc3339(timestamp).expect(timestamp);
        }
        assert_eq!(lines[0]["api_url"], "http://127.0.0.1:8080/v1");
        assert_eq!(
            lines[0]["message"],
            "petstore listening on http://127.0.0.1:8080/v1"
        );
        assert_eq!(lines[1]["docs_url"], "http://127.0.0.1:8080/docs");
        assert_eq!(lines[2]["metrics_url"], "http://127.0.0.1:9090/metrics");
        assert_eq!(lines[3]["api_key"], "abc.def.ghi");
    }

    #[test]
    fn a_public_url_is_shown_beside_the_address_bound() {
        let mut banner = banner(StartupKey::IssueWith("petstore keys issue".into()), None);
        banner.api_url = "http://0.0.0.0:8080/v1".into();
        banner.public_url = Some("https://petstore.example.com/v1".into());
        assert_eq!(
            banner.lines(LogFormat::Text)[..2],
            [
                "petstore listening on http://0.0.0.0:8080/v1",
                "clients reach it at https://petstore.example.com/v1",
            ]
        );
        let json: Value = serde_json::from_str(&banner.lines(LogFormat::Json)[1]).expect("JSON");
        assert_eq!(json["public_url"], "https://petstore.example.com/v1");
    }
}
