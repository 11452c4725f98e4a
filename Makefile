# Everything ecnlab needs is installed by these rules into .venv (pinned in requirements.lock);
# the Rust dependencies are pinned by Cargo.lock.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
# The experiment `make reproduce` runs.
EXPERIMENT ?= eecn
OUT ?= out/$(EXPERIMENT)

.PHONY: all build bpf reproduce test test-rust test-python clean

all: build

$(BIN)/.deps: requirements.lock
	$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11) and "ecnlab needs Python >= 3.11")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --disable-pip-version-check -q -r requirements.lock
	touch $@

# Builds the simulator in release mode, profile-guided when the compiler's llvm-profdata is
# there (tools/pgo.py: 6-17 % less CPU on the runs measured, the same results; ECNLAB_PGO=0 builds without), into
# its own target directory so that builds with and without the profile do not evict each
# other, and installs the ecnlab package into .venv.
# PIP_QUIET: maturin has pip check the dependencies the lock installed; one line each is noise.
build: $(BIN)/.deps
	flags="$$($(PYTHON) tools/pgo.py rustflags)" || exit 1; \
	if [ -n "$$flags" ]; then \
		export RUSTFLAGS="$${RUSTFLAGS:+$$RUSTFLAGS }$$flags" CARGO_TARGET_DIR="$${CARGO_TARGET_DIR:-$(abspath target)}/pgo-use"; \
	fi; \
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(BIN)):$$PATH PIP_QUIET=1 \
		$(BIN)/maturin develop --release --locked --quiet

# The schemes' controllers as BPF for emulated hosts (bpf/Makefile): installs clang, bpftool
# and libbpf-dev with apt-get when run as root, else says what is missing and builds nothing
# (the emulation then refuses those controllers by key and their tests skip).
bpf:
	@$(MAKE) --no-print-directory -C bpf

reproduce: build
	$(BIN)/ecnlab reproduce $(EXPERIMENT) --quick --out $(OUT)

test-rust:
	cargo test --locked

test-python: build bpf
	$(BIN)/python -m pytest -q

test: test-rust test-python

clean:
	rm -rf $(VENV) out
	$(MAKE) -C bpf clean
