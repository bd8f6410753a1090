//! `petstore export --to FILE|-`: the configured database as JSON Lines, to a private file
//! (written beside it and renamed into place once complete) or to standard output.

use std::fs::OpenOptions;
use std::io::{BufWriter, Write};
#[cfg(unix)]
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

use petstore_persistence::ExportSummary;

use super::{configured_key_id, is_standard_stream, DataMoveError, ExportArgs};
use crate::AppError;

pub fn export(args: ExportArgs) -> Result<(), AppError> {
    let url = args.storage.database_url()?;
    let key_id = configured_key_id(&args.keys, &args.storage)?;
    let settings = args.storage.pool_settings();
    let started = std::time::Instant::now();
    let summary = if is_standard_stream(&args.to) {
        let stdout = std::io::stdout();
        let mut out = BufWriter::new(stdout.lock());
        petstore_persistence::export(&url, &settings, &key_id, &mut out)
            .map_err(DataMoveError::from)?
    } else {
        export_to_file(&args.to, |out| {
            petstore_persistence::export(&url, &settings, &key_id, out).map_err(DataMoveError::from)
        })?
    };
    let rows: Vec<String> = summary
        .rows
        .iter()
        .map(|(table, count)| format!("{count} {table}"))
        .collect();
    eprintln!(
        "exported {url} ({}; migration {}, key id {}) in {:.1?}",
        rows.join(", "),
        summary.header.schema_version,
        summary.header.key_id,
        started.elapsed()
    );
    Ok(())
}

/// Runs `write` on a private temporary file beside `target`, then makes it `target`.
fn export_to_file(
    target: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<ExportSummary, DataMoveError>,
) -> Result<ExportSummary, DataMoveError> {
    let file_error = |action| {
        move |source| DataMoveError::File {
            action,
            path: target.to_owned(),
            source,
        }
    };
    let name = target
        .file_name()
        .map_or_else(|| "export".into(), |name| name.to_string_lossy());
    let staged = target.with_file_name(format!(".{name}.partial-{}", std::process::id()));
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    options.mode(0o600);
    let file = options.open(&staged).map_err(file_error("write"))?;
    let mut out = BufWriter::new(file);
    let result = write(&mut out).and_then(|summary| {
        let file = out
            .into_inner()
            .map_err(|err| file_error("write")(err.into_error()))?;
        file.sync_all().map_err(file_error("flush"))?;
        std::fs::rename(&staged, target).map_err(file_error("write"))?;
        Ok(summary)
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&staged);
    }
    result
}
