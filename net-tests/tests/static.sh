# shellcheck shell=bash
# Group "static": checks that need no kernel.

t_shellcheck() {
	local files=()
	mapfile -t files < <(cd "$RIG_TOP" && git ls-files | while read -r f; do
		[[ -f "$f" ]] && head -c 64 "$f" | grep -qE '^#!.*(ba)?sh|^# shellcheck shell=' && echo "$f"
	done)
	((${#files[@]})) || { reason "no scripts tracked"; return 4; }
	(cd "$RIG_TOP" && shellcheck -x -S warning "${files[@]}") >&2 ||
		{ reason "shellcheck findings (see log)"; return 1; }
}

t_c_tools() {
	[[ -f "$RIG_TOP/net-tests/tools/Makefile" ]] || { reason "no C tools yet"; return 4; }
	make -s -C "$RIG_TOP/net-tests/tools" clean all >&2 ||
		{ reason "C tools do not build with -Wall -Wextra -Werror"; return 1; }
}

t_tools_selftest() {
	make -s -C "$RIG_TOP/net-tests/tools" selftest >&2 ||
		{ reason "skbt-payload self-test failed (loopback only)"; return 1; }
}

t_wirecheck_selftest() {
	python3 "$RIG_TOP/net-tests/wirecheck.py" --selftest >&2 ||
		{ reason "wirecheck.py classifies a built frame wrongly (see log)"; return 1; }
}

group_static() {
	check static-shellcheck t_shellcheck
	check static-c-tools t_c_tools
	check static-payload-selftest t_tools_selftest
	check static-debug-report-detector t_debug_detector
	check static-wirecheck-classifier t_wirecheck_selftest
}
