# shellcheck shell=bash
# Group "profile": perf in the guests (net-tests/lib/profile.sh) gives
# the known answer on tcp-v4-transport-gcm-off: the sender's profile on
# the baseline shows the clone's copy (skb_cow_data, __pskb_pull_tail,
# memcpy), the patched kernel's the same copy made in skb_cow_data()
# itself, with no __pskb_pull_tail or pskb_expand_head.  One boot per
# kernel, one profile each, then the report (top symbols per kernel and
# the perf diff, both resolved on the host) and the check.
#
# Deliberate breakage seen to fail (real guests, not kept): the
# baseline profile copied in as the patched one: profile-known-answer
# failed with "patched 1-patched-...: skb_cow_data() under esp_output in
# 3.41% of 14350 samples (> 0.1%)"; two patched profiles: "baseline ...:
# 0.00% ..., its copy in 0.00% (want >= 1% and half of it)".
[[ -z "${RIG_T_PROFILE_SH:-}" ]] || return 0
RIG_T_PROFILE_SH=1
# shellcheck source=net-tests/lib/tap.sh
. "$RIG_TOP/net-tests/lib/tap.sh"
# shellcheck source=net-tests/lib/profile.sh
. "$RIG_TOP/net-tests/lib/profile.sh"

# The row whose answer is known (kernel group: both kernels cow every
# TCP packet there, the patched one without pskb_expand_head).
PROFILE_ROW="tcp-v4-transport-gcm-off"

# profile_boot VARIANT: the guest pair on that kernel, charon and iperf3
# up (check_setup: the tests of this boot).
profile_boot() {
	guests_start "$CHECK_DIR/profile-$1" "$RIG_KERNELS/$1"
	ipsec_start
}

# t_profile_row VARIANT: the row's SA up, the sender profiled over its
# transfer into $CHECK_DIR/profile/1-VARIANT-ROW.perf.data, SA down.
t_profile_row() {
	local f=$CHECK_DIR/profile/1-$1-$PROFILE_ROW.perf.data
	ipsec_row_up "$PROFILE_ROW" >&2 || { reason "SA not up"; return 1; }
	profile_row "$PROFILE_ROW" "$f"
	[[ -s "$f" ]] || { reason "no perf.data"; return 1; }
	ipsec_down >&2 || { reason "teardown left SAs"; return 1; }
}

# t_profile_report: top symbols of both profiles and their diff, shown
# in the log.
t_profile_report() {
	local d=$CHECK_DIR/profile out f
	out=$(profile_report "$d")
	for f in $out; do
		echo "== $f" >&2
		awk '!/^#/ && ++n <= 12' "$f" >&2
	done
	[[ -s "$d/$PROFILE_ROW.diff.txt" ]] || { reason "no perf diff written"; return 1; }
}

t_profile_check() {
	local msg rc=0
	msg=$(profile_check "$CHECK_DIR/profile" "$PROFILE_ROW" 2>&1) || rc=$?
	printf '%s\n' "$msg" >&2
	((rc == 0)) || { reason "$(grep -m1 '^profile_check: ' <<<"$msg")"; return 1; }
}

group_profile() {
	profile_need_perf
	defer_scope_push
	check_setup profile-boot-baseline profile_boot baseline
	check profile-record-baseline t_profile_row baseline
	defer_scope_pop
	defer_scope_push
	check_setup profile-boot-patched profile_boot patched
	check profile-record-patched t_profile_row patched
	defer_scope_pop
	check profile-report t_profile_report
	check profile-known-answer t_profile_check
}
