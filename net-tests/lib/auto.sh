# shellcheck shell=bash
# bench --pairs auto: whether to boot one more pair, as a function of
# its own (the static group checks its rule without guests).

[[ -z "${RIG_AUTO_SH:-}" ]] || return 0
RIG_AUTO_SH=1

# auto_decide PAIRS ELAPSED_S CI_STATUS TARGET_PCT LIMIT_MIN MAX_PAIRS:
# prints the reason; true when one more pair is wanted.  CI_STATUS is
# report.py --ci-status's exit code (0: every watched interval within
# +-TARGET_PCT).  Stops when the intervals are narrow enough, at
# MAX_PAIRS, or when one more pair (the mean pair so far) would end
# past LIMIT_MIN.
auto_decide() {
	local n=$1 el=$2 ci=$3 target=$4 lim=$5 max=$6
	if ((ci == 0)); then
		echo "every watched interval within +-$target %"
		return 1
	elif ((n >= max)); then
		echo "$max pairs, the most --pairs auto runs"
		return 1
	elif ((el + el / n > lim * 60)); then
		echo "another pair (~$((el / n)) s) would end past --time-limit $lim min"
		return 1
	fi
	echo "an interval is still wider than +-$target %: one more pair"
}
