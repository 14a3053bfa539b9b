//! Other modules warden is compared with or must stand beside, where they
//! are at hand: RedisBloom's `redisbloom.so` and redis-cell's build.

use std::path::PathBuf;

/// RedisBloom's module: `$REDISBLOOM`, else `target/bench/deps/redisbloom.so`
/// (fetched by `tests/bench/redisbloom.sh`, which `make test` and `make bench`
/// run); `None` when neither exists.
pub fn redisbloom() -> Option<String> {
    let candidates = [
        std::env::var("REDISBLOOM").ok(),
        Some(
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/target/bench/deps/redisbloom.so"
            )
            .to_string(),
        ),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|p| std::path::Path::new(p).exists())
}

/// The redis-cell module (`$WARDEN_REDIS_CELL`, else its build beside the
/// project in `../shared/peers/`), if present.
pub fn redis_cell() -> Option<PathBuf> {
    let path = std::env::var_os("WARDEN_REDIS_CELL")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../shared/peers/redis-cell-0.5.0/libredis_cell.so")
        });
    path.exists().then_some(path)
}
