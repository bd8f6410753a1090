//! Writes a `make bench` run's figures where the project quotes them: the table and the
//! targets in `docs/benchmarks.md` ("Current figures", "Targets at 64 connections") and the
//! speed paragraph of `README.md`, each between its markers, so the figures have one source.
//! A run without PostgreSQL leaves the README as it is (it quotes every backend).

use petstore_test_support::Backend;

use crate::docs_blocks::{repository_file, rewrite};

use crate::report::{Report, Subject, TARGET_CONNECTIONS};
use crate::Operation;

/// Where each block starts and ends; the marker lines themselves stay.
const TABLE: (&str, &str) = ("<!-- make bench: table -->", "<!-- /make bench: table -->");
const TARGETS: (&str, &str) = (
    "<!-- make bench: targets -->",
    "<!-- /make bench: targets -->",
);
const SPEED: (&str, &str) = ("<!-- make bench: speed -->", "<!-- /make bench: speed -->");

/// Thousands of requests a second, rounded to the thousand: `67,000`.
fn thousands(per_second: f64) -> String {
    let rounded = (per_second / 1_000.0).round() as u64;
    if rounded >= 1_000 {
        format!("{},{:03},000", rounded / 1_000, rounded % 1_000)
    } else {
        format!("{rounded},000")
    }
}

/// The README's paragraph, from the rows at 64 connections; `None` when one is missing.
fn speed(report: &Report) -> Option<String> {
    let rate = |subject, operation| {
        report
            .find(subject, operation, TARGET_CONNECTIONS)
            .map(|row| row.measured.per_second())
    };
    let get = |backend| rate(Subject::Petstore(backend), Operation::GetPet);
    let create = |backend| rate(Subject::Petstore(backend), Operation::CreatePet);
    let sqlite_create_p99 = report
        .find(
            Subject::Petstore(Backend::Sqlite),
            Operation::CreatePet,
            TARGET_CONNECTIONS,
        )
        .map(|row| crate::report::ms(row.measured.p99))?;
    Some(format!(
        "Speed, from the `make bench` run in [`docs/benchmarks.md`](docs/benchmarks.md) (this \
         project's\n2-core machine, wrk on the same cores, {TARGET_CONNECTIONS} connections): a \
         bare actix-web server answering a fixed\npet, the ceiling, serves about {} requests/s; \
         petstore answers getPet at about {}/s on\nthe memory backend, {}/s on SQLite and {}/s on \
         PostgreSQL (fsync on), and fsynced\ncreatePet at about {}/s on SQLite (creates are \
         committed in groups; p99 {sqlite_create_p99:.1} ms) and {}/s\non PostgreSQL, each \
         create with its event in the same transaction. Absolute figures move 10-30 % with\nthe \
         shared host; the ratios to the ceiling carry over. Figures, picture and caveats are \
         there.",
        thousands(rate(Subject::Ceiling, Operation::GetPet)?),
        thousands(get(Backend::Memory)?),
        thousands(get(Backend::Sqlite)?),
        thousands(get(Backend::Postgres)?),
        thousands(create(Backend::Sqlite)?),
        thousands(create(Backend::Postgres)?),
    ))
}

/// Writes `report` (and `beside`, the flood's and compression's lines) into
/// `docs/benchmarks.md` and, with every backend measured, `README.md`.
pub fn publish(report: &Report, beside: &str) {
    let targets = format!("```text{}{}```", report.targets(), beside);
    rewrite(
        &repository_file("docs/benchmarks.md"),
        &[(TABLE, report.table()), (TARGETS, targets)],
    );
    match speed(report) {
        Some(paragraph) => rewrite(&repository_file("README.md"), &[(SPEED, paragraph)]),
        None => eprintln!("not every backend measured: README.md left as it is"),
    }
}
