#!/usr/bin/env bash
# leak_pause.sh - times how long `jmptrace -p PID --leak-check` keeps a running process stopped, on 10^5 and 10^6 small blocks and on 1 GiB to scan.
#
# usage: bash bench/leak_pause.sh   (as root, or where ptrace of one's own children works)
#
# Environment:
#   JMPTRACE=PATH           the jmptrace to measure (default ./jmptrace, built if missing)
#   LEAKPAUSE_REPS=R        checks per case (default 3); the table gives their median
#   LEAKPAUSE_CASES="..."   the cases to run, of: blocks-1e5 blocks-1e6 mib-1g root-1g
#                           early-1e6 launched-1e6 (default all)
#   LEAKPAUSE_VALGRIND=0    skip the memcheck comparison on blocks-1e5
#
# Each case starts bench/leakpause.c, attaches jmptrace to it (-p) BEFORE it allocates
# (blocks older than an attach are unknown to jmptrace), lets it build its heap, then
# sends jmptrace SIGUSR1 R times: each snapshot stops every thread, checks, and resumes.
# The R checks are of the same heap; the figures are their median. SIGINT then detaches
# (one more check, not counted) and the program is told to exit. The pause and scan times
# come from the JSON snapshot's "leak_check" object; a jmptrace whose JSON has none gives
# the scan time of its -v line ("leak check of PID: ... scanned in U us") and no pause.
#   blocks-1e5, blocks-1e6  10^5 or 10^6 blocks of 32 B: 50% in a malloc'd table, 30% on a
#                           linked list (reachable), 10% dropped (definitely lost), 10% in
#                           lost chains of 10 (1 definitely + 9 indirectly lost)
#   mib-1g                  1024 reachable blocks of 1 MiB of non-pointer bytes
#   root-1g                 a 1 GiB anonymous mapping of the program's own (a root) of
#                           non-pointer bytes, with a pointer to a 64 B block in each MiB
#   early-1e6               blocks-1e6 allocated BEFORE the attach, and 10^4 more after it:
#                           jmptrace knows only the 10^4, so the older heap is scanned as
#                           roots (a server's heap right after the attach)
#   launched-1e6            blocks-1e6 in a program jmptrace started (-- PROGRAM), not -p:
#                           the heap between the blocks is no root then (nothing predates
#                           jmptrace), so this shows what the attach's heap roots cost
# Nothing here asserts a time: the script prints figures, it judges none.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
JT=${JMPTRACE:-$ROOT/jmptrace}
LP=$HERE/bin/leakpause
REPS=${LEAKPAUSE_REPS:-3}
CASES=${LEAKPAUSE_CASES:-blocks-1e5 blocks-1e6 mib-1g root-1g early-1e6 launched-1e6}
VALGRIND=${LEAKPAUSE_VALGRIND:-1}

TMP=$(mktemp -d /tmp/jmptrace-leakpause.XXXXXX)
WPID='' JPID=''

# Detaches jmptrace politely (SIGKILL would leave breakpoints in the target), then ends the workload.
cleanup() {
	exec 3>&- 2>/dev/null
	if [ -n "$JPID" ] && kill -0 "$JPID" 2>/dev/null; then
		kill -INT "$JPID" 2>/dev/null
		wait_exit "$JPID" 10 || kill -KILL "$JPID" 2>/dev/null
	fi
	[ -n "$WPID" ] && kill -KILL "$WPID" 2>/dev/null
	wait 2>/dev/null
	JPID='' WPID=''
}
trap 'cleanup; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM HUP

die() { echo "leak_pause.sh: $*" >&2; exit 1; }

# Waits up to $2 seconds for process $1 to end; fails if it still runs.
wait_exit() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	return 1
}

# Waits up to $3 seconds for a line matching the regex $2 in file $1 while process $4 lives.
wait_line() {
	local f=$1 re=$2 secs=$3 pid=$4 i
	for ((i = 0; i < secs * 10; i++)); do
		grep -Eq "$re" "$f" 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || { grep -Eq "$re" "$f" 2>/dev/null; return; }
		sleep 0.1
	done
	return 1
}

# Waits up to $3 seconds until file $1 has $2 lines of -v leak checks while jmptrace lives.
wait_checks() {
	local f=$1 want=$2 secs=$3 i
	for ((i = 0; i < secs * 20; i++)); do
		[ "$(grep -c 'leak check of' "$f")" -ge "$want" ] && return 0
		kill -0 "$JPID" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

build() {
	[ -x "$JT" ] || make -C "$ROOT" jmptrace >/dev/null || die "cannot build jmptrace"
	mkdir -p "$HERE/bin"
	cc -O2 -g -Wall -Wextra -D_GNU_SOURCE -o "$LP" "$HERE/leakpause.c" || die "cannot build $LP"
}

print_machine() {
	echo "==== jmptrace --leak-check pause ===="
	echo "date:     $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "cpus:     $(nproc), $(awk -F': ' '/^model name/{print $2; exit}' /proc/cpuinfo)"
	echo "kernel:   $(uname -sr)"
	echo "memory:   $(awk '/^MemAvailable:/{printf "%.1f GiB available", $2 / 1048576}' /proc/meminfo)"
	echo "load:     $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) at the start"
	echo "jmptrace: $JT ($("$JT" --version 2>&1 | head -1))"
	echo "checks:   $REPS per case (SIGUSR1 snapshots of one heap), median"
}

# The workload's arguments for a case.
case_args() {
	case $1 in
	blocks-1e5)	echo blocks 100000 32 ;;
	blocks-1e6)	echo blocks 1000000 32 ;;
	mib-1g)		echo mib 1024 ;;
	root-1g)	echo root 1024 ;;
	early-1e6)	echo blocks 1000000 32 early ;;
	launched-1e6)	echo blocks 1000000 32 ;;
	*)		return 1 ;;
	esac
}

# Starts the workload on a fresh fifo held open on fd 3; sets WPID.
start_workload() {
	local c=$1
	rm -f "$TMP/fifo"
	mkfifo "$TMP/fifo" || die "mkfifo"
	exec 3<>"$TMP/fifo"
	# 3>&-: the workload must not hold the fifo's write end, or it never sees end of file.
	read -ra ARGS <<<"$(case_args "$c")"
	"${PRE[@]}" "$LP" "${ARGS[@]}" <"$TMP/fifo" >"$TMP/$c.out" 2>"$TMP/$c.werr" 3>&- &
	WPID=$!
	wait_line "$TMP/$c.out" '^attach ' 20 "$WPID" || return 1
	# Under valgrind $! is valgrind itself, which is the program too.
}

# Attaches jmptrace to a fresh workload (sets WPID, JPID); returns 1 after saying why.
start_attached() {
	local c=$1
	start_workload "$c" || { echo "  $c: the workload did not start" >&2; return 1; }
	"$JT" --source ptrace -v -p "$WPID" --leak-check --json "$TMP/$c.json" -o "$TMP/$c.txt" \
		2>"$TMP/$c.err" 3>&- &
	JPID=$!
	wait_line "$TMP/$c.err" 'attached to process' 30 "$JPID" ||
		{ echo "  $c: jmptrace did not attach" >&2; return 1; }
}

# Starts the workload under jmptrace (sets WPID, JPID); returns 1 after saying why.
start_launched() {
	local c=$1
	rm -f "$TMP/fifo"
	mkfifo "$TMP/fifo" || die "mkfifo"
	exec 3<>"$TMP/fifo"
	read -ra ARGS <<<"$(case_args "$c")"
	"$JT" --source ptrace -v --leak-check --json "$TMP/$c.json" -o "$TMP/$c.txt" -- "$LP" "${ARGS[@]}" \
		<"$TMP/fifo" >"$TMP/$c.out" 2>"$TMP/$c.err" 3>&- &
	JPID=$!
	wait_line "$TMP/$c.out" '^attach ' 30 "$JPID" ||
		{ echo "  $c: the workload did not start under jmptrace" >&2; return 1; }
	WPID=$(awk '/^attach /{print $2; exit}' "$TMP/$c.out")
}

# One case under jmptrace: leaves $TMP/$c.json and $TMP/$c.err; returns 1 after saying why.
run_case() {
	local c=$1 r t0 t1
	PRE=()
	case $c in
	launched-*)	start_launched "$c" || return 1 ;;
	*)		start_attached "$c" || return 1 ;;
	esac
	t0=$(date +%s%N)
	echo go >&3
	wait_line "$TMP/$c.out" '^ready ' 150 "$JPID" ||
		{ echo "  $c: the workload did not get ready" >&2; return 1; }
	t1=$(date +%s%N)
	BUILD_S[$c]=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
	for ((r = 1; r <= REPS; r++)); do
		kill -USR1 "$JPID"
		wait_checks "$TMP/$c.err" "$r" 120 || { echo "  $c: check $r did not end" >&2; return 1; }
	done
	# Attached: SIGINT detaches. Launched: end of input ends the program, and jmptrace with it.
	case $c in
	launched-*)	exec 3>&- ;;
	*)		kill -INT "$JPID" ;;
	esac
	wait_exit "$JPID" 60 || { echo "  $c: jmptrace did not end" >&2; return 1; }
	wait "$JPID"
	r=$?
	JPID=
	exec 3>&-
	wait_exit "$WPID" 10
	WPID=
	[ "$r" = 0 ] || { echo "  $c: jmptrace exited $r:" >&2; tail -n 5 "$TMP/$c.err" | sed 's/^/    | /' >&2; return 1; }
}

# Prints "known pause_ms scan_ms root_bytes block_bytes threads verdicts" of a case (known: the
# blocks jmptrace knew): the medians of
# its first REPS checks, and the verdicts of the last of them (JSON), or "-" where unknown.
case_figures() {
	local c=$1
	perl -MJSON::PP -e '
		my ($json, $err, $reps) = @ARGV;
		sub med { my @v = sort { $a <=> $b } grep { defined } @_; @v ? $v[int($#v / 2)] : undef }
		sub ms { defined $_[0] ? sprintf("%.1f", $_[0] / 1000) : "-" }
		my (@p, @s, @rb, @bb, @th, @kb, $verdict);
		# The -v lines: the blocks jmptrace knew at each check, and the fallback figures.
		my @v;
		open(my $e, "<", $err) or die "$err: $!";
		while (<$e>) {
			push @v, [$1, $2, $3, $4, $5]
				if /leak check of \d+: (\d+) blocks, (\d+) threads, (\d+) bytes of roots and (\d+) of blocks scanned in (\d+) us/;
		}
		splice(@v, $reps) if @v > $reps;
		@kb = map { $_->[0] } @v;
		my $doc = eval { local $/; open(my $f, "<", $json) or die; JSON::PP->new->decode(<$f>) };
		my @snap = $doc ? grep { ref $_->{leak_check} } @{$doc->{snapshots}} : ();
		if (@snap) {
			for my $lc (map { $_->{leak_check} } @snap[0 .. ($reps < @snap ? $reps : @snap) - 1]) {
				push @p, $lc->{pause_us}; push @s, $lc->{scan_us};
				push @rb, $lc->{root_bytes}; push @bb, $lc->{block_bytes}; push @th, $lc->{threads};
			}
			my $sum = $snap[($reps < @snap ? $reps : @snap) - 1]{leak_check}{summary} || {};
			$verdict = join " ", map {
				my $k = $sum->{$_->[0]}; $k ? "$_->[1]=$k->{blocks}" : () }
				([definitely_lost => "def"], [indirectly_lost => "ind"],
				 [possibly_lost => "poss"], [still_reachable => "reach"]);
		} else {
			@th = map { $_->[1] } @v; @rb = map { $_->[2] } @v;
			@bb = map { $_->[3] } @v; @s = map { $_->[4] } @v;
		}
		printf "%s %s %s %s %s %s %s\n", med(@kb) // "-", ms(med(@p)), ms(med(@s)),
			med(@rb) // "-", med(@bb) // "-", med(@th) // "-", $verdict || "-";
	' "$TMP/$c.json" "$TMP/$c.err" "$REPS"
}

# MiB with one decimal, or "-".
mib() { [ "$1" = - ] && echo - || awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }

print_case() {
	local c=$1 blocks kb p s rb bb th v
	blocks=$(awk '/^ready /{print $2}' "$TMP/$c.out")
	read -r kb p s rb bb th v <<<"$(case_figures "$c")"
	printf '%-12s %8s %8s %7s %9s %9s %8s %8s %3s  %s\n' "$c" "$blocks" "$kb" "${BUILD_S[$c]}" \
		"$(mib "$rb")" "$(mib "$bb")" "$p" "$s" "$th" "$v"
}

# memcheck on blocks-1e5: wall seconds from the end of input to exit with --leak-check=full
# minus with =no (its leak check and report), median of REPS each, and its LEAK SUMMARY.
run_valgrind() {
	local lc r t0 t1 c=vg
	command -v valgrind >/dev/null || { echo "memcheck: valgrind is not installed; skipped"; return; }
	for ((r = 1; r <= REPS; r++)); do
		for lc in full no; do
			PRE=(valgrind --leak-check="$lc" --log-file="$TMP/vg-$lc.log")
			start_workload blocks-1e5 || { echo "memcheck: the workload did not start under valgrind"; return; }
			echo go >&3
			wait_line "$TMP/blocks-1e5.out" '^ready ' 120 "$WPID" || { echo "memcheck: no ready"; cleanup; return; }
			t0=$(date +%s%N)
			exec 3>&-
			wait "$WPID"
			t1=$(date +%s%N)
			WPID=
			echo $((t1 - t0)) >>"$TMP/vg-$lc.ns"
		done
	done
	PRE=()
	awk -v f="$TMP/vg-full.ns" -v n="$TMP/vg-no.ns" 'function med(file,   v, k, i, j, t) {
			k = 0; while ((getline t < file) > 0) v[++k] = t
			for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
			return v[int((k + 1) / 2)] }
		BEGIN { a = med(f); b = med(n)
			printf "memcheck, blocks-1e5: exit takes %.0f ms with --leak-check=full, %.0f ms with =no:" \
				" the check and its report %.0f ms (median of '"$REPS"')\n", a / 1e6, b / 1e6, (a - b) / 1e6 }'
	sed -n 's/^==[0-9]*== *\(definitely lost\|indirectly lost\|possibly lost\|still reachable\): /  memcheck \1: /p' \
		"$TMP/vg-full.log"
}

# ---------------------------------------------------------------- main

declare -A BUILD_S
PRE=()
build
print_machine
echo
printf '%-12s %8s %8s %7s %9s %9s %8s %8s %3s  %s\n' case blocks known "build s" "roots MiB" \
	"block MiB" "pause ms" "scan ms" thr "verdicts (blocks, check R)"
start=$(date +%s)
for c in $CASES; do
	case_args "$c" >/dev/null || die "unknown case $c"
	if run_case "$c"; then
		print_case "$c"
	else
		printf '%-12s FAILED\n' "$c"
		tail -n 5 "$TMP/$c.err" 2>/dev/null | sed 's/^/    | /'
		cleanup
	fi
done
echo
echo "blocks: the program's (with its table); known: those jmptrace saw allocated, the rest is roots."
echo "build s: the workload's allocation while traced (not part of any pause)."
echo "pause: every thread stopped to every thread running again; scan: of which roots and mark."
[ "$VALGRIND" = 0 ] || run_valgrind
echo
echo "time $(( $(date +%s) - start ))s; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
