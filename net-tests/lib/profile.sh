# shellcheck shell=bash
# CPU profiles of the sender (guest a) with perf, for netdev-style
# evidence: which kernel functions a row's transfer spends its samples
# in, per kernel, and how they move from baseline to patched.
#
# perf is Debian's linux-perf (perf 6.1) in both places: in the guests'
# initramfs (qemu-net/mkinitramfs.sh) to record, on the host to report.
# The guest records system-wide (-a) on the cpu-clock software event
# (an hrtimer: works under TCG, which has no PMU) with a fixed period,
# with kernel call chains, into its own RAM (not the 9p share: its
# traffic would be profiled too).  perf record then copies the guest's
# /proc/kallsyms (and the modules' .ko files) into a build-id cache
# (--buildid-dir), keyed by each kernel's build id; the host reports
# with that cache, so every profile resolves against its own kernel,
# also in a perf diff of two kernels, and KASLR's per-boot offset is
# undone by perf (the kallsyms' _text against the one recorded).
#
# File names in a profile folder: PAIR-VARIANT-ROW.perf.data (e.g.
# 1-baseline-tcp-v4-transport-gcm-off.perf.data), their symbols in the
# folder's buildid/ cache; profile_report adds PAIR-VARIANT-ROW.top.txt
# and ROW.diff.txt.

[[ -z "${RIG_PROFILE_SH:-}" ]] || return 0
RIG_PROFILE_SH=1
# shellcheck source=net-tests/lib/acct.sh
. "$(dirname "${BASH_SOURCE[0]}")/acct.sh"

# One cpu-clock sample per ms of CPU time (1 kHz, fixed: -c, not -F's
# adaptive period; at 4 kHz TCG ran the transfer ~40 % slower); the top
# list's length; profile_check's bounds on skb_cow_data() under the ESP
# output functions (% of all samples): at least PROFILE_COW_MIN on both
# kernels (3.7 % measured on the baseline, 3.3 % on series v5, which
# still copies there); its old copy (__pskb_pull_tail or
# pskb_expand_head below it) at most PROFILE_COW_MAX on the patched
# kernel.
PROFILE_PERIOD_NS=1000000
PROFILE_TOP=25
PROFILE_COW_MIN=1
PROFILE_COW_MAX=0.1
# perf record's options (kernel call chains only: no user stacks copied)
PROFILE_RECORD_OPTS="-a -e cpu-clock -c $PROFILE_PERIOD_NS -g --kernel-callchains"
# In guest a: where perf writes (RAM), and the transfer it records.
PROFILE_GDIR=/tmp/profile
# The memcpy() family of x86 (6.1: memcpy is __memcpy's alias, the
# pre-ERMS loop memcpy_orig; skb_copy_bits may memmove).  7.2 inlines
# memcpy() as rep movsb (two in skb_copy_bits(), read in its vmlinux):
# there the copy's samples are skb_copy_bits()'s own.
PROFILE_MEMCPY_RE='^((__)?mem(cpy|move)(_orig|_erms)?|skb_copy_bits)$'
# The ESP output functions that call skb_cow_data() (esp4, esp6).
PROFILE_ESP_OUT_RE='^esp6?_output(_head)?$'

# profile_need_perf: the host's perf (linux-perf), or exit E_PKG.
profile_need_perf() {
	command -v perf >/dev/null ||
		die "$E_PKG" "perf missing on the host: run qemu-net/install-deps.sh (linux-perf)"
}

# profile_transfer_cmd ROW: the row's fixed-size transfer as a guest
# shell command: the service-demand pass's sizes for TCP and UDP
# (DEMAND_TCP_BYTES, DEMAND_UDP_BYTES: enough samples), the
# accounting pass's pings for ICMP.
profile_transfer_cmd() {
	row_decode "$1" || return 1
	case "$ROW_PROTO" in
	tcp | udp) transfer_cmd "$1" "$DEMAND_TCP_BYTES" "$DEMAND_UDP_BYTES" /rig/profile-iperf.json ;;
	*) acct_cmd "$1" ;;
	esac
}

# profile_transfer_file ROW: the transfer as a script in guest a's share
# (/rig/profile-transfer.sh), its status into PROFILE_GDIR/transfer.rc.
profile_transfer_file() {
	local cmd
	cmd=$(profile_transfer_cmd "$1") || return 1
	printf '%s\n' "$cmd; echo \$? >$PROFILE_GDIR/transfer.rc" >"$GUEST_RUN/a/profile-transfer.sh"
}

# profile_record_script: the guest a job: perf record around the
# transfer script (perf starts it once counting), the transfer's status
# checked, perf.data and the build-id cache copied to guest a's share
# (profile.perf.data, profile-buildid/).
profile_record_script() {
	cat <<-EOF
		rm -rf $PROFILE_GDIR /rig/profile.perf.data /rig/profile-buildid
		mkdir -p $PROFILE_GDIR
		# no sample rate lowered mid-run (TCG's slow interrupts would)
		echo 0 >/proc/sys/kernel/perf_cpu_time_max_percent
		perf --buildid-dir $PROFILE_GDIR/buildid record $PROFILE_RECORD_OPTS \\
			-o $PROFILE_GDIR/perf.data -- sh /rig/profile-transfer.sh || exit 1
		rc=\$(cat $PROFILE_GDIR/transfer.rc 2>/dev/null || echo none)
		[ "\$rc" = 0 ] || { echo "transfer exited \$rc"; exit 1; }
		cp $PROFILE_GDIR/perf.data /rig/profile.perf.data &&
			cp -a $PROFILE_GDIR/buildid /rig/profile-buildid || exit 1
		# (its build-id cache holds 21 MB of user binaries)
		rm -rf $PROFILE_GDIR
	EOF
}

# profile_row ROW OUTFILE: with ROW's SA up (ipsec_row_up), record guest
# a system-wide (perf record -a -e cpu-clock, fixed period, kernel call
# chains) during the row's fixed-size transfer; perf.data to OUTFILE
# (name it PAIR-VARIANT-ROW.perf.data for profile_report), the symbols
# it needs into the build-id cache buildid/ next to it, perf's own
# output to OUTFILE.log.  Exits E_TRAFFIC if the transfer fails, E_FAIL
# if perf does.
profile_row() {
	local row=$1 outf=$2 dir rc=0
	dir=$(dirname "$outf")
	mkdir -p "$dir"
	profile_transfer_file "$row" || die "$E_USAGE" "profile_row: no transfer for row '$row'"
	guest_exec -t 600 a "$(profile_record_script)" >"$outf.log" 2>&1 || rc=$?
	if ((rc)); then
		sed 's/^/    a: /' "$outf.log" >&2
		grep -q '^transfer exited' "$outf.log" &&
			die "$E_TRAFFIC" "profiled transfer for $row failed (guest a: $outf.log)"
		die "$E_FAIL" "perf record in guest a failed for $row (status $rc, $outf.log)"
	fi
	mv "$GUEST_RUN/a/profile.perf.data" "$outf"
	profile_buildid_kernel "$GUEST_RUN/a/profile-buildid"
	mkdir -p "$dir/buildid"
	cp -a "$GUEST_RUN/a/profile-buildid/." "$dir/buildid/"
	rm -rf "$GUEST_RUN/a/profile-buildid"
	profile_has_kallsyms "$dir/buildid" ||
		die "$E_FAIL" "perf record in guest a cached no kallsyms for $row ($dir/buildid)"
}

# profile_buildid_kernel BUILDID-DIR: only the kernel's part of a perf
# build-id cache: its kallsyms and its modules (user binaries and
# libraries out: 21 MB of 24 measured, the report needs none of them).
profile_buildid_kernel() {
	local d=$1
	find "$d" -mindepth 1 -maxdepth 1 ! -name '[[]kernel.kallsyms]' ! -name lib ! -name .build-id -exec rm -rf {} +
	[[ ! -d "$d/lib" ]] || find "$d/lib" -mindepth 1 -maxdepth 1 ! -name modules -exec rm -rf {} +
	[[ ! -d "$d/.build-id" ]] || find "$d/.build-id" -xtype l -delete
	find "$d" -mindepth 1 -type d -empty -delete
}

# profile_has_kallsyms BUILDID-DIR: a kernel's symbols are in the cache.
profile_has_kallsyms() {
	compgen -G "$1/\[kernel.kallsyms\]/*/kallsyms" >/dev/null
}

# profile_perf DIR PERF-ARGS...: the host's perf with DIR's build-id
# cache (stderr: perf's warnings, to the caller's stderr).
profile_perf() {
	local dir=$1
	shift
	perf --buildid-dir "$dir/buildid" "$@"
}

# profile_by_sym DATA: perf report --stdio of a profile by symbol, self
# overhead (% of all samples), highest first, every symbol, no chains.
profile_by_sym() {
	profile_perf "$(dirname "$1")" report -i "$1" --stdio --sort sym --no-children \
		-g none --percent-limit 0 2>/dev/null
}

# profile_syms DATA: "PERCENT SYMBOL" for every kernel symbol ([k]).
profile_syms() {
	profile_by_sym "$1" | awk '$2 == "[k]" && $1 ~ /%$/ { sub(/%$/, "", $1); print $1, $3 }'
}

# profile_top DATA: the report's header and its top PROFILE_TOP kernel
# symbols.
profile_top() {
	profile_by_sym "$1" | awk -v n="$PROFILE_TOP" '/^#/ { print; next } $2 == "[k]" && k++ < n { print }'
}

# profile_name DATA: "PAIR VARIANT ROW" from PAIR-VARIANT-ROW.perf.data.
profile_name() {
	local b=${1##*/}
	b=${b%.perf.data}
	[[ "$b" =~ ^([^-]+)-([^-]+)-(.+)$ ]] || return 1
	echo "${BASH_REMATCH[1]} ${BASH_REMATCH[2]} ${BASH_REMATCH[3]}"
}

# profile_diff DIR ROW: perf diff of ROW's baseline and patched profiles
# of the first pair that has both, into DIR/ROW.diff.txt (1 if none).
profile_diff() {
	local dir=$1 row=$2 base patched p out=$1/$2.diff.txt
	for base in "$dir"/*-baseline-"$row".perf.data; do
		[[ -f "$base" ]] || continue
		p=${base##*/}
		p=${p%%-*}
		patched=$dir/$p-patched-$row.perf.data
		[[ -f "$patched" ]] || continue
		{
			echo "# perf diff $(basename "$base") (baseline) $(basename "$patched") (patched): self overhead, % of all samples; Delta: patched - baseline"
			profile_perf "$dir" diff --sort sym "$base" "$patched" 2>/dev/null
		} >"$out.tmp"
		mv "$out.tmp" "$out"
		return 0
	done
	return 1
}

# profile_report DIR: for each DIR/PAIR-VARIANT-ROW.perf.data its top
# kernel symbols into DIR/PAIR-VARIANT-ROW.top.txt, and for each ROW
# with a baseline and a patched profile (in one pair) their perf diff
# into DIR/ROW.diff.txt.  Symbols come from DIR/buildid (profile_row).
# Prints the files it wrote; exits E_FAIL if a profile has no kernel
# symbols (the build-id cache does not resolve it).
profile_report() {
	local dir=$1 f name row top rows=() samples cow copy
	profile_need_perf
	for f in "$dir"/*.perf.data; do
		[[ -f "$f" ]] || continue
		name=$(profile_name "$f") ||
			die "$E_USAGE" "profile_report: $f is not named PAIR-VARIANT-ROW.perf.data"
		read -r _ _ row <<<"$name"
		top=${f%.perf.data}.top.txt
		{
			profile_top "$f"
			read -r samples cow copy <<<"$(profile_cow "$f")"
			echo "# skb_cow_data() under esp_output (call chains): $cow% of $samples samples, with __pskb_pull_tail/memcpy below it: $copy%"
		} >"$top.tmp"
		grep -q '\[k\]' "$top.tmp" ||
			die "$E_FAIL" "profile_report: no kernel symbols in $f (perf report with $dir/buildid)"
		mv "$top.tmp" "$top"
		echo "$top"
		[[ " ${rows[*]} " == *" $row "* ]] || rows+=("$row")
	done
	((${#rows[@]})) || die "$E_FAIL" "profile_report: no *.perf.data in $dir"
	for row in "${rows[@]}"; do
		! profile_diff "$dir" "$row" || echo "$dir/$row.diff.txt"
	done
}

# profile_cow DATA: how much of a profile is skb_cow_data() on the ESP
# output path, from its kernel call chains (perf script): "SAMPLES COW
# COPY OLD": all samples, the % of them with skb_cow_data() called under
# an ESP output function (PROFILE_ESP_OUT_RE), the % of them with also
# __pskb_pull_tail() or the memcpy() family below it (its copy), and
# the % with __pskb_pull_tail() or pskb_expand_head() below it (the
# copy the baseline makes; series v5 copies in skb_cow_data() itself).
# skb_cow_data()'s own time is small (0.1 % on the baseline: it calls
# the copy), so its self overhead alone says little.
profile_cow() {
	profile_perf "$(dirname "$1")" script -i "$1" -F comm,ip,sym 2>/dev/null |
		awk -v esp="$PROFILE_ESP_OUT_RE" -v cp="$PROFILE_MEMCPY_RE" 'BEGIN { RS = "" }
		{
			n++; c = 0; out = 0
			# line 1: comm; then the chain, leaf first
			k = split($0, l, "\n")
			for (i = 2; i <= k; i++) {
				split(l[i], f, " ")
				if (!c && f[2] == "skb_cow_data") c = i
				else if (c && f[2] ~ esp) { out = 1; break }
			}
			if (!out) next
			cow++
			cp1 = old1 = 0
			for (i = 2; i < c; i++) {
				split(l[i], f, " ")
				if (f[2] == "__pskb_pull_tail" || f[2] == "pskb_expand_head") old1 = 1
				if (f[2] == "__pskb_pull_tail" || f[2] ~ cp) cp1 = 1
			}
			copy += cp1; old += old1
		}
		END { printf "%d %.2f %.2f %.2f\n", n, n ? 100 * cow / n : 0, n ? 100 * copy / n : 0, n ? 100 * old / n : 0 }'
}

# profile_check DIR ROW: the known answer of a profile of ROW with the
# series' effect (tcp-v4-transport-gcm-off): every baseline profile of
# ROW in DIR has the memcpy() family in its top PROFILE_TOP kernel
# symbols (self overhead); every profile has skb_cow_data() under the
# ESP output functions in at least PROFILE_COW_MIN % of its samples,
# with its copy (__pskb_pull_tail or memcpy below it) in at least a third
# of those (6.1: half or more; 7.2 patched: 1.76 % of 4.04 %, the rest
# elsewhere in skb_cow_data() and below it); on the baseline that copy goes through __pskb_pull_tail or
# pskb_expand_head in at least half of them, on the patched kernel in
# at most PROFILE_COW_MAX % of all samples; at least one of each.  Prints one
# line per profile; returns 0, or E_FAIL with a "profile_check: ..."
# reason on stderr.
profile_check() {
	local dir=$1 row=$2 f b samples cow copy old top nb=0 np=0
	profile_need_perf
	for f in "$dir"/*-baseline-"$row".perf.data "$dir"/*-patched-"$row".perf.data; do
		[[ -f "$f" ]] || continue
		b=$(basename "$f")
		read -r samples cow copy old <<<"$(profile_cow "$f")"
		((samples > 0)) || { echo "profile_check: no samples in $b" >&2; return "$E_FAIL"; }
		if ! awk -v c="$cow" -v p="$copy" -v m="$PROFILE_COW_MIN" 'BEGIN { exit !(c >= m && p >= c / 3) }'; then
			echo "profile_check: $b: skb_cow_data() under esp_output in ${cow}% of ${samples} samples, its copy in ${copy}% (want >= ${PROFILE_COW_MIN}% and a third of it)" >&2
			return "$E_FAIL"
		fi
		case "$f" in
		*-baseline-"$row".perf.data)
			nb=$((nb + 1))
			top=$(profile_syms "$f" | awk -v n="$PROFILE_TOP" -v re="$PROFILE_MEMCPY_RE" \
				'NR <= n && $2 ~ re { printf "%s%s=%s%%", s, $2, $1; s = " " }')
			if [[ -z "$top" ]]; then
				echo "profile_check: baseline $b: no memcpy() in the top $PROFILE_TOP kernel symbols" >&2
				return "$E_FAIL"
			fi
			if ! awk -v c="$cow" -v o="$old" 'BEGIN { exit !(o >= c / 2) }'; then
				echo "profile_check: baseline $b: __pskb_pull_tail/pskb_expand_head under skb_cow_data() in ${old}% of ${samples} samples (want half of its ${cow}%)" >&2
				return "$E_FAIL"
			fi
			echo "baseline $b: $samples samples, skb_cow_data() under esp_output ${cow}%, its copy ${copy}%, through __pskb_pull_tail/pskb_expand_head ${old}%; top: $top" >&2
			;;
		*)
			np=$((np + 1))
			if awk -v o="$old" -v m="$PROFILE_COW_MAX" 'BEGIN { exit !(o > m) }'; then
				echo "profile_check: patched $b: __pskb_pull_tail/pskb_expand_head under skb_cow_data() in ${old}% of ${samples} samples (> ${PROFILE_COW_MAX}%)" >&2
				return "$E_FAIL"
			fi
			echo "patched $b: $samples samples, skb_cow_data() under esp_output ${cow}%, its copy ${copy}%, through __pskb_pull_tail/pskb_expand_head ${old}%" >&2
			;;
		esac
	done
	((nb && np)) || {
		echo "profile_check: $dir has $nb baseline and $np patched profiles of $row (one of each at least)" >&2
		return "$E_FAIL"
	}
}
