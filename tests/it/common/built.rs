//! The module the test servers load: the build under `target/release` (or
//! under `target/$WARDEN_PROFILE`, e.g. `quick` for `make test-one`),
//! checked to be newer than what it is built from.

use std::path::{Path, PathBuf};

/// The repository's root, two folders above this package (`tests/it`): the
/// module's build, sources, docs and fixtures, and `target/`.
pub fn repo_root() -> &'static Path {
    let it = Path::new(env!("CARGO_MANIFEST_DIR"));
    it.parent()
        .and_then(Path::parent)
        .expect("tests/it lies two folders below the root")
}

/// Path of the module the servers load (`WARDEN_MODULE` overrides it). The
/// built module must be newer than every source it is built from: a test
/// run against a stale one (`cargo test` without `--release` builds no
/// `.so`) would test yesterday's code.
pub fn module_path() -> PathBuf {
    static CHECKED: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    CHECKED.get_or_init(checked_module_path).clone()
}

fn checked_module_path() -> PathBuf {
    if let Ok(p) = std::env::var("WARDEN_MODULE") {
        return PathBuf::from(p);
    }
    let root = repo_root();
    let profile = std::env::var("WARDEN_PROFILE").unwrap_or_else(|_| "release".to_string());
    let built_in = root.join("target").join(profile);
    let p = built_in.join("libwarden.so");
    let built = std::fs::metadata(&p)
        .and_then(|m| m.modified())
        .unwrap_or_else(|_| panic!("{} is missing: run `make build` first", p.display()));
    let newer = newest_source(root, &built_in);
    assert!(
        newer.as_ref().is_none_or(|(at, _)| *at <= built),
        "{} is older than {}: build it first (`make build`, or `make test-one` for the quick build)",
        p.display(),
        newer
            .map(|(_, f)| f.display().to_string())
            .unwrap_or_default()
    );
    p
}

/// The most recently changed file the module is built from (`Cargo.toml`,
/// `build.rs` and the sources cargo's dep-info beside the build,
/// `libwarden.d`, lists for it: unit tests' files are not among them), and
/// when.
fn newest_source(root: &Path, built_in: &Path) -> Option<(std::time::SystemTime, PathBuf)> {
    let deps = std::fs::read_to_string(built_in.join("libwarden.d")).unwrap_or_default();
    let listed = deps.split_once(": ").map_or("", |(_, files)| files);
    let mut files = vec![root.join("Cargo.toml"), root.join("build.rs")];
    // Paths are separated by spaces; a space inside one is escaped.
    let mut current = String::new();
    let mut escaped = false;
    for c in listed.trim().chars().chain(std::iter::once(' ')) {
        match c {
            '\\' if !escaped => escaped = true,
            ' ' | '\n' if !escaped => {
                if !current.is_empty() {
                    files.push(PathBuf::from(std::mem::take(&mut current)));
                }
            }
            c => {
                current.push(c);
                escaped = false;
            }
        }
    }
    files
        .into_iter()
        .filter_map(|f| Some((std::fs::metadata(&f).and_then(|m| m.modified()).ok()?, f)))
        .max_by_key(|(at, _)| *at)
}
