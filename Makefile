# skb-tailroom: two entry points (see README.md).
#   make bench   boot two guests, IPsec throughput baseline vs patched, table
#   make check   the tests (TAP), exit 0 pass / 1 fail
# Options: make bench BENCH_ARGS="--pairs 3 --rows full"
#          make check CHECK_ARGS="--list" | CHECK_ARGS="-t ike -t boot"
SHELL := /bin/bash
BENCH_ARGS ?=
CHECK_ARGS ?=

.PHONY: bench check deps help
help:
	@sed -n '2,6p' Makefile

deps:
	qemu-net/install-deps.sh

bench: deps
	net-tests/bench.sh $(BENCH_ARGS)

check: deps
	net-tests/run-tests.sh $(CHECK_ARGS)
