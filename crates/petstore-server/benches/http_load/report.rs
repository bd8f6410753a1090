//! What the benchmark prints and draws: the table with ratios to the ceiling, the targets of
//! `docs/benchmarks.md` checked at 64 connections, and an SVG of throughput and p99 against
//! connections, one row of charts per backend.

use std::fmt::Write;
use std::path::Path;
use std::time::Duration;

use plotters::prelude::*;

use crate::wrk::Measured;
use crate::Operation;
use petstore_test_support::Backend;

/// What was measured: the bare actix-web ceiling or petstore on one backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    Ceiling,
    Petstore(Backend),
}

impl Subject {
    fn label(self) -> &'static str {
        match self {
            Self::Ceiling => "ceiling",
            Self::Petstore(Backend::Memory) => "memory",
            Self::Petstore(Backend::Sqlite) => "SQLite",
            Self::Petstore(Backend::Postgres) => "PostgreSQL",
        }
    }
}

pub struct Row {
    pub subject: Subject,
    pub operation: Operation,
    pub connections: usize,
    pub measured: Measured,
}

/// At 64 connections: minimum ratios for getPet, listPets and createPet, and createPet's latency
/// bounds (p99, max), from the speed issue.
struct Target {
    backend: Backend,
    ratios: [(Operation, f64); 3],
    create_p99: Option<Duration>,
    create_max: Option<Duration>,
}

pub const TARGET_CONNECTIONS: usize = 64;
const RSS_TARGET_KIB: u64 = 40 * 1024;

const TARGETS: [Target; 3] = [
    Target {
        backend: Backend::Memory,
        ratios: [
            (Operation::GetPet, 0.65),
            (Operation::ListPets, 0.55),
            (Operation::CreatePet, 0.5),
        ],
        create_p99: None,
        create_max: None,
    },
    Target {
        backend: Backend::Sqlite,
        ratios: [
            (Operation::GetPet, 0.5),
            (Operation::ListPets, 0.35),
            (Operation::CreatePet, 0.2),
        ],
        create_p99: Some(Duration::from_millis(15)),
        create_max: Some(Duration::from_millis(100)),
    },
    Target {
        backend: Backend::Postgres,
        ratios: [
            (Operation::GetPet, 0.15),
            (Operation::ListPets, 0.12),
            (Operation::CreatePet, 0.08),
        ],
        create_p99: Some(Duration::from_millis(25)),
        create_max: None,
    },
];

/// createPet at [`TARGET_CONNECTIONS`] without and with an `Idempotency-Key`, back to back.
pub struct KeyedPair {
    pub plain: Measured,
    pub keyed: Measured,
}

impl KeyedPair {
    /// Keyed over plain rate: the target's measure.
    fn share(&self) -> f64 {
        self.keyed.per_second() / self.plain.per_second()
    }

    /// Plain over keyed machine CPU per request: what the rate would be on a machine whose every
    /// cycle went to the load. Less moved by the host than the rate is (a neighbour taking cycles
    /// slows both runs' requests, not their cost in cycles), so it tells a real change from
    /// drift.
    fn cpu_share(&self) -> Option<f64> {
        let plain = self.plain.machine_cpu?.as_secs_f64();
        let keyed = self.keyed.machine_cpu?.as_secs_f64();
        (keyed > 0.0).then(|| plain / keyed)
    }
}

/// The median of `values` (the upper one of an even count).
pub fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied()
}

pub fn listed(values: &[f64]) -> String {
    values
        .iter()
        .map(|value| format!("{value:.3}"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub struct Report {
    rows: Vec<Row>,
    keyed_pairs: Vec<(Backend, Vec<KeyedPair>)>,
    rss_kib: Vec<(Backend, Option<u64>)>,
}

pub fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1_000.0
}

impl Report {
    pub fn new(
        rows: Vec<Row>,
        keyed_pairs: Vec<(Backend, Vec<KeyedPair>)>,
        rss_kib: Vec<(Backend, Option<u64>)>,
    ) -> Self {
        Self {
            rows,
            keyed_pairs,
            rss_kib,
        }
    }

    /// The pairs measured on `backend`.
    fn keyed_pairs(&self, backend: Backend) -> Option<&[KeyedPair]> {
        let (_, pairs) = self.keyed_pairs.iter().find(|(of, _)| *of == backend)?;
        Some(pairs)
    }

    pub fn find(&self, subject: Subject, operation: Operation, connections: usize) -> Option<&Row> {
        self.rows.iter().find(|row| {
            row.subject == subject && row.operation == operation && row.connections == connections
        })
    }

    /// req/s divided by the ceiling's req/s at the same number of connections.
    fn ratio(&self, row: &Row) -> Option<f64> {
        let ceiling = self.find(Subject::Ceiling, Operation::GetPet, row.connections)?;
        Some(row.measured.per_second() / ceiling.measured.per_second())
    }

    pub fn table(&self) -> String {
        let mut out = String::from(
            "\n| subject | operation | conns | req/s | p50 ms | p99 ms | max ms | ratio |\n\
             |---|---|---:|---:|---:|---:|---:|---:|\n",
        );
        for row in &self.rows {
            let m = &row.measured;
            let _ = writeln!(
                out,
                "| {} | {} | {} | {:.0} | {:.2} | {:.2} | {:.2} | {:.3} |",
                row.subject.label(),
                row.operation.label(),
                row.connections,
                m.per_second(),
                ms(m.p50),
                ms(m.p99),
                ms(m.max),
                self.ratio(row).unwrap_or(f64::NAN),
            );
        }
        out.push('\n');
        for (backend, kib) in &self.rss_kib {
            let shown = kib.map_or("unknown".to_owned(), |kib| {
                format!("{:.1} MiB", kib as f64 / 1024.0)
            });
            let _ = writeln!(
                out,
                "server RSS after the {} run: {shown}",
                Subject::Petstore(*backend).label()
            );
        }
        out
    }

    /// Each target of the speed issue at 64 connections, with the figure measured and a verdict.
    pub fn targets(&self) -> String {
        let mut out = format!("\ntargets at {TARGET_CONNECTIONS} connections:\n");
        let mut verdict = |what: String, met: bool| {
            let mark = if met { "met" } else { "MISSED" };
            let _ = writeln!(out, "  {mark:<6} {what}");
        };
        for target in &TARGETS {
            let subject = Subject::Petstore(target.backend);
            for (operation, minimum) in target.ratios {
                let Some(row) = self.find(subject, operation, TARGET_CONNECTIONS) else {
                    continue;
                };
                let ratio = self.ratio(row).unwrap_or(0.0);
                verdict(
                    format!(
                        "{} {}: ratio {ratio:.3} >= {minimum}",
                        subject.label(),
                        operation.label()
                    ),
                    ratio >= minimum,
                );
            }
            let Some(create) = self.find(subject, Operation::CreatePet, TARGET_CONNECTIONS) else {
                continue;
            };
            // The keyed-share target: a create with an Idempotency-Key costs at most 15 % of
            // the rate.
            let pairs = self.keyed_pairs(target.backend).unwrap_or_default();
            let shares: Vec<f64> = pairs.iter().map(KeyedPair::share).collect();
            if let Some(median_share) = median(&shares) {
                let cpu_shares: Vec<f64> = pairs.iter().filter_map(KeyedPair::cpu_share).collect();
                let by_cpu = median(&cpu_shares).map_or_else(String::new, |by_cpu| {
                    format!(
                        "; by machine CPU per request {by_cpu:.3} ({})",
                        listed(&cpu_shares)
                    )
                });
                verdict(
                    format!(
                        "{} createPet + Idempotency-Key at {median_share:.3} of createPet's rate \
                         >= 0.85 (median of {} back-to-back pairs: {}){by_cpu}",
                        subject.label(),
                        shares.len(),
                        listed(&shares),
                    ),
                    median_share >= 0.85,
                );
            }
            if let Some(bound) = target.create_p99 {
                let p99 = create.measured.p99;
                verdict(
                    format!(
                        "{} createPet p99 {:.2} ms <= {:.0} ms",
                        subject.label(),
                        ms(p99),
                        ms(bound)
                    ),
                    p99 <= bound,
                );
            }
            if let Some(bound) = target.create_max {
                let max = create.measured.max;
                verdict(
                    format!(
                        "{} createPet max {:.2} ms <= {:.0} ms",
                        subject.label(),
                        ms(max),
                        ms(bound)
                    ),
                    max <= bound,
                );
            }
        }
        if let Some((_, Some(kib))) = self
            .rss_kib
            .iter()
            .find(|(backend, _)| *backend == Backend::Sqlite)
        {
            verdict(
                format!(
                    "RSS after the SQLite run {:.1} MiB <= 40 MiB",
                    *kib as f64 / 1024.0
                ),
                *kib <= RSS_TARGET_KIB,
            );
        }
        out
    }

    /// Throughput (left) and p99 (right) against connections, one row per backend, one line per
    /// operation; the ceiling's line is drawn in every throughput chart.
    pub fn draw(&self, path: &Path) -> Result<(), Box<dyn std::error::Error>> {
        let backends: Vec<Backend> = self.rss_kib.iter().map(|(backend, _)| *backend).collect();
        let height = 300 * u32::try_from(backends.len().max(1))?;
        let root = SVGBackend::new(path, (1100, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let cells = root.split_evenly((backends.len().max(1), 2));
        let max_rate = self
            .rows
            .iter()
            .map(|row| row.measured.per_second())
            .fold(1.0, f64::max);
        let colours = [
            BLUE,
            MAGENTA,
            RGBColor(120, 60, 0),
            RED,
            GREEN,
            CYAN,
            RGBColor(230, 140, 0),
        ];
        for (index, backend) in backends.iter().enumerate() {
            let subject = Subject::Petstore(*backend);
            let series = |operation: Operation, of: &dyn Fn(&Measured) -> f64| {
                self.rows
                    .iter()
                    .filter(|row| row.subject == subject && row.operation == operation)
                    .map(|row| (row.connections as f64, of(&row.measured)))
                    .collect::<Vec<_>>()
            };

            let mut rate = ChartBuilder::on(&cells[index * 2])
                .caption(format!("{}: req/s", subject.label()), ("sans-serif", 18))
                .margin(10)
                .x_label_area_size(30)
                .y_label_area_size(60)
                .build_cartesian_2d((1f64..256f64).log_scale(), 0f64..max_rate * 1.05)?;
            rate.configure_mesh().x_desc("connections").draw()?;
            let ceiling: Vec<(f64, f64)> = self
                .rows
                .iter()
                .filter(|row| row.subject == Subject::Ceiling)
                .map(|row| (row.connections as f64, row.measured.per_second()))
                .collect();
            rate.draw_series(LineSeries::new(ceiling, BLACK.stroke_width(2)))?
                .label("bare actix-web ceiling")
                .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLACK));
            for (operation, colour) in Operation::ALL.into_iter().zip(colours) {
                rate.draw_series(LineSeries::new(
                    series(operation, &Measured::per_second),
                    colour.stroke_width(2),
                ))?
                .label(operation.label())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], colour));
            }
            rate.configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()?;

            let p99_of = |m: &Measured| ms(m.p99).max(0.01);
            let worst = Operation::ALL
                .into_iter()
                .flat_map(|operation| series(operation, &p99_of))
                .map(|(_, p99)| p99)
                .fold(1.0, f64::max);
            let mut latency = ChartBuilder::on(&cells[index * 2 + 1])
                .caption(format!("{}: p99 ms", subject.label()), ("sans-serif", 18))
                .margin(10)
                .x_label_area_size(30)
                .y_label_area_size(60)
                .build_cartesian_2d(
                    (1f64..256f64).log_scale(),
                    (0.01f64..worst * 2.0).log_scale(),
                )?;
            latency.configure_mesh().x_desc("connections").draw()?;
            for (operation, colour) in Operation::ALL.into_iter().zip(colours) {
                latency
                    .draw_series(LineSeries::new(
                        series(operation, &p99_of),
                        colour.stroke_width(2),
                    ))?
                    .label(operation.label())
                    .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], colour));
            }
            latency
                .configure_series_labels()
                .position(SeriesLabelPosition::LowerRight)
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()?;
        }
        root.present()?;
        Ok(())
    }
}

/// The least share of getPet's rate kept beside a flood of `/readyz`: past its
/// address's limit the flood waits a second for each 429, so it may cost little more than the
/// flood client's own share of the two cores.
const FLOOD_SHARE: f64 = 0.8;

/// The flood's lines: getPet alone and beside the flood, and what the flood got.
pub fn flood(alone: &Measured, beside: &Measured, flood: &Measured) -> String {
    let share = beside.per_second() / alone.per_second();
    let mark = if share >= FLOOD_SHARE {
        "met"
    } else {
        "MISSED"
    };
    format!(
        "\nmemory getPet at 64 connections beside a /readyz flood from 64 more (one address, \
         limited to 600/m):\n  alone {:.0}/s p99 {:.2} ms; beside the flood {:.0}/s p99 {:.2} ms \
         max {:.2} ms; the flood got {:.0} answers/s\n  {mark:<6} getPet keeps {share:.3} of its \
         rate >= {FLOOD_SHARE}\n",
        alone.per_second(),
        ms(alone.p99),
        beside.per_second(),
        ms(beside.p99),
        ms(beside.max),
        flood.per_second(),
    )
}

/// What `Accept-Encoding: gzip` costs on a full page of pets, and what it saves.
pub struct Compression {
    pub pets: usize,
    pub plain: Measured,
    pub gzip: Measured,
    pub plain_bytes: usize,
    pub gzip_bytes: usize,
}

impl std::fmt::Display for Compression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (plain, gzip) = (&self.plain, &self.gzip);
        writeln!(
            f,
            "\nmemory listPets limit={} at 64 connections, {} bytes a page as it is, {} gzipped \
             ({:.1} times smaller):",
            self.pets,
            self.plain_bytes,
            self.gzip_bytes,
            self.plain_bytes as f64 / self.gzip_bytes as f64
        )?;
        writeln!(
            f,
            "  not asking {:.0}/s p99 {:.2} ms max {:.2} ms ({:.1} MB/s); asking for gzip {:.0}/s \
             p99 {:.2} ms max {:.2} ms ({:.1} MB/s): {:.3} of the rate",
            plain.per_second(),
            ms(plain.p99),
            ms(plain.max),
            plain.per_second() * self.plain_bytes as f64 / 1e6,
            gzip.per_second(),
            ms(gzip.p99),
            ms(gzip.max),
            gzip.per_second() * self.gzip_bytes as f64 / 1e6,
            gzip.per_second() / plain.per_second()
        )
    }
}
