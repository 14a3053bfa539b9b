# Sourced by the test scripts (examples, partition suite, Valkey): Python venvs.
# The caller defines say and die (messages prefixed with its name).

# python3 -m venv, installing Debian's python3-venv first if it is missing (as root).
make_venv() {
    rm -rf "$1"
    python3 -m venv "$1" >/dev/null 2>&1 && return 0
    rm -rf "$1"
    if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
        say "installing python3-venv"
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null; } || return 1
        python3 -m venv "$1"
    else
        return 1
    fi
}

# A venv at $1 in which redis-py imports, made or completed when it is not.
ensure_redis_py() {
    local venv=$1
    "$venv/bin/python" -c "import redis" >/dev/null 2>&1 && return 0
    command -v python3 >/dev/null 2>&1 || die "python3 is missing (apt-get install python3 python3-venv)"
    say "installing redis-py into $venv"
    if [ ! -x "$venv/bin/python" ]; then
        make_venv "$venv" || die "python3 -m venv failed (apt-get install python3-venv)"
    fi
    "$venv/bin/pip" install -q --disable-pip-version-check redis || die "pip install redis failed"
    "$venv/bin/python" -c "import redis" || die "redis-py does not import after install"
}
