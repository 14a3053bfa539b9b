#!/usr/bin/env bash
# Builds redis-cell 0.2.2 (the release crates.io holds; later ones are on GitHub only)
# into target/redis-cell for `make bench`'s CL.THROTTLE row and for re-recording
# tests/fixtures/redis_cell/sequences.txt. The crate is checked against crates.io's
# published SHA-256 before it is unpacked.
set -euo pipefail
cd "$(dirname "$0")/../.."
version=0.2.2
sha256=9a7fc93a6257cff317af736529c8462842b9ef7cce23acb20b6b454014ebec3d
out=target/redis-cell
so=$out/redis-cell-$version/target/release/libredis_cell.so
if [[ -f $so ]]; then
    echo "$so"
    exit 0
fi
mkdir -p "$out"
crate=$out/redis-cell-$version.crate
curl -fsSL -o "$crate" "https://static.crates.io/crates/redis-cell/redis-cell-$version.crate"
echo "$sha256  $crate" | sha256sum -c --quiet -
tar xzf "$crate" -C "$out"
(cd "$out/redis-cell-$version" && cargo build --release --quiet 2>/dev/null)
echo "$so"
