//! Redis 7.2.6 built from the peer source in `../shared/peers/redis-7.2.6/`:
//! the one server here that runs active defragmentation (Debian's and the
//! Valkey wheels refuse `activedefrag yes`). Built once under
//! `target/redis-7.2.6/` by `tests/servers.sh redis-7.2`, the build
//! `make test-redis72` runs the whole suite on, reused by later runs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// `target/redis-7.2.6/src/redis-server`, built on first use: `Err(why)`
/// when it cannot be (no tarball, a failed build), for the test to skip
/// with that reason. Tests in this process share one build (`OnceLock`);
/// two processes building at once each build in their own directory and
/// the first rename wins (`WARDEN_REDIS72_TARBALL` names another tarball).
pub fn redis_7_2() -> Result<PathBuf, String> {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BUILT.get_or_init(build).clone()
}

fn build() -> Result<PathBuf, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("bash")
        .arg(root.join("tests/servers.sh"))
        .arg("redis-7.2")
        .current_dir(root)
        .output()
        .map_err(|e| format!("bash tests/servers.sh redis-7.2: {e}"))?;
    let err = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(format!("tests/servers.sh redis-7.2: {}", err.trim()));
    }
    let server = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if !server.exists() {
        return Err(format!(
            "tests/servers.sh redis-7.2 printed {}, which is absent",
            server.display()
        ));
    }
    Ok(server)
}

/// `redis_7_2`'s server for a test that needs it, or `None` after printing
/// why the test is skipped (no tarball, a failed build).
pub fn redis_7_2_or_skip() -> Option<PathBuf> {
    match redis_7_2() {
        Ok(b) => Some(b),
        Err(why) => {
            eprintln!("SKIP: Redis 7.2.6 is not available here ({why})");
            None
        }
    }
}
