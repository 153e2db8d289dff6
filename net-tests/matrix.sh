# shellcheck shell=bash
# The test matrix and the address plan, in one table (MATRIX below).
# Everything that names a family, mode, ESP proposal, ESP offload mode,
# link or guest address comes from it: the benchmark's rows (bench.sh
# --rows), the swanctl connections and children of both guests
# (swanctl_conf, written into the initramfs by qemu-net/mkinitramfs.sh),
# the IKE loop of the pair group, the integrity loop, the offload modules
# ike.sh switches, and the guests' addresses (guests.sh, ipsec.sh).
# net-tests/tests/static.sh (static-matrix-*) checks that a value added
# to the table reaches each of them and that no script spells them out.
#
# Names (kept results in docs/results refer to them; never rename):
#   row    PROTO-FAMILY-MODE-PROPOSAL-OFFLOAD   e.g. tcp-v4-transport-gcm-off
#          PROTO-FAMILY-plain                   the plaintext reference
#          PROTO-FAMILY-FUNC-OFFLOAD            a functional row's traffic
#                                               (bench=yes), e.g. tcp-v4-gre-auto
#   child  FAMILY-PROPOSAL-MODE                 e.g. v4-gcm-transport (a's
#                                               swanctl child); b has one
#                                               child FAMILY-any per family
#   IKE    FAMILY                               one connection per family
# PROTO: tcp|udp|icmp  FAMILY: v4|v6  MODE: transport|tunnel
# PROPOSAL: gcm (aes128gcm16) | sha (aes128-sha256)  OFFLOAD: on|off|auto
# (esp4_offload/esp6_offload loaded or not; auto: neither loaded nor
# blacklisted, the kernel loads them if it asks for them with the SA).
#
# Sourced (bash): definitions only, sourcing it twice is harmless.

[[ -z "${RIG_MATRIX_SH:-}" ]] || return 0
RIG_MATRIX_SH=1

# DIMENSION VALUE [KEY=VALUE...]; each dimension's values in the order
# every loop over it takes.  Attributes:
#   proto    plain=yes: has a plaintext reference row
#   family   a=, b=: guest a's and b's address; plen: prefix length;
#            opt: the family's option of ping and skbt-payload (- none);
#            offload_mod: the ESP offload module (ike.sh offload)
#   proposal esp: the strongSwan ESP proposal
#   offload  integrity=yes: the integrity group covers it
#   link     offloads: what ethtool -k shows in the guests (pair group)
#   func     a functional row, run with the ESP offload modules loaded
#            (the func group; tfc also in the wire group): families: the
#            families it runs (comma list); offload: the ESP offload
#            modes it runs in, in order (comma list; one boot); mode,
#            proposal: its SAs';
#            ike: no = SAs keyed by hand by the row's setup (no swanctl
#            child); swanctl: one option of a's child (KEY=VALUE, '=' of
#            its own kept; - none); conn: one option of its own IKE
#            connection FAMILY-FUNC (- none: the child is in the
#            family's connection); setup: the row's setup in
#            net-tests/lib/func.sh (- none); a, b: the guests' addresses
#            on the row's own link (GRE, VXLAN, WireGuard), the traffic's
#            (a6, b6: on IPv6); mode wireguard: no ESP at all, the row's
#            link is a WireGuard tunnel (its counters, not ESP's); send:
#            skbt-payload sender option (- none); wire: wirecheck.py
#            check on a's address besides only-ESP and marker-absent
#            (esp-min-len=N, esp-in-udp, esp-exthdr; - none); bench:
#            yes = the bench has rows PROTO-FAMILY-FUNC-OFFLOAD for it
#            (rows_func: tcp, each of its families, each offload mode;
#            ike=yes, or mode wireguard: the offload modes of its own)
MATRIX='
proto    tcp        plain=yes
proto    udp        plain=yes
proto    icmp       plain=no
family   v4         a=10.0.0.1 b=10.0.0.2 plen=24 opt=- offload_mod=esp4_offload
family   v6         a=fd00::1 b=fd00::2 plen=64 opt=-6 offload_mod=esp6_offload
mode     transport
mode     tunnel
proposal gcm        esp=aes128gcm16
proposal sha        esp=aes128-sha256
offload  off        integrity=yes
offload  on         integrity=yes
offload  auto       integrity=no
link     tap        offloads=on
link     socket     offloads=off
func     tfc        families=v4,v6 offload=on mode=tunnel proposal=gcm ike=yes swanctl=tfc_padding=1000 conn=- setup=- send=- wire=esp-min-len=1000
func     natt       families=v4,v6 offload=on mode=transport proposal=gcm ike=yes swanctl=- conn=encap=yes setup=- send=- wire=esp-in-udp bench=yes
func     gre        families=v4 offload=on mode=transport proposal=gcm ike=yes swanctl=- conn=- setup=gre a=10.1.0.1/24 b=10.1.0.2/24 send=- wire=- bench=yes
func     vxlan      families=v4 offload=on mode=transport proposal=gcm ike=yes swanctl=- conn=- setup=vxlan a=10.2.0.1/24 b=10.2.0.2/24 send=- wire=- bench=yes
func     nested     families=v4 offload=on mode=tunnel proposal=gcm ike=no swanctl=- conn=- setup=nested send=- wire=-
func     exthdr     families=v6 offload=on mode=transport proposal=gcm ike=yes swanctl=- conn=- setup=- send=--hopopts wire=esp-exthdr
func     nf         families=v4,v6 offload=off,on mode=transport proposal=gcm ike=yes swanctl=- conn=- setup=nf send=- wire=-
func     ipcomp     families=v4,v6 offload=on mode=transport proposal=gcm ike=yes swanctl=ipcomp=yes conn=- setup=ipcomp send=- wire=-
func     wg         families=v4,v6 offload=off mode=wireguard proposal=- ike=no swanctl=- conn=- setup=wg a=10.3.0.1/24 b=10.3.0.2/24 a6=fd03::1/64 b6=fd03::2/64 send=- wire=- bench=yes
'

# The bench's default rows (--rows quick), rows of the table.
ROWS_QUICK=(
	tcp-v4-plain udp-v4-plain
	tcp-v4-transport-gcm-off udp-v4-transport-gcm-off
	tcp-v4-transport-sha-off udp-v4-transport-sha-off
	tcp-v4-transport-gcm-on
	tcp-v4-transport-gcm-auto
	tcp-v6-tunnel-gcm-off
	tcp-v4-wg-off
	icmp-v4-transport-gcm-off
)

# The debug group's rows: the quick rows that run an ESP output path of
# their own under the sanitizers (no offload, offload module, AEAD and
# authenc, UDP, IPv6 tunnel, fragments) or the WireGuard copy; the plain
# rows, the autoload row (the offload module's path again) and UDP with
# authenc (TCP's authenc path) add none.
# shellcheck disable=SC2034 # the debug group's (net-tests/tests/debug.sh)
mapfile -t ROWS_DEBUG < <(printf '%s\n' "${ROWS_QUICK[@]}" | grep -vE -e '-plain$' -e '-auto$' -e '^udp-.*-sha-')

# matrix_parse: MATRIX into MATRIX_VALUES[DIM] ("v1 v2 ...") and
# MATRIX_ATTR[DIM.VALUE.KEY] (run again after changing MATRIX).
declare -gA MATRIX_VALUES=() MATRIX_ATTR=()
matrix_parse() {
	local dim val kv
	MATRIX_VALUES=() MATRIX_ATTR=()
	while read -r dim val kv; do
		[[ -n "$dim" && "$dim" != \#* ]] || continue
		MATRIX_VALUES[$dim]+="${MATRIX_VALUES[$dim]:+ }$val"
		MATRIX_ATTR[$dim.$val.]=1
		for kv in $kv; do
			MATRIX_ATTR[$dim.$val.${kv%%=*}]=${kv#*=}
		done
	done <<<"$MATRIX"
}
matrix_parse

# matrix_values DIM [KEY=VALUE]: DIM's values (those with that attribute).
matrix_values() {
	local v out=()
	for v in ${MATRIX_VALUES[$1]:-}; do
		[[ -z "${2:-}" || "${MATRIX_ATTR[$1.$v.${2%%=*}]:-}" == "${2#*=}" ]] && out+=("$v")
	done
	((${#out[@]} == 0)) || printf '%s\n' "${out[@]}"
}

# matrix_has DIM VALUE: VALUE is one of DIM's values.
matrix_has() { [[ -n "${MATRIX_ATTR[$1.$2.]:-}" ]]; }

# matrix_attr DIM VALUE KEY: an attribute (fails if the table has none).
matrix_attr() {
	[[ -n "${MATRIX_ATTR[$1.$2.$3]+set}" ]] || {
		printf 'ERROR: net-tests/matrix.sh: no %s of %s %s\n' "$3" "$1" "$2" >&2
		return 1
	}
	printf '%s\n' "${MATRIX_ATTR[$1.$2.$3]}"
}

# matrix_child FAMILY MODE PROPOSAL: the name of a's swanctl child.
matrix_child() { echo "$1-$3-$2"; }

# matrix_func_child FAMILY FUNC: a's swanctl child of a functional row
# (e.g. v4-tfc: TFC padding on a tunnel SA).
matrix_func_child() { echo "$1-$2"; }

# matrix_func_rows FAMILY [KEY=VALUE]: the functional rows that run on
# FAMILY and have swanctl children (ike=yes), with that attribute if given.
matrix_func_rows() {
	local c
	for c in $(matrix_values func ike=yes); do
		[[ ",$(matrix_attr func "$c" families)," == *",$1,"* ]] || continue
		[[ -z "${2:-}" || "$(matrix_attr func "$c" "${2%%=*}")" == "${2#*=}" ]] && echo "$c"
	done
	return 0
}

# matrix_func_families FUNC: the families a functional row runs on.
matrix_func_families() {
	local l
	l=$(matrix_attr func "$1" families) || return
	tr , '\n' <<<"$l"
}

# matrix_connections: a's IKE connections (one per family, one per
# functional row with a connection option of its own), for teardown.
matrix_connections() {
	local f c
	for f in ${MATRIX_VALUES[family]}; do
		echo "$f"
		for c in $(matrix_func_rows "$f"); do
			[[ "$(matrix_attr func "$c" conn)" == - ]] || matrix_func_child "$f" "$c"
		done
	done
}

# matrix_esp: "FAMILY MODE PROPOSAL", every ESP configuration, in order.
matrix_esp() {
	local f m c
	for f in ${MATRIX_VALUES[family]}; do
		for m in ${MATRIX_VALUES[mode]}; do
			for c in ${MATRIX_VALUES[proposal]}; do echo "$f $m $c"; done
		done
	done
}

# child_family CHILD: the family of one of a's children (fails for a name
# that is not a child of the table).
child_family() {
	local f m c
	while read -r f m c; do
		[[ "$(matrix_child "$f" "$m" "$c")" != "$1" ]] || { echo "$f"; return 0; }
	done < <(matrix_esp)
	printf 'ERROR: %s is not a child of net-tests/matrix.sh\n' "$1" >&2
	return 1
}

# matrix_children: every child of the initiator (the pair group's IKE loop).
matrix_children() {
	local f m c
	while read -r f m c; do matrix_child "$f" "$m" "$c"; done < <(matrix_esp)
}

# --- the address plan ---
# matrix_addr FAMILY a|b: that guest's address.
matrix_addr() { matrix_attr family "$1" "$2"; }
peer_addr() { matrix_addr "$1" b; }
# family_opt FAMILY: ping's and skbt-payload's option for the family
# (empty for none).
family_opt() {
	local o
	o=$(matrix_attr family "$1" opt) || return
	[[ "$o" == - ]] || echo "$o"
}
# ping_cmd FAMILY: busybox ping for that family, without the address.
ping_cmd() {
	local o
	o=$(family_opt "$1") || return
	echo "ping${o:+ $o}"
}
# matrix_offload_mods: the ESP offload modules, one per family.
matrix_offload_mods() {
	local f
	for f in ${MATRIX_VALUES[family]}; do matrix_attr family "$f" offload_mod; done
}

# guest_env GUEST: guest.env lines for a or b (qemu-net/guests.sh's hook;
# the guest's init reads them): per family vN, IPN=ADDRESS/PLEN.
guest_env() {
	local f
	for f in ${MATRIX_VALUES[family]}; do
		echo "IP${f#v}=$(matrix_addr "$f" "$1")/$(matrix_attr family "$f" plen)"
	done
}

# swanctl_conf initiator|responder: the guest's swanctl.conf.  a
# initiates, one connection per family, one child per (proposal, mode);
# the rig starts one child at a time (swanctl --initiate --child NAME).
# b responds: charon picks a responder child by traffic selectors only,
# so b has one child per family that accepts every proposal; the mode
# follows the initiator (transport when asked, else tunnel; strongSwan
# child_create.c).  PSK: conf.d/secrets.conf, made with the initramfs.
swanctl_conf() {
	local role=$1 me peer f m c props=()
	case "$role" in
	initiator) me=a peer=b ;;
	responder) me=b peer=a ;;
	*) echo "swanctl_conf initiator|responder" >&2; return 2 ;;
	esac
	for c in ${MATRIX_VALUES[proposal]}; do props+=("$(matrix_attr proposal "$c" esp)"); done
	printf '# Guest %s: the IKEv2 %s (generated from net-tests/matrix.sh).\n\nconnections {\n' "$me" "$role"
	for f in ${MATRIX_VALUES[family]}; do
		printf '\t%s {\n\t\tversion = 2\n\t\tlocal_addrs = %s\n\t\tremote_addrs = %s\n' \
			"$f" "$(matrix_addr "$f" "$me")" "$(matrix_addr "$f" "$peer")"
		printf '\t\tlocal { auth = psk }\n\t\tremote { auth = psk }\n\t\tchildren {\n'
		if [[ "$role" == initiator ]]; then
			for c in ${MATRIX_VALUES[proposal]}; do
				for m in ${MATRIX_VALUES[mode]}; do
					printf '\t\t\t%s {\n\t\t\t\tmode = %s\n\t\t\t\tesp_proposals = %s\n\t\t\t}\n' \
						"$(matrix_child "$f" "$m" "$c")" "$m" "$(matrix_attr proposal "$c" esp)"
				done
			done
			for c in $(matrix_func_rows "$f" conn=-); do
				func_child_conf "$f" "$c"
			done
		else
			# (ipcomp: accepted where a's child proposes it, the
			# ipcomp row's; never used unless proposed)
			printf '\t\t\t%s-any {\n\t\t\t\tmode = transport\n\t\t\t\tesp_proposals = %s\n\t\t\t\tipcomp = yes\n\t\t\t}\n' \
				"$f" "$(IFS=,; echo "${props[*]}" | sed 's/,/, /g')"
		fi
		printf '\t\t}\n\t}\n'
		[[ "$role" == initiator ]] || continue
		# Rows with a connection option of their own: their own
		# connection FAMILY-FUNC (b's FAMILY connection answers it).
		for c in $(matrix_func_rows "$f"); do
			[[ "$(matrix_attr func "$c" conn)" != - ]] || continue
			m=$(matrix_attr func "$c" conn)
			printf '\t%s {\n\t\tversion = 2\n\t\tlocal_addrs = %s\n\t\tremote_addrs = %s\n\t\t%s = %s\n' \
				"$(matrix_func_child "$f" "$c")" "$(matrix_addr "$f" "$me")" "$(matrix_addr "$f" "$peer")" \
				"${m%%=*}" "${m#*=}"
			printf '\t\tlocal { auth = psk }\n\t\tremote { auth = psk }\n\t\tchildren {\n'
			func_child_conf "$f" "$c"
			printf '\t\t}\n\t}\n'
		done
	done
	printf '}\n\ninclude conf.d/*.conf\n'
}

# func_child_conf FAMILY FUNC: a's swanctl child of a functional row.
func_child_conf() {
	local o
	o=$(matrix_attr func "$2" swanctl) || return
	printf '\t\t\t%s {\n\t\t\t\tmode = %s\n\t\t\t\tesp_proposals = %s\n' \
		"$(matrix_func_child "$1" "$2")" "$(matrix_attr func "$2" mode)" \
		"$(matrix_attr proposal "$(matrix_attr func "$2" proposal)" esp)"
	[[ "$o" == - ]] || printf '\t\t\t\t%s = %s\n' "${o%%=*}" "${o#*=}"
	printf '\t\t\t}\n'
}

# --- the benchmark's rows ---
rows_full() {
	local p f m c o
	for p in $(matrix_values proto plain=yes); do
		for f in ${MATRIX_VALUES[family]}; do echo "$p-$f-plain"; done
	done
	for o in ${MATRIX_VALUES[offload]}; do
		for p in ${MATRIX_VALUES[proto]}; do
			while read -r f m c; do echo "$p-$f-$m-$c-$o"; done < <(matrix_esp)
		done
	done
}

# rows_func: the functional rows of the bench (func rows with bench=yes):
# TCP over each of their families, in each offload mode.
rows_func() {
	local c f o
	for c in $(matrix_values func bench=yes); do
		os=${MATRIX_VALUES[offload]}
		[[ "${MATRIX_ATTR[func.$c.mode]}" != wireguard ]] || os=${MATRIX_ATTR[func.$c.offload]//,/ }
		for f in $(matrix_func_families "$c"); do
			for o in $os; do echo "tcp-$f-$c-$o"; done
		done
	done
}

# ROWS_MULTI: several flows on several vCPUs (bench --rows multi, which
# makes --streams 4 --smp 2 the defaults): the ESP TCP rows the series
# targets, one ESP GSO row, and their plaintext controls.
ROWS_MULTI=(
	tcp-v4-plain tcp-v4-transport-gcm-off tcp-v4-transport-gcm-auto
	tcp-v6-plain tcp-v6-tunnel-gcm-off
)

# rows_boot_order ROW...: the order one boot runs its rows in: the
# offload "auto" rows first, the others as given.  A kernel that loads
# the ESP offload module for software states remembers a failed load
# until it reboots, and an "off" row makes the load fail (ike.sh
# blacklists the module), so an "auto" row after it would run without
# the module and measure the "off" path.
rows_boot_order() {
	local r
	for r in "$@"; do [[ "$r" != *-auto ]] || echo "$r"; done
	for r in "$@"; do [[ "$r" == *-auto ]] || echo "$r"; done
}

# rows_select SEL[,SEL...]: print the rows, validated; each SEL is quick,
# full (the ESP and plaintext rows), func (rows_func), multi (ROWS_MULTI)
# or a row's name.
rows_select() {
	local r
	for r in ${1//,/ }; do
		case "$r" in
		quick) printf '%s\n' "${ROWS_QUICK[@]}" ;;
		multi) printf '%s\n' "${ROWS_MULTI[@]}" ;;
		full) rows_full ;;
		func) rows_func ;;
		*)
			row_decode "$r" || die "$E_USAGE" "unknown row '$r' (see net-tests/matrix.sh)"
			echo "$r"
			;;
		esac
	done
}

# func_dev FUNC: the guests' link device of a functional row with
# addresses of its own (a=, b=; func_link_up makes it), else eth0.
func_dev() {
	if [[ -n "${MATRIX_ATTR[func.$1.a]:-}" ]]; then echo "rig$1"; else echo eth0; fi
}

# func_addr FUNC FAMILY a|b: that guest's address for a functional row's
# traffic: the row's own (a=, b=, on IPv6 a6=, b6=; without the prefix
# length) or the family's.
func_addr() {
	local k=$3
	[[ "$2" != v6 || -z "${MATRIX_ATTR[func.$1.${3}6]:-}" ]] || k=${3}6
	local v=${MATRIX_ATTR[func.$1.$k]:-}
	if [[ -n "$v" ]]; then echo "${v%/*}"; else matrix_addr "$2" "$3"; fi
}

# row_decode ROW: the one decoder of a row name.  Sets ROW_PROTO,
# ROW_FAMILY, ROW_MODE (plain for the plaintext rows), ROW_PROPOSAL,
# ROW_OFFLOAD (any for plaintext), ROW_CHILD (a's swanctl child, empty
# for plaintext), ROW_FUNC (the functional row, PROTO-FAMILY-FUNC-OFFLOAD;
# empty for the others), ROW_SRC and ROW_PEER (a's and b's addresses of
# the row's traffic) and ROW_DEV (b's device towards ROW_SRC).  Returns 1
# (and sets nothing) if ROW is not a row of the table.
# shellcheck disable=SC2034 # ROW_*: the caller's
row_decode() {
	local IFS=- p f m c o x
	read -r p f m c o x <<<"$1"
	[[ -z "$x" ]] && matrix_has proto "$p" && matrix_has family "$f" || return 1
	if [[ "$m" == plain && -z "$c$o" ]]; then
		[[ "$(matrix_attr proto "$p" plain)" == yes ]] || return 1
		ROW_PROTO=$p ROW_FAMILY=$f ROW_MODE=plain ROW_PROPOSAL='' ROW_OFFLOAD=any ROW_CHILD='' ROW_FUNC=''
		ROW_SRC=$(matrix_addr "$f" a) ROW_PEER=$(matrix_addr "$f" b) ROW_DEV=eth0
		return 0
	fi
	if [[ -z "$o" ]] && matrix_has func "$m" && matrix_has offload "$c"; then
		[[ "${MATRIX_ATTR[func.$m.bench]:-}" == yes && ",${MATRIX_ATTR[func.$m.families]}," == *",$f,"* ]] || return 1
		[[ "${MATRIX_ATTR[func.$m.mode]}" != wireguard || ",${MATRIX_ATTR[func.$m.offload]}," == *",$c,"* ]] || return 1
		ROW_PROTO=$p ROW_FAMILY=$f ROW_MODE=${MATRIX_ATTR[func.$m.mode]} ROW_OFFLOAD=$c
		ROW_PROPOSAL=${MATRIX_ATTR[func.$m.proposal]} ROW_FUNC=$m
		ROW_CHILD=''
		[[ "${MATRIX_ATTR[func.$m.ike]}" != yes ]] || ROW_CHILD=$(matrix_func_child "$f" "$m")
		ROW_SRC=$(func_addr "$m" "$f" a) ROW_PEER=$(func_addr "$m" "$f" b) ROW_DEV=$(func_dev "$m")
		return 0
	fi
	matrix_has mode "$m" && matrix_has proposal "$c" && matrix_has offload "$o" || return 1
	ROW_PROTO=$p ROW_FAMILY=$f ROW_MODE=$m ROW_PROPOSAL=$c ROW_OFFLOAD=$o ROW_FUNC=''
	ROW_CHILD=$(matrix_child "$f" "$m" "$c")
	ROW_SRC=$(matrix_addr "$f" a) ROW_PEER=$(matrix_addr "$f" b) ROW_DEV=eth0
}
