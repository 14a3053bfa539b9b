//! Redis 7.2.6 built from the peer source in `../shared/peers/redis-7.2.6/`:
//! the one server here that runs active defragmentation (Debian's and the
//! Valkey wheels refuse `activedefrag yes`). Built once under `target/`,
//! reused by later runs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The source tarball (`WARDEN_REDIS72_TARBALL` overrides it).
fn tarball() -> PathBuf {
    if let Ok(p) = std::env::var("WARDEN_REDIS72_TARBALL") {
        return PathBuf::from(p);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/peers/redis-7.2.6/redis-7.2.6.tar.gz")
}

/// `target/redis-7.2.6/src/redis-server`, built on first use: `Err(why)`
/// when it cannot be (no tarball, a failed build), for the test to skip
/// with that reason. Tests in this process share one build (`OnceLock`);
/// two processes building at once each build in their own directory and
/// the first rename wins.
pub fn redis_7_2() -> Result<PathBuf, String> {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BUILT.get_or_init(build).clone()
}

fn build() -> Result<PathBuf, String> {
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    let home = target.join("redis-7.2.6");
    let server = home.join("src/redis-server");
    if server.exists() {
        return Ok(server);
    }
    let tarball = tarball();
    if !tarball.exists() {
        return Err(format!("{} is absent", tarball.display()));
    }
    let work = target.join(format!("redis-7.2.6.build-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).map_err(|e| format!("mkdir {}: {e}", work.display()))?;
    let run = |c: &mut Command, what: &str| -> Result<(), String> {
        let out = c.output().map_err(|e| format!("{what}: {e}"))?;
        if out.status.success() {
            return Ok(());
        }
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(20).collect();
        Err(format!("{what} failed: {}", tail.join("\n")))
    };
    run(
        Command::new("tar")
            .arg("xzf")
            .arg(&tarball)
            .arg("-C")
            .arg(&work),
        "tar xzf",
    )?;
    eprintln!(
        "building Redis 7.2.6 in {} (about a minute)",
        work.display()
    );
    run(
        Command::new("make")
            .arg("-j2")
            .current_dir(work.join("redis-7.2.6")),
        "make",
    )?;
    // Another process may have finished first: its build is as good.
    if std::fs::rename(work.join("redis-7.2.6"), &home).is_err() && !server.exists() {
        return Err(format!("could not move the build to {}", home.display()));
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(server)
}
