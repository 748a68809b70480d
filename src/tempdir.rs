//! Temporary directories of the commands that compile and run things
//! (`build-mpi`, `calibrate blocks`, `calibrate net --run`, `validate
//! --run`): unique, under the system's temporary directory, removed on drop
//! (also when the command fails).

use std::path::{Path, PathBuf};

pub(crate) struct TempDir(PathBuf);

impl TempDir {
    /// `parsim-<what>-<pid>-<nanos>-<n>`; the error message is complete.
    pub(crate) fn new(what: &str) -> Result<TempDir, String> {
        use std::sync::atomic::{AtomicU32, Ordering};
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let base = std::env::temp_dir();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        for _ in 0..100 {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let dir = base.join(format!("parsim-{what}-{}-{nanos}-{n}", std::process::id()));
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(TempDir(dir)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(format!(
                        "cannot create a temporary directory in {}: {e}",
                        base.display()
                    ));
                }
            }
        }
        Err(format!(
            "cannot create a temporary directory in {}",
            base.display()
        ))
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        // Best effort: a leftover temporary directory is harmless.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
