#!/usr/bin/env bash
# programs.sh - times real programs (sed, bc, perl, lua) alone, under jmptrace's two event sources, valgrind and heaptrack, and redis-server's SET rate untraced and attached.
#
# usage: bash bench/programs.sh   (or `make bench`, after run.sh), as root on Debian 12.
#
# Environment:
#   JMPTRACE=PATH          the jmptrace to measure (default ./jmptrace, built if missing)
#   PROGRAMS_RUNS=R        runs of each program under each tool (default 3); the table gives
#                          their median
#   PROGRAMS_REDIS=0       skip the redis-server part
#
# Four programs as a user runs them, each whole (start-up included), in turns: every round
# runs every program under every tool, so a noisy neighbour hits them alike.
#   sed    two substitutions with extended regexes over a generated 20,000-line access log
#   bc     `bc -l` computing pi to 300 digits (scale=300; 4*a(1))
#   perl   a hash of 10,000 entries, a small hash each
#   lua    a table of 10,000 strings built with string.format and string.rep
# Tools: untraced; `jmptrace --source uprobe --leak-check`; jmptrace with its default (ptrace)
# source; `valgrind --leak-check=full`; heaptrack. jmptrace's output must be the program's:
# a run that prints anything else on stdout is reported.
# redis-server (Debian's, jemalloc) on a free loopback port: `redis-benchmark -t set -n 20000
# -c 10 -r 1000000 -d 64` untraced, then with jmptrace attached (-p), for each source; the
# untraced rate is taken just before each attached one, the database emptied before each pair.
# Nothing here asserts a time: the script prints figures and the bars issue 18 sets.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
JT=${JMPTRACE:-$ROOT/jmptrace}
RUNS=${PROGRAMS_RUNS:-3}
REDIS=${PROGRAMS_REDIS:-1}
LUA=lua5.4
PROGS=(sed bc perl lua)
TOOLS=(untraced uprobe ptrace valgrind heaptrack)

TMP=$(mktemp -d /tmp/jmptrace-programs.XXXXXX)
RPID='' JPID=''

# Detaches a jmptrace left attached (SIGINT: SIGKILL could leave trap bytes), ends redis.
cleanup() {
	if [ -n "$JPID" ] && kill -0 "$JPID" 2>/dev/null; then
		kill -INT "$JPID"
		wait "$JPID" 2>/dev/null
	fi
	[ -z "$RPID" ] || kill -TERM "$RPID" 2>/dev/null
	wait 2>/dev/null
}
trap 'cleanup; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM HUP

die() { echo "programs.sh: $*" >&2; exit 1; }

. "$HERE/lib.sh"

median() { sort -n | awk '{v[NR] = $1} END {if (NR) print v[int((NR + 1) / 2)]; else print "NA"}'; }

# ---------------------------------------------------------------- setup

# Installs what is missing, and only then touches apt (its update is slow and needs the network).
install_missing() {
	local need=()

	command -v heaptrack >/dev/null 2>&1 || need+=(heaptrack)
	command -v valgrind >/dev/null 2>&1 || need+=(valgrind)
	command -v bc >/dev/null 2>&1 || need+=(bc)
	command -v $LUA >/dev/null 2>&1 || need+=(lua5.4)
	if [ "$REDIS" = 1 ]; then
		command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
		command -v redis-benchmark >/dev/null 2>&1 || need+=(redis-tools)
	fi
	apt_install "${need[@]}"
}

# The programs' inputs: an access log (deterministic), bc's program, the perl and lua scripts.
make_inputs() {
	awk 'BEGIN {
		split("GET POST GET GET PUT", m, " ")
		split("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec", mo, " ")
		for (i = 1; i <= 20000; i++)
			printf "%d.%d.%d.%d - user%d [%02d/%s/2026:%02d:%02d:%02d +0000] \"%s /api/v%d/items/%d?session=%x&page=%d HTTP/1.1\" %d %d \"-\" \"Mozilla/5.0 (X11; Linux x86_64)\"\n",
				10 + i % 200, i % 256, (i * 7) % 256, (i * 13) % 256, i % 97, 1 + i % 28,
				mo[1 + i % 12], i % 24, i % 60, (i * 7) % 60, m[1 + i % 5], 1 + i % 3,
				i * 31 % 100000, i * 2654435761 % 4294967296, i % 50,
				i % 17 == 0 ? 404 : 200, 200 + (i * 37) % 5000 }' >"$TMP/access.log"
	printf 'scale=300; 4*a(1)\n' >"$TMP/pi.bc"
	cat >"$TMP/hash.pl" <<'EOF'
my %h;
for my $i (1 .. 10000) {
	$h{"user:$i"} = { id => $i, name => "name-$i", score => ($i * 7919) % 1000 };
}
my $sum = 0;
$sum += $h{$_}{score} for keys %h;
print scalar(keys %h), " entries, score sum $sum\n";
EOF
	cat >"$TMP/table.lua" <<'EOF'
local t = {}
for i = 1, 10000 do
	t[#t + 1] = string.format("item-%05d:%s", i, string.rep("ab", i % 40))
end
local n = 0
for _, s in ipairs(t) do n = n + #s end
print(#t .. " strings, " .. n .. " bytes")
EOF
}

# Fills ARGV with a program's command line (full paths: heaptrack wants them).
prog_argv() {
	case $1 in
	sed)	ARGV=("$(command -v sed)" -E 's/^([0-9]+\.[0-9]+)\.[0-9]+\.[0-9]+ /\1.0.0 /; s/\?session=[0-9a-f]+&/?/' "$TMP/access.log") ;;
	bc)	ARGV=("$(command -v bc)" -l "$TMP/pi.bc") ;;
	perl)	ARGV=("$(command -v perl)" "$TMP/hash.pl") ;;
	lua)	ARGV=("$(command -v $LUA)" "$TMP/table.lua") ;;
	esac
}

# Fills CMD with a tool's command line before the program's. The uprobe source's report is
# kept: its totals say how many events it lost.
tool_cmd() {
	case $1 in
	untraced)	CMD=() ;;
	uprobe)		CMD=("$JT" --source uprobe --leak-check -o "$TMP/report.txt" --) ;;
	ptrace)		CMD=("$JT" --source ptrace -o "$TMP/report.txt" --) ;;
	valgrind)	CMD=(valgrind --leak-check=full --log-file="$TMP/valgrind.log") ;;
	heaptrack)	CMD=(heaptrack -o "$TMP/ht") ;;
	esac
}

print_versions() {
	echo "==== real programs: alone, under jmptrace's two sources, valgrind and heaptrack ===="
	echo "date:      $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "cpus:      $(nproc), $(awk -F': ' '/^model name/{print $2; exit}' /proc/cpuinfo)"
	echo "kernel:    $(uname -sr); load $(cut -d' ' -f1-3 /proc/loadavg) at the start"
	echo "programs:  $(sed --version | head -1), $(bc --version | head -1)," \
		"perl $(perl -e 'print substr($^V, 1)'), $($LUA -v 2>&1 | awk '{print $1, $2; exit}') ($(command -v $LUA))"
	echo "peers:     $(valgrind --version), $(heaptrack --version 2>&1 | head -1)"
	echo "jmptrace:  $JT"
	[ $UPROBE = 1 ] || echo "uprobe:    $UPROBE_WHY"
}

# ---------------------------------------------------------------- the four programs

# Runs a program under a tool once; appends its wall seconds to TMP/PROG.TOOL, or says why
# not. jmptrace's stdout must equal the untraced run's.
run_once() {
	local prog=$1 tool=$2 t0 t1 rc

	[ -e "$TMP/$prog.$tool.failed" ] && return
	prog_argv "$prog"
	tool_cmd "$tool"
	rm -f "$TMP/report.txt" "$TMP"/ht*
	t0=$(date +%s%N)
	"${CMD[@]}" "${ARGV[@]}" </dev/null >"$TMP/out" 2>"$TMP/err"
	rc=$?
	t1=$(date +%s%N)
	if [ $rc -ne 0 ]; then
		{
			echo "programs.sh: $prog under $tool FAILED (exit $rc): ${CMD[*]} ${ARGV[*]}"
			tail -n 10 "$TMP/err" | sed 's/^/    | /'
		} >&2
		touch "$TMP/$prog.$tool.failed"
		return
	fi
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", (b - a) / 1e9 }' >>"$TMP/$prog.$tool"
	case $tool in
	untraced)	cp "$TMP/out" "$TMP/$prog.expected" ;;
	uprobe|ptrace)	cmp -s "$TMP/out" "$TMP/$prog.expected" ||
				echo "programs.sh: $prog under $tool printed something else than alone" >&2 ;;
	esac
	[ "$tool" = ptrace ] && events_of "$TMP/report.txt" >"$TMP/$prog.events"
	[ "$tool" = uprobe ] && lost_in "$TMP/report.txt" >>"$TMP/$prog.lost"
}

# Allocation calls plus frees in a jmptrace text report.
events_of() {
	awk '$1 == "allocation" && $2 == "calls" { gsub(",", "", $3); a = $3 }
		$1 == "frees" { gsub(",", "", $2); f = $2 } END { print a + f }' "$1"
}

run_programs() {
	local r prog tool
	for ((r = 1; r <= RUNS; r++)); do
		printf '  round %d/%d:' "$r" "$RUNS" >&2
		for prog in "${PROGS[@]}"; do
			printf ' %s' "$prog" >&2
			for tool in "${TOOLS[@]}"; do
				[ "$tool" = uprobe ] && [ $UPROBE = 0 ] && continue
				run_once "$prog" "$tool"
			done
		done
		echo >&2
	done
}

# The median seconds of a program under a tool, or NA (failed, or not run).
med() {
	[ -e "$TMP/$1.$2.failed" ] || [ ! -s "$TMP/$1.$2" ] && { echo NA; return; }
	median <"$TMP/$1.$2"
}

print_programs() {
	local prog tool row lost
	echo
	echo "== wall seconds per run (median of $RUNS), start-up included; events: allocation calls"
	echo "   and frees the ptrace source counted"
	printf '%-10s %10s %10s %14s %10s %10s %10s\n' program events untraced \
		"uprobe+leak" ptrace valgrind heaptrack
	for prog in "${PROGS[@]}" total; do
		row=$(printf '%-10s %10s' "$prog" "$( [ $prog = total ] && echo '' || cat "$TMP/$prog.events" 2>/dev/null)")
		for tool in "${TOOLS[@]}"; do
			row+=$(printf " %$([ $tool = uprobe ] && echo 14 || echo 10)s" "$(cell "$prog" "$tool")")
		done
		echo "$row"
	done
	if [ $UPROBE = 0 ]; then
		echo "  uprobe: $UPROBE_WHY"
		return
	fi
	awk -v u="$(cell total uprobe)" -v v="$(cell total valgrind)" -v p="$(cell total ptrace)" 'BEGIN {
		if (u == "NA" || v == "NA") { print "  uprobe total / valgrind total: n/a (a run failed)"; exit }
		printf "  uprobe total / valgrind total: %.2f   (aim: at most 1.5) %s\n", u / v, (u / v <= 1.5) ? "met" : "MISSED"
		if (p != "NA") printf "  uprobe total / ptrace total:   %.2f\n", u / p }'
	lost=$(cat "$TMP"/*.lost 2>/dev/null | awk '{ s += $1; n++ } END { printf "%d in %d reports", s, n }')
	echo "  lost events in the uprobe source's runs: $lost"
}

# A table cell: the median of a program under a tool, or the sum of the medians for "total".
cell() {
	local prog=$1 tool=$2 p s=0
	if [ "$prog" != total ]; then
		med "$prog" "$tool"
		return
	fi
	for p in "${PROGS[@]}"; do
		s=$(awk -v s="$s" -v m="$(med "$p" "$tool")" 'BEGIN { print (s == "NA" || m == "NA") ? "NA" : s + m }')
	done
	echo "$s"
}

# ---------------------------------------------------------------- redis-server


# True once jmptrace has written a snapshot to its JSON file: it asks for one on SIGUSR1
# (handled once the attach is done), so a snapshot means every thread is attached.
snapshot_written() {
	perl -MJSON::PP -e 'local $/; open(my $f, "<", $ARGV[0]) or exit 1;
		my $j = eval { JSON::PP->new->decode(<$f>) } or exit 1;
		exit(@{ $j->{snapshots} // [] } ? 0 : 1)' "$1"
}

catches_usr1() {
	local m
	m=$(awk '/^SigCgt:/ { print $2 }' "/proc/$1/status" 2>/dev/null) || return 1
	[ -n "$m" ] && (( (16#$m >> 9) & 1 ))
}

# SET requests per second of one redis-benchmark run, or NA; counts its errors in TMP/redis.err.
set_rate() {
	local rate
	redis-benchmark -t set -n 20000 -c 10 -r 1000000 -d 64 -p "$PORT" --csv \
		>"$TMP/bench.out" 2>"$TMP/bench.err" </dev/null || echo "exit $?" >>"$TMP/bench.err"
	rate=$(awk -F'"' '$2 == "SET" { print $4 }' "$TMP/bench.out")
	if [ -z "$rate" ] || grep -qi error "$TMP/bench.err" "$TMP/bench.out"; then
		{ echo "redis-benchmark:"; cat "$TMP/bench.err"; } >>"$TMP/redis.err"
		echo NA
		return
	fi
	echo "$rate"
}

# One untraced run then one attached with jmptrace (args: its source options); appends
# "untraced attached attach_s detach_s" to TMP/redis.SOURCE: the rates, the seconds from
# jmptrace's start to its first snapshot, and from SIGINT to its exit.
redis_pair() {
	local name=$1 u a t0 t1 t2 t3
	shift
	redis-cli -p "$PORT" flushall >/dev/null
	u=$(set_rate)
	t0=$(date +%s%N)
	"$JT" "$@" -p "$RPID" -o "$TMP/redis-$name.txt" --json "$TMP/redis.json" 2>"$TMP/jt.err" &
	JPID=$!
	wait_for 300 catches_usr1 "$JPID" && kill -USR1 "$JPID" &&
		wait_for 300 snapshot_written "$TMP/redis.json" ||
		{ echo "jmptrace $* -p: not attached after 300 s:"; cat "$TMP/jt.err"; } >>"$TMP/redis.err"
	t1=$(date +%s%N)
	a=$(set_rate)
	t2=$(date +%s%N)
	kill -INT "$JPID"
	wait "$JPID" || { echo "jmptrace $* -p exited $?:"; cat "$TMP/jt.err"; } >>"$TMP/redis.err"
	t3=$(date +%s%N)
	JPID=''
	rm -f "$TMP/redis.json"
	echo "$u $a $(((t1 - t0) / 1000000)) $(((t3 - t2) / 1000000))" >>"$TMP/redis.$name"
	[ "$name" = uprobe ] && lost_in "$TMP/redis-$name.txt" >>"$TMP/redis.lost"
}

run_redis() {
	local r
	redis_start
	: >"$TMP/redis.err"
	for ((r = 1; r <= RUNS; r++)); do
		printf '  redis round %d/%d: ptrace' "$r" "$RUNS" >&2
		redis_pair ptrace --source ptrace
		if [ $UPROBE = 1 ]; then
			printf ' uprobe' >&2
			redis_pair uprobe --source uprobe
		fi
		echo >&2
	done
	redis-cli -p "$PORT" dbsize >"$TMP/redis.dbsize" 2>&1
	kill -TERM "$RPID"
	wait "$RPID"
	RPID=''
}

# "redis SET req/s" of one source: median untraced, median attached, and their ratio.
print_redis_line() {
	local name=$1 label=$2
	[ -s "$TMP/redis.$name" ] || return 0
	awk -v l="$label" -v bar="$3" '{ u[NR] = $1; a[NR] = $2; at[NR] = $3 / 1000; de[NR] = $4 / 1000 }
		function med(v,   n, i, j, t) { n = NR
			for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
			return v[int((n + 1) / 2)] }
		END { mu = med(u); ma = med(a)
			printf "redis SET req/s: untraced %.0f, %s %.0f: %.3f of untraced", mu, l, ma, ma / mu
			if (bar != "") printf "   (bar: at least %s) %s", bar, (ma / mu >= bar) ? "met" : "MISSED"
			printf "\n  %s: attach (to its first snapshot) %.1f s, detach (SIGINT to exit) %.1f s\n", l, med(at), med(de) }' "$TMP/redis.$name"
}

print_redis() {
	echo
	echo "== redis-server $(redis-server --version | awk '{print $3}' | tr -d v=)," \
		"redis-benchmark -t set -n 20000 -c 10 -r 1000000 -d 64 (median of $RUNS pairs)"
	print_redis_line ptrace "attached (ptrace source)" ""
	if [ $UPROBE = 1 ]; then
		print_redis_line uprobe "attached (--source uprobe)" 0.2
		echo "  lost events while attached: $(cat "$TMP/redis.lost" 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')"
	else
		echo "  uprobe: $UPROBE_WHY"
	fi
	echo "  DBSIZE after the last detach: $(cat "$TMP/redis.dbsize")"
	[ -s "$TMP/redis.err" ] && { echo "  errors:"; sed 's/^/    | /' "$TMP/redis.err"; }
	return 0
}

# ---------------------------------------------------------------- main

install_missing
[ -x "$JT" ] || make -C "$ROOT" jmptrace >/dev/null || die "cannot build jmptrace"
probe_uprobe
print_versions
make_inputs
start=$(date +%s)
run_programs
print_programs
if [ "$REDIS" = 1 ]; then
	run_redis
	print_redis
fi
echo
echo "programs time $(($(date +%s) - start))s; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
