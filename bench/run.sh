#!/usr/bin/env bash
# run.sh - times a malloc/free workload untraced, under the floor tracer, jmptrace and its peers, and prints the table.
#
# usage: bash bench/run.sh [--quick]   (or `make bench`), as root or with sudo on Debian 12.
#   --quick   jmptrace (and JMPTRACE2) against the floor tracer only: no heaptrack, massif,
#             ltrace or memory figures (an A/B during development in a few minutes)
#
# jmptrace is measured with both event sources: ptrace (the default, "jmptrace") and
# `--source uprobe` ("uprobe"), which needs root (or CAP_PERFMON) and the kernel's uprobe
# PMU; without them the uprobe rows are skipped with the reason. The uprobe source takes
# its BPF path where the kernel has uprobe_multi links (Linux 6.6), and "uprobe-perf" is the
# same source kept on its perf path (the test-only JMPTRACE_TEST_UPROBE_PATH=perf). Each
# source's start and exit are timed on /bin/true.
#
# Environment:
#   JMPTRACE2=PATH      also measure a second jmptrace (A/B during development)
#   BENCH_TARGET_S=S    wall seconds one timed run aims at (default 2.5); each tool's N is
#                       calibrated from a short probe so that a run lasts about that long
#   BENCH_N_<TOOL>=N    skip calibration for TOOL (untraced, floor, jmptrace, uprobe,
#                       heaptrack, massif, ltrace); jmptrace2 and the pinned/8-thread runs
#                       reuse N
#   BENCH_HOLD_M=M      live blocks for the memory figure (default 2000000)
#
# Every figure is per malloc+free pair and is marginal: the median of the tool at N
# pairs minus its median at N=0, divided by N, so start-up (valgrind loading, heaptrack
# compressing, jmptrace reading debug information) does not count as per-event cost.
# Repetitions go round-robin over the tools rather than tool by tool, so that a noisy
# neighbour or a drifting clock on a shared machine hits every tool alike.
set -u

QUICK=0
case ${1:-} in
--quick) QUICK=1 ;;
"") ;;
*) echo "usage: bash bench/run.sh [--quick]" >&2; exit 2 ;;
esac

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
JT=${JMPTRACE:-$ROOT/jmptrace}
JT2=${JMPTRACE2:-}
W=$HERE/bin/workload
FLOOR=$HERE/bin/floor
TARGET_S=${BENCH_TARGET_S:-2.5}
HOLD_M=${BENCH_HOLD_M:-2000000}
HOLD_SMALL=1000
# The tracer's bytes per live block it should stay within (print_memory).
GOAL_B_BLOCK=24
THREADS=8
# How long the memory run may take to reach its hold point before we give up on it.
HOLD_TIMEOUT_S=1500

TMP=$(mktemp -d /tmp/jmptrace-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

die() { echo "run.sh: $*" >&2; exit 1; }

. "$HERE/lib.sh"
. "$HERE/run_print.sh"

# ---------------------------------------------------------------- setup

# Installs what is missing, and only then touches apt (its update is slow and needs the network).
install_peers() {
	local need=()

	for t in heaptrack valgrind ltrace; do
		command -v "$t" >/dev/null 2>&1 || need+=("$t")
	done
	command -v cc >/dev/null 2>&1 || need+=(gcc libc6-dev)
	command -v make >/dev/null 2>&1 || need+=(make)
	command -v taskset >/dev/null 2>&1 || need+=(util-linux)
	dpkg -s libelf-dev >/dev/null 2>&1 || need+=(libelf-dev)
	apt_install "${need[@]}"
}

build() {
	[ -x "$JT" ] || make -C "$ROOT" jmptrace >/dev/null || die "cannot build jmptrace"
	make -s -C "$HERE" CC=cc >/dev/null || die "cannot build bench/bin (workload, floor)"
	[ -z "$JT2" ] || [ -x "$JT2" ] || die "JMPTRACE2=$JT2 is not an executable"
}

steal_ticks() { awk '/^cpu /{print $9}' /proc/stat; }
total_ticks() { awk '/^cpu /{s=0; for (i=2; i<=NF; i++) s+=$i; print s}' /proc/stat; }

print_machine() {
	echo "==== jmptrace benchmark ===="
	echo "date:     $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "cpus:     $(nproc)"
	echo "cpu:      $(awk -F': ' '/^model name/{print $2; exit}' /proc/cpuinfo)"
	echo "kernel:   $(uname -sr), cpuidle $(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo '?')"
	echo "load:     $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) at the start"
	echo "glibc:    $(ldd --version | head -1 | awk '{print $NF}')"
	echo "peers:    $(heaptrack --version 2>&1 | head -1), $(valgrind --version 2>&1)," \
		"$(ltrace -V 2>&1 | head -1)"
	echo "jmptrace: $JT${JT2:+   jmptrace2: $JT2}"
	echo "workload: malloc(16..520 B)+free pairs from 11 frames below main (bench/workload.c)"
}

# ---------------------------------------------------------------- running one job

# Fills CMD with the tracer's command line for a tool name (the workload's args follow it).
# jmptrace runs verbose (--verbose) and the floor with -v: both then print, at the
# end, the share of their sampled stops where tracer and target were on different CPUs.
tool_cmd() {
	case $1 in
	untraced)	CMD=() ;;
	floor)		CMD=("$FLOOR" -v --) ;;
	jmptrace)	CMD=("$JT" --source ptrace --verbose -o /dev/null --) ;;
	jmptrace-pin)	CMD=("$JT" --source ptrace --verbose --pin -o /dev/null --) ;;
	jmptrace2)	CMD=("$JT2" --source ptrace --verbose -o /dev/null --) ;;
	jmptrace-1tt)	CMD=("$JT" --source ptrace --verbose --tracer-threads 1 -o /dev/null --) ;;
	# The report is kept: its totals say how many events the kernel dropped.
	uprobe)		CMD=("$JT" --source uprobe --verbose -o "$TMP/report.txt" --) ;;
	uprobe-perf)	CMD=(env JMPTRACE_TEST_UPROBE_PATH=perf "$JT" --source uprobe --verbose -o "$TMP/report.txt" --) ;;
	heaptrack)	CMD=(heaptrack -o "$TMP/ht") ;;
	massif)		CMD=(valgrind --tool=massif --massif-out-file=/dev/null) ;;
	ltrace)		CMD=(ltrace -o /dev/null -e malloc+free) ;;
	*)		die "unknown tool $1" ;;
	esac
}

# Runs tool on `workload pairs n t` once; prints wall nanoseconds, or returns 1 after saying why.
time_once() {
	local tool=$1 n=$2 t=$3 pin=$4 t0 t1 rc
	local pre=()

	tool_cmd "$tool"
	[ "$pin" = pin ] && pre=(taskset -c 0)
	rm -f "$TMP/report.txt"
	t0=$(date +%s%N)
	"${pre[@]}" "${CMD[@]}" "$W" pairs "$n" "$t" >/dev/null 2>"$TMP/err"
	rc=$?
	t1=$(date +%s%N)
	rm -f "$TMP"/ht*.zst "$TMP"/ht*.gz
	if [ $rc -ne 0 ]; then
		{
			echo "run.sh: $tool FAILED (exit $rc) on: ${pre[*]} ${CMD[*]} $W pairs $n $t"
			tail -n 15 "$TMP/err" | sed 's/^/    | /'
		} >&2
		return 1
	fi
	echo $((t1 - t0))
}

# "cross sampled" summed over the tracer threads of the last run, from its stderr.
cross_counts() {
	awk '/cross-CPU stops: [0-9]+ of [0-9]+ sampled/ {
		for (i = 1; i < NF; i++) if ($i == "stops:") { c += $(i + 1); s += $(i + 3) } }
		END { if (s) print c, s }' "$TMP/err"
}

# The workload's own time for its pairs in the last run ("workload: N pairs in NS ns").
loop_ns() { awk '$1 == "workload:" && $3 == "pairs" && $4 == "in" { print $5 }' "$TMP/err"; }

# Microseconds per pair inside the workload's loop (median of the runs), or NA.
loop_us_per_pair() {
	local j=$1
	[ "${J_FAIL[$j]:-1}" = 0 ] && [ -s "$TMP/$j.loop" ] || { echo NA; return; }
	median <"$TMP/$j.loop" | awk -v n="${J_N[$j]}" '{ printf "%.4f\n", $1 / n / 1000 }'
}

# Pairs per second inside the workload's loop, or NA.
loop_pairs_per_s() {
	local u
	u=$(loop_us_per_pair "$1")
	[ "$u" = NA ] && { echo NA; return; }
	awk -v u="$u" 'BEGIN { printf "%.0f\n", 1e6 / u }'
}

# lost_in for the report of the last timed run.
lost_count() { lost_in "$TMP/report.txt"; }

# The uprobe source's reader CPU in the last run, ns ("the reader's CPU S s" under --verbose).
reader_ns() {
	awk '/uprobe source: .* samples read; the reader.s CPU/ {
		for (i = 1; i < NF; i++) if ($i == "CPU") { printf "%.0f\n", $(i + 1) * 1e9; exit } }' "$TMP/err"
}

median() { sort -n | awk '{v[NR] = $1} END {if (NR) print v[int((NR + 1) / 2)]; else print "NA"}'; }

# Rounds to two significant digits and clamps into [lo, hi].
round_n() {
	awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN {
		if (x < lo) x = lo; if (x > hi) x = hi
		e = 1; while (x / e >= 100) e *= 10
		printf "%d\n", int(x / e + 0.5) * e }'
}

# Chooses N so that one run of tool lasts about TARGET_S, from one probe of `probe` pairs.
calibrate() {
	local tool=$1 probe=$2 lo=$3 hi=$4 var ns
	var=BENCH_N_$tool
	if [ -n "${!var:-}" ]; then
		echo "${!var}"
		return
	fi
	time_once "$tool" "$probe" 1 nopin >/dev/null || { echo 0; return; }
	# Timed inside the loop: for a probe this short, the wall time of a run less that of
	# an empty one is no marginal figure. jmptrace took 13-16 ms for 0 pairs and 97-105 ms
	# for 2,000, of which 31-35 ms in the loop (the rest is work only a run that allocates
	# does: its breakpoints, its report's stacks): its probe looked 2.7 times dearer than
	# its timed runs, which then lasted a third of TARGET_S.
	ns=$(loop_ns)
	[ -n "$ns" ] || { echo 0; return; }
	round_n "$(awk -v a="$ns" -v p="$probe" -v s="$TARGET_S" \
		'BEGIN { d = a / p; if (d < 1) d = 1; print s * 1e9 / d }')" "$lo" "$hi"
}

# ---------------------------------------------------------------- jobs

# A job: a tool, its pairs N, threads, pinning and repetitions. Results are median ns.
declare -a JOBS=()
declare -A J_TOOL J_N J_T J_PIN J_REPS J_MED J_MED0 J_FAIL

add_job() {
	local name=$1
	JOBS+=("$name")
	J_TOOL[$name]=$2; J_N[$name]=$3; J_T[$name]=$4; J_PIN[$name]=$5; J_REPS[$name]=$6
	J_FAIL[$name]=0
	: >"$TMP/$name.n"
	: >"$TMP/$name.0"
	: >"$TMP/$name.x"
	: >"$TMP/$name.lost"
	: >"$TMP/$name.loop"
	: >"$TMP/$name.reader"
}

run_jobs() {
	local maxrep=0 r j ns
	for j in "${JOBS[@]}"; do
		[ "${J_REPS[$j]}" -gt $maxrep ] && maxrep=${J_REPS[$j]}
	done
	for ((r = 1; r <= maxrep; r++)); do
		printf '  round %d/%d:' "$r" "$maxrep" >&2
		for j in "${JOBS[@]}"; do
			[ "$r" -gt "${J_REPS[$j]}" ] || [ "${J_FAIL[$j]}" = 1 ] && continue
			printf ' %s' "$j" >&2
			if ns=$(time_once "${J_TOOL[$j]}" "${J_N[$j]}" "${J_T[$j]}" "${J_PIN[$j]}"); then
				echo "$ns" >>"$TMP/$j.n"
				cross_counts >>"$TMP/$j.x"
				lost_count >>"$TMP/$j.lost"
				loop_ns >>"$TMP/$j.loop"
				reader_ns >>"$TMP/$j.reader"
			else
				J_FAIL[$j]=1
				continue
			fi
			if ns=$(time_once "${J_TOOL[$j]}" 0 "${J_T[$j]}" "${J_PIN[$j]}"); then
				echo "$ns" >>"$TMP/$j.0"
			else
				J_FAIL[$j]=1
			fi
		done
		echo >&2
	done
	for j in "${JOBS[@]}"; do
		J_MED[$j]=$(median <"$TMP/$j.n")
		J_MED0[$j]=$(median <"$TMP/$j.0")
	done
}

# ---------------------------------------------------------------- results (run_print.sh)

# ---------------------------------------------------------------- memory

# Prints a process's VmHWM in kB.
hwm_kb() { awk '/^VmHWM:/{print $2}' "/proc/$1/status" 2>/dev/null; }

# Runs jt (with the options after m: the source) on `workload hold m GATE`, pinned to one
# CPU (pinning changes no memory and saves minutes on a VM); at the hold point prints
# "tracer_kB target_kB", or fails.
hold_probe() {
	local jt=$1 m=$2 gate="$TMP/gate" pid child waited=0 kb tkb rc prev

	shift 2
	rm -f "$gate"
	taskset -c 0 "$jt" "$@" -o /dev/null -- "$W" hold "$m" "$gate" >/dev/null 2>"$TMP/memerr" &
	pid=$!
	while [ ! -e "$gate" ]; do
		if ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid"; rc=$?
			echo "run.sh: $jt ended (exit $rc) before holding $m blocks:" >&2
			tail -n 15 "$TMP/memerr" | sed 's/^/    | /' >&2
			return 1
		fi
		if [ $waited -ge $((HOLD_TIMEOUT_S * 5)) ]; then
			echo "run.sh: $jt did not reach $m live blocks in ${HOLD_TIMEOUT_S}s; killing it" >&2
			kill -KILL "$pid"; wait "$pid" 2>/dev/null
			return 1
		fi
		sleep 0.2
		waited=$((waited + 1))
	done
	# The uprobe source reads its rings behind the program: its table is whole once its
	# peak stops moving (half a second apart twice).
	kb=$(hwm_kb "$pid"); prev=
	while [ "$kb" != "$prev" ] && [ $waited -lt $((HOLD_TIMEOUT_S * 5)) ]; do
		sleep 0.5
		prev=$kb; kb=$(hwm_kb "$pid"); waited=$((waited + 2))
	done
	# The program is the child named workload (the uprobe source has a helper child too).
	tkb=
	for child in $(cat /proc/"$pid"/task/*/children 2>/dev/null); do
		[ "$(cat /proc/"$child"/comm 2>/dev/null)" = workload ] && { tkb=$(hwm_kb "$child"); break; }
	done
	rm -f "$gate"
	wait "$pid"; rc=$?
	if [ $rc -ne 0 ]; then
		echo "run.sh: $jt exited $rc after freeing the $m blocks:" >&2
		tail -n 15 "$TMP/memerr" | sed 's/^/    | /' >&2
		return 1
	fi
	echo "$kb ${tkb:-0}"
}

print_memory_one() {
	local name=$1 jt=$2 big small t0 t1
	shift 2
	t0=$(date +%s)
	small=$(hold_probe "$jt" $HOLD_SMALL "$@") || { printf '%-12s FAILED\n' "$name"; return; }
	big=$(hold_probe "$jt" "$HOLD_M" "$@") || { printf '%-12s FAILED\n' "$name"; return; }
	t1=$(date +%s)
	set -- $small $big
	awk -v nm="$name" -v a="$1" -v b="$3" -v ta="$2" -v tb="$4" -v ms=$HOLD_SMALL \
		-v mb="$HOLD_M" -v s=$((t1 - t0)) 'BEGIN {
		d = (b - a) * 1024 / (mb - ms)
		printf "%-12s %10.1f %10.1f %12.1f %10.1f %12.1f %8d\n", nm, a / 1024, b / 1024,
			d * 1e6 / 1048576, d, (tb - ta) * 1024 / (mb - ms), s }'
}

print_memory() {
	echo
	echo "== memory: tracer peak RSS (VmHWM) while the target holds M live blocks of 32 B"
	echo "   (M=$HOLD_M minus M=$HOLD_SMALL; run pinned to one CPU to save time; target B/blk: the program's own)"
	printf '%-12s %10s %10s %12s %10s %12s %8s\n' tracer "MiB small" "MiB big" \
		"MiB/M blocks" "B/block" "target B/blk" "secs"
	print_memory_one jmptrace "$JT"
	[ -z "$JT2" ] || print_memory_one jmptrace2 "$JT2"
	[ $UPROBE = 0 ] || print_memory_one uprobe "$JT" --source uprobe
	[ -z "$JT2" ] || [ $UPROBE = 0 ] || print_memory_one uprobe2 "$JT2" --source uprobe
	echo "   goal: at most $GOAL_B_BLOCK B/block in the tracer, with each source (issue 33; tests/blockmem.t)"
}

# ---------------------------------------------------------------- checks

# Counts in a jmptrace text report: "malloc free".
report_counts() {
	awk '$1 == "malloc" || $1 == "free" { gsub(",", "", $2); c[$1] = $2 }
		END { printf "%s %s\n", c["malloc"] + 0, c["free"] + 0 }' "$1"
}

# Makes sure the tracers see exactly the workload's calls before timing them.
check_counts() {
	local jt name got lost src
	got=$("$FLOOR" -v -- "$W" pairs 1000 2>&1 >/dev/null | tail -1)
	case $got in
	*"2000 malloc stops"*"1000 free stops") echo "check: floor saw 2000 malloc stops, 1000 free stops: ok" ;;
	*) echo "check: floor: UNEXPECTED: $got" ;;
	esac
	for name in jmptrace jmptrace2 uprobe; do
		jt=$JT; src=(); [ $name = jmptrace2 ] && jt=$JT2
		if [ $name = uprobe ]; then
			[ $UPROBE = 1 ] || continue
			src=(--source uprobe)
		fi
		[ -n "$jt" ] || continue
		if ! "$jt" "${src[@]}" -o "$TMP/check.txt" -- "$W" pairs 1000 >/dev/null 2>"$TMP/err"; then
			echo "check: $name FAILED on workload pairs 1000:"
			tail -n 15 "$TMP/err" | sed 's/^/    | /'
			continue
		fi
		got=$(report_counts "$TMP/check.txt")
		lost=$(lost_in "$TMP/check.txt")
		[ "${lost:-0}" = 0 ] || got="$got, $lost lost events"
		if [ "$got" = "1000 1000" ]; then
			echo "check: $name counted malloc 1000, free 1000: ok"
		else
			echo "check: $name: UNEXPECTED malloc/free counts '$got' (want '1000 1000')"
		fi
	done
}

# ---------------------------------------------------------------- main

[ $QUICK = 1 ] || install_peers
build
probe_uprobe
print_machine
[ $UPROBE = 1 ] || echo "uprobe:   $UPROBE_WHY"
check_counts
echo "calibrating N (each timed run aims at ${TARGET_S}s)..." >&2

steal0=$(steal_ticks); total0=$(total_ticks); start=$(date +%s)

N_UNTRACED=$(calibrate untraced 2000000 100000 200000000)
N_FLOOR=$(calibrate floor 2000 1000 5000000)
N_JT=$(calibrate jmptrace 2000 1000 5000000)
N_UP=1
# The probe is long enough that the source's start-up and tear-down (perf events opened and
# closed) do not hide the per-pair cost.
[ $UPROBE = 0 ] || N_UP=$(calibrate uprobe 200000 1000 5000000)
if [ $QUICK = 1 ]; then
	N_HT=1 N_MASSIF=1 N_LTRACE=1
else
	N_HT=$(calibrate heaptrack 200000 10000 50000000)
	N_MASSIF=$(calibrate massif 200000 10000 50000000)
	N_LTRACE=$(calibrate ltrace 500 500 1000000)
fi

# Failed calibrations give N=0; such a tool is reported as failed by its first round.
for v in N_UNTRACED N_FLOOR N_JT N_UP N_HT N_MASSIF N_LTRACE; do
	[ "${!v}" -gt 0 ] || printf -v "$v" 1000
done

add_job untraced untraced "$N_UNTRACED" 1 nopin 5
add_job untraced-8t untraced "$N_UNTRACED" $THREADS nopin 5
add_job floor floor "$N_FLOOR" 1 nopin 5
add_job jmptrace jmptrace "$N_JT" 1 nopin 5
# --pin: the target's threads pinned to their tracer thread's CPU (opt-in; changes the target).
add_job jmptrace-pin jmptrace-pin "$N_JT" 1 nopin 5
[ -z "$JT2" ] || add_job jmptrace2 jmptrace2 "$N_JT" 1 nopin 5
[ $UPROBE = 0 ] || add_job uprobe uprobe "$N_UP" 1 nopin 5
[ $UPROBE = 0 ] || add_job uprobe-perf uprobe-perf "$N_UP" 1 nopin 5
if [ $QUICK = 0 ]; then
	add_job heaptrack heaptrack "$N_HT" 1 nopin 5
	add_job massif massif "$N_MASSIF" 1 nopin 3
	add_job ltrace ltrace "$N_LTRACE" 1 nopin 3
fi
# The same tracers with tracer and target on one CPU: no cross-CPU wake-up per stop.
add_job floor-pinned floor "$N_FLOOR" 1 pin 5
add_job jmptrace-pinned jmptrace "$N_JT" 1 pin 5
[ -z "$JT2" ] || add_job jmptrace2-pinned jmptrace2 "$N_JT" 1 pin 5
add_job floor-8t floor "$N_FLOOR" $THREADS nopin 5
add_job jmptrace-8t jmptrace "$N_JT" $THREADS nopin 5
# The same with a single tracer thread, to show what the tracer thread per CPU buys.
add_job jmptrace-1tt-8t jmptrace-1tt "$N_JT" $THREADS nopin 3
[ -z "$JT2" ] || add_job jmptrace2-8t jmptrace2 "$N_JT" $THREADS nopin 5
[ $UPROBE = 0 ] || add_job uprobe-8t uprobe "$N_UP" $THREADS nopin 5

run_jobs
print_table
print_spread
print_threads
print_uprobe
print_startup
[ $QUICK = 1 ] || print_memory

steal1=$(steal_ticks); total1=$(total_ticks)
echo
awk -v s=$((steal1 - steal0)) -v t=$((total1 - total0)) -v w=$(($(date +%s) - start)) 'BEGIN {
	printf "benchmark time %ds; CPU time stolen by the hypervisor meanwhile: %.1f%%\n",
		w, t ? 100 * s / t : 0 }'
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
