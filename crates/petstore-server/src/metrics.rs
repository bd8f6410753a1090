//! The Prometheus recorder behind every `metrics` call of the process, and the exporter that
//! renders it for `GET /metrics`: installed once per process (it is global), with histogram
//! buckets suited to each measurement, `# HELP` for every family, the build's identity as
//! `petstore_build_info`, and the standard process metrics (`process_metrics.rs`).

use std::sync::OnceLock;

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use petstore_http::MetricsExporter;
use petstore_persistence::PoolMetrics;

/// Seconds, from 100 µs to 10 s: request latencies, commits, connection waits.
const SECONDS: &[f64] = &[
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0,
];
/// How often recorded histogram values are folded into their buckets.
const UPKEEP_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

/// Pets per group commit (at most 256).
const BATCH_SIZES: &[f64] = &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0];

/// The process's recorder, installed on first use.
fn handle() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let recorder = PrometheusBuilder::new()
            .set_buckets(SECONDS)
            .and_then(|builder| {
                builder.set_buckets_for_metric(
                    Matcher::Full("petstore_db_create_batch_size".to_owned()),
                    BATCH_SIZES,
                )
            })
            .expect("the bucket lists are not empty")
            .build_recorder();
        let handle = recorder.handle();
        // Another recorder can only be there in tests that installed one themselves; this
        // handle then renders nothing, which those tests do not look at.
        let _ = metrics::set_global_recorder(recorder);
        petstore_http::describe_metrics();
        petstore_persistence::describe_metrics();
        crate::events_purge::describe_metrics();
        crate::webhooks::worker::describe_metrics();
        metrics::describe_gauge!(
            "petstore_build_info",
            "Always 1; the labels name the running build (version, commit)."
        );
        // Histograms keep each recorded value until upkeep folds them into their buckets: without
        // it, an instance nobody scrapes would hold every latency it ever measured.
        let upkeep = handle.clone();
        let _ = std::thread::Builder::new()
            .name("petstore-metrics".into())
            .spawn(move || loop {
                std::thread::sleep(UPKEEP_INTERVAL);
                upkeep.run_upkeep();
            });
        metrics::gauge!(
            "petstore_build_info",
            "version" => env!("CARGO_PKG_VERSION"),
            "commit" => env!("PETSTORE_GIT_COMMIT")
        )
        .set(1.0);
        handle
    })
}

/// Installs the process's recorder now, before storage opens, so that the series storage sets
/// up at start (every fault's gauge at 0) are recorded.
pub fn install() {
    handle();
}

/// The exporter for `GET /metrics`: the pool, queue and in-flight gauges are read at each
/// scrape, and the standard process metrics follow the service's own.
pub fn exporter(pool: Option<PoolMetrics>) -> MetricsExporter {
    let handle = handle();
    MetricsExporter::new(move || {
        if let Some(pool) = &pool {
            pool.record();
        }
        petstore_http::record_in_flight();
        let mut text = handle.render();
        text.push_str(&crate::process_metrics::render());
        text
    })
}
