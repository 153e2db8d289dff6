# shellcheck shell=bash
# Group "static": checks that need no kernel.
#
# Deliberate breakages seen to fail (each run with -t static):
#  - check() running the test as main had it, "$@" || rc=$?:
#    static-harness-errexit recorded ok:midway-plain, ok:midway-in-if,
#    ok:midway-in-or for a body "false; true".
#  - in_child as "( set -e; "$@" )": static-harness-errexit failed, and
#    group-scopes saw the failing groups run on (group-fail-not-reached)
#    and exit 0.
#  - no EXIT trap in in_child's child: static-harness-group-scopes lost
#    the test's and the groups' deferred actions.
#  - defer_scope_pop running the whole stack (the old run_cleanup): the
#    group's deferred action ran before the group's body ended.
#  - INT/TERM traps that exit again during cleanup (plain "exit 130" /
#    "exit 143"): static-harness-interrupt lost the test's cleanup in 1
#    of 3 runs.
#  - a group without the worktree_remove defer: 2 worktrees left
#    registered (static-harness-worktree-cleanup).
#  - a skip and a fail added to this group: the last line on stdout
#    read "7 passed, 1 failed, 1 skipped", exit 1.
#  KTAP (net-tests/lib/tap.sh, qemu-net/guest/lib.sh), each run alone:
#  - tap_print printing a subtest's lines without the indent:
#    static-harness-ktap-nested ("...|KTAP version 1|# Subtest: nested|..."
#    at column 0).
#  - result() dropping the subtest (the old one-line collapse):
#    static-harness-ktap-nested ("ok 1 plain|not ok 2 nested ...").
#  - ksft_status reading 2 and 3 as kselftest's XFAIL/XPASS (ok):
#    static-guest-exit-codes ("ok:kunit-2 ... ok:kunit-3").
#  - the guest writer's ktap_finish exiting 0 after a failed test:
#    static-guest-exit-codes ("dash 1: rc=0", "busybox sh 1: rc=0").
#  report.py's verdict (static-verdict-*, each run with the checks alone):
#  - noisy metrics judged on the medians alone, boots overlapping:
#    -noisy (throughput "better") and -kept-runs (icount-v2) failed.
#  - no one-bucket floor on instructions per call (COST_BUCKET 0): -better
#    (the UDP control's +100 "moved", the target unconfirmed, exit 1)
#    and -kept-runs failed.
#  - instr/call threshold 5 %: -worse and -control-moved judged "same";
#    instr/KB threshold 2 %: -kept-runs.
#  - no downgrade when a control moved: -control-moved.
#  - --fail-on-regression never exiting 1: -worse and -control-moved;
#    failing on a noisy "worse" too: -noisy (exit 1).
#  - every row a target (control patterns ignored): -better, -worse,
#    -noisy, -control-moved, -kept-runs; meta.json's controls ignored:
#    -controls.
#  - the controls' A/A floor left out, or taken per kernel instead of
#    pooled: -noisy (receiver +16 % "worse") and -kept-runs.
#  - an A/A run (one kernel) reported as "controls steady": -aa.
#  The kept runs docs/results.md and README.md cite (static-results-cited,
#  each run alone on a copy of the checkout):
#  - results.md quoting insn-v4-func's 2-pair gcm-auto sender per KB as
#    "better": "docs/results.md:81: 'better', but
#    docs/results/insn-v4-func/verdict.json says noise there: ...".
#  - a results.md line quoting "worse" that names its run without a link
#    ("quotes 'worse' but links no kept run with a verdict.json"), and
#    README linking docs/results/check-cold-s28/ ("README.md:16:
#    docs/results/check-cold-s28 is not in the tree"), in one run.
#  - the check ignoring the rows and metrics a line names (every word of
#    the run accepted): "the misquote on a made-up line was not caught
#    (exit 0)".
#  Settings (qemu-net/defaults.sh) and the command line, each run alone:
#  - static-settings-one-place: RIG_TAIL's comment line removed from
#    defaults.sh ("defaults.sh:88: RIG_TAIL has no comment line above
#    it"); ${RIG_BOOT_TIMEOUT:-90} back in guests.sh
#    ("a second default"); : "${RIG_ACCT_TCP_BYTES:=8M}" back in acct.sh
#    ("assigns a default outside qemu-net/defaults.sh"); wire.sh reading
#    ${RIG_WIRE_MARKER:-...} and ${RIG_WIRE_SUFFIX:-} (not settings);
#    $SKB_TAILROOM_CACHE in build-kernel.sh; pair.sh no longer reading
#    RIG_PAIR_KERNEL ("a setting ... that no script reads"); RIG_ACCT_UDP_LEN
#    in defaults.sh ("does not start with RIG_").
#  - static-settings-sources: defaults.sh without the loop that puts the
#    environment back after rig.local (case 3: "got '1024 /local ...'");
#    without the SKB_TAILROOM_CACHE line, and with it losing to RIG_CACHE
#    (case 4: "/new"); rig_tree_set ignoring RIG_PATCHES (case 7).
#  - static-usage-entry-points: main's install-deps.sh (--help: exit 3,
#    dpkg-query, apt-cache, apt-get update called) and apply-series.sh
#    (--help: exit 6, the tree extracted: sha256sum, tar called); bench.sh
#    --pairs without opt_value (exit 1, "unbound variable"); pair.sh
#    --help as the old sed -n '2,15p' ("no usage on stdout"); the
#    Makefile without its .DEFAULT rule (make with an unknown target: "no
#    usage on stderr"); usage_error printing the usage on stdout (27
#    commands); run-tests.sh --help on stderr.
#  - static-usage-examples: make help's old example CHECK_ARGS="-t ike -t
#    boot" ("unknown test group 'ike'"); a README example with --keepp;
#    "make chek" in README ("make has no target chek"); guests_start
#    running mkinitramfs.sh in a dry run, as before (pair.sh examples:
#    exit 2, "not an installed kernel"); "report.py <run-dir>" ("no
#    sample"); a bad row in bench.sh's usage example; bench.sh running
#    git describe before its --dry-run exit ("did work"); a README
#    example "ipsec_up v4-gcm-transprot" ("child v4-gcm-transprot is not
#    in net-tests/matrix.sh").
#  - static-bench-instr-phase: bench.sh's default --instr-pairs 1 ("plan:
#    ... pairs: 1, order: baseline patched ...").
#  The matrix table and the polling helpers, each run alone:
#  - the integrity loop spelled out again (for f in v4 v6 ... gcm sha):
#    static-matrix-one-source ("integrity.sh:49: a loop over the table's
#    family values") and -generated ("integrity: 16 0 0", want 36 1 1).
#  - pair.sh's IKE loop listing the 8 children again: -one-source ("a
#    loop over the table's children") and -generated ("pair: 8 0 0").
#  - matrix_child making FAMILY-MODE-PROPOSAL: -generated ("initiator:
#    0 0 1 1").
#  - guests.sh writing guest.env with IP4=10.0.0.N itself: -one-source
#    ("guests.sh:63: the address plan (10.0.0.)").
#  - ike.sh waiting for charon's socket in a while/sleep 0.1 loop of its
#    own: static-wait-helpers ("a wait loop of its own").
#  - qemu-net/guest/lib.sh's loopy_wait never timing out: -wait-helpers
#    ("dash: n=3 (want n=3 rc=1 1)", each shell cut at 20 s).
#  Breakages of the other groups' code these self-tests catch are
#  listed in those files.
[[ -z "${RIG_T_STATIC_SH:-}" ]] || return 0
RIG_T_STATIC_SH=1
# shellcheck source=net-tests/lib/tap.sh
. "$RIG_TOP/net-tests/lib/tap.sh"

# shellcheck source=net-tests/matrix.sh
. "$RIG_TOP/net-tests/matrix.sh"
# shellcheck source=net-tests/lib/ipsec.sh
. "$RIG_TOP/net-tests/lib/ipsec.sh"
# shellcheck source=net-tests/lib/acct.sh
. "$RIG_TOP/net-tests/lib/acct.sh"
# shellcheck source=net-tests/lib/auto.sh
. "$RIG_TOP/net-tests/lib/auto.sh"
# shellcheck source=net-tests/tests/integrity.sh
. "$RIG_TOP/net-tests/tests/integrity.sh"
# shellcheck source=net-tests/tests/pair.sh
. "$RIG_TOP/net-tests/tests/pair.sh"
# The other groups' code the self-tests run (t_debug_*, t_zeroing, the
# groups of t_group_setup_failures, t_series_checkpatch, wire_expect).
# shellcheck source=net-tests/tests/debug.sh
. "$RIG_TOP/net-tests/tests/debug.sh"
# shellcheck source=net-tests/tests/kernel.sh
. "$RIG_TOP/net-tests/tests/kernel.sh"
# shellcheck source=net-tests/tests/series.sh
. "$RIG_TOP/net-tests/tests/series.sh"
# shellcheck source=net-tests/tests/wire.sh
. "$RIG_TOP/net-tests/tests/wire.sh"

t_shellcheck() {
	local files=() tracked f
	# (read first: a git failure inside "< <(...)" would look like no scripts)
	tracked=$(git -C "$RIG_TOP" ls-files) || { reason "git ls-files failed"; return 1; }
	while read -r f; do
		[[ -f "$RIG_TOP/$f" ]] && head -c 64 "$RIG_TOP/$f" | grep -qE '^#!.*(ba)?sh|^# shellcheck shell=' &&
			files+=("$f")
	done <<<"$tracked"
	((${#files[@]})) || { reason "no scripts tracked"; return 4; }
	# (two at a time, a few files each: the machine's two cores)
	(cd "$RIG_TOP" && printf '%s\0' "${files[@]}" | xargs -0 -P 2 -n 6 shellcheck -x -S warning) >&2 ||
		{ reason "shellcheck findings (see log)"; return 1; }
}

t_c_tools() {
	[[ -f "$RIG_TOP/net-tests/tools/Makefile" ]] || { reason "no C tools yet"; return 4; }
	make -s -C "$RIG_TOP/net-tests/tools" clean all >&2 ||
		{ reason "C tools do not build with -Wall -Wextra -Werror"; return 1; }
}

t_tools_selftest() {
	local out rc=0
	out=$(make -s -C "$RIG_TOP/net-tests/tools" selftest) || rc=$?
	printf '%s\n' "$out" >&2
	subtest <<<"$out"
	((rc == 0)) || { reason "skbt-payload self-test failed (loopback only)"; return 1; }
}

t_wirecheck_selftest() {
	local out rc=0
	out=$(python3 "$RIG_TOP/net-tests/wirecheck.py" --selftest) || rc=$?
	printf '%s\n' "$out" >&2
	subtest <<<"$out"
	((rc == 0)) || { reason "wirecheck.py classifies a built frame wrongly (see log)"; return 1; }
}

# --- self-tests of the harness (net-tests/lib/tap.sh, qemu-net/lib.sh) ---
# Each runs the real check/run_group in a ( subshell ) with records of its
# own, so they cannot mix with the group's even if check did not isolate
# tests.  (Global assignments: an EXIT trap no longer sees the locals of
# the functions it interrupted.)

# st_records FILE: "STATUS:NAME ..." of the results in FILE, in order
# (not their subtests' lines).
st_records() { awk -F'\t' '$1 != "sub" { printf "%s:%s ", $1, $2 }' "$1"; }

st_midway() { false; true; }
st_pass() { true; }
st_skip() { reason "skip reason"; return 4; }

# A test body that fails half-way ("false; true") is not ok, whether check
# is called plainly or from if/|| (where bash runs functions with errexit
# off); one that passes is ok, one that returns 4 is a skip.
t_harness_errexit() {
	local rec=$CHECK_DIR/selftest-errexit.tsv got want
	: >"$rec"
	(
		# shellcheck disable=SC2034 # read by result and last_reason (tap.sh)
		TAP_RECORDS=$rec REASON_FILE=$CHECK_DIR/selftest-errexit.reason
		check midway-plain st_midway
		if check_ok midway-in-if st_midway; then :; fi
		check_ok midway-in-or st_midway || true
		check pass st_pass
		check skip st_skip
		if check_setup setup-in-if true; then :; fi
	) 2>"$CHECK_DIR/selftest-errexit.log" || true
	got=$(st_records "$rec")
	want='fail:midway-plain fail:midway-in-if fail:midway-in-or ok:pass skip:skip fail:setup-in-if '
	[[ "$got" == "$want" ]] || { reason "records '$got', want '$want'"; return 1; }
}

# The time budget: a group not started within it is skipped with the
# reason, never passed, and the closing line names it.
# Seen to fail: the budget check commented out (series ran: "1..6").
t_harness_budget() {
	local out rc=0 last
	out=$(RIG_RESULTS=$CHECK_DIR/budget "$RIG_TOP/net-tests/run-tests.sh" --budget 100 -t series 2>/dev/null) || rc=$?
	last=$(tail -n 1 <<<"$out")
	((rc == E_FAIL)) || { reason "run exited $rc, want $E_FAIL: a group left out for time fails the run"; return 1; }
	grep -qxE 'not ok 1 series # not started: it takes about [0-9]+s \(cold\), [0-9]+s of the 100s budget are left \([0-9]+s into the run\)' <<<"$out" ||
		{ reason "series not failed for the budget: $(sed -n 3p <<<"$out")"; return 1; }
	[[ "$last" == "1 passed, 1 failed, 0 skipped (failed for time, not started within the 100s budget: series)" ]] ||
		{ reason "closing line: $last"; return 1; }
}

# The runner's tail names every failure with its reason and the log
# lines that led to it (CI shows a run's tail, not its middle): a copy of
# the rig whose static group has one passing and one failing test.
t_harness_fail_digest() {
	local top=$CHECK_DIR/digest-top out=$CHECK_DIR/digest.out rc=0 tailtxt
	rm -rf "$top"
	mkdir -p "$top"
	cp -a "$RIG_TOP/qemu-net" "$RIG_TOP/net-tests" "$top/"
	cat >"$top/net-tests/tests/static.sh" <<-'EOF'
		# shellcheck shell=bash
		st_dig_fail() { echo "the cause: 42" >&2; reason "wanted 0, got 42"; return 1; }
		group_static() {
			check dig-pass true
			echo "unrelated line before" >&2
			check dig-fail st_dig_fail
			echo "a later test's line" >&2
		}
	EOF
	RIG_RESULTS=$CHECK_DIR/digest-results "$top/net-tests/run-tests.sh" -t static >"$out" 2>&1 || rc=$?
	((rc == E_FAIL)) || { reason "run-tests.sh exited $rc, want $E_FAIL (see $out)"; return 1; }
	tailtxt=$(tail -n 12 "$out")
	grep -qx '# failed: dig-fail (group static): wanted 0, got 42' <<<"$tailtxt" ||
		{ reason "the tail does not name the failure: $tailtxt"; return 1; }
	grep -qx '#   | the cause: 42' <<<"$tailtxt" ||
		{ reason "the tail lacks the log line that led to it: $tailtxt"; return 1; }
	! grep -q "a later test's line" <<<"$tailtxt" ||
		{ reason "the tail shows the group log's end, not the lines before the failure"; return 1; }
	[[ "$(tail -n 1 "$out")" == "2 passed, 1 failed, 0 skipped" ]] ||
		{ reason "last line: $(tail -n 1 "$out")"; return 1; }
}

# Groups as the runner runs them (in_child run_group): each defers a line
# into $ST_LOG.
ST_LOG=
st_log() { echo "$1" >>"$ST_LOG"; }
group_st_ok() {
	defer st_log group-ok-deferred
	check st-test-defers st_test_defers
	defer_scope_push
	defer st_log inner-scope
	defer_scope_pop
	st_log group-ok-body-end
}
st_test_defers() { defer st_log test-deferred; false; }
group_st_fail() {
	defer st_log group-fail-deferred
	false
	st_log group-fail-not-reached
}
group_st_setup() {
	defer st_log group-setup-deferred
	check_setup st-boot st_midway
	st_log group-setup-not-reached
}

# A group's deferred actions run when the group's shell exits, on success
# and on failure; a test's when the test ends; defer_scope_pop runs only
# its own scope (inner-scope before the body ends, the group's entry
# after); a group that fails inside check_setup records that step failed.
t_harness_group_scopes() {
	local rec=$CHECK_DIR/selftest-scopes.tsv rcs=$CHECK_DIR/selftest-scopes.rc got want
	ST_LOG=$CHECK_DIR/selftest-scopes.log
	: >"$rec"
	: >"$ST_LOG"
	(
		# shellcheck disable=SC2034 # read by result (tap.sh)
		TAP_RECORDS=$rec
		rc_ok=0 rc_fail=0 rc_setup=0
		in_child run_group st_ok || rc_ok=$?
		in_child run_group st_fail || rc_fail=$?
		in_child run_group st_setup || rc_setup=$?
		echo "rc $rc_ok $rc_fail $rc_setup" >"$rcs"
	) 2>"$CHECK_DIR/selftest-scopes.err" || true
	got="$(tr '\n' ' ' <"$ST_LOG")$(cat "$rcs"); $(st_records "$rec")"
	want="test-deferred inner-scope group-ok-body-end group-ok-deferred group-fail-deferred group-setup-deferred rc 0 1 1; fail:st-test-defers fail:st-boot "
	[[ "$got" == "$want" ]] || { reason "got '$got', want '$want'"; return 1; }
}

# ^C (SIGINT to the whole process group) during a test: the test's, the
# group's and the runner's cleanup all run, innermost first, and the run
# ends 130.  A mini runner in a session of its own (so the signal reaches
# nothing else), started from python (a background job of bash would
# ignore SIGINT), with the real lib.sh and tap.sh.
t_harness_interrupt() {
	local d=$CHECK_DIR/selftest-interrupt got want
	mkdir -p "$d"
	: >"$d/log"
	cat >"$d/mini.sh" <<-'MINI'
		set -euo pipefail
		. "$1/qemu-net/lib.sh"
		. "$1/net-tests/lib/tap.sh"
		CHECK_DIR=$2 TAP_RECORDS=$2/records.tsv
		lg() { echo "$1" >>"$CHECK_DIR/log"; }
		group_x() { defer lg group-deferred; check t t_sleep; lg group-went-on; }
		t_sleep() { defer lg test-deferred; lg test-started; sleep 30; lg test-went-on; }
		defer lg runner-deferred
		in_child run_group x
		lg runner-went-on
	MINI
	got=$(python3 - "$RIG_TOP" "$d" <<-'PY'
		import os, signal, subprocess, sys, time
		top, d = sys.argv[1], sys.argv[2]
		# A runner started in the background by a shell without job
		# control inherits SIGINT ignored, and bash cannot trap a signal
		# ignored on entry: the mini runner gets SIGINT as from a terminal.
		signal.signal(signal.SIGINT, signal.SIG_DFL)
		p = subprocess.Popen(["bash", d + "/mini.sh", top, d], start_new_session=True)
		for _ in range(100):
		    if "test-started" in open(d + "/log").read():
		        break
		    time.sleep(0.1)
		os.killpg(p.pid, signal.SIGINT)
		rc = p.wait(timeout=20)
		time.sleep(0.5)
		print("rc={} {}".format(rc, open(d + "/log").read().replace("\n", " ")))
	PY
	) || { reason "mini runner did not end within 20 s of SIGINT"; return 1; }
	want="rc=130 test-started test-deferred group-deferred runner-deferred "
	[[ "$got" == "$want" ]] || { reason "got '$got', want '$want'"; return 1; }
}

# A worktree deferred for removal in a group's scope (series.sh,
# failures.sh) is unregistered when the group fails after making it.
ST_REPO='' ST_WT=''
group_st_worktree() {
	defer worktree_remove "$ST_WT"
	git -C "$ST_REPO" worktree add -q --detach "$ST_WT" HEAD
	false
}
t_harness_worktree_cleanup() {
	local d=$CHECK_DIR/selftest-worktree n rc=0
	rm -rf "$d"
	ST_REPO=$d/repo ST_WT=$d/wt
	git init -q "$ST_REPO"
	git -C "$ST_REPO" -c user.name=rig -c user.email=rig@skb-tailroom.invalid commit -q --allow-empty -m x
	(
		# shellcheck disable=SC2034 # read by result (tap.sh)
		TAP_RECORDS=$d/records.tsv
		in_child run_group st_worktree
	) 2>"$d.log" || rc=$?
	n=$(git -C "$ST_REPO" worktree list --porcelain | grep -c '^worktree ')
	[[ "$rc/$n" == 1/1 && ! -e "$ST_WT" ]] ||
		{ reason "group exit $rc, $n worktrees registered (want 1/1), $ST_WT $([[ -e "$ST_WT" ]] && echo left || echo gone)"; return 1; }
}

# The guest groups' setup with the guests replaced: ipsec_start failing
# (charon not up, exit 8) must fail the group's setup step by name, and no
# test may run on it (integrity.sh:28, kernel.sh:123, wire.sh:21,
# debug.sh:93 ignored that status; profile.sh is checked the same way).
t_group_setup_failures() {
	local d=$CHECK_DIR/selftest-setup g got=()
	rm -rf "$d"
	mkdir -p "$d"
	for g in pair integrity kernel wire debug profile; do
		: >"$d/$g.tsv"
		(
			# shellcheck disable=SC2317 # called by the groups
			{
				guests_start() { GUEST_RUN=$1; mkdir -p "$1/a" "$1/b"; }
				ipsec_start() { echo "ERROR: IKE: charon failed to start on b (stub)" >&2; return 8; }
				payload_build() { :; }
				acct_prepare() { :; }
				t_debug_build() { :; }
				guest_exec() { echo "stub: no guest" >&2; return 1; }
			}
			# shellcheck disable=SC2034 # read by result, group_debug
			TAP_RECORDS=$d/$g.tsv
			in_child run_group "$g"
		) >/dev/null 2>>"$d.log" || true
		got+=("$g: $(st_records "$d/$g.tsv")")
	done
	local want=("pair: fail:boot-pair " "integrity: fail:integrity-boot " "kernel: fail:boot-baseline "
		"wire: fail:wire-capture-tfc-baseline fail:wire-capture-tfc-patched fail:wire-capture-tunnel fail:wire-capture-control " "debug: ok:debug-build fail:debug-boot " "profile: fail:profile-boot-baseline ")
	[[ "${got[*]}" == "${want[*]}" ]] || { reason "got '${got[*]}', want '${want[*]}'"; return 1; }
}

# t_series_checkpatch (series.sh) on a fake worktree whose checkpatch.pl
# is clean, finds something, or cannot run (exit 2, no output): only
# the clean one passes.
t_series_checkpatch_verdict() {
	local d=$CHECK_DIR/selftest-checkpatch kind got=()
	for kind in clean findings broken; do
		rm -rf "$d"
		mkdir -p "$d/scripts"
		case $kind in
		clean) printf '#!/bin/sh\nexit 0\n' ;;
		findings) printf '#!/bin/sh\necho "CHECK: Alignment should match open parenthesis"\nexit 1\n' ;;
		broken) printf '#!/bin/sh\nexit 2\n' ;;
		esac >"$d/scripts/checkpatch.pl"
		chmod +x "$d/scripts/checkpatch.pl"
		local rc=0
		(
			# shellcheck disable=SC2034 # read by reason (tap.sh)
			REASON_FILE=$d.reason
			t_series_checkpatch "$d"
		) 2>>"$CHECK_DIR/selftest-checkpatch.log" || rc=$?
		got+=("$kind=$rc")
	done
	[[ "${got[*]}" == "clean=0 findings=1 broken=1" ]] ||
		{ reason "got '${got[*]}', want 'clean=0 findings=1 broken=1'"; return 1; }
}

# --- wire.sh's checks on hand-built captures --------------------------

# st_pcaps DIR MARKER: tunnel.pcap (IKE, ESP), control.pcap (IKE, ESP, a
# TCP segment carrying MARKER), ikeonly.pcap (IKE alone), truncated.pcap
# (control.pcap cut inside its last record), empty.pcap.
st_pcaps() {
	python3 - "$1" "$2" <<-'PY'
		import struct, sys
		d, marker = sys.argv[1], sys.argv[2].encode()
		def ip4(proto, l4):
		    return (b"\0" * 12 + b"\x08\x00" + bytes((0x45, 0, 0, 0, 0, 0, 0, 0, 64, proto, 0, 0))
		            + bytes((10, 0, 0, 1, 10, 0, 0, 2)) + l4)
		ike = ip4(17, struct.pack("!HHHH", 500, 500, 8, 0))
		esp = ip4(50, b"\0\0\0\1\0\0\0\1")
		tcp = ip4(6, b"\0" * 20 + marker)
		def pcap(*frs):
		    out = struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1)
		    for f in frs:
		        out += struct.pack("<IIII", 0, 0, len(f), len(f)) + f
		    return out
		files = {"tunnel": pcap(ike, esp), "control": pcap(ike, esp, tcp),
		         "ikeonly": pcap(ike), "empty": b""}
		files["truncated"] = files["control"][:-10]
		for name, data in files.items():
		    with open("{}/{}.pcap".format(d, name), "wb") as f:
		        f.write(data)
	PY
}

# The control checks pass only when wirecheck.py exits 1 for the reason
# they name; a capture that is truncated or empty is exit 2 (no verdict)
# and fails every check, whatever it expected.
t_wire_checks() {
	local d=$CHECK_DIR/fake-wire m=SKBT-SELFTEST-MARKER got=() want f rc
	rm -rf "$d"
	mkdir -p "$d"
	st_pcaps "$d" "$m"
	st_wire() {
		local rc=0
		(
			# shellcheck disable=SC2034 # read by reason (tap.sh)
			REASON_FILE=$d/reason
			wire_expect "$@"
		) 2>>"$CHECK_DIR/selftest-wire.log" || rc=$?
		got+=("$rc")
	}
	st_wire 0 '' "$d/tunnel.pcap" --after-ike-only-esp
	st_wire 0 '' "$d/tunnel.pcap" --absent "$m"
	st_wire 0 '' "$d/control.pcap" --present "$m"
	st_wire 1 "$WIRE_WHY_MARKER" "$d/control.pcap" --absent "$m"
	st_wire 1 "$WIRE_WHY_CLEAR" "$d/control.pcap" --after-ike-only-esp
	st_wire 1 "$WIRE_WHY_CLEAR" "$d/ikeonly.pcap" --after-ike-only-esp
	st_wire 1 "$WIRE_WHY_MARKER" "$d/truncated.pcap" --absent "$m"
	st_wire 1 "$WIRE_WHY_CLEAR" "$d/truncated.pcap" --after-ike-only-esp
	st_wire 0 '' "$d/truncated.pcap" --absent "$m"
	st_wire 1 "$WIRE_WHY_MARKER" "$d/empty.pcap" --absent "$m"
	st_wire 1 "$WIRE_WHY_MARKER" "$d/missing.pcap" --absent "$m"
	want="0 0 0 0 0 1 1 1 1 1 1"
	[[ "${got[*]}" == "$want" ]] || { reason "wire_expect results '${got[*]}', want '$want' (see $CHECK_DIR/selftest-wire.log)"; return 1; }
	# and wirecheck.py itself: 2 on each bad file
	got=()
	for f in truncated empty missing; do
		rc=0
		python3 "$RIG_TOP/net-tests/wirecheck.py" "$d/$f.pcap" --absent "$m" >/dev/null 2>&1 || rc=$?
		got+=("$f=$rc")
	done
	[[ "${got[*]}" == "truncated=2 empty=2 missing=2" ]] || { reason "wirecheck.py exits: ${got[*]}, want 2 on each"; return 1; }
}

# --- debug.sh's console/kmemleak verdict, guest_exec replaced ---------

# st_consoles KMEMLEAK-RC KMEMLEAK-TEXT CONSOLE-TEXT|-: t_debug_consoles
# on two fake guests whose kmemleak job exits KMEMLEAK-RC printing
# KMEMLEAK-TEXT, with that console ("-": none); prints "rc=N reason=...".
st_consoles() {
	local d=$CHECK_DIR/fake-debug rc=0 g
	rm -rf "$d"
	mkdir -p "$d/a" "$d/b"
	for g in a b; do
		[[ "$3" == - ]] || printf '%s\n' '[    1.000000] rig-init: up' "$3" >"$d/$g/console.log"
	done
	(
		# shellcheck disable=SC2317 # called by t_debug_consoles
		guest_exec() { printf '%s\n' "$ST_KMEMLEAK"; return "$ST_KMEMLEAK_RC"; }
		# shellcheck disable=SC2034 # read by t_debug_consoles, guest_exec, reason
		GUEST_RUN=$d ST_KMEMLEAK_RC=$1 ST_KMEMLEAK=$2 REASON_FILE=$d/reason
		: >"$REASON_FILE"
		t_debug_consoles
	) 2>>"$CHECK_DIR/selftest-debug-consoles.log" || rc=$?
	echo "rc=$rc reason=$(cat "$d/reason")"
}

# A leak check that cannot read its report fails, as do a leak, a report
# in a console and a console that is not there; clean ones pass.
t_debug_consoles_verdict() {
	local got want
	got="clean: $(st_consoles 0 '' '[    2.0] ok'); unreadable: $(st_consoles 1 "sh: can't create /sys/kernel/debug/kmemleak: nonexistent directory" '')"
	got+="; leak: $(st_consoles 0 'unreferenced object 0xffff888003a1b2c0 (size 64):' ''); splat: $(st_consoles 0 '' '[    3.0] BUG: KASAN: use-after-free in esp_output+0x1/0x2'); no-console: $(st_consoles 0 '' -)"
	want="clean: rc=0 reason=; unreadable: rc=1 reason=kmemleak unreadable on a (exit 1);kmemleak unreadable on b (exit 1) (see log)"
	want+="; leak: rc=1 reason=1 kmemleak reports on a;1 kmemleak reports on b (see log); splat: rc=1 reason=reports in a's console;reports in b's console (see log); no-console: rc=1 reason=console of a not readable;console of b not readable (see log)"
	[[ "$got" == "$want" ]] || { reason "got '$got', want '$want'"; return 1; }
}

# --- kernel.sh's zeroing guard against zeroing-test.sh's real output ---
# zeroing-test.sh runs on the host on a fake tracefs, with a fake ip
# (its TRACEFS and IP environment): no xfrm state, nothing of the host
# changes.  Each call of the fake ip appends what the probes "saw" to the
# trace (the script empties the trace before it adds and deletes its SAs).
# t_zeroing (kernel.sh) runs it with guest_exec replaced.

# st_fake_tracefs DIR [LINE...]: the files zeroing-test.sh writes to, and
# DIR/ip, which appends the LINEs to DIR/trace.
st_fake_tracefs() {
	local d=$1 p l
	shift
	rm -rf "$d"
	for p in kf ks; do
		for l in aead auth enc blob; do mkdir -p "$d/events/ztst/${p}_$l"; done
	done
	: >"$d/kprobe_events"
	: >"$d/tracing_on"
	: >"$d/trace"
	: >"$d/events/ztst/enable"
	printf '%s\n' "$@" >"$d/saw"
	printf '#!/bin/sh\ncat %q >>%q\n' "$d/saw" "$d/trace" >"$d/ip"
	chmod +x "$d/ip"
}

# st_marker KEYVAR: zeroing-test.sh's marker KEYVAR as the x64 fetch
# prints it (first 8 key bytes, little-endian).
st_marker() {
	local s out=''
	s=$(sed -n "s/^$1=0x\([0-9a-fA-F]*\).*/\1/p" "$RIG_TOP/net-tests/guest/zeroing-test.sh")
	[[ ${#s} -ge 16 ]] || return 1
	s=${s:0:16}
	while [[ -n "$s" ]]; do out=${s:0:2}$out; s=${s:2}; done
	echo "0x${out,,}"
}

# st_hits kf|ks: one trace line per object, its marker key seen at
# kfree() (kf: unwiped, as on the baseline) or kfree_sensitive() (ks).
st_hits() {
	local ev field key
	while read -r ev field key; do
		printf ' sh-1 [000] .... 1.000000: %s_%s: (probe) %s=%s\n' "$1" "$ev" "$field" "$(st_marker "$key")"
	done <<-OBJS
		aead k K_AEAD4
		aead k K_AEAD6
		auth k K_AUTH4
		enc k K_ENC4
		auth k K_AUTH6
		enc k K_ENC6
		blob a K_AUTH4
		blob a K_AUTH6
	OBJS
}

# st_zeroing WANT TRACE-LINES...: t_zeroing WANT on that fake trace;
# prints "rc=N reason=..." .
st_zeroing() {
	local want=$1 d=$CHECK_DIR/fake-tracefs rc=0
	shift
	st_fake_tracefs "$d" "$@"
	[[ -f "$d/kprobe_events" ]] || return 1 # else it would mount tracefs
	(
		# shellcheck disable=SC2317 # called by t_zeroing
		guest_exec() {
			TRACEFS=$d IP=$d/ip ZT_TIMEOUT=0 ZT_GROUP=ztst \
				sh "$RIG_TOP/net-tests/guest/zeroing-test.sh"
		}
		REASON_FILE=$d.reason
		: >"$REASON_FILE"
		TAP_SUBFILE= # (a fake run: not this self-test's subtest)
		t_zeroing "$want"
	) 2>>"$CHECK_DIR/selftest-zeroing.log" || rc=$?
	echo "rc=$rc reason=$(cat "$d.reason")"
}

# On the baseline, a run where no probe sees any free (blind) must fail
# t_zeroing as a blind probe; keys reaching kfree() unwiped pass it; on
# the patched kernel keys seen at kfree_sensitive() pass.
t_zeroing_blind_guard() {
	[[ "$(id -u)" == 0 ]] || { reason "zeroing-test.sh needs root, even on a fake tracefs"; return 4; }
	local got want rc=0
	got="blind: $(st_zeroing 1 ''); unwiped: $(st_zeroing 1 "$(st_hits kf)"); wiped: $(st_zeroing 0 "$(st_hits ks)")"
	want="blind: rc=1 reason=baseline failure is a blind probe, not an unwiped key; unwiped: rc=0 reason=; wiped: rc=0 reason="
	[[ "$got" == "$want" ]] || { reason "got '$got', want '$want'"; return 1; }
	# A guest job that exits 1 (or 0) without the script's verdicts.
	for want in 1 0; do
		rc=0
		(
			# shellcheck disable=SC2317 # called by t_zeroing
			guest_exec() { echo "sh: /src/net-tests/guest/zeroing-test.sh: Permission denied"; return "$want"; }
			# shellcheck disable=SC2034 # read by reason (tap.sh)
			REASON_FILE=$CHECK_DIR/fake-tracefs.reason
			TAP_SUBFILE=
			t_zeroing "$want"
		) >/dev/null 2>&1 || rc=$?
		((rc == 1)) || { reason "t_zeroing $want passed a job that printed no verdict"; return 1; }
	done
}

# --- KTAP: nested subtests and kselftest's exit codes ---------------------

# A test that records its guest script's KTAP (subtest) is printed with
# that KTAP indented under its own result line, "# Subtest: NAME" after
# the version line, the lines before the version line left out; the
# subtest's lines are not counted as results.
st_nested() {
	printf '%s\n' 'make: noise' 'KTAP version 1' '1..2' 'ok 1 a' '    ok 1 deeper' 'not ok 2 b # why' | subtest
	reason "guest said no"
	return 1
}
t_harness_ktap_nested() {
	local rec=$CHECK_DIR/selftest-ktap.tsv got want
	: >"$rec"
	got=$(
		# shellcheck disable=SC2034 # read by result, tap_print (tap.sh)
		TAP_RECORDS=$rec REASON_FILE=$CHECK_DIR/selftest-ktap.reason
		check plain st_pass
		check nested st_nested
		check skipped st_skip
		TAP_N=0 TAP_FAILED=0 TAP_SKIPPED=0
		tap_print "$rec" 1
		echo "n=$TAP_N failed=$TAP_FAILED skipped=$TAP_SKIPPED results=$(tap_results "$rec") group=$TAP_GROUP_STATUS"
	) 2>"$CHECK_DIR/selftest-ktap.log" || true
	want='ok 1 plain
    KTAP version 1
    # Subtest: nested
    1..2
    ok 1 a
        ok 1 deeper
    not ok 2 b # why
not ok 2 nested # guest said no
ok 3 skipped # SKIP skip reason
n=3 failed=1 skipped=1 results=3 group=failed'
	[[ "$got" == "$want" ]] || { reason "got '${got//$'\n'/|}', want '${want//$'\n'/|}'"; return 1; }
}

# A kselftest-speaking guest script (kunit.sh, zeroing-test.sh) that
# exits 2 or 3 (XFAIL/XPASS in kselftest; a shell error here) fails its
# test even with passing KTAP on stdout; 0 passes, 4 skips.  And the guest
# side's writer (qemu-net/guest/lib.sh) under dash and busybox sh: the
# real kunit.sh on a fake debugfs exits 0, 1 or 4 as its suites did.
ST_GUEST_RC=0
st_guest_kunit() {
	# shellcheck disable=SC2317 # called by t_kunit
	guest_exec() { printf '%s\n' 'KTAP version 1' '1..1' 'ok 1 suite'; return "$ST_GUEST_RC"; }
	t_kunit some_module
}
st_guest_zeroing() {
	# shellcheck disable=SC2317 # called by t_zeroing
	guest_exec() { printf '%s\n' 'KTAP version 1' '1..1' 'ok 1 key wiped'; return "$ST_GUEST_RC"; }
	t_zeroing 0
}
# st_fake_kunit DIR SUITE:RESULT...: a fake debugfs DIR/kunit whose fake
# DIR/modprobe adds each SUITE with RESULT (ok|not_ok) for module m, and
# reports any other module not found.
st_fake_kunit() {
	local d=$1 sr
	shift
	rm -rf "$d"
	mkdir -p "$d/kunit" "$d/suites"
	for sr in "$@"; do
		sr=${sr//_/ }
		mkdir -p "$d/suites/${sr%%:*}"
		printf '%s\n' 'KTAP version 1' '1..1' '    KTAP version 1' "    # Subtest: ${sr%%:*}" '    1..1' \
			"    ${sr#*:} 1 case_one" "# ${sr%%:*}: totals" "${sr#*:} 1 ${sr%%:*}" >"$d/suites/${sr%%:*}/results"
	done
	printf '#!/bin/sh\n[ "$1" = m ] || { echo "modprobe: module $1 not found" >&2; exit 1; }\ncp -r %q/suites/* %q/kunit/\n' \
		"$d" "$d" >"$d/modprobe"
	chmod +x "$d/modprobe"
}
t_guest_exit_codes() {
	local rec=$CHECK_DIR/selftest-exit.tsv d=$CHECK_DIR/fake-kunit gots=() rc sh out want wants
	: >"$rec"
	(
		# shellcheck disable=SC2034 # read by result (tap.sh)
		TAP_RECORDS=$rec REASON_FILE=$CHECK_DIR/selftest-exit.reason
		for ST_GUEST_RC in 0 2 3 4; do
			check "kunit-$ST_GUEST_RC" st_guest_kunit
			check "zeroing-$ST_GUEST_RC" st_guest_zeroing
		done
	) 2>"$CHECK_DIR/selftest-exit.log" || true
	gots+=("$(st_records "$rec")")
	for sh in dash "busybox sh"; do
		command -v "${sh%% *}" >/dev/null || continue
		for want in "0:s1:ok s2:ok" "1:s1:ok s2:not_ok" "4:s1:ok" "4:"; do
			st_fake_kunit "$d" ${want#*:}
			rc=0
			case "$want" in
			4:*:*) out=$(KUNIT_DEBUGFS=$d/kunit MODPROBE=$d/modprobe $sh "$RIG_TOP/net-tests/guest/kunit.sh" m nosuch 2>&1) || rc=$? ;;
			4:) out=$(KUNIT_DEBUGFS=$d/nodir $sh "$RIG_TOP/net-tests/guest/kunit.sh" m 2>&1) || rc=$? ;;
			*) out=$(KUNIT_DEBUGFS=$d/kunit MODPROBE=$d/modprobe $sh "$RIG_TOP/net-tests/guest/kunit.sh" m 2>&1) || rc=$? ;;
			esac
			printf '%s: %s\n%s\n' "$sh" "$want" "$out" >>"$CHECK_DIR/selftest-exit.log"
			gots+=("$sh ${want%%:*}: rc=$rc $(awk '/^(not )?ok [0-9]/ { n++ } END { print n + 0 }' <<<"$out") $(awk '/^    ok 1 case_one$/ { n++ } END { print n + 0 }' <<<"$out")")
		done
	done
	wants=("ok:kunit-0 ok:zeroing-0 fail:kunit-2 fail:zeroing-2 fail:kunit-3 fail:zeroing-3 skip:kunit-4 skip:zeroing-4 ")
	for sh in dash "busybox sh"; do
		command -v "${sh%% *}" >/dev/null || continue
		wants+=("$sh 0: rc=0 2 2" "$sh 1: rc=1 2 1" "$sh 4: rc=4 2 1" "$sh 4: rc=4 0 0")
	done
	[[ "${gots[*]}" == "${wants[*]}" ]] || { reason "got '${gots[*]}', want '${wants[*]}'"; return 1; }
}

# --- the tree group's nested records -----------------------------------

# shellcheck source=net-tests/tests/tree.sh
. "$RIG_TOP/net-tests/tests/tree.sh"

# A nested run's records come back named TREE/NAME with their status; a
# nested run that left no records file (or an empty one) is a failure,
# never a silent pass.
t_tree_nested_records() {
	local d=$CHECK_DIR/fake-tree kind got=() rc
	for kind in two none empty; do
		rm -rf "$d"
		mkdir -p "$d/nested/check-1"
		case $kind in
		two) printf 'ok\tpair-boot\t\nfail\tkernel-acct\tcow 0.9\n' >"$d/nested/check-1/records.tsv" ;;
		none) ;;
		empty) : >"$d/nested/check-1/records.tsv" ;;
		esac
		: >"$d/records.tsv"
		rc=0
		TAP_RECORDS=$d/records.tsv tree_nested_records "$d/nested" 6.12 || rc=$?
		got+=("$kind=$rc/$(cut -f1,2 "$d/records.tsv" | tr '\t\n' ': ')")
	done
	[[ "${got[*]}" == "two=0/ok:6.12/pair-boot fail:6.12/kernel-acct  none=1/ empty=1/" ]] ||
		{ reason "got '${got[*]}'"; return 1; }
}

# --- report.py's verdict.json on synthetic runs -----------------------

# st_verdict_run DIR SCENARIO: DIR/runs.jsonl and meta.json of a 3-pair
# ABBA -icount run on the tap link: controls tcp-v4-plain and
# udp-v4-transport-gcm-off, targeted rows tcp-v4-transport-gcm-off (T)
# and tcp-v4-transport-sha-off (S); the baseline is the same in every
# scenario, the patched side:
#   better         T 0 cow, 28 B, 8850 instr/call; UDP control +100
#                  instr/call (one histogram bucket: same)
#   worse          T 9850 instr/call (+3.1 %), nothing else moves
#   noisy          T throughput +20 % (same-pair median), beyond either
#                  kernel's spread, but one patched boot below a
#                  baseline boot; T sender instr/KB +25 %, every boot
#                  beyond; T receiver +16 %, every boot beyond but within
#                  the plaintext control's A/A spread (22 %, its patched
#                  boots 1200-1500); S sender -53 %
#   control-moved  as better, the UDP control +300 instr/call (+4.4 %)
#   aa             baseline only (--variants baseline)
#   two            the baseline data on both sides, pairs 1 and 2 only
#                  (fewer than LKP's 3 boots a side)
#   bootstrap      6 pairs, throughput and /proc/stat CPU, no -icount:
#                  T throughput x1.09-1.12 in every pair (better), T
#                  sender us/KB within +-1 % (same), T receiver us/KB
#                  0.80-1.25 (noise: the interval spans 1 and the
#                  threshold); the plaintext control within 1 %
#   bootstrap-wide 8 pairs as under TCG with several vCPUs: the
#                  plaintext control's same-pair ratios 0.75-1.28
#                  (throughput) and 0.72-1.30 (sender us/KB), their
#                  means ~1.0; T throughput x1.25-1.55 (better: its
#                  interval clears the control's interval, not the
#                  control's range), T sender us/KB x0.90-0.95 (noise:
#                  within how far the control's interval reaches)
st_verdict_run() {
	python3 - "$1" "$2" <<-'PY'
		import copy, json, os, sys
		d, sc = sys.argv[1], sys.argv[2]
		os.makedirs(d, exist_ok=True)
		if sc == "bootstrap":
		    rows = {"tcp-v4-plain": ([1000, 1010, 990, 1005, 995, 1002], [1.0, 1.005, 0.995, 1.0, 1.002, 0.998],
		                             [1.0] * 6, [1.0] * 6),
		            "tcp-v4-transport-gcm-off": ([395, 400, 390, 398, 393, 401], [1.10, 1.12, 1.09, 1.11, 1.10, 1.12],
		                                         [1.00, 1.01, 0.99, 1.00, 1.01, 0.995],
		                                         [0.80, 1.25, 0.85, 1.20, 0.90, 1.15])}
		if sc == "bootstrap-wide":
		    rows = {"tcp-v4-plain": ([1000, 600, 900, 1010, 700, 950, 1020, 800],
		                             [0.75, 1.28, 0.90, 1.10, 0.80, 1.22, 0.95, 1.02],
		                             [1.30, 0.72, 1.15, 0.85, 1.25, 0.78, 1.05, 0.95], [1.0] * 8),
		            "tcp-v4-transport-gcm-off": ([395, 300, 390, 250, 393, 401, 280, 350],
		                                         [1.25, 1.55, 1.30, 1.45, 1.28, 1.50, 1.35, 1.40],
		                                         [0.95, 0.90, 0.92, 0.94, 0.91, 0.93, 0.95, 0.92],
		                                         [1.0] * 8)}
		if sc.startswith("bootstrap"):
		    runs = []
		    for pair in range(1, len(rows["tcp-v4-plain"][0]) + 1):
		        for v in (("baseline", "patched") if pair % 2 else ("patched", "baseline")):
		            for row, (mb, tr, sr, rr) in rows.items():
		                i, f = pair - 1, v == "patched"
		                snd = 10.0 + 0.1 * (i % 3)
		                rcv = 12.0 - 0.1 * (i % 2)
		                cpu = {"source": "proc_stat", "seconds": 10.0, "snd_cpus": 1, "rcv_cpus": 1,
		                       "snd_busy_ticks": 1000, "rcv_busy_ticks": 1000,
		                       "snd_util_pct": 99.0, "rcv_util_pct": 80.0 + i,
		                       "snd_us_per_kb": snd * (sr[i] if f else 1),
		                       "rcv_us_per_kb": rcv * (rr[i] if f else 1)}
		                runs.append({"pair": pair, "variant": v, "row": row, "link": "tap",
		                             "mbps": mb[i] * (tr[i] if f else 1), "cpu": cpu, "boot_s": 5,
		                             "raw": None, "acct": None, "cost": None, "demand": None})
		    with open(d + "/runs.jsonl", "w") as f:
		        f.write("".join(json.dumps(r) + "\n" for r in runs))
		    with open(d + "/meta.json", "w") as f:
		        json.dump({"command": ["selftest", sc], "git_describe": "selftest", "link": "tap"}, f)
		    sys.exit(0)
		B = {"tcp-v4-plain": dict(mbps=[1000, 1010, 990], snd=[1270, 1265, 1275],
		                          rcv=[1350, 1345, 1355]),
		     "udp-v4-transport-gcm-off": dict(mbps=[370, 375, 365], cost=6850, cow=0.003,
		                                      copied=1.0, snd=[10000, 10100, 9900],
		                                      rcv=[18000, 18100, 17900]),
		     "tcp-v4-transport-gcm-off": dict(mbps=[395, 400, 390], cost=9550, cow=0.999,
		                                      copied=1729.0, snd=[13000, 13100, 12900],
		                                      rcv=[16000, 16100, 15900]),
		     "tcp-v4-transport-sha-off": dict(mbps=[130, 135, 140], cost=60250, cow=0.999,
		                                      copied=1721.0, snd=[38000, 38100, 37900],
		                                      rcv=[50000, 50100, 49900])}
		P = copy.deepcopy(B)
		t, u = P["tcp-v4-transport-gcm-off"], P["udp-v4-transport-gcm-off"]
		if sc in ("better", "control-moved"):
		    t.update(cost=8850, cow=0.0, copied=28.0)
		    u["cost"] = 6950 if sc == "better" else 7150
		elif sc == "worse":
		    t["cost"] = 9850
		elif sc == "noisy":
		    t.update(mbps=[392, 480, 470], snd=[16200, 16300, 16400], rcv=[18400, 18500, 18300])
		    P["tcp-v4-transport-sha-off"]["snd"] = [17800, 17900, 18000]
		    P["tcp-v4-plain"]["rcv"] = [1200, 1500, 1350]
		if sc == "two":
		    P = copy.deepcopy(B)
		variants = ["baseline"] if sc == "aa" else ["baseline", "patched"]
		runs = []
		for pair in ((1, 2) if sc == "two" else (1, 2, 3)):
		    for v in (variants if pair % 2 else variants[::-1]):
		        for row, x in (B if v == "baseline" else P).items():
		            i = pair - 1
		            r = {"pair": pair, "variant": v, "row": row, "link": "tap",
		                 "mbps": x["mbps"][i], "boot_s": 5, "raw": None, "acct": None,
		                 "cost": None,
		                 "demand": {"bytes": 67108864, "retransmits": 0,
		                            "snd_ticks": 100, "rcv_ticks": 100,
		                            "snd_instr_per_kb": x["snd"][i],
		                            "rcv_instr_per_kb": x["rcv"][i]}}
		            if "cost" in x:
		                r["acct"] = {"esp_packets": 5000, "inplace": 1 - x["cow"],
		                             "pagefrag": 0.0, "privhead": 0.0, "cow": x["cow"],
		                             "copied_bytes": x["copied"], "geniv_copied_bytes": 0.0}
		                r["cost"] = {"calls": 5000, "median_ns": x["cost"],
		                             "p10_ns": x["cost"], "p90_ns": x["cost"]}
		            runs.append(r)
		with open(d + "/runs.jsonl", "w") as f:
		    f.write("".join(json.dumps(r) + "\n" for r in runs))
		with open(d + "/meta.json", "w") as f:
		    json.dump({"command": ["selftest", sc], "git_describe": "selftest",
		               "icount": "shift=0,sleep=on", "link": "tap"}, f)
	PY
}

# st_verdict SCENARIO ROW:METRIC...: report.py on that run, plain and
# with --fail-on-regression; prints "rc=PLAIN/FAIL ROW:METRIC=JUDGEMENT...
# controls=STATE" and the lines the failing run printed on stderr.
st_verdict() {
	local d=$CHECK_DIR/fake-verdict/$1 rc=0 rcf=0
	rm -rf "$d"
	st_verdict_run "$d" "$1"
	shift
	python3 "$RIG_TOP/net-tests/report.py" --no-plot "$d" >"$d.out" 2>&1 || rc=$?
	python3 "$RIG_TOP/net-tests/report.py" --no-plot --fail-on-regression "$d" \
		>"$d.fail.out" 2>"$d.fail.err" || rcf=$?
	cat "$d.out" "$d.fail.err" >&2
	printf 'rc=%s/%s %s' "$rc" "$rcf" "$(python3 - "$d/verdict.json" "$@" <<-'PY'
		import json, sys
		v = json.load(open(sys.argv[1]))
		rows = {e["row"]: e["metrics"] for e in v["rows"]}
		out = []
		for a in sys.argv[2:]:
		    row, key = a.split(":")
		    out.append("{}:{}={}".format(row, key, rows.get(row, {}).get(key, {}).get("judgement")))
		print(" ".join(out + ["controls=" + v["summary"]["controls"]]))
	PY
	)"
	sed -n 's/^regression: / | /p' "$d.fail.err" | tr -d '\n'
}

ST_T=tcp-v4-transport-gcm-off ST_S=tcp-v4-transport-sha-off ST_U=udp-v4-transport-gcm-off

# st_verdict_expect SCENARIO WANT: st_verdict's line must be WANT; the
# ROW:METRIC=JUDGEMENT words of WANT (before any " | ") name the metrics
# asked for, in that order.
st_verdict_expect() {
	local scen=$1 want=$2 got w metrics=()
	for w in ${want%% | *}; do
		[[ "$w" == *:*=* ]] && metrics+=("${w%=*}")
	done
	got=$(st_verdict "$scen" "${metrics[@]}")
	[[ "$got" == "$want" ]] || { reason "got '$got', want '$want'"; return 1; }
}

# Deterministic findings beyond 1 % are better; a control within one
# histogram bucket is steady; the gate passes.
t_verdict_better() {
	st_verdict_expect better "rc=0/0 $ST_T:instr_per_call=better $ST_T:cow_per_pkt=better \
$ST_T:bytes_copied_per_pkt=better $ST_U:instr_per_call=same $ST_U:cow_per_pkt=same \
tcp-v4-plain:throughput=same controls=steady"
}

# +3.1 % instructions per call on the targeted row: worse, and the gate
# fails naming it (exit 0 without --fail-on-regression).
t_verdict_worse() {
	st_verdict_expect worse "rc=0/1 $ST_T:instr_per_call=worse $ST_T:cow_per_pkt=same \
$ST_U:instr_per_call=same controls=steady | worse: $ST_T instr/call 9550 -> 9850 (+3.1 %)"
}

# Noisy metrics: overlapping boots are noise however far the medians
# are apart; every boot beyond is better/worse unless a control's A/A
# spread is wider than the difference; a noisy worse does not fail the
# gate; a control with overlapping boots is noise, not moved.
t_verdict_noisy() {
	st_verdict_expect noisy "rc=0/0 $ST_T:throughput=noise $ST_T:snd_instr_per_kb=worse \
$ST_T:rcv_instr_per_kb=noise $ST_S:snd_instr_per_kb=better $ST_T:instr_per_call=same \
tcp-v4-plain:rcv_instr_per_kb=noise controls=noisy"
}

# Six pairs: noisy metrics judged by the bootstrap interval of the mean
# same-pair ratio; every noisy and context entry carries interval95 and
# its rule, and the verdict's text names the rule.
t_verdict_bootstrap() {
	st_verdict_expect bootstrap "rc=0/0 $ST_T:throughput=better $ST_T:snd_us_per_kb=same \
$ST_T:rcv_us_per_kb=noise $ST_T:snd_util_pct=context tcp-v4-plain:throughput=same controls=steady" || return 1
	python3 - "$CHECK_DIR/fake-verdict/bootstrap/verdict.json" <<-'PY' || { reason "verdict.json: see log"; return 1; }
		import json, sys
		v = json.load(open(sys.argv[1]))
		bad = []
		for ent in v["rows"]:
		    for k, e in ent["metrics"].items():
		        iv = e.get("interval95")
		        if not iv or not iv["lo"] <= iv["mean"] <= iv["hi"] or iv["n"] != 6:
		            bad.append("{} {}: interval95 {}".format(ent["row"], k, iv))
		        if e["class"] == "noisy" and e.get("rule") != "bootstrap95":
		            bad.append("{} {}: rule {}".format(ent["row"], k, e.get("rule")))
		t = v["summary"]["text"]
		if "noisy metrics judged by bootstrap95 (3)" not in t:
		    bad.append("text does not name the rule: " + t)
		print("\n".join(bad), file=sys.stderr)
		sys.exit(1 if bad else 0)
	PY
}

# Eight wide pairs: under bootstrap95 the floor is how far the
# control's own interval reaches from 1, not the control's range (which
# only widens with more pairs), so a change beyond that interval is
# judged and one within it is noise; the entries name the floor.
t_verdict_bootstrap_wide() {
	st_verdict_expect bootstrap-wide "rc=0/0 $ST_T:throughput=better $ST_T:snd_us_per_kb=noise \
tcp-v4-plain:throughput=noise controls=noisy" || return 1
	python3 - "$CHECK_DIR/fake-verdict/bootstrap-wide/verdict.json" <<-'PY' || { reason "verdict.json: see log"; return 1; }
		import json, sys
		v = json.load(open(sys.argv[1]))
		m = {e["row"]: e["metrics"] for e in v["rows"]}["tcp-v4-transport-gcm-off"]
		bad = []
		for k in ("throughput", "snd_us_per_kb"):
		    f = m[k].get("floor_rel", {})
		    if not any(n.startswith("controls' A/A interval: tcp-v4-plain interval95") for n in f):
		        bad.append("{}: floor does not name the control's interval: {}".format(k, f))
		    if m[k].get("rule") != "bootstrap95":
		        bad.append("{}: rule {}".format(k, m[k].get("rule")))
		print("\n".join(bad), file=sys.stderr)
		sys.exit(1 if bad else 0)
	PY
}

# Two pairs: fewer than LKP's 3 boots a side, so no noisy metric is
# judged (noise, rule none) and the text says so; the deterministic ones
# still are.
t_verdict_two_pairs() {
	st_verdict_expect two "rc=0/0 $ST_T:throughput=noise $ST_T:snd_instr_per_kb=noise \
$ST_T:instr_per_call=same controls=noisy" || return 1
	grep -q 'noisy metrics judged by none (' "$CHECK_DIR/fake-verdict/two.out" ||
		{ reason "the verdict's text does not say no rule applied"; return 1; }
}

# Both ends' CPU from /proc/stat snapshots (cpu_json) on known values:
# sender 2 vCPUs, 1,010 busy ticks (user + system + irq + softirq; idle,
# iowait and steal left out) over 10 s = 50.5 % and 98.633 us per KB of
# 100 MiB; receiver 1 vCPU, 850 ticks = 85 % (over iperf3's 10 s without
# uptime lines, over the snapshots' interval with them).  And the perf
# stat figures:
# read from perf's -x, output (perf_stat_read: counts, or pmu=none and a
# message naming the guest), per KB (demand_json: 2,000 cycles per KB
# sent, or "pmu": "none").
t_cpu_figures() {
	local j a0 a1 b0 b1 got bad=()
	j=$CHECK_DIR/cpu-iperf.json
	printf '{"start":{"test_start":{"protocol":"TCP"}},"end":{"sum_sent":{"bytes":104857600},"sum_received":{"bytes":104857600,"seconds":10.0}}}' >"$j"
	a0=$'cpu  100 0 200 5000 0 10 20 0 0 0\nncpu 2' a1=$'cpu  300 0 900 6000 7 20 120 9 0 0\nncpu 2'
	b0=$'cpu  10 0 20 500 0 0 0 0 0 0\nncpu 1' b1=$'cpu  60 0 520 900 0 0 300 0 0 0\nncpu 1'
	got=$(cpu_json "$a0" "$a1" "$b0" "$b1" "$j" | jq -c '[.snd_cpus, .snd_busy_ticks, .snd_util_pct, .snd_us_per_kb, .rcv_cpus, .rcv_busy_ticks, .rcv_util_pct, .rcv_us_per_kb]') ||
		{ reason "cpu_json failed"; return 1; }
	[[ "$got" == "[2,1010,50.5,98.633,1,850,85,83.008]" ]] || bad+=("cpu_json: $got")
	# with /proc/uptime in the snapshots: utilisation over their interval
	# (sender 10.1 s apart: 50.0 %; receiver 12.5 s: 68.0 %), us/KB as before
	got=$(cpu_json "$a0"$'\nuptime 100.00' "$a1"$'\nuptime 110.10' "$b0"$'\nuptime 99.50' "$b1"$'\nuptime 112.00' "$j" |
		jq -c '[.snd_interval_s, .snd_util_pct, .snd_us_per_kb, .rcv_interval_s, .rcv_util_pct, .rcv_us_per_kb]')
	[[ "$got" == "[10.1,50,98.633,12.5,68,83.008]" ]] || bad+=("cpu_json with uptime: $got")
	printf 'bytes_sent=1048576\nbytes=2097152\nsnd_pmu_cycles=2048000\nsnd_pmu_insn=1024000\nrcv_pmu_cycles=4096000\nrcv_pmu_insn=2048000\n' >"$CHECK_DIR/pmu.demand"
	got=$(demand_json "$CHECK_DIR/pmu.demand" "" | jq -c '[.pmu, .snd_cycles_per_kb, .rcv_cycles_per_kb, .snd_pmu_instr_per_kb, .rcv_pmu_instr_per_kb]')
	[[ "$got" == '["perf_stat",2000,2000,1000,1000]' ]] || bad+=("demand_json with perf stat: $got")
	# perf stat -x, as perf 6.1 writes it: a guest with a PMU, one without
	local GUEST_RUN=$CHECK_DIR/perfstat
	mkdir -p "$GUEST_RUN"/{a,b}
	printf '# started on x\n\n123456,,cycles,1000,100.00,,\n654321,,instructions,1000,100.00,5.30,insn per cycle\n' >"$GUEST_RUN/a/demand-perfstat.txt"
	printf '<not supported>,,cycles,0,100.00,,\n<not supported>,,instructions,0,100.00,,\n' >"$GUEST_RUN/b/demand-perfstat.txt"
	got=$(perf_stat_read row 2>"$CHECK_DIR/perfstat.err" | tr '\n' ' ')
	[[ "$got" == "snd_pmu_cycles=123456 snd_pmu_insn=654321 pmu=none " ]] || bad+=("perf_stat_read: $got")
	grep -q 'guest b has no PMU counts (perf stat: cycles <not supported>, instructions <not supported>' "$CHECK_DIR/perfstat.err" ||
		bad+=("perf_stat_read: no message naming guest b: $(cat "$CHECK_DIR/perfstat.err")")
	printf 'bytes_sent=1048576\nbytes=1048576\npmu=none\n' >"$CHECK_DIR/nopmu.demand"
	got=$(demand_json "$CHECK_DIR/nopmu.demand" "" | jq -c '[.pmu, .snd_cycles_per_kb]')
	[[ "$got" == '["none",null]' ]] || bad+=("demand_json without a PMU: $got")
	((${#bad[@]} == 0)) || { reason "${bad[*]}"; return 1; }
}

# bench --pairs auto's rule (auto_decide): it stops when the intervals
# are narrow enough, at the most pairs, or when the next pair would end
# past the time limit; else one more.
t_pairs_auto_rule() {
	local got=() c
	# PAIRS ELAPSED CI TARGET LIMIT MAX
	for c in "3 500 0 3 60 10" "10 900 1 3 60 10" "3 1200 1 3 25 10" "3 1000 1 3 25 10"; do
		# shellcheck disable=SC2086 # the case's words are the arguments
		got+=("$(if auto_decide $c; then echo "-> more"; else echo "-> stop"; fi | paste -sd ' ')")
	done
	printf '%s\n' "${got[@]}" >&2
	local want=("every watched interval within +-3 % -> stop"
		"10 pairs, the most --pairs auto runs -> stop"
		"another pair (~400 s) would end past --time-limit 25 min -> stop"
		"an interval is still wider than +-3 %: one more pair -> more")
	[[ "${got[*]}" == "${want[*]}" ]] || { reason "got: ${got[*]}"; return 1; }
}

# bench --pairs auto's test: report.py --ci-status exits 0 when every
# watched interval is within the bound, 1 when one is wider, and says
# which one.
t_report_ci_status() {
	local d=$CHECK_DIR/fake-verdict/bootstrap out rc
	[[ -f "$d/runs.jsonl" ]] || st_verdict_run "$d" bootstrap
	out=$(python3 "$RIG_TOP/net-tests/report.py" --ci-status 1 "$d") && { reason "--ci-status 1 passed: $out"; return 1; }
	jq -e '.widest.metric == "rcv_us_per_kb" and .ok == false' <<<"$out" >/dev/null ||
		{ reason "--ci-status 1: $out"; return 1; }
	rc=0
	out=$(python3 "$RIG_TOP/net-tests/report.py" --ci-status 50 "$d") || rc=$?
	((rc == 0)) || { reason "--ci-status 50 exit $rc: $out"; return 1; }
	echo "$out" >&2
}

# A control that moves beyond the threshold: the verdict says so, the
# targeted finding of that metric is unconfirmed, the others stand, and
# the gate fails naming the control.
t_verdict_control_moved() {
	st_verdict_expect control-moved "rc=0/1 $ST_T:instr_per_call=unconfirmed $ST_T:cow_per_pkt=better \
$ST_U:instr_per_call=worse controls=moved | control moved: $ST_U instr/call 6850 -> 7150 (+4.4 %)" || return 1
	grep -q "control moved: $ST_U instr/call" "$CHECK_DIR/fake-verdict/control-moved/verdict.json" ||
		{ reason "verdict.json's summary does not name the control that moved"; return 1; }
}

# An A/A run (one kernel): no A/B verdict, nothing fails.
t_verdict_aa() {
	local got want
	got=$(st_verdict aa "$ST_T:instr_per_call")
	want="rc=0/0 $ST_T:instr_per_call=n/a controls=n/a"
	[[ "$got" == "$want" ]] || { reason "got '$got', want '$want'"; return 1; }
}

# The control rows: meta.json's "controls" (bench.sh --controls) over
# the default, --controls over both, '' for none.
t_verdict_controls() {
	local d=$CHECK_DIR/fake-verdict/controls got=() want arg opts
	rm -rf "$d"
	st_verdict_run "$d" better
	python3 - "$d/meta.json" <<-'PY'
		import json, sys
		m = json.load(open(sys.argv[1]))
		m["controls"] = ["udp-*"]
		json.dump(m, open(sys.argv[1], "w"))
	PY
	for arg in meta --controls=tcp-v4-plain --controls=; do
		opts=()
		[[ "$arg" == meta ]] || opts=("$arg")
		python3 "$RIG_TOP/net-tests/report.py" --no-plot "${opts[@]}" "$d" >&2 ||
			{ reason "report.py $arg failed"; return 1; }
		got+=("$arg:$(python3 -c 'import json, sys; v = json.load(open(sys.argv[1])); print(",".join(e["row"] for e in v["rows"] if e["role"] == "control") + "/" + v["summary"]["controls"])' "$d/verdict.json")")
	done
	want="meta:udp-v4-transport-gcm-off/steady --controls=tcp-v4-plain:tcp-v4-plain/steady --controls=:/none"
	[[ "${got[*]}" == "$want" ]] || { reason "got '${got[*]}', want '$want'"; return 1; }
}

# report.py's header says how the service-demand pass was run, from
# meta.json's "demand" (bench.sh writes it), on a copy of a kept run; a
# meta.json without it (runs before session 20) gets no such line.
# Broken on purpose once (demand_line reading no "demand"): failed with
# "no header line 'demand pass: ...': none".
t_report_demand_header() {
	local d=$CHECK_DIR/report-demand out want="demand pass: TCP 64M (plaintext 512M); UDP 16M at 50M; window 64K, one ACK per segment yes; skbt-insn plugin (RIG_INSN) auto"
	rm -rf "$d"
	cp -r "$RIG_TOP/docs/results/bench-v3-hz250/instr" "$d"
	out=$(python3 "$RIG_TOP/net-tests/report.py" --no-plot "$d") || { reason "report.py failed on $d"; return 1; }
	grep -qxF -- "$want" <<<"$out" ||
		{ reason "no header line '$want': $(grep -m1 '^demand' <<<"$out" || echo none)"; return 1; }
	jq 'del(.demand)' "$d/meta.json" >"$d/meta.tmp" && mv "$d/meta.tmp" "$d/meta.json"
	out=$(python3 "$RIG_TOP/net-tests/report.py" --no-plot "$d") || { reason "report.py failed without demand"; return 1; }
	! grep -q '^demand pass' <<<"$out" || { reason "a demand line without meta.json's demand"; return 1; }
}

# Every verdict.json kept beside a docs/results/*/runs.jsonl is what
# report.py computes from that run today (regenerate them all after a
# rule change: for d in docs/results/*/; do net-tests/report.py --no-plot
# "$d"; done).  docs/results.md quotes these files (static-results-cited);
# docs/history.md quotes verdicts as written on their day, which the
# kept file, today's reading of the same raw data, may contradict.
t_verdict_kept_runs() {
	local d=$CHECK_DIR/kept-verdict r n bad=() seen=0
	rm -rf "${d:?}"
	mkdir -p "$d"
	for r in "$RIG_TOP"/docs/results/*/runs.jsonl; do
		n=$(basename "$(dirname "$r")")
		[[ -f "$RIG_TOP/docs/results/$n/verdict.json" ]] || continue
		seen=$((seen + 1))
		cp -a "$RIG_TOP/docs/results/$n" "$d/$n"
		python3 "$RIG_TOP/net-tests/report.py" --no-plot "$d/$n" >"$d/$n.out" 2>&1 ||
			{ reason "report.py failed on docs/results/$n (see $d/$n.out)"; return 1; }
		cmp -s "$d/$n/verdict.json" "$RIG_TOP/docs/results/$n/verdict.json" || bad+=("$n")
	done
	((seen >= 20)) || { reason "only $seen kept runs with a verdict.json under docs/results"; return 1; }
	((${#bad[@]} == 0)) ||
		{ reason "docs/results/{${bad[*]}}/verdict.json is not what report.py computes now (diff against $d)"; return 1; }
}

# st_results_cited_py TOP [LINE]: the checks of t_results_cited on the
# checkout TOP, in python; with LINE, that line alone, checked as a line
# of TOP/docs/results.md.  Prints one problem a line, exit 1 if any.
st_results_cited_py() {
	python3 - "$@" <<-'PY'
		import json, os, re, sys
		top, probs = sys.argv[1], []
		WORD = re.compile(r"(?<![\w-])(better|worse|same|noise)(?![\w-])", re.I)
		verdicts = {}

		def verdict(run):
		    """{(row, metric): judgement} of TOP/RUN/verdict.json, None without one."""
		    if run not in verdicts:
		        try:
		            v = json.load(open(os.path.join(top, run, "verdict.json")))
		            verdicts[run] = {(r["row"], m): e.get("judgement")
		                             for r in v["rows"] for m, e in r["metrics"].items()}
		        except (OSError, ValueError, KeyError, TypeError):
		            verdicts[run] = None
		    return verdicts[run]

		def mentions(line, doc):
		    """docs/results/ paths of LINE: the text docs/results/..., and
		    markdown link targets relative to DOC's folder."""
		    out = [p.rstrip(".,:;") for p in re.findall(r"docs/results/[^\s`)\]\"'|]*", line)]
		    for t in re.findall(r"\]\(([^)\s]+)\)", line):
		        p = os.path.normpath(os.path.join(os.path.dirname(doc), t.split("#")[0]))
		        if p.startswith("docs/results/"):
		            out.append(p)
		    out = [os.path.normpath(p) for p in out if not re.search(r"[*<>{}]", p)]
		    return sorted(set(out), key=out.index)

		def check(doc, n, line, words):
		    runs = []
		    for p in mentions(line, doc):
		        full = os.path.join(top, p)
		        if not os.path.exists(full):
		            probs.append("{}:{}: {} is not in the tree".format(doc, n, p))
		            continue
		        run = os.path.normpath(p if os.path.isdir(full) else os.path.dirname(p))
		        if run != "docs/results" and run not in runs:
		            runs.append(run)
		    if not words:
		        return
		    judged = [r for r in runs if verdict(r) is not None]
		    if not judged:
		        probs.append("{}:{}: quotes '{}' but links no kept run with a verdict.json: {}".format(
		            doc, n, "', '".join(sorted(words)), line.strip()[:100]))
		        return
		    for w in sorted(words):
		        found, said = False, set()
		        for r in judged:
		            v = verdict(r)
		            rows = {row for row, _ in v
		                    if re.search(r"(?<![\w-])" + re.escape(row) + r"(?![\w-])", line)}
		            mets = {m for _, m in v if "`" + m + "`" in line}
		            for (row, m), j in v.items():
		                if (not rows or row in rows) and (not mets or m in mets):
		                    said.add(j)
		                    found = found or j == w
		        if not found:
		            probs.append("{}:{}: '{}', but {}/verdict.json says {} there: {}".format(
		                doc, n, w, " or ".join(judged), "/".join(sorted(map(str, said))) or "nothing",
		                line.strip()[:100]))

		if len(sys.argv) > 2:
		    line = sys.argv[2]
		    check("docs/results.md", 0, line, {w.lower() for w in WORD.findall(line)})
		else:
		    for doc in ("docs/results.md", "README.md"):
		        for n, line in enumerate(open(os.path.join(top, doc)), 1):
		            words = {w.lower() for w in WORD.findall(line)} if doc == "docs/results.md" else set()
		            check(doc, n, line, words)
		for p in probs:
		    print(p)
		sys.exit(1 if probs else 0)
	PY
}

# docs/results.md quotes the kept runs' verdicts exactly: each of its
# lines with a verdict word (better, worse, same, noise, in any case, not
# part of a hyphenated word such as "same-pair") links a run folder under
# docs/results/ (a link "results/RUN/" or the text "docs/results/RUN/";
# RUN may be a phase, e.g. RUN/instr) that is in the tree, and that run's
# verdict.json judges that word -- for one of the rows the line names and
# one of the metrics it names in backquotes (`snd_instr_per_kb`), when it
# names any.  Every docs/results/ path that results.md or README.md
# mentions is in the tree.  First, on a line made up here: the misquote
# results.md once made (insn-v4-func's 2-pair per-KB figure "better",
# which its verdict.json calls noise) is caught, the right word is not.
t_results_cited() {
	local out rc=0 misquote="| tcp-v4-transport-gcm-auto | \`snd_instr_per_kb\` | -22.8 % | better | [run](results/insn-v4-func/) |"
	out=$(st_results_cited_py "$RIG_TOP" "$misquote") || rc=$?
	if ((rc != 1)) || ! grep -q "'better', but docs/results/insn-v4-func/verdict.json says noise" <<<"$out"; then
		reason "the misquote on a made-up line was not caught (exit $rc): $out"
		return 1
	fi
	rc=0
	out=$(st_results_cited_py "$RIG_TOP" "${misquote/better/noise}") || rc=$?
	((rc == 0)) || { reason "the right quote on a made-up line was refused: $out"; return 1; }
	rc=0
	out=$(st_results_cited_py "$RIG_TOP") || rc=$?
	printf '%s\n' "$out" >&2
	((rc == 0)) || { reason "$(head -n 2 <<<"$out" | tr '\n' ';') (see log)"; return 1; }
}

# --- settings (qemu-net/defaults.sh) and the command line ---------------

# st_settings_py: the settings checks, in python (the defaults file, the
# scripts); prints one problem a line, exit 1 if any.
st_settings_py() {
	python3 - "$RIG_TOP" <<-'PY'
		import re, subprocess, sys
		top = sys.argv[1]
		probs = []
		# The settings: qemu-net/defaults.sh, one a line as : "${NAME:=DEFAULT}"
		# under a comment line; the Makefile's NAME ?= DEFAULT.
		knobs, prev = {}, ""
		for n, line in enumerate(open(top + "/qemu-net/defaults.sh"), 1):
		    line = line.rstrip("\n")
		    m = re.match(r': "\$\{([A-Za-z_][A-Za-z0-9_]*):=(.*)\}"$', line)
		    if m:
		        name, d = m.groups()
		        if name in knobs:
		            probs.append("defaults.sh:{}: {} set twice".format(n, name))
		        knobs[name] = d
		        if not name.startswith("RIG_"):
		            probs.append("defaults.sh:{}: {} does not start with RIG_".format(n, name))
		        if not re.match(r"# \S", prev):
		            probs.append("defaults.sh:{}: {} has no comment line above it".format(n, name))
		    elif re.match(r"\s*:\s", line):
		        probs.append("defaults.sh:{}: not one setting a line as : \"${{NAME:=DEFAULT}}\": {}".format(n, line))
		    prev = line
		for line in open(top + "/Makefile"):
		    m = re.match(r"([A-Z_][A-Z0-9_]*) \?=\s*(.*?)\s*$", line)
		    if m:
		        knobs[m.group(1)] = m.group(2)
		if len(knobs) < 10:
		    probs.append("only {} settings found in defaults.sh and the Makefile".format(len(knobs)))
		# At most 20 settings a user can set (the Makefile's ?= aside);
		# constants of the tests live with the tests.
		rig = [k for k in knobs if k.startswith("RIG_")]
		if len(rig) > 20:
		    probs.append("{} RIG_* settings in defaults.sh, more than 20".format(len(rig)))
		# Host scripts: tracked bash files outside the guests' directories.
		files = []
		for f in subprocess.run(["git", "-C", top, "ls-files"], check=True,
		                        capture_output=True, text=True).stdout.split():
		    if f.startswith(("net-tests/guest/", "qemu-net/guest/")) or f == "qemu-net/defaults.sh":
		        continue
		    try:
		        head = open(top + "/" + f, errors="replace").read(64)
		    except OSError:
		        continue
		    if re.match(r"#!.*\bbash|# shellcheck shell=bash", head):
		        files.append(f)
		if len(files) < 10:
		    probs.append("only {} host scripts found".format(len(files)))
		expand = re.compile(r"\$\{([A-Z][A-Z0-9_]*)(:?[-=])([^}]*)\}")
		assign = re.compile(r"(?<![$\w])(RIG_[A-Z0-9_]+)(?:\[[^]]*\])?\+?=")
		read = re.compile(r"\$\{?(RIG_[A-Z0-9_]+)")
		assigned, reads, used = set(), {}, set()
		for f in files:
		    for n, line in enumerate(open(top + "/" + f, errors="replace"), 1):
		        if line.lstrip().startswith("#"):
		            continue
		        where = "{}:{}".format(f, n)
		        assigned.update(assign.findall(line))
		        for name in read.findall(line):
		            reads.setdefault(name, where)
		        used.update(re.findall(r"\b[A-Z][A-Z0-9_]*\b", line))
		        if re.search(r"\$\{?SKB_TAILROOM_CACHE\b", line):
		            probs.append("{}: SKB_TAILROOM_CACHE (the old name, read in defaults.sh only): use RIG_CACHE".format(where))
		        for name, op, val in expand.findall(line):
		            if "=" in op:
		                probs.append("{}: ${{{}{}...}} assigns a default outside qemu-net/defaults.sh".format(where, name, op))
		            elif val == "":
		                pass
		            elif name not in knobs:
		                probs.append("{}: ${{{}{}{}}}: a default for {}, which is not a setting in defaults.sh".format(where, name, op, val, name))
		            elif knobs[name] != "":
		                probs.append("{}: ${{{}{}{}}}: a second default ({} has '{}' in defaults.sh)".format(where, name, op, val, name, knobs[name]))
		for name, where in sorted(reads.items()):
		    if name not in knobs and name not in assigned:
		        probs.append("{}: {} is read, but is neither a setting in defaults.sh nor assigned anywhere".format(where, name))
		for line in open(top + "/Makefile"):
		    if "?=" not in line:
		        used.update(re.findall(r"\b[A-Z][A-Z0-9_]*\b", line))
		for name in knobs:
		    if name not in used:
		        probs.append("{}: a setting in defaults.sh that no script reads".format(name))
		for p in probs:
		    print(p)
		sys.exit(1 if probs else 0)
	PY
}

# Defaults live in qemu-net/defaults.sh only, one a line under its
# comment line, each named RIG_* (the Makefile's ?= variables aside): no
# host script assigns one (${X:=...}), gives a variable that is not a setting a default
# (${X:-...}), or a second one to a setting whose default is not empty;
# no RIG_* variable is read that is neither a setting nor assigned by the
# rig (a setting without a default); no script uses SKB_TAILROOM_CACHE;
# every setting is read somewhere.  (${X:-...} of a setting whose default
# is empty is how it is shown, e.g. "${RIG_ICOUNT:-off}".)  At most 20
# settings (RIG_*): the tests' constants are in net-tests/constants.sh.
t_settings_one_place() {
	local out rc=0
	out=$(st_settings_py) || rc=$?
	printf '%s\n' "$out" >&2
	((rc == 0)) || { reason "$(head -n 3 <<<"$out" | tr '\n' ';') (see log)"; return 1; }
}

# st_settings_in DIR [RIG.LOCAL-TEXT|-] [VAR=VALUE...]: a copy of
# lib.sh and defaults.sh in DIR (so the repository's own rig.local is
# never touched), DIR/rig.local with that text ("-": none), sourced by a
# fresh bash with only the given environment (and PATH, HOME); prints
# "RIG_MEM RIG_CACHE RIG_KERNELS RIG_TARBALL RIG_PATCHES".
st_settings_in() {
	local d=$1 local_text=$2
	shift 2
	rm -rf "$d"
	mkdir -p "$d/qemu-net"
	cp "$RIG_TOP/qemu-net/lib.sh" "$RIG_TOP/qemu-net/defaults.sh" "$d/qemu-net/"
	[[ "$local_text" == - ]] || printf '%s\n' "$local_text" >"$d/rig.local"
	# shellcheck disable=SC2016 # expanded by the child
	env -i PATH="$PATH" HOME="$HOME" "$@" bash -c '. "$1/qemu-net/lib.sh"
		echo "$RIG_MEM $RIG_CACHE $RIG_KERNELS $RIG_TARBALL $RIG_PATCHES"' - "$d"
}

# Where a setting comes from: the default; rig.local over the default;
# the environment over rig.local (what a command exports to the commands
# it runs stays); SKB_TAILROOM_CACHE over RIG_CACHE, RIG_KERNELS under
# it; RIG_TREE from rig.local moves the tarball, the series and the
# kernels, unless RIG_TARBALL/RIG_PATCHES are given.
t_settings_sources() {
	local d=$CHECK_DIR/settings-sources got=() exp=() i
	local t72=debian/linux-source-7.2-7.2.13-1/usr/src/linux-source-7.2.tar.xz
	got+=("$(st_settings_in "$d" - RIG_CACHE=/c)")
	exp+=("768 /c /c/kernels/7.2 /c/$t72 $d/patches")
	got+=("$(st_settings_in "$d" 'RIG_MEM=1024' RIG_CACHE=/c)")
	exp+=("1024 /c /c/kernels/7.2 /c/$t72 $d/patches")
	got+=("$(st_settings_in "$d" 'RIG_MEM=1024; RIG_CACHE=/local' RIG_MEM=512 RIG_CACHE=/c)")
	exp+=("512 /c /c/kernels/7.2 /c/$t72 $d/patches")
	got+=("$(st_settings_in "$d" - RIG_CACHE=/new SKB_TAILROOM_CACHE=/old)")
	exp+=("768 /old /old/kernels/7.2 /old/$t72 $d/patches")
	got+=("$(st_settings_in "$d" 'SKB_TAILROOM_CACHE=/old' RIG_CACHE=/new)")
	exp+=("768 /old /old/kernels/7.2 /old/$t72 $d/patches")
	got+=("$(st_settings_in "$d" 'RIG_TREE=6.12' RIG_CACHE=/c)")
	exp+=("768 /c /c/kernels/6.12 /usr/src/linux-source-6.12.tar.xz $d/patches/stable/6.12")
	got+=("$(st_settings_in "$d" 'RIG_TREE=6.12' RIG_CACHE=/c RIG_TREE=6.1 RIG_TARBALL=/t.tar.xz RIG_PATCHES=/p)")
	exp+=("768 /c /c/kernels/6.1 /t.tar.xz /p")
	for i in "${!exp[@]}"; do
		[[ "${got[i]}" == "${exp[i]}" ]] ||
			{ reason "case $((i + 1)): got '${got[i]}', want '${exp[i]}'"; return 1; }
	done
}

# st_sandbox DIR STRICT: DIR/bin with stand-ins for the commands that do
# work (each logs its call to DIR/work.log and exits 99), an empty cache
# and results folder, a dummy kernel tarball (so nothing installs one).
# STRICT=1 (--help, bad options) also stands in for what a dry run may
# use (ip, unshare, gcc, python3, sha256sum, ...).
st_sandbox() {
	local d=$1 c cmds=(apt-get apt-cache sudo qemu-system-x86_64 make tar git ccache cpio gzip flock nsenter setpriv)
	(($2)) && cmds+=(dpkg-query gcc python3 sha256sum unshare ip ss jq gnuplot)
	rm -rf "$d"
	mkdir -p "$d/bin" "$d/cache" "$d/results"
	: >"$d/work.log"
	: >"$d/linux-source.tar.xz"
	for c in "${cmds[@]}"; do
		printf '#!/bin/sh\necho "%s $*" >>%q\nexit 99\n' "$c" "$d/work.log" >"$d/bin/$c"
		chmod +x "$d/bin/$c"
	done
}

# st_entry_points: the rig's entry points (one a line, relative to the
# top): the executable qemu-net/*.sh, net-tests/*.sh and net-tests/*.py.
# Fails if one of these files is neither an executable with a #! line
# nor a sourced library (not executable, "# shellcheck shell=" first).
st_entry_points() {
	local f nbad=0
	for f in "$RIG_TOP"/qemu-net/*.sh "$RIG_TOP"/net-tests/*.sh "$RIG_TOP"/net-tests/*.py; do
		if [[ -x "$f" ]] && head -n 1 "$f" | grep -q '^#!'; then
			echo "${f#"$RIG_TOP"/}"
		elif [[ ! -x "$f" ]] && head -n 1 "$f" | grep -q '^# shellcheck shell='; then
			:
		else
			echo "${f#"$RIG_TOP"/}: neither an entry point (executable, #!) nor a library (# shellcheck shell=)" >&2
			nbad=1
		fi
	done
	return "$nbad"
}

# st_sandboxed DIR CMD...: CMD from the top of the repository, with DIR's
# stand-ins first in PATH, DIR's cache (under every name a version of
# the rig has read: a script that does work must not touch the real
# one), results and tarball, 60 s at most.
st_sandboxed() {
	local d=$1
	shift
	(cd "$RIG_TOP" && env PATH="$d/bin:$PATH" \
		RIG_CACHE="$d/cache" SKB_TAILROOM_CACHE="$d/cache" XDG_CACHE_HOME="$d/cache" \
		RIG_RESULTS="$d/results" RIG_TARBALL="$d/linux-source.tar.xz" timeout 60 "$@")
}

# Every entry point (and make) answers --help and -h with its usage on
# stdout, nothing on stderr, exit 0; an unknown option, and each option
# of its synopsis given without its value, with the usage on stderr,
# exit 2 (E_USAGE); and none of these runs a command that does work
# (apt, make, git, tar, QEMU, ...: stand-ins that log their calls), so
# each parses its options before doing anything.
t_usage_entry_points() {
	local d=$CHECK_DIR/usage py mk eps e cmd rc syn opt bad=() n=0
	py=$(command -v python3) mk=$(command -v make)
	st_sandbox "$d" 1
	eps=$(st_entry_points) || { reason "entry points: see log"; return 1; }
	for e in net-tests/bench.sh net-tests/run-tests.sh qemu-net/pair.sh net-tests/report.py; do
		grep -qx "$e" <<<"$eps" || { reason "$e (documented) is not an entry point"; return 1; }
	done
	# st_try WANT-RC WHERE(stdout|stderr) CMD...: run sandboxed; the
	# usage must be on WHERE, the other stream empty for --help.
	st_try() {
		local want=$1 where=$2 rc=0 label
		shift 2
		label="${*#"$py" }"
		st_sandboxed "$d" "$@" >"$d/out" 2>"$d/err" || rc=$?
		n=$((n + 1))
		{ echo "== $label: exit $rc"; cat "$d/out" "$d/err"; } >>"$d.log"
		if ((rc != want)); then
			bad+=("$label: exit $rc, want $want")
		elif ! grep -qiE '^usage: ' "$d/$([[ $where == stdout ]] && echo out || echo err)"; then
			bad+=("$label: no usage on $where")
		elif [[ $where == stdout && -s "$d/err" ]]; then
			bad+=("$label: writes to stderr: $(head -n 1 "$d/err")")
		elif [[ $where == stderr && -s "$d/out" ]]; then
			bad+=("$label: writes to stdout: $(head -n 1 "$d/out")")
		fi
		if [[ -s "$d/work.log" ]]; then
			bad+=("$label: did work before parsing its options: $(tr '\n' ';' <"$d/work.log")")
			: >"$d/work.log"
		fi
		return 0
	}
	: >"$d.log"
	for e in $eps; do
		cmd=("$RIG_TOP/$e")
		[[ "$e" == *.py ]] && cmd=("$py" "$RIG_TOP/$e")
		st_try 0 stdout "${cmd[@]}" --help
		st_try 0 stdout "${cmd[@]}" -h
		st_try 2 stderr "${cmd[@]}" --no-such-option-skbt
		# The synopsis (the usage line and its indented continuation):
		# every [-o VALUE] without its VALUE.
		# (its exit status was judged above)
		syn=$(st_sandboxed "$d" "${cmd[@]}" --help | awk 'NR == 1 || (/^[ \t]/ && go) {print; go = 1; next} {exit}') || true
		: >"$d/work.log"
		for opt in $(grep -oE '\[--?[A-Za-z][A-Za-z0-9-]* [^] |]+' <<<"$syn" | sed 's/^\[//; s/ .*//' | sort -u); do
			st_try 2 stderr "${cmd[@]}" "$opt"
		done
	done
	# make: help, and an unknown target.
	st_try 0 stdout "$mk" -s -C "$RIG_TOP" help
	st_try 2 stderr "$mk" -s --no-print-directory -C "$RIG_TOP" no-such-target-skbt
	printf '%d commands run, log: %s.log\n' "$n" "$d" >&2
	((${#bad[@]} == 0)) || { printf '%s\n' "${bad[@]}" >&2; reason "${bad[0]}$( ((${#bad[@]} > 1)) && echo " (and $((${#bad[@]} - 1)) more, see log)")"; return 1; }
}

# make bench's defaults plan two phases: throughput, then the
# instruction phase under BENCH_ICOUNT (3 pairs, the rows but ICMP);
# --instr-pairs 0 and --icount each leave it out (bench.sh --dry-run).
t_bench_instr_phase() {
	local d=$CHECK_DIR/bench-plan out got=() args
	st_sandbox "$d" 0
	for args in "" "--instr-pairs 0" "--icount shift=0"; do
		# shellcheck disable=SC2086 # word splitting of the option list
		out=$(st_sandboxed "$d" net-tests/bench.sh $args --rows tcp-v4-plain,icmp-v4-transport-gcm-off --dry-run 2>&1) ||
			{ reason "bench.sh $args --dry-run failed: $(tail -n 1 <<<"$out")"; return 1; }
		got+=("[$args] $(grep -A1 '^instruction phase' <<<"$out" | grep -v '^qemu ' | tr -s ' \n' '  ' | sed 's/ $//')")
	done
	printf '%s\n' "${got[@]}" >&2
	local want=("[] instruction phase: -icount shift=0,sleep=on (guests +clearcpuid=erms), rows: tcp-v4-plain pairs: 3, order: baseline patched patched baseline baseline patched"
		"[--instr-pairs 0] instruction phase: none"
		"[--icount shift=0] instruction phase: none")
	[[ "${got[*]}" == "${want[*]}" ]] || { reason "plan: ${got[*]}"; return 1; }
}

# The KVM path as far as a machine without KVM goes: the QEMU command
# lines bench.sh --dry-run prints for each accelerator and phase.  KVM:
# -accel kvm -cpu host, no -icount, no plugin, no instruction phase;
# TCG: the throughput phase without -icount or plugin, the instruction
# phase with -icount and the skbt-insn plugin, or with 2 vCPUs (which
# QEMU 7.2 does not bring up under -icount) on one TCG thread without
# -icount, the plugin told single=on;
# --rows multi plans 2 vCPUs and 4 streams.  And a run (not a dry run)
# with --accel kvm and no usable RIG_KVM_DEV exits 2 naming the device
# before anything builds (no stand-in called).
t_bench_accel_plan() {
	local d=$CHECK_DIR/bench-accel out bad=() dev rc
	st_sandbox "$d" 0
	out=$(st_sandboxed "$d" net-tests/bench.sh --accel kvm --rows multi --dry-run 2>&1) ||
		{ reason "bench.sh --accel kvm --dry-run failed: $(tail -n 1 <<<"$out")"; return 1; }
	echo "$out" >&2
	grep -q '^accel: kvm, 2 vCPU(s) per guest, 4 stream(s)$' <<<"$out" || bad+=("kvm multi: no '2 vCPU(s), 4 stream(s)' plan")
	grep -q '^instruction phase: none (KVM' <<<"$out" || bad+=("kvm: an instruction phase planned")
	[[ $(grep -c '^qemu throughput: .*-accel kvm -cpu host -smp 2 ' <<<"$out") == 2 ]] || bad+=("kvm: not two '-accel kvm -cpu host -smp 2' guests")
	! grep '^qemu ' <<<"$out" | grep -q -e '-icount' -e '-plugin' -e '^qemu instructions' || bad+=("kvm: -icount, a plugin or an instruction phase in the command lines")
	out=$(st_sandboxed "$d" net-tests/bench.sh --smp 2 --rows tcp-v4-plain --dry-run 2>&1) ||
		{ reason "bench.sh --smp 2 --dry-run failed: $(tail -n 1 <<<"$out")"; return 1; }
	echo "$out" >&2
	[[ $(grep -c '^qemu throughput: .*-accel tcg -cpu max -smp 2 ' <<<"$out") == 2 ]] || bad+=("tcg: not two '-accel tcg -cpu max -smp 2' guests")
	! grep '^qemu throughput' <<<"$out" | grep -q -e '-icount' -e '-plugin' || bad+=("tcg throughput phase: -icount or a plugin")
	[[ $(grep '^qemu instructions: ' <<<"$out" | grep -v -e '-icount' | grep -c -e '-accel tcg\\,thread=single -cpu max -smp 2 .*-plugin file=.*skbt-insn.so.*single=on') == 2 ]] ||
		bad+=("tcg instruction phase, 2 vCPUs: not two guests on one TCG thread with the plugin (single=on) and without -icount")
	out=$(st_sandboxed "$d" net-tests/bench.sh --rows tcp-v4-plain --dry-run 2>&1) ||
		{ reason "bench.sh --dry-run failed: $(tail -n 1 <<<"$out")"; return 1; }
	[[ $(grep '^qemu instructions: ' <<<"$out" | grep -c -e '-accel tcg -cpu max -icount shift=0\\,sleep=on -smp 1 .*-plugin file=.*skbt-insn.so\\,out=[^ ]*insn.log $') == 2 ]] ||
		bad+=("tcg instruction phase, 1 vCPU: not two guests under -icount with the plugin")
	for dev in "$d/no-kvm" "$d/work.log"; do
		rc=0
		out=$(RIG_KVM_DEV=$dev st_sandboxed "$d" net-tests/bench.sh --accel kvm --rows tcp-v4-plain 2>&1) || rc=$?
		echo "[RIG_KVM_DEV=$dev] rc=$rc: $out" >&2
		((rc == 2)) || bad+=("RIG_KVM_DEV=$dev: exit $rc, want 2")
		grep -q -- "--accel kvm needs $dev" <<<"$out" || bad+=("RIG_KVM_DEV=$dev: the error does not name the device")
	done
	[[ ! -s "$d/work.log" ]] || bad+=("work done before the KVM check: $(head -n 3 "$d/work.log" | tr '\n' ';')")
	((${#bad[@]} == 0)) || { reason "${bad[*]}"; return 1; }
}

# Every example command in README.md (```sh blocks and `make ...`,
# `net-tests/...`, `qemu-net/...` spans with arguments), in `make help`
# and in each entry point's usage (its "Examples:") is accepted: make's
# goals exist and the commands make would run are checked in turn (make
# -n), bench.sh and pair.sh with --dry-run, run-tests.sh with --list,
# build-kernel.sh with --dry-run, report.py run on a copy of a committed
# run folder; all exit 0 and do no work (stand-ins as above, except the
# little a dry run does: link probe, gcc --version, hashing a dummy
# tarball).
t_usage_examples() {
	local d=$CHECK_DIR/examples out rc=0
	st_sandbox "$d" 0
	out=$(python3 - "$RIG_TOP" "$d" "$(command -v make)" "$(command -v python3)" <<-'PY'
		import os, re, shlex, shutil, subprocess, sys
		top, d, mk, py = sys.argv[1:5]
		env0 = dict(os.environ)
		# (the cache under every name a version of the rig has read)
		env0.update(PATH=d + "/bin:" + env0["PATH"], RIG_CACHE=d + "/cache",
		            SKB_TAILROOM_CACHE=d + "/cache", XDG_CACHE_HOME=d + "/cache",
		            RIG_RESULTS=d + "/results", RIG_TARBALL=d + "/linux-source.tar.xz")
		log = open(d + ".log", "w")
		probs, nrun = [], [0]
		# Not commands of the rig: the kernel's own make (README, step 2).
		NOT_RIG = {"make x86_64_defconfig"}
		PLACEHOLDERS = {"results/<timestamp>": "icount-v2"}
		phony = []
		for line in open(top + "/Makefile"):
		    if line.startswith(".PHONY:"):
		        phony += line.split()[1:]

		def run(argv, env):
		    nrun[0] += 1
		    p = subprocess.run(argv, cwd=top, env=env, capture_output=True, text=True, timeout=120)
		    log.write("== {}: exit {}\n{}{}".format(shlex.join(argv), p.returncode, p.stdout, p.stderr))
		    work = open(d + "/work.log").read()
		    open(d + "/work.log", "w").close()
		    return p, work

		def check(argv, env, src):
		    env = dict(env)
		    while argv and re.match(r"[A-Za-z_][A-Za-z0-9_]*=", argv[0]):
		        k, v = argv[0].split("=", 1)
		        env[k] = v
		        argv = argv[1:]
		    if not argv:
		        return
		    prog, args = argv[0], argv[1:]
		    shown = "{}: {}".format(src, shlex.join(argv))
		    for i, a in enumerate(args):
		        if "<" in a:
		            if a not in PLACEHOLDERS:
		                probs.append("{}: placeholder {} has no sample here".format(shown, a))
		                return
		            dst = d + "/sample-" + PLACEHOLDERS[a]
		            shutil.rmtree(dst, ignore_errors=True)
		            shutil.copytree(top + "/docs/results/" + PLACEHOLDERS[a], dst)
		            args[i] = dst
		    helpme = "-h" in args or "--help" in args
		    if prog == "make":
		        goals = [a for a in args if not a.startswith("-") and "=" not in a] or ["help"]
		        for g in goals:
		            if g not in phony:
		                probs.append("{}: make has no target {}".format(shown, g))
		                return
		        p, work = run([mk, "-n", "-s", "--no-print-directory", "-C", top] + args, env)
		        if p.returncode != 0:
		            probs.append("{}: make -n exit {}: {}".format(shown, p.returncode, p.stderr.strip()[-200:]))
		            return
		        for line in p.stdout.splitlines():
		            sub = shlex.split(line)
		            # (make deps: install-deps.sh takes package names only,
		            # fetch-source.sh a tree; both are their own download)
		            if sub and re.match(r"(qemu-net|net-tests)/", sub[0]) and sub != ["qemu-net/install-deps.sh"] \
		                    and sub[0] != "qemu-net/fetch-source.sh":
		                check(sub, env, "{} -> {}".format(shown, line))
		        return
		    # -c CODE naming a child: it must be one of the matrix's.
		    for a in args:
		        for c in re.findall(r"ipsec_up\s+([\w-]+)", a):
		            if c not in children:
		                probs.append("{}: child {} is not in net-tests/matrix.sh".format(shown, c))
		    base = os.path.basename(prog)
		    if helpme:
		        cmd = [prog] + args
		    elif base in ("bench.sh", "pair.sh"):
		        cmd = [prog] + args + ["--dry-run"]
		    elif base == "run-tests.sh":
		        cmd = [prog] + args + ["--list"]
		    elif base == "build-kernel.sh":
		        cmd = [prog] + (args if "--dry-run" in args else ["--dry-run"] + args)
		    elif base == "report.py":
		        cmd = [prog] + args
		    else:
		        probs.append("{}: no way to check {} without running it".format(shown, prog))
		        return
		    if cmd[0].endswith(".py"):
		        cmd = [py] + cmd
		    p, work = run(cmd, env)
		    if p.returncode != 0:
		        err = (p.stderr.strip().splitlines() or ["(nothing on stderr)"])[-1]
		        probs.append("{}: exit {}: {}".format(shown, p.returncode, err))
		    if work:
		        probs.append("{}: did work: {}".format(shown, work.replace("\n", "; ")))

		def examples_after(text):
		    """Lines under an "Examples:" line, up to the first one not indented."""
		    out, on = [], False
		    for line in text.splitlines():
		        if line.strip() == "Examples:":
		            on = True
		        elif on and re.match(r"\s+\S", line):
		            out.append(line.strip())
		        else:
		            on = False
		    return out

		children = subprocess.run(
		    ["bash", "-c", '. "$1/qemu-net/lib.sh"; . "$1/net-tests/matrix.sh"; matrix_children', "-", top],
		    capture_output=True, text=True, env=env0).stdout.split()
		if not children:
		    probs.append("matrix_children listed no child")
		ex = []
		readme = open(top + "/README.md").read()
		for block in re.findall(r"^```sh\n(.*?)^```", readme, re.M | re.S):
		    ex += [("README", l) for l in block.splitlines() if l.strip()]
		for line in readme.splitlines():
		    for span in re.findall(r"`([^`]+)`", line):
		        if re.match(r"([A-Z_][A-Z0-9_]*=\S+ )*(make |(qemu-net|net-tests)/[\w-]+\.(sh|py) )", span) \
		                and span not in NOT_RIG:
		            ex.append(("README", span))
		p, _ = run([mk, "-s", "--no-print-directory", "-C", top, "help"], env0)
		ex += [("make help", l) for l in examples_after(p.stdout)]
		eps = subprocess.run(["bash", "-c", 'cd "$1" && ls qemu-net/*.sh net-tests/*.sh net-tests/*.py', "-", top],
		                     capture_output=True, text=True).stdout.split()
		for e in eps:
		    if os.access(top + "/" + e, os.X_OK):
		        p, _ = run(([py] if e.endswith(".py") else []) + [top + "/" + e, "--help"], env0)
		        ex += [(e + " --help", l) for l in examples_after(p.stdout)]
		seen = set()
		for src, line in ex:
		    if line in seen:
		        continue
		    seen.add(line)
		    try:
		        argv = shlex.split(line, comments=True)
		    except ValueError as e:
		        probs.append("{}: {}: cannot split: {}".format(src, line, e))
		        continue
		    check(argv, env0, src)
		print("{} examples, {} commands run; log: {}.log".format(len(ex), nrun[0], d))
		for p in probs:
		    print(p)
		sys.exit(1 if probs else 0)
	PY
	) || rc=$?
	printf '%s\n' "$out" >&2
	((rc == 0)) || { reason "$(sed -n 2,3p <<<"$out" | tr '\n' ';') (see log)"; return 1; }
}

# --- layers: net-tests/ uses qemu-net/, never the reverse.  qemu-net/
# builds and boots two guests on a link; what runs on it (addresses,
# IKE configs, plugins) comes through its hooks (guest_env,
# guest_qemu_args, pair.sh --lib).  No tracked file of qemu-net/ names
# net-tests/, in code or in a comment.
t_layers_one_way() {
	local hits rc=0
	hits=$(git -C "$RIG_TOP" grep -n -e 'net-tests' -- qemu-net/) || rc=$?
	((rc <= 1)) || { reason "git grep failed (exit $rc)"; return 1; }
	[[ -z "$hits" ]] || {
		printf '%s\n' "$hits" >&2
		reason "qemu-net/ refers to net-tests/: $(head -n 2 <<<"$hits" | tr '\n' ';')"
		return 1
	}
}

# --- one source: the matrix table (net-tests/matrix.sh) and the polling
# helpers (loopy_wait/slowwait in qemu-net/lib.sh, qemu-net/guest/lib.sh)

# st_tracked_scripts: tracked shell scripts and configs, one a line.
st_tracked_scripts() {
	local tracked f
	tracked=$(git -C "$RIG_TOP" ls-files) || return 1
	while read -r f; do
		case "$f" in
		configs/*) echo "$f" ;;
		*) [[ -f "$RIG_TOP/$f" ]] && head -c 64 "$RIG_TOP/$f" | grep -qE '^#!.*(ba)?sh|^# shellcheck shell=' && echo "$f" ;;
		esac
	done <<<"$tracked"
}

# No script spells the table out again: outside net-tests/matrix.sh, no
# code line (comments aside) holds an address of the plan or its network
# (10.0.0., fd00::), no loop lists
# two values of one of the table's dimensions, and no swanctl.conf is
# kept beside the one swanctl_conf makes.
t_matrix_one_source() {
	local f dim v n line bad=() addrs=() files children hits
	mapfile -t children < <(matrix_children)
	files=$(st_tracked_scripts) || { reason "git ls-files failed"; return 1; }
	for v in $(matrix_values family); do
		for f in a b; do
			f=$(matrix_addr "$v" "$f")
			# (the address without its last group: the network)
			addrs+=("$f" "${f%%[0-9a-f]}" "${f%%[0-9a-f][0-9a-f]}")
		done
	done
	mapfile -t addrs < <(printf '%s\n' "${addrs[@]}" | grep -E '[.:]$' | sort -u)
	while read -r f; do
		[[ "$f" != net-tests/matrix.sh ]] || continue
		[[ "$f" != configs/strongswan/swanctl* ]] || { bad+=("$f: a swanctl.conf of its own"); continue; }
		n=0
		while IFS= read -r line; do
			n=$((n + 1))
			[[ ! "$line" =~ ^[[:space:]]*# ]] || continue
			for v in "${addrs[@]}"; do
				[[ "$line" != *"$v"* ]] || bad+=("$f:$n: the address plan ($v): $line")
			done
			[[ "$line" =~ ^[[:space:]]*for[[:space:]].*[[:space:]]in[[:space:]] ]] || continue
			for dim in "${!MATRIX_VALUES[@]}"; do
				hits=0
				for v in ${MATRIX_VALUES[$dim]}; do
					[[ " ${line//[;\"\']/ } " != *[[:space:]]"$v"[[:space:]]* ]] || hits=$((hits + 1))
				done
				((hits < 2)) || bad+=("$f:$n: a loop over the table's $dim values: $line")
			done
			hits=0
			for v in "${children[@]}"; do
				[[ " ${line//[;\"\']/ } " != *[[:space:]]"$v"[[:space:]]* ]] || hits=$((hits + 1))
			done
			((hits < 2)) || bad+=("$f:$n: a loop over the table's children: $line")
		done <"$RIG_TOP/$f"
	done <<<"$files"
	((${#bad[@]} == 0)) || { printf '%s\n' "${bad[@]}" >&2; reason "${bad[0]}$( ((${#bad[@]} > 1)) && echo " (and $((${#bad[@]} - 1)) more, see log)")"; return 1; }
}

# st_n GREP-ARGS...: grep -c, 0 (not a failure) when nothing matches.
st_n() { grep -c "$@" || true; }

# A value added to the table reaches every consumer: a proposal (ccm)
# and a family (v9, with its addresses and offload module) appear in the
# bench's rows, a's swanctl children and b's proposals, the pair group's
# IKE loop, the integrity loop, the guests' addresses, and the IKE
# connections and offload modules ike.sh is given; a changed address
# reaches peer_addr, guest.env and swanctl.conf.
t_matrix_generated() {
	local d=$CHECK_DIR/selftest-matrix got=() want=() rows ini res old
	mkdir -p "$d"
	old=$(matrix_addr v4 b)
	(
		# shellcheck disable=SC2317 # called by the groups
		{
			check() { echo "$1" >>"$d/tests"; }
			check_setup() { :; }
			defer_scope_push() { :; }
			defer_scope_pop() { :; }
			guest_exec() { echo "${*: -1}" >>"$d/guest-jobs"; }
		}
		: >"$d/tests"
		: >"$d/guest-jobs"
		MATRIX+='
proposal ccm        esp=aes128ccm16
family   v9         a=192.0.2.1 b=192.0.2.9 plen=28 opt=- offload_mod=esp9_offload
'
		MATRIX=${MATRIX/b=$old /b=198.51.100.3 }
		matrix_parse
		rows_full >"$d/rows"
		swanctl_conf initiator >"$d/initiator.conf"
		swanctl_conf responder >"$d/responder.conf"
		guest_env b >"$d/guest-b.env"
		peer_addr v4 >"$d/peer-v4"
		group_integrity
		group_pair
		ipsec_offload off
		ipsec_down
	) >"$d.log" 2>&1 || { reason "generating from a changed table failed (see $d.log)"; return 1; }
	rows=$(cat "$d/rows") ini=$(cat "$d/initiator.conf") res=$(cat "$d/responder.conf")
	got+=("rows: $(st_n . "$d/rows") $(st_n -x 'tcp-v4-transport-ccm-off' "$d/rows") $(st_n -x 'udp-v9-tunnel-gcm-auto' "$d/rows") $(st_n -x 'tcp-v9-plain' "$d/rows")")
	want+=("rows: 168 1 1 1")
	got+=("initiator: $(st_n -E '^\s+[a-z0-9]+-[a-z]+-(transport|tunnel) \{' <<<"$ini") $(st_n 'v4-ccm-tunnel {' <<<"$ini") $(st_n 'remote_addrs = 198.51.100.3' <<<"$ini") $(st_n 'local_addrs = 192.0.2.1' <<<"$ini")")
	# remote_addrs twice: the v4 connection and the natt row's own
	want+=("initiator: 18 1 2 1")
	got+=("responder: $(st_n 'esp_proposals = aes128gcm16, aes128-sha256, aes128ccm16' <<<"$res") $(st_n 'v9-any {' <<<"$res") $(st_n 'local_addrs = 198.51.100.3' <<<"$res")")
	want+=("responder: 3 1 1")
	got+=("addresses: $(cat "$d/peer-v4") $(tr '\n' ' ' <"$d/guest-b.env")")
	want+=("addresses: 198.51.100.3 IP4=198.51.100.3/24 IP6=$(matrix_addr v6 b)/64 IP9=192.0.2.9/28 ")
	got+=("integrity: $(st_n '^payload-' "$d/tests") $(st_n -x 'payload-v4-transport-ccm-offload-on' "$d/tests") $(st_n -x 'payload-v9-tunnel-sha-offload-off' "$d/tests")")
	want+=("integrity: 36 1 1")
	got+=("pair: $(st_n '^ike-' "$d/tests") $(st_n -x 'ike-v4-ccm-transport' "$d/tests") $(st_n -x 'ike-v9-gcm-tunnel' "$d/tests")")
	want+=("pair: 18 1 1")
	got+=("ike.sh: $(st_n '/ike.sh offload off esp4_offload esp6_offload esp9_offload $' "$d/guest-jobs") $(st_n '/ike.sh down v4 v4-natt v6 v6-natt v9 $' "$d/guest-jobs")")
	want+=("ike.sh: 4 2")
	local i
	for i in "${!want[@]}"; do
		[[ "${got[i]}" == "${want[i]}" ]] || { reason "got '${got[i]}', want '${want[i]}' ($d)"; return 1; }
	done
	[[ -n "$rows$ini$res" ]]
}

# Row names are kept: every row of the kept runs (docs/results), of the
# quick set and of the full set decodes (row_decode) into parts that make
# the same name, bad names are refused, and the full set is the 76 rows
# the rig has always had; the functional rows (rows_func) decode to their
# child (none on a WireGuard row) and to the addresses and device of
# their own link (a WireGuard row on IPv6: a6=, b6=).
t_matrix_row_names() {
	local r n=0 bad=() kept
	kept=$(cat "$RIG_TOP"/docs/results/*/runs.jsonl | jq -r .row | sort -u) || { reason "cannot read the kept runs"; return 1; }
	[[ -n "$kept" ]] || { reason "no kept runs in docs/results"; return 1; }
	for r in $kept "${ROWS_QUICK[@]}" "${ROWS_DEBUG[@]}" $(rows_full) $(rows_func); do
		n=$((n + 1))
		if ! row_decode "$r"; then
			bad+=("$r: not a row of the table")
		elif [[ -n "$ROW_FUNC" && "$ROW_MODE" == wireguard ]]; then
			[[ "$ROW_PROTO-$ROW_FAMILY-$ROW_FUNC-$ROW_OFFLOAD" == "$r" && -z "$ROW_CHILD" &&
				"$(matrix_attr func "$ROW_FUNC" ike)" == no ]] ||
				bad+=("$r: decodes to $ROW_PROTO/$ROW_FAMILY/$ROW_FUNC/$ROW_OFFLOAD/$ROW_CHILD")
		elif [[ -n "$ROW_FUNC" ]]; then
			[[ "$ROW_PROTO-$ROW_FAMILY-$ROW_FUNC-$ROW_OFFLOAD" == "$r" &&
				"$ROW_CHILD" == "$(matrix_func_child "$ROW_FAMILY" "$ROW_FUNC")" &&
				"$(matrix_attr func "$ROW_FUNC" ike)" == yes ]] ||
				bad+=("$r: decodes to $ROW_PROTO/$ROW_FAMILY/$ROW_FUNC/$ROW_OFFLOAD/$ROW_CHILD")
		elif [[ "$ROW_MODE" == plain && "$ROW_PROTO-$ROW_FAMILY-plain" != "$r" ]] ||
			[[ "$ROW_MODE" != plain && "$ROW_PROTO-$ROW_FAMILY-$ROW_MODE-$ROW_PROPOSAL-$ROW_OFFLOAD" != "$r" ]] ||
			[[ "$ROW_MODE" != plain && "$(child_family "$ROW_CHILD")" != "$ROW_FAMILY" ]]; then
			bad+=("$r: decodes to $ROW_PROTO/$ROW_FAMILY/$ROW_MODE/$ROW_PROPOSAL/$ROW_OFFLOAD/$ROW_CHILD")
		fi
	done
	for r in tcp-v4 tcp-v4-transport-gcm tcp-v5-plain icmp-v4-plain tcp-v4-transport-gcm-off-x udp-v6-tunnel-aes-off \
		tcp-v6-gre-on tcp-v4-nested-on tcp-v4-gre tcp-v4-gre-sometimes tcp-v4-wg-on tcp-v4-wg; do
		! row_decode "$r" || bad+=("$r: accepted")
	done
	(($(rows_full | sort -u | wc -l) == 76)) || bad+=("rows_full: $(rows_full | sort -u | wc -l) rows, want 76")
	# a row with a link of its own: its addresses (the table's a=, b=
	# without the prefix), its device; a row without: the family's
	local want
	want=$(sed 's|/[0-9]*||g' <<<"$(matrix_attr func gre b) $(matrix_attr func gre a) riggre")
	row_decode tcp-v4-gre-auto && [[ "$ROW_PEER $ROW_SRC $ROW_DEV" == "$want" ]] ||
		bad+=("tcp-v4-gre-auto: traffic to '$ROW_PEER' from '$ROW_SRC' on '$ROW_DEV', want '$want' (to, from, on)")
	want="$(matrix_attr func wg b6) rigwg"
	row_decode tcp-v6-wg-off && [[ "$ROW_PEER/64 $ROW_DEV" == "$want" ]] ||
		bad+=("tcp-v6-wg-off: traffic to '$ROW_PEER' on '$ROW_DEV', want '$want' (a6=, b6=)")
	want="$(peer_addr v6) eth0"
	row_decode tcp-v6-natt-off && [[ "$ROW_PEER $ROW_DEV" == "$want" ]] ||
		bad+=("tcp-v6-natt-off: traffic to '$ROW_PEER' on '$ROW_DEV', want '$want'")
	((${#bad[@]} == 0)) || { reason "${bad[*]}"; return 1; }
	printf '%d row names decoded\n' "$n" >&2
}

# The polling helpers, host (bash) and guest (POSIX sh: dash and busybox
# sh here): CMD runs in the caller's shell until it succeeds (3 tries
# of a counter), a CMD that never succeeds returns 1 after the timeout
# (3 s: 2 to 5 s by date +%s; 20 s at most for each shell), and no script sleeps in a loop of its own
# (a fractional sleep or usleep run as a command outside the helpers).
t_wait_helpers() {
	local got=() sh out files f bad=()
	# shellcheck disable=SC2016 # expanded by the child shells
	local body='n=0; inc() { n=$((n + 1)); [ "$n" -ge 3 ]; }
		slowwait 5 inc; echo "n=$n"
		s=$(date +%s); slowwait 3 false; rc=$?; e=$(date +%s)
		echo "rc=$rc $((e - s >= 2 && e - s <= 5))"'
	out=$(timeout 20 bash -c ". '$RIG_TOP/qemu-net/lib.sh'; $body" 2>&1) || true
	got+=("bash: ${out//$'\n'/ }")
	for sh in dash "busybox sh"; do
		command -v "${sh%% *}" >/dev/null || continue
		out=$(timeout 20 $sh -c ". '$RIG_TOP/qemu-net/guest/lib.sh'; $body" 2>&1) || true
		got+=("$sh: ${out//$'\n'/ }")
	done
	for out in "${got[@]}"; do
		[[ "${out#*: }" == "n=3 rc=1 1" ]] || bad+=("$out (want n=3 rc=1 1)")
	done
	files=$(st_tracked_scripts) || { reason "git ls-files failed"; return 1; }
	while read -r f; do
		out=$(grep -nE '(^|[;&|({]|\bdo|\bthen|\belse)[[:space:]]*(u[s]leep\b|sleep[[:space:]]+[0-9]*\.[0-9])' "$RIG_TOP/$f" | grep -vE '^[0-9]+:[[:space:]]*#') &&
			bad+=("$f: a wait loop of its own: ${out//$'\n'/; }")
	done <<<"$files"
	printf '%s\n' "${got[@]}" >&2
	((${#bad[@]} == 0)) || { reason "${bad[*]}"; return 1; }
}

group_static() {
	check static-harness-errexit t_harness_errexit
	check static-harness-fail-digest t_harness_fail_digest
	check static-harness-budget t_harness_budget
	check static-harness-group-scopes t_harness_group_scopes
	check static-harness-interrupt t_harness_interrupt
	check static-harness-worktree-cleanup t_harness_worktree_cleanup
	check static-harness-ktap-nested t_harness_ktap_nested
	check static-guest-exit-codes t_guest_exit_codes
	check static-series-checkpatch-verdict t_series_checkpatch_verdict
	check static-group-setup-failures t_group_setup_failures
	check static-shellcheck t_shellcheck
	check static-c-tools t_c_tools
	check static-payload-selftest t_tools_selftest
	check static-debug-report-detector t_debug_detector
	check static-debug-consoles-verdict t_debug_consoles_verdict
	check static-zeroing-blind-guard t_zeroing_blind_guard
	check static-wirecheck-classifier t_wirecheck_selftest
	check static-tree-nested-records t_tree_nested_records
	check static-wire-checks t_wire_checks
	check static-verdict-better t_verdict_better
	check static-verdict-worse t_verdict_worse
	check static-verdict-noisy t_verdict_noisy
	check static-verdict-control-moved t_verdict_control_moved
	check static-verdict-aa t_verdict_aa
	check static-verdict-bootstrap t_verdict_bootstrap
	check static-verdict-bootstrap-wide t_verdict_bootstrap_wide
	check static-verdict-two-pairs t_verdict_two_pairs
	check static-report-ci-status t_report_ci_status
	check static-pairs-auto-rule t_pairs_auto_rule
	check static-cpu-figures t_cpu_figures
	check static-verdict-controls t_verdict_controls
	check static-verdict-kept-runs t_verdict_kept_runs
	check static-report-demand-header t_report_demand_header
	check static-results-cited t_results_cited
	check static-settings-one-place t_settings_one_place
	check static-settings-sources t_settings_sources
	check static-usage-entry-points t_usage_entry_points
	check static-usage-examples t_usage_examples
	check static-bench-instr-phase t_bench_instr_phase
	check static-bench-accel-plan t_bench_accel_plan
	check static-layers-one-way t_layers_one_way
	check static-matrix-one-source t_matrix_one_source
	check static-matrix-generated t_matrix_generated
	check static-matrix-row-names t_matrix_row_names
	check static-wait-helpers t_wait_helpers
}
