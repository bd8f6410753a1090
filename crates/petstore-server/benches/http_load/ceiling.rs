//! The ceiling every figure is divided by: a bare actix-web server, with the same worker count as
//! the petstore servers under test, that answers `GET /v1/pets/1` with a fixed pet serialised by
//! serde. No auth, no storage, no middleware: what the HTTP stack alone costs on this machine.
//!
//! It runs as a child process of the benchmark (the benchmark binary started again with
//! `--ceiling-server`), like the petstore server, so the two are measured the same way.

use std::io::Write;
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use actix_web::{web, App, HttpResponse, HttpServer};
use serde::Serialize;

/// The argument that makes the benchmark binary serve the ceiling instead of measuring.
pub const SERVE_FLAG: &str = "--ceiling-server";

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Pet {
    id: i64,
    name: &'static str,
    category_id: i64,
    status: &'static str,
}

async fn get_pet() -> HttpResponse {
    HttpResponse::Ok().json(Pet {
        id: 1,
        name: "Rex",
        category_id: 1,
        status: "available",
    })
}

/// Serves the ceiling on a free loopback port, printing `listening on ADDRESS` once bound.
pub fn serve(workers: usize) -> std::io::Result<()> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let address = listener.local_addr()?;
    actix_web::rt::System::new().block_on(async move {
        let server = HttpServer::new(|| App::new().route("/v1/pets/1", web::get().to(get_pet)))
            .workers(workers)
            .listen(listener)?
            .run();
        println!("listening on http://{address}");
        std::io::stdout().flush()?;
        server.await
    })
}

/// A running ceiling server; killed on drop.
pub struct Ceiling {
    child: Child,
    pub address: String,
}

impl Ceiling {
    pub fn start(workers: usize) -> Self {
        let exe = std::env::current_exe().expect("the benchmark's own path");
        let mut child = Command::new(exe)
            .arg(SERVE_FLAG)
            .arg(workers.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the ceiling server");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line)
            .expect("read the ceiling's address");
        let address = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected ceiling output {line:?}"))
            .to_owned();
        // The first connection must not race the workers' start.
        std::thread::sleep(Duration::from_millis(200));
        Self { child, address }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Ceiling {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
