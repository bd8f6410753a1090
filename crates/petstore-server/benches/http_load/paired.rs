//! The paired benchmark (`make bench-paired`, `BASE=` a commit, `main` by default): two builds of
//! `petstore` side by side on one machine, each on a fresh database of every backend, measured
//! in turns at 64 connections. Each round runs both builds back to back and gives one ratio
//! (this tree over the base); rounds alternate which build goes first, so the machine's drift
//! and the database's growth favour neither. Absolute figures move between runs; the ratios of
//! one paired run are what tell a change's cost. A scenario the base build answers with errors
//! under the load (an older build can) is listed as not paired, and the others still run.

use std::path::PathBuf;
use std::time::Duration;

use petstore_test_support::{Backend, TestApp};

use crate::report::{listed, median, ms, TARGET_CONNECTIONS};
use crate::scenarios::prepare;
use crate::wrk::{self, Measured};
use crate::{Operation, RATE_LIMIT};

/// Below this median ratio, with every round below 1, a scenario is named slower (and above its
/// inverse, faster): the cost a change must name in its commit.
const NOTICEABLE: f64 = 0.97;

/// The two builds, from `PAIRED_BASE` and `PAIRED_HEAD` (paths of `petstore` binaries).
pub struct Builds {
    pub base: PathBuf,
    pub head: PathBuf,
}

impl Builds {
    /// The builds `tests/support/bench-paired.sh` names, if it named them.
    pub fn from_env() -> Option<Self> {
        let path = |name: &str| std::env::var_os(name).map(PathBuf::from);
        Some(Self {
            base: path("PAIRED_BASE")?,
            head: path("PAIRED_HEAD")?,
        })
    }
}

fn rounds() -> usize {
    std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|value| value.parse().ok())
        .filter(|&rounds| rounds > 0)
        .unwrap_or(4)
}

/// One scenario's rounds: what each build measured, in round order.
struct Scenario {
    backend: Backend,
    operation: Operation,
    base: Vec<Measured>,
    head: Vec<Measured>,
}

impl Scenario {
    fn ratios(&self) -> Vec<f64> {
        self.base
            .iter()
            .zip(&self.head)
            .map(|(base, head)| head.per_second() / base.per_second())
            .collect()
    }

    fn verdict(&self) -> &'static str {
        let ratios = self.ratios();
        // Two rounds cannot tell a cost from one slow moment of the machine.
        if ratios.len() < 3 {
            return "too few rounds";
        }
        let Some(median) = median(&ratios) else {
            return "";
        };
        if median < NOTICEABLE && ratios.iter().all(|&ratio| ratio < 1.0) {
            "SLOWER"
        } else if median > 1.0 / NOTICEABLE && ratios.iter().all(|&ratio| ratio > 1.0) {
            "faster"
        } else {
            "within noise"
        }
    }

    fn row(&self) -> String {
        let rate = |runs: &[Measured]| {
            median(&runs.iter().map(Measured::per_second).collect::<Vec<_>>()).unwrap_or_default()
        };
        let p99 = |runs: &[Measured]| {
            median(&runs.iter().map(|run| ms(run.p99)).collect::<Vec<_>>()).unwrap_or_default()
        };
        let max = |runs: &[Measured]| runs.iter().map(|run| ms(run.max)).fold(0.0, f64::max);
        let ratios = self.ratios();
        let (low, high) = ratios.iter().fold((f64::MAX, f64::MIN), |(low, high), &r| {
            (low.min(r), high.max(r))
        });
        format!(
            "| {:?} | {} | {:.0} | {:.0} | **{:.3}** ({:.3}-{:.3}: {}) | {:.2} / {:.2} | {:.1} / {:.1} | {} |\n",
            self.backend,
            self.operation.label(),
            rate(&self.base),
            rate(&self.head),
            median(&ratios).unwrap_or_default(),
            low,
            high,
            listed(&ratios),
            p99(&self.base),
            p99(&self.head),
            max(&self.base),
            max(&self.head),
            self.verdict(),
        )
    }
}

async fn spawn(backend: Backend, binary: &std::path::Path) -> TestApp {
    TestApp::builder(backend)
        .setting("PETSTORE_RATE_LIMIT", RATE_LIMIT)
        .binary(binary.to_path_buf())
        .spawn()
        .await
}

/// Runs every scenario of `backends` on both builds and prints the table of ratios.
pub async fn run(builds: &Builds, backends: &[Backend], duration: Duration) {
    let rounds = rounds();
    eprintln!(
        "paired: {rounds} rounds of {}s at {TARGET_CONNECTIONS} connections\n  base {}\n  head {}",
        duration.as_secs(),
        builds.base.display(),
        builds.head.display()
    );
    let mut scenarios = Vec::new();
    let mut skipped = Vec::new();
    let mut base_failed = Vec::new();
    for &backend in backends {
        eprintln!("measuring {backend:?} ...");
        let apps = [
            spawn(backend, &builds.base).await,
            spawn(backend, &builds.head).await,
        ];
        for operation in Operation::chosen() {
            // A scenario one build lacks (an operation newer than the base) has nothing to pair.
            let (Some(base), Some(head)) = (
                prepare(&apps[0], operation).await,
                prepare(&apps[1], operation).await,
            ) else {
                eprintln!(
                    "  {} skipped: one build answers no such request",
                    operation.label()
                );
                skipped.push(format!("{backend:?} {}", operation.label()));
                continue;
            };
            let shapes = [base, head];
            let keyed = operation == Operation::CreatePetWithKey;
            let measure = |side: usize, run: &str, seconds: Duration| {
                // Keys of their own per run: a key repeated from an earlier run would be a replay.
                let prefix = format!("paired-{run}");
                let load = shapes[side].load(&apps[side], keyed.then_some(prefix.as_str()));
                let measured = wrk::try_run(&load, TARGET_CONNECTIONS, seconds);
                if side == 1 {
                    // The working tree failing under the load is a failure of the benchmark.
                    Ok(measured.unwrap_or_else(|failed| panic!("{failed}")))
                } else {
                    measured
                }
            };
            let paired = || {
                for side in 0..2 {
                    measure(side, "warm-up", Duration::from_secs(1))?;
                }
                let mut scenario = Scenario {
                    backend,
                    operation,
                    base: Vec::new(),
                    head: Vec::new(),
                };
                for round in 0..rounds {
                    let run = round.to_string();
                    if round % 2 == 0 {
                        scenario.base.push(measure(0, &run, duration)?);
                        scenario.head.push(measure(1, &run, duration)?);
                    } else {
                        scenario.head.push(measure(1, &run, duration)?);
                        scenario.base.push(measure(0, &run, duration)?);
                    }
                }
                Ok::<_, String>(scenario)
            };
            match paired() {
                Ok(scenario) => {
                    eprint!("{}", scenario.row());
                    scenarios.push(scenario);
                }
                Err(failed) => {
                    // An older base may fail under a load this tree serves: nothing to pair.
                    eprintln!(
                        "  {} not paired: the base failed: {failed}",
                        operation.label()
                    );
                    base_failed.push(format!("{backend:?} {} ({failed})", operation.label()));
                }
            }
        }
    }
    println!(
        "\n## Paired: this tree over the base, {rounds} rounds, {TARGET_CONNECTIONS} connections\n"
    );
    println!(
        "| backend | scenario | base req/s | head req/s | ratio (spread: each round) | p99 ms base / head | max ms base / head | verdict |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for scenario in &scenarios {
        print!("{}", scenario.row());
    }
    if !skipped.is_empty() {
        println!(
            "\nSkipped (one build lacks the operation): {}",
            skipped.join("; ")
        );
    }
    if !base_failed.is_empty() {
        println!(
            "\nNot paired (the base build answered errors under the load): {}",
            base_failed.join("; ")
        );
    }
    let slower: Vec<String> = scenarios
        .iter()
        .filter(|scenario| scenario.verdict() == "SLOWER")
        .map(|scenario| format!("{:?} {}", scenario.backend, scenario.operation.label()))
        .collect();
    if slower.is_empty() {
        println!("\nNo scenario slower beyond noise.");
    } else {
        println!(
            "\nSlower beyond noise (name it in the commit): {}",
            slower.join("; ")
        );
    }
}
