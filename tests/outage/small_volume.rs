//! A full disk on a volume too small ever to have 8 MiB free again (a few MiB, most of it the
//! database's and its neighbours') heals once a share of the volume is freed.

use std::fs::File;
use std::time::{Duration, Instant};

use crate::small_filesystem::SmallFilesystem;
use crate::storage_faults::{call, refused_as_full, start, stored_again};
use petstore_test_support::eventually;

#[actix_web::test]
async fn a_full_small_volume_heals_once_a_share_of_it_is_freed() {
    let fs = SmallFilesystem::new("6m");
    let logs = tempfile::tempdir().expect("log directory");
    let log_path = logs.path().join("server.log");
    let log = File::create(&log_path).expect("log file");
    let server = start(&fs, &log);
    let first = call(&server, "POST", "/v1/pets").await;
    assert_eq!(first.status, 201, "{}", first.body);

    // 2 MiB an operator can delete, then the rest of the volume taken.
    let filler = fs.path().join("old-backup");
    std::fs::write(&filler, vec![0x5A; 2 * 1024 * 1024]).expect("filler file");
    fs.fill("ballast");
    eventually(
        Duration::from_secs(10),
        "a create refused as full",
        async || refused_as_full(call(&server, "POST", "/v1/pets").await),
    )
    .await;

    std::fs::remove_file(&filler).expect("delete the filler");
    let freed = Instant::now();
    stored_again(&server, Duration::from_secs(10), 20).await;
    eprintln!(
        "creates stored again {:?} after 2 MiB was freed on a 6 MiB volume",
        freed.elapsed()
    );
    drop(server);
    let log = std::fs::read_to_string(&log_path).expect("server log");
    assert!(log.contains("storage works again"), "{log}");
}
