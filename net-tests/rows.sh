# shellcheck shell=bash
# The benchmark's traffic rows.  A row name is
#   PROTO-FAMILY-MODE-PROPOSAL-OFFLOAD     e.g. tcp-v4-transport-gcm-off
# or PROTO-FAMILY-plain for the plaintext reference on the same link.
# PROTO: tcp|udp|icmp  FAMILY: v4|v6  MODE: transport|tunnel
# PROPOSAL: gcm (aes128gcm16) | sha (aes128-sha256)  OFFLOAD: on|off|auto
# (esp4_offload/esp6_offload loaded or not; auto: neither loaded nor
# blacklisted, the kernel loads them if it asks for them with the SA).

ROWS_QUICK=(
	tcp-v4-plain udp-v4-plain
	tcp-v4-transport-gcm-off udp-v4-transport-gcm-off
	tcp-v4-transport-sha-off udp-v4-transport-sha-off
	tcp-v4-transport-gcm-on
	tcp-v4-transport-gcm-auto
	tcp-v6-tunnel-gcm-off
	icmp-v4-transport-gcm-off
)

rows_full() {
	local p f m c o
	for p in tcp udp; do
		for f in v4 v6; do echo "$p-$f-plain"; done
	done
	for o in off on auto; do
		for p in tcp udp icmp; do
			for f in v4 v6; do
				for m in transport tunnel; do
					for c in gcm sha; do echo "$p-$f-$m-$c-$o"; done
				done
			done
		done
	done
}

# rows_select quick|full|ROW[,ROW...]: print the rows, validated.
rows_select() {
	local r all
	all=" $(rows_full | tr '\n' ' ') "
	case "$1" in
	quick) printf '%s\n' "${ROWS_QUICK[@]}" ;;
	full) rows_full ;;
	*)
		for r in ${1//,/ }; do
			[[ "$all" == *" $r "* ]] || die "$E_USAGE" "unknown row '$r' (see net-tests/rows.sh)"
			echo "$r"
		done
		;;
	esac
}

# row_child ROW: the swanctl child for an ESP row (empty for plaintext).
row_child() {
	local IFS=- p f m c o
	read -r p f m c o <<<"$1"
	[[ "$m" == plain ]] && return 0
	echo "$f-$c-$m"
}
row_offload() { [[ "$1" == *-plain ]] && echo any || echo "${1##*-}"; }
row_proto() { echo "${1%%-*}"; }
row_family() { local r=${1#*-}; echo "${r%%-*}"; }
