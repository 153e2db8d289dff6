# skb-tailroom: two entry points (README.md); `make help` prints the usage.
SHELL := /bin/bash
# Arguments of net-tests/bench.sh and net-tests/run-tests.sh (empty: their defaults).
BENCH_ARGS ?=
CHECK_ARGS ?=

define HELP
Usage: make [bench|check|check-full|postings|deps|help] [BENCH_ARGS="..."] [CHECK_ARGS="..."]
  make bench   build both kernels, boot two guests, IPsec throughput
               baseline vs patched, then instructions per call and per
               KB under -icount; both tables and verdicts (net-tests/bench.sh)
  make check   the tests, KTAP; exit 0 = nothing failed (net-tests/run-tests.sh):
               7.2 (the postings' tree), and the 6.1 backports' series,
               build and kernel groups
  make check-full  also the debug kernel, and the 6.1 and 6.12 backports
               with pair and integrity (RIG_CHECK_FULL=1)
  make postings  write each posting of patches/ ready to send, signed
               off by your git identity, into POSTINGS_OUT (sends nothing)
  make deps    install the Debian packages the rig needs (qemu-net/packages.txt),
               fetch linux-source-7.2 into the cache (qemu-net/fetch-source.sh)
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

.PHONY: bench check check-full postings deps help
help:
	@printf '%s\n' "$$HELP"

# (and the primary tree's source, fetched once; a note if Debian has a
# newer one than the pin)
deps:
	qemu-net/install-deps.sh
	qemu-net/fetch-source.sh --check >/dev/null

bench: deps
	net-tests/bench.sh $(BENCH_ARGS)

check: deps
	net-tests/run-tests.sh $(CHECK_ARGS)

check-full: deps
	RIG_CHECK_FULL=1 net-tests/run-tests.sh $(CHECK_ARGS)

# Where make postings writes (empty: results/postings-<time>).
POSTINGS_OUT ?=
postings: deps
	net-tests/postings.sh $(if $(POSTINGS_OUT),--out $(POSTINGS_OUT))

# Any other target: bad usage, the usage on stderr, exit 2.
.DEFAULT:
	@printf 'make: unknown target %s\n%s\n' '$@' "$$HELP" >&2; exit 2
