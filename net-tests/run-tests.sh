#!/bin/bash
# The rig's tests (make check), KTAP on stdout, diagnostics as "# ..." on
# stderr, logs in results/check-<timestamp>/.  The last line on stdout is
# "N passed, N failed, N skipped", alone; before the plan line, every
# failure once more with its reason and the log lines that led to it
# (CI shows a run's tail).  Exit 0 when nothing failed
# (skips allowed), 1 when a test failed, 2 on bad usage.  Options:
# usage() below (--help).
#
# Topology of the guest tests (link: qemu-net/link.sh):
#   tap (default): rigtap0 -- rigbr0 -- rigtap1 in a private netns of the
#   run, vnet_hdr (guest csum/SG/TSO on); socket (fallback): QEMU socket
#   netdev on 127.0.0.1:PORT, no offloads
#   +---------------------+  virtio-net   +---------------------+
#   | guest a  10.0.0.1   |===============| guest b  10.0.0.2   |
#   | fd00::1  initiator  |  IKEv2 + ESP  | fd00::2  responder  |
#   | iperf3 client       |               | iperf3 server       |
#   +---------------------+               +---------------------+
set -euo pipefail
# shellcheck source=qemu-net/lib.sh
. "$(dirname "$0")/../qemu-net/lib.sh"
# shellcheck source=qemu-net/guests.sh
. "$RIG_TOP/qemu-net/guests.sh"
# shellcheck source=net-tests/lib/ipsec.sh
. "$RIG_TOP/net-tests/lib/ipsec.sh"
# shellcheck source=net-tests/lib/tap.sh
. "$RIG_TOP/net-tests/lib/tap.sh"

# group|prerequisite group|scope|seconds|description (one line per group,
# in run order).  scope: "check" groups run by default, "full" ones with
# RIG_CHECK_FULL=1 (make check-full) or when named with -t.  seconds: the
# group's length in a cold run on 2 cores (builds included), rounded up;
# the time budget starts a group only if that much is left (--budget).
GROUPS_TABLE="
static||check|360|shellcheck of every tracked script, C tools build with -Werror
series||check|300|patches/series applies with git am; checkpatch --strict clean; each patch builds; each posting (ipsec, ipsec-next, net-next) applies alone
build||check|1200|baseline and patched kernels build (cached by tarball+config+series)
pair|build|check|90|guests boot; IKE SA for each proposal x mode x family; ping + iperf3 through ESP
kernel|build|check|480|series claims: KUnit suites, ksize() module in a guest, key zeroing fails on baseline and passes on patched; the ipsec kselftest fails on baseline and passes on patched; the autoload RFC's claims (one modprobe per family, what POSTROUTING and tc see)
integrity|build|check|300|byte-exact TCP/UDP payloads through every family x mode x proposal x offload (patched)
wire|build|check|150|host capture of the link: only ESP/IKE after IKE, marker never in clear; control run shows both checks fail; TFC padding on the wire with the offload modules loaded (baseline unpadded, patched padded)
func|build|check|500|functional matrix with the ESP offload modules loaded (patched): TFC, NAT-T, GRE and VXLAN over IPsec, nested SAs, IPv6 extension header, netfilter on ESP; byte-exact and wire-checked
profile|build|check|200|perf in the guests: the sender's profile of tcp-v4-transport-gcm-off shows skb_cow_data/__pskb_pull_tail/memcpy on baseline, no skb_cow_data on patched; top symbols and perf diff resolved on the host
debug|build|full|1000|KASAN/SLUB_DEBUG/KFENCE/kmemleak/lockdep kernel, traffic + KUnit, consoles clean
tree||check|1200|the stable backports: series, build and kernel (kselftest, KUnit, zeroing) on 6.1; with RIG_CHECK_FULL=1 on 6.1 and 6.12, with pair and integrity; results named TREE/TEST
failures|build|check|320|bad input and failures exit non-zero with the right message; no QEMU left
"
# Each group's file (net-tests/tests/GROUP.sh) is sourced in that group's
# own shell (run_group, net-tests/lib/tap.sh), never here.

mapfile -t groups < <(awk -F'|' 'NF>=5{print $1}' <<<"$GROUPS_TABLE")
# group_field GROUP N: field N of GROUP's line in GROUPS_TABLE.
group_field() { awk -F'|' -v g="$1" -v n="$2" '$1==g{print $n}' <<<"$GROUPS_TABLE"; }

usage() {
	cat <<-EOF
		Usage: net-tests/run-tests.sh [-t GROUP]... [--list] [--dry-run] [--accel tcg|kvm]
		                              [--link tap|socket] [--tree 7.2|6.1|6.12]
		                              [--series DIR] [--baseline-series DIR]
		                              [--budget SECONDS]
		The rig's tests (make check): KTAP 1 on stdout (a guest script's or
		module's own KTAP as an indented subtest), diagnostics as "# ..."
		on stderr, logs in \$RIG_RESULTS/check-<time>/; the last line on stdout
		is "N passed, N failed, N skipped", alone.
		  -t GROUP      run GROUP (again for more); default: every group of
		                scope "check" (--list), and with RIG_CHECK_FULL=1
		                (make check-full) every group
		  --list        print the groups (those named with -t, or all), run none
		  --dry-run     print the plan (link, kernels and their cache keys, the
		                groups that would run), build and run nothing
		  --accel A     QEMU accelerator, tcg or kvm (default: RIG_ACCEL)
		  --link L      the guests' link, tap or socket (default: RIG_LINK;
		                empty = tap if this run can make it, else socket)
		  --tree T      kernel tree, 7.2, 6.1 or 6.12 (default: RIG_TREE)
		  --budget S    the run's time: a group is started only if its
		                measured cold length (--list) fits in what is left
		                of S seconds; one that does not fails, saying so
		                (default: $CHECK_BUDGET, CI's 90 minutes less a
		                margin)
		  --series DIR, --baseline-series DIR  the two kernels' series, as
		                net-tests/bench.sh takes them (the series group
		                checks DIR's patches)
		  -h, --help    this text
		Groups: ${groups[*]}
		Settings: RIG_* variables, each documented with its default in qemu-net/defaults.sh.
		Exit: 0 nothing failed (skips allowed), 1 a test failed (or a group
		did not fit in the budget), 2 bad usage.
		Examples:
		  net-tests/run-tests.sh --list
		  net-tests/run-tests.sh -t static
		  net-tests/run-tests.sh -t pair --link socket
		  net-tests/run-tests.sh --dry-run --tree 6.1
	EOF
}

# The run's time budget (--budget): CI stops a run at 90 minutes.
CHECK_BUDGET=5100
sel=()
list=0
while (($#)); do
	case "$1" in
	--list) list=1 ;;
	--dry-run) RIG_DRY_RUN=1 ;;
	-t) opt_value "$@"; sel+=("$2"); shift ;;
	--budget)
		opt_value "$@"
		[[ "$2" =~ ^-?[0-9]+$ ]] || usage_error "--budget needs seconds, not '$2'"
		CHECK_BUDGET=$2
		shift
		;;
	-h | --help) usage; exit 0 ;;
	*) rig_option "$@" || usage_error "unknown option '$1'"; shift ;;
	esac
	shift
done

for g in "${sel[@]}"; do
	[[ " ${groups[*]} " == *" $g "* ]] || usage_error "unknown test group '$g' (groups: ${groups[*]})"
done
rig_settings_check
if ((list)); then
	awk -F'|' -v sel=" ${sel[*]} " 'NF>=5 && (sel == "  " || index(sel, " " $1 " ")) {
		printf "%-10s %-5s %5ss  %s\n", $1, $3, $4, $5}' <<<"$GROUPS_TABLE"
	exit 0
fi
# Groups named with -t (a "full" group runs when named).
export CHECK_EXPLICIT=" ${sel[*]} "
if ((${#sel[@]} == 0)); then
	for g in "${groups[@]}"; do
		[[ "$(group_field "$g" 3)" == check || "$RIG_CHECK_FULL" == 1 ]] && sel+=("$g")
	done
fi
if ((RIG_DRY_RUN)); then
	link_choose
	for v in baseline patched; do "$RIG_TOP/qemu-net/build-kernel.sh" --dry-run "$v" | grep -v '^make \|^scripts/'; done
	for g in "${groups[@]}"; do
		if [[ " ${sel[*]} " == *" $g "* ]]; then
			echo "group $g: $(group_field "$g" 5)"
		else
			echo "group $g: not selected (scope $(group_field "$g" 3)), not run"
		fi
	done
	exit 0
fi

CHECK_DIR=$RIG_RESULTS/check-$(date +%Y%m%d-%H%M%S)
mkdir -p "$CHECK_DIR"
TAP_RECORDS=$CHECK_DIR/records.tsv
: >"$TAP_RECORDS"
export CHECK_DIR TAP_RECORDS
t0=$SECONDS

# Prebuilds: the kernels of the debug and tree groups, built in the
# background while the earlier groups run, so that a cold run does not
# build them only when their group starts.  Each runs in a session of its
# own (setsid: a process group to stop it by), and so in a scheduler
# autogroup of its own, which shares the CPU with the run's as an equal:
# the prebuilds finish early (cold, 2 cores: the 6.12 kernels during the
# static and series groups, the debug kernel 4 min into its group's
# wait), at the cost of slowing the groups beside them (the series
# group's worktree removal took 6 min; check-cold-s30).  A group's own
# build-kernel.sh then waits for the tree's lock and finds its kernel
# cached; a prebuild that failed is the group's build failing again,
# with its log.  Logs: prebuild-NAME.log.
prebuild() {
	local name=$1 pid
	shift
	setsid "$@" >"$CHECK_DIR/prebuild-$name.log" 2>&1 </dev/null &
	pid=$!
	echo "# prebuild $name started in the background (pid $pid)" >&2
	defer prebuild_stop "$pid"
}
# prebuild_stop PID: a prebuild still running when the run ends is
# stopped, its make and compilers with it (its own process group).
prebuild_stop() {
	kill -- "-$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}
# group_on GROUP: GROUP will run.
group_on() { [[ " ${sel[*]} " == *" $1 "* ]]; }
# The tree group's trees: the first other tree (the 6.1 backports), all
# of them with RIG_CHECK_FULL=1 (exported: the group reads them).
CHECK_TREES=$(tree_others "$( ((RIG_CHECK_FULL)) || echo 1)" | tr '\n' ' ')
export CHECK_TREES
if group_on tree && [[ -n "${CHECK_TREES// /}" ]]; then
	# shellcheck disable=SC2016 # expanded by the inner bash
	prebuild tree bash -c 'for t in $2; do RIG_TREE=$t "$1" baseline && RIG_TREE=$t "$1" patched || exit; done' - \
		"$RIG_TOP/qemu-net/build-kernel.sh" "$CHECK_TREES"
fi

# (exported: the tree group's nested run gets what is left of it)
export CHECK_DEADLINE=$(($(date +%s) + CHECK_BUDGET))
budget_out=()
declare -A gstatus=()
echo "KTAP version 1"
echo "# logs: $CHECK_DIR"
for g in "${groups[@]}"; do
	[[ " ${sel[*]} " == *" $g "* ]] || continue
	pre=$(group_field "$g" 2)
	need=$(group_field "$g" 4)
	before=$(wc -l <"$TAP_RECORDS")
	if [[ -n "$pre" && "${gstatus[$pre]:-ok}" != ok ]]; then
		printf 'skip\t%s\tneeds group %s, which %s\n' "$g" "$pre" "${gstatus[$pre]}" >>"$TAP_RECORDS"
	elif (($(date +%s) + need > CHECK_DEADLINE)); then
		# Not a skip: the run promised this group and cannot give it.
		printf 'fail\t%s\tnot started: it takes about %ds (cold), %ds of the %ds budget are left (%ds into the run)\n' \
			"$g" "$need" "$((CHECK_DEADLINE - $(date +%s)))" "$CHECK_BUDGET" "$((SECONDS - t0))" >>"$TAP_RECORDS"
		budget_out+=("$g")
	else
		echo "# == $g: $(group_field "$g" 5)"
		grc=0
		nres=$(tap_results "$TAP_RECORDS")
		exec {logfd}> >(tee "$CHECK_DIR/$g.log" | sed -u 's/^/# /' >&2)
		teepid=$!
		# (the group gets the log as stderr only: a stray copy of the fd
		# in a QEMU or background job would hold the log's tee open)
		in_child run_group "$g" >"$CHECK_DIR/$g.out" 2>&"$logfd" {logfd}>&- || grc=$?
		exec {logfd}>&-
		wait "$teepid" || true
		# A group that died without recording a result is a failure.
		if (($(tap_results "$TAP_RECORDS") == nres)); then
			printf 'fail\t%s\tgroup exited %d without results (see %s)\n' "$g" "$grc" "$CHECK_DIR/$g.log" >>"$TAP_RECORDS"
		elif ((grc != 0)); then
			printf 'fail\t%s-group\tgroup exited %d after its last result (see %s)\n' "$g" "$grc" "$CHECK_DIR/$g.log" >>"$TAP_RECORDS"
		fi
	fi
	tap_print "$TAP_RECORDS" "$((before + 1))" "$g"
	gstatus[$g]=$TAP_GROUP_STATUS
	# (the debug kernel: once the build group has the tree's kernels)
	if [[ "$g" == build && "$TAP_GROUP_STATUS" == ok ]] && group_on debug; then
		prebuild debug "$RIG_TOP/qemu-net/build-kernel.sh" debug
	fi
done

# After every group's scope has ended: nothing of this run may be left
# (a QEMU, a worktree of a cached tree, the tap link's namespace holder,
# a process in its netns, a rig device in the host's netns).
# Seen to fail: series.sh without its worktree_remove defer ("worktree
# .../series-wt registered in ...").
run_leftovers() {
	local left='' rc=0 t d
	left=$(pgrep -af "qemu-system-x86_64.*$CHECK_DIR") || rc=$?
	((rc <= 1)) || echo "pgrep failed (exit $rc)"
	[[ -z "$left" ]] || echo "QEMU still running: $left"
	for t in "$RIG_CACHE"/src/linux-*/; do
		[[ -d "$t/.git" ]] || continue
		git -C "$t" worktree list --porcelain | sed -n "s|^worktree \($CHECK_DIR/.*\)|worktree \1 registered in $t|p"
	done
	# (link_leftovers also reports rig devices in the host's netns; the
	# run's folder itself stands for a run that never made a link)
	while read -r d; do
		link_leftovers "$(dirname "$d")"
	done < <(find "$CHECK_DIR" -name link-netns 2>/dev/null; echo "$CHECK_DIR/link-netns")
}
before=$(wc -l <"$TAP_RECORDS")
left=$(run_leftovers | sort -u)
if [[ -n "$left" ]]; then
	printf '%s\n' "$left" | sed 's/^/# /' >&2
	printf 'fail\tnothing-left-behind\t%s\n' "$(head -n 3 <<<"$left" | tr '\n' ';')" >>"$TAP_RECORDS"
else
	printf 'ok\tnothing-left-behind\t\n' >>"$TAP_RECORDS"
fi
tap_print "$TAP_RECORDS" "$((before + 1))"

# fail_digest GROUP NAME WHY: the failure once more, with the lines of
# its group's log that led to it (the FAIL_LOG_LINES before "fail: NAME",
# or the log's end), so the run's tail, which is what CI shows, names
# what failed and why.  At most FAIL_DIGEST_MAX failures get log lines.
FAIL_LOG_LINES=15 FAIL_DIGEST_MAX=3
fail_digest() {
	local log=$CHECK_DIR/$1.log n
	echo "# failed: $2 (group $1): $3"
	((FAIL_DIGEST_MAX-- > 0)) && [[ -s "$log" ]] || return 0
	n=$(grep -n -m1 -F "fail: ${2#*/} " "$log" | cut -d: -f1) || true
	if [[ -n "$n" ]]; then
		head -n "$n" "$log" | tail -n "$FAIL_LOG_LINES"
	else
		tail -n "$FAIL_LOG_LINES" "$log"
	fi | cut -c1-240 | sed 's/^/#   | /'
}
for f in "${TAP_FAILURES[@]}"; do
	IFS=$'\t' read -r g name why <<<"$f"
	fail_digest "$g" "$name" "$why"
done
echo "1..$TAP_N"
echo "# $((SECONDS - t0))s; logs: $CHECK_DIR"
# The last line on stdout, alone (CI reads it).
# (and, when the budget left groups out, which: never a silent pass)
closing="$((TAP_N - TAP_FAILED - TAP_SKIPPED)) passed, $TAP_FAILED failed, $TAP_SKIPPED skipped"
((${#budget_out[@]} == 0)) || closing+=" (failed for time, not started within the ${CHECK_BUDGET}s budget: ${budget_out[*]})"
echo "$closing"
((TAP_FAILED == 0)) || exit "$E_FAIL"
