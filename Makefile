# skb-tailroom: two entry points (README.md); `make help` prints the usage.
SHELL := /bin/bash
# Arguments of net-tests/bench.sh and net-tests/run-tests.sh (empty: their defaults).
BENCH_ARGS ?=
CHECK_ARGS ?=

define HELP
Usage: make [bench|check|deps|help] [BENCH_ARGS="..."] [CHECK_ARGS="..."]
  make bench   build both kernels, boot two guests, IPsec throughput
               baseline vs patched, then instructions per call and per
               KB under -icount; both tables and verdicts (net-tests/bench.sh)
  make check   the tests, KTAP; exit 0 = nothing failed (net-tests/run-tests.sh)
  make deps    install the Debian packages the rig needs (qemu-net/packages.txt)
  make help    this text
  BENCH_ARGS   options of net-tests/bench.sh (net-tests/bench.sh --help)
  CHECK_ARGS   options of net-tests/run-tests.sh (net-tests/run-tests.sh --help)
Settings: RIG_* variables, each documented with its default in qemu-net/defaults.sh.
Exit: 0 ok; make turns every failure of a command into 2 (the command's
own exit code is in make's "Error N" line).
Examples:
  make bench BENCH_ARGS="--pairs 3 --rows full"
  make check CHECK_ARGS="--list"
  make check CHECK_ARGS="-t static -t series"
endef
export HELP

.PHONY: bench check deps help
help:
	@printf '%s\n' "$$HELP"

deps:
	qemu-net/install-deps.sh

bench: deps
	net-tests/bench.sh $(BENCH_ARGS)

check: deps
	net-tests/run-tests.sh $(CHECK_ARGS)

# Any other target: bad usage, the usage on stderr, exit 2.
.DEFAULT:
	@printf 'make: unknown target %s\n%s\n' '$@' "$$HELP" >&2; exit 2
