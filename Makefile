# causeway: the two commands of the README, and their parts.
#   make demo  - set up, build, record the blocking-write workload and summarize it
#   make test  - set up, build, and run every check and test (what CI runs)
#   make install - install causeway, its man pages and shell completions under PREFIX

CARGO ?= cargo
RELEASE := target/release

.PHONY: all setup build workloads demo test lint lint-source unit-tests bench fuzz clean install realworld

all: build

setup:
	bash scripts/setup.sh

# Binaries and test targets in one build, so `cargo test` after it compiles nothing
# again (a test build unifies the dev-dependencies' features, which changes the
# artifacts of every crate above them).
build: setup workloads
	$(CARGO) build --release --workspace --lib --bins --tests
	bash scripts/build-libcauseway.sh
	bash scripts/build-python.sh

# Both builds: bin/ with frame pointers, bin-nofp/ without (the unwinding tests).
workloads:
	$(MAKE) -C workloads -j2
	$(MAKE) -C workloads -j2 NOFP=1

# The demo needs only the binary, without tables and SQL (DataFusion's build alone
# takes over 10 minutes on two cores).
demo: setup workloads
	$(CARGO) build --release -p causeway-cli --no-default-features
	$(RELEASE)/causeway demo

lint: lint-source
	$(CARGO) clippy --release --workspace --all-targets -- -D warnings

# The checks that compile nothing.
lint-source:
	$(CARGO) fmt --all -- --check
	bash scripts/check-deps.sh
	python3 scripts/check-structure.py --self-test
	python3 scripts/check-structure.py

# Tests that need root and the kernel fail here instead of skipping.
unit-tests:
	CAUSEWAY_REQUIRE_ROOT=1 $(CARGO) test --release --workspace

# `make test` lints while it builds: clippy's driver wraps rustc for the workspace's
# own crates (what `cargo clippy` does, but in a real build), so the one build of every
# target is also the lint with -D warnings. A separate `cargo clippy` compiles every
# dependency a second time in check mode, DataFusion and Ballista included: minutes on
# two cores. The tests run with the same wrapper, so nothing is compiled again.
LINTED := RUSTC_WORKSPACE_WRAPPER="$$(command -v clippy-driver)" \
	CLIPPY_ARGS=-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__
# The SQL engine's crates at opt-level 0 for the tests (scripts/test-build.toml says why).
TESTBUILD := --config scripts/test-build.toml

test: setup workloads lint-source
	@command -v clippy-driver > /dev/null || { echo "make test: clippy-driver not found (rustup component add clippy)" >&2; exit 1; }
	$(LINTED) $(CARGO) build $(TESTBUILD) --release --workspace --all-targets
	bash scripts/build-libcauseway.sh
	bash scripts/build-python.sh
	$(LINTED) CAUSEWAY_REQUIRE_ROOT=1 $(CARGO) test $(TESTBUILD) --release --workspace
	bash workloads/test.sh

bench: build
	$(CARGO) bench -p causeway-format

# Unmodified programs under their own load, each with a known cause (realworld/README.md):
# installs them, records, analyses, judges; writes realworld/RESULTS.md. Not part of test.
# CAUSEWAY=path picks the binary (default target/release/causeway, built by `make build`).
realworld:
	bash realworld/run.sh

# Fuzz the trace reader (needs a nightly toolchain and cargo-fuzz).
fuzz:
	cd fuzz && $(CARGO) +nightly fuzz run read_trace -- -max_total_time=600 -rss_limit_mb=2048

clean:
	$(CARGO) clean
	$(MAKE) -C workloads clean

# Install the binary, man pages and completions (generated from the CLI definition).
PREFIX ?= /usr/local
install:
	$(CARGO) build --release -p causeway-cli
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions \
		$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	install -m 755 $(RELEASE)/causeway $(DESTDIR)$(PREFIX)/bin/causeway
	$(RELEASE)/causeway man --out-dir $(DESTDIR)$(PREFIX)/share/man/man1
	$(RELEASE)/causeway completions bash > $(DESTDIR)$(PREFIX)/share/bash-completion/completions/causeway
	$(RELEASE)/causeway completions zsh > $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_causeway
	$(RELEASE)/causeway completions fish > $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/causeway.fish
