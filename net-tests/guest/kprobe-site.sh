# shellcheck shell=sh
# kp_site FUNC: where to put an entry kprobe on FUNC.  On 6.x: FUNC.  On
# 7.x the ftrace-based kprobe that FUNC's entry gets (KPROBES_ON_FTRACE)
# made the 7.2.13 guests call a NULL pointer from the ftrace trampoline
# (kprobe_ftrace_ops) at the first hit of a probe on kmalloc_reserve() or
# __alloc_skb() (tracefs alone, no hist trigger, no fetch args), where an
# int3 kprobe and the function tracer on the same function did not
# (docs/patches.md, "The port to 7.2.13").  So the probe goes just after
# the __fentry__ call, where the arguments and the stack are as at entry:
# FUNC+5 (no endbr64), else FUNC+9 (endbr64, then the call); FUNC if
# neither is an instruction boundary.  Needs T (tracefs).
kp_site() {
	case "$(uname -r)" in
	[1-6].*) echo "$1"; return 0 ;;
	esac
	for kp_off in 5 9; do
		if echo "p:kprobes/kpsite $1+$kp_off" >>"$T/kprobe_events" 2>/dev/null; then
			echo "-:kprobes/kpsite" >>"$T/kprobe_events"
			echo "$1+$kp_off"
			return 0
		fi
	done
	echo "$1"
}
