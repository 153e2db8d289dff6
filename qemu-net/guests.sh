# shellcheck shell=bash
# Boot and drive the guest pair.  Sourced after lib.sh.
#
#   guest a ==== virtio-net ==== guest b   (addresses: the caller's guest_env)
#   link (qemu-net/link.sh, RIG_LINK / --link):
#     tap     netdev tap,vnet_hdr=on: rigtap0 - rigbr0 - rigtap1 in a private
#             netns of the run (checksum/SG/TSO offload in the guests)
#     socket  netdev socket, a listen=127.0.0.1:PORT, b connect=... (fallback)
#
# Host <-> guest: each guest mounts its own run directory over 9p as /rig
# (and the repository read-only as /src).  guest_exec writes a job file
# there; the guest's init runs it and writes N.out and N.rc back.  The
# serial console of each guest is logged to RUN/<name>/console.log.
#
# What a caller adds (this layer knows nothing of what runs on the link):
#   guest_env NAME        a function printing guest NAME's guest.env lines
#                         after NAME= (IP4=ADDRESS/PLEN, IP6=...; the init
#                         puts them on eth0); none: eth0 up, no address
#   guest_qemu_args NAME DIR  a function printing more QEMU arguments for
#                         guest NAME, one a line (DIR: its run folder),
#                         e.g. -plugin; a -plugin makes a multi-vCPU TCG
#                         guest run on one host thread (thread=single),
#                         so a plugin's counts are one sum

# (sourced once per shell: a second time would forget the guests)
[[ -z "${RIG_GUESTS_SH:-}" ]] || return 0
RIG_GUESTS_SH=1
# shellcheck source=qemu-net/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=qemu-net/link.sh
. "$RIG_TOP/qemu-net/link.sh"

GUEST_NAMES=(a b)
declare -A GUEST_PID=()
GUEST_RUN=
# What a caller may change (assign it, or set it for one guests_start
# call): seconds for a guest's init to report ready; seconds a job may
# run when its caller gives no limit; more kernel command line under
# -icount (clearcpuid=erms makes 6.1's memcpy() a loop, counted per 8
# bytes, not a rep movsb, counted per byte); a pcap file for a capture
# of guest a's link (QEMU filter-dump; empty: none).
GUEST_BOOT_TIMEOUT=90
GUEST_EXEC_TIMEOUT=300
GUEST_ICOUNT_APPEND=clearcpuid=erms
GUEST_WIRE_PCAP=

# guests_start RUNDIR KERNEL_DIR [extra kernel cmdline]
guests_start() {
	local run=$1 kdir=$2 extra=${3:-} initrd g i pidf accel wrap
	GUEST_RUN=$run
	if ((RIG_DRY_RUN)); then
		# (the kernel may not be built yet: nothing to make an initrd for)
		printf '%q ' "$RIG_TOP/qemu-net/mkinitramfs.sh" "$kdir"
		echo
		initrd=$kdir/initrd.img
	else
		initrd=$("$RIG_TOP/qemu-net/mkinitramfs.sh" "$kdir") || return
	fi
	mkdir -p "$run"
	link_choose
	printf '%s (%s)\n' "$RIG_LINK_USED" "$RIG_LINK_WHY" >"$run/link.txt"
	[[ "$RIG_LINK_USED" == socket ]] && LINK_PORT=$(free_port)
	link_start "$run"
	mapfile -t wrap < <(link_wrap)
	# The caller's QEMU arguments per guest (guest_qemu_args, above).
	local -A qargs=()
	local plugins=0 out lines=()
	for g in "${GUEST_NAMES[@]}"; do
		declare -F guest_qemu_args >/dev/null || break
		out=$(guest_qemu_args "$g" "$run/$g") || return
		[[ -n "$out" ]] || continue
		mapfile -t lines <<<"$out"
		[[ " ${lines[*]} " != *" -plugin "* ]] || plugins=1
		qargs[$g]=$(printf '%q ' "${lines[@]}")
	done
	case "$RIG_ACCEL" in
	tcg)
		accel=(-accel tcg -cpu max)
		# The plugin's one counter is exact over several vCPUs only
		# when one host thread runs them in turn (-icount implies it).
		((plugins == 0 || RIG_SMP == 1)) || accel=(-accel "tcg,thread=single" -cpu max)
		# Guest time counts instructions (2^shift ns each), so in-guest
		# timings no longer depend on the host's load (bench --icount);
		# GUEST_ICOUNT_APPEND (clearcpuid=erms) keeps TCG from counting a
		# rep movsb memcpy() once per byte.
		if [[ -n "$RIG_ICOUNT" ]]; then
			accel+=(-icount "$RIG_ICOUNT")
			extra+="${extra:+ }$GUEST_ICOUNT_APPEND"
		fi
		;;
	kvm)
		[[ -z "$RIG_ICOUNT" ]] || die "$E_USAGE" "-icount is TCG only; unset RIG_ICOUNT with --accel kvm"
		accel=(-accel kvm -cpu host)
		;;
	*) die "$E_USAGE" "RIG_ACCEL/--accel must be tcg or kvm, not '$RIG_ACCEL'" ;;
	esac
	local cpus=()
	mapfile -t cpus < <(python3 -c 'import os; print(*sorted(os.sched_getaffinity(0)), sep="\n")')
	for i in 0 1; do
		g=${GUEST_NAMES[i]}
		mkdir -p "$run/$g/jobs"
		{
			echo "NAME=$g"
			! declare -F guest_env >/dev/null || guest_env "$g"
		} >"$run/$g/guest.env"
		local cmd=("${wrap[@]}" qemu-system-x86_64 -nodefaults -no-user-config -name "rig-$g"
			"${accel[@]}" -smp "$RIG_SMP" -m "$RIG_MEM" -display none -no-reboot
			-kernel "$kdir/bzImage" -initrd "$initrd"
			-append "console=ttyS0 panic=-1 loglevel=6 $extra"
			-serial "file:$run/$g/console.log"
			-netdev "$(link_netdev "$i")"
			-device "virtio-net-pci,netdev=n0,mac=52:54:00:12:34:$((i + 10))"
			-fsdev "local,id=rig,path=$run/$g,security_model=none"
			-device "virtio-9p-pci,fsdev=rig,mount_tag=rig"
			-fsdev "local,id=src,path=$RIG_TOP,security_model=none,readonly=on"
			-device "virtio-9p-pci,fsdev=src,mount_tag=src")
		[[ -z "${qargs[$g]:-}" ]] || eval "cmd+=(${qargs[$g]})"
		if [[ -n "$GUEST_WIRE_PCAP" && $i == 0 ]]; then
			cmd+=(-object "filter-dump,id=dump0,netdev=n0,file=$GUEST_WIRE_PCAP")
		fi
		# RIG_PIN: guest i's QEMU (all its threads) on the i-th CPU
		# this run may use (modulo their number), so the two never share
		# one when there are two; with RIG_SMP vCPUs and at least twice
		# as many CPUs, on a set of RIG_SMP CPUs of its own.
		((RIG_PIN == 0)) || cmd=(taskset -c "$(pin_cpus "$i" "${cpus[@]}")" "${cmd[@]}")
		printf '%q ' "${cmd[@]}" >"$run/$g/qemu.cmd"
		echo >>"$run/$g/qemu.cmd"
		((RIG_DRY_RUN)) && { cat "$run/$g/qemu.cmd"; continue; }
		pidf=$run/$g/qemu.pid
		# QEMU dies with this shell even if the shell is SIGKILLed
		# (nsenter, for the tap link, execs QEMU in the same process).
		setpriv --pdeathsig KILL -- "${cmd[@]}" >"$run/$g/qemu.log" 2>&1 &
		GUEST_PID[$g]=$!
		echo "${GUEST_PID[$g]}" >"$pidf"
		defer guest_kill "$g"
		# B connects to A's listening socket: wait until it listens.
		((i == 0)) && [[ "$RIG_LINK_USED" == socket ]] && wait_listen "$LINK_PORT" "$g"
	done
	((RIG_DRY_RUN)) && return 0
	for g in "${GUEST_NAMES[@]}"; do
		guest_wait_ready "$g" "$GUEST_BOOT_TIMEOUT" || return
	done
}

# pin_cpus I CPU...: the host CPUs guest I's QEMU is pinned to, from
# the CPUs this run may use: RIG_SMP of them, disjoint from the other
# guest's, when there are 2 x RIG_SMP; else the I-th (modulo).
pin_cpus() {
	local i=$1 n
	shift
	n=$#
	if ((RIG_SMP > 1 && n >= 2 * RIG_SMP)); then
		local set=("${@:i*RIG_SMP+1:RIG_SMP}")
		(IFS=,; echo "${set[*]}")
	else
		local all=("$@")
		echo "${all[i % n]}"
	fi
}

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

port_listening() { ss -Hltn "sport = :$1" | grep -q .; }

wait_listen() {
	guests_wait 10 port_listening "$1" ||
		guest_fail "$2" "QEMU never listened on 127.0.0.1:$1"
}

guest_alive() { kill -0 "${GUEST_PID[$1]}" 2>/dev/null; }

# guests_check_alive CONTEXT: any dead guest ends the run, not only the
# one a caller waits on (a's iperf3 would otherwise wait for a dead b).
guests_check_alive() {
	local h
	for h in "${!GUEST_PID[@]}"; do
		guest_alive "$h" || guest_fail "$h" "died $1"
	done
}

# guests_wait SECONDS CMD...: slowwait for CMD while checking the
# guests; returns 1 if CMD never succeeded.
guests_wait() {
	local s=$1
	shift
	slowwait "$s" guests_alive_and "$@"
}
guests_alive_and() {
	"$@" && return 0
	guests_check_alive "while the host waited for: $*"
	return 1
}

# guest_fail NAME MESSAGE: the guest is unusable; show why (a kernel
# panic in its console is named) and exit.
guest_fail() {
	local g=$1 f=$GUEST_RUN/$1 oops
	printf 'ERROR: guest %s: %s\n' "$g" "$2" >&2
	oops=$(grep -m1 -E 'Kernel panic|BUG:|Oops' "$f/console.log" 2>/dev/null) &&
		printf 'ERROR: guest %s: kernel panicked: %s\n' "$g" "$oops" >&2
	[[ -s "$f/qemu.log" ]] && sed 's/^/    qemu: /' "$f/qemu.log" >&2
	die "$E_GUEST" "guest $g console: $f/console.log" "$f/console.log"
}

# guest_wait_ready NAME SECONDS: until the guest's init reports ready.
guest_wait_ready() {
	guests_wait "$2" test -f "$GUEST_RUN/$1/ready" ||
		guest_fail "$1" "not up after ${2}s (init never reported ready)"
}

# guest_exec [-t SECONDS] NAME SCRIPT: run SCRIPT (sh) in the guest; its
# output goes to stdout, its exit status is returned.  Returns 124 on
# timeout; a dead guest ends the run (exit 7) with its console.
guest_exec() {
	local timeout=$GUEST_EXEC_TIMEOUT
	[[ "$1" == -t ]] && { timeout=$2; shift 2; }
	local g=$1 script=$2 n dir
	dir=$GUEST_RUN/$g/jobs
	# Unique without shared state: callers often run in $(...) subshells.
	n=$(date +%s%N)-$BASHPID
	printf '%s\n' "$script" >"$dir/.$n.tmp"
	mv "$dir/.$n.tmp" "$dir/$n.sh"
	if ! slowwait "$timeout" guest_job_done "$dir" "$n" "$g"; then
		printf 'ERROR: guest %s: job %s timed out after %ss: %s\n' "$g" "$n" "$timeout" \
			"$(head -n 3 "$dir/$n.run" 2>/dev/null)" >&2
		cat "$dir/$n.out" 2>/dev/null
		return 124
	fi
	cat "$dir/$n.out"
	return "$(cat "$dir/$n.rc")"
}

# guest_job_done JOBDIR N GUEST: job N has its status (a dead guest ends
# the run).
guest_job_done() {
	[[ ! -f "$1/$2.rc" ]] || return 0
	guests_check_alive "while guest $3 ran job $2: $(head -c 200 "$1/$2.run" 2>/dev/null)"
	return 1
}

guest_kill() {
	local g=$1 pid=${GUEST_PID[$1]:-}
	[[ -n "$pid" ]] || return 0
	if kill -0 "$pid" 2>/dev/null; then
		kill "$pid" 2>/dev/null || true
		slowwait 2 pid_gone "$pid" || kill -9 "$pid" 2>/dev/null || true
	fi
	wait "$pid" 2>/dev/null || true
	unset "GUEST_PID[$g]"
}

# guests_stop: both guests, then the link (its netns, taps and bridge).
guests_stop() {
	local g
	for g in "${GUEST_NAMES[@]}"; do guest_kill "$g"; done
	link_stop
}
