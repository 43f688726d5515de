#!/usr/bin/env bash
# soak.sh - a long run as an operator makes one: redis-server under steady load, jmptrace attached with snapshots every second; what it costs over time.
#
# usage: bash bench/soak.sh [SECONDS [INTERVAL]]   (default 150 s, snapshots every 1 s), as root
#        on Debian 12; `make bench` runs it with the defaults.
#
# Environment:
#   JMPTRACE=PATH   the jmptrace to measure (default ./jmptrace)
#
# redis-server (Debian's, jemalloc) on a free loopback port; redis-benchmark runs in a loop
# (SET, GET, LPUSH, LPOP, INCR; 10 clients, a million keys, 64-byte values) the whole time.
# Its rate untraced (three runs) is taken first; then `jmptrace -p` with its default source,
# --interval, --json and --html, for SECONDS. Printed: lost events, the snapshots' lateness
# (JSON late_ms), the JSON's and the page's bytes per snapshot after the first, jmptrace's
# memory every 10 s, the detach's time, the server's keys and answer after it, and its
# traced rate against the untraced one. Nothing here asserts: tests/uprobe_server.t runs a
# short form that does.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
JT=${JMPTRACE:-$ROOT/jmptrace}
SECS=${1:-150}
IV=${2:-1}
TMP=$(mktemp -d /tmp/jmptrace-soak.XXXXXX)
RPID='' JPID='' LPID=''

die() { echo "soak.sh: $*" >&2; exit 1; }

# Detaches a jmptrace left attached (SIGINT: SIGKILL could leave trap bytes), ends the load and redis.
cleanup() {
	touch "$TMP/stop"
	if [ -n "$JPID" ] && kill -0 "$JPID" 2>/dev/null; then
		kill -INT "$JPID"
		wait "$JPID" 2>/dev/null
	fi
	[ -z "$LPID" ] || wait "$LPID" 2>/dev/null
	[ -z "$RPID" ] || kill -TERM "$RPID" 2>/dev/null
	wait 2>/dev/null
}
trap 'cleanup; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM HUP

. "$HERE/lib.sh"

[[ "$SECS" =~ ^[0-9]+$ ]] && [ "$SECS" -ge 10 ] || die "SECONDS must be a whole number, 10 or more"
[ "$(id -u)" = 0 ] || die "run it as root: the default source of a plain user is ptrace, and run.sh measures that"
[ -x "$JT" ] || make -C "$ROOT" jmptrace >/dev/null || die "cannot build jmptrace"
command -v redis-server >/dev/null 2>&1 && command -v redis-benchmark >/dev/null 2>&1 ||
	apt_install redis-server redis-tools

# One redis-benchmark run; its requests per second summed over the five commands, or nothing.
load_once() {
	redis-benchmark -t set,get,lpush,lpop,incr -n 20000 -c 10 -r 1000000 -d 64 -p "$PORT" --csv \
		</dev/null 2>>"$TMP/load.err" | awk -F'"' 'NR > 1 && $4 + 0 > 0 { s += $4 } END { if (s) printf "%.0f\n", s }'
}

# The load, run after run until TMP/stop exists: one line per run, "END_NS RATE".
load_loop() {
	local r
	while [ ! -e "$TMP/stop" ]; do
		r=$(load_once)
		[ -n "$r" ] && echo "$(date +%s%N) $r"
	done
}

redis_start

untraced=$(for i in 1 2 3; do load_once; done | sort -n | awk '{ v[NR] = $1 } END { print v[2] }')
[ -n "$untraced" ] || die "redis-benchmark gave no rate: $(tail -3 "$TMP/load.err")"
load_loop >"$TMP/load.traced" &
LPID=$!

t0=$(date +%s%N)
"$JT" -v -p "$RPID" --interval "$IV" --json "$TMP/soak.json" --html "$TMP/soak.html" -o "$TMP/soak.txt" \
	2>"$TMP/jt.err" &
JPID=$!
echo "== soak: redis-server (pid $RPID) under redis-benchmark's loop, jmptrace -p --interval $IV for $SECS s"
printf '   %6s %12s %12s %12s\n' "s" "jmptrace RSS" "JSON bytes" "page bytes"
for ((s = 10; s <= SECS; s += 10)); do
	sleep 10
	kill -0 "$JPID" 2>/dev/null || break
	printf '   %6d %10s kB %12s %12s\n' "$s" "$(awk '/^VmRSS:/ { print $2 }' "/proc/$JPID/status")" \
		"$(stat -c %s "$TMP/soak.json" 2>/dev/null || echo -)" "$(stat -c %s "$TMP/soak.html" 2>/dev/null || echo -)"
	[ "$s" = 10 ] && json10=$(stat -c %s "$TMP/soak.json" 2>/dev/null || echo 0)
done
hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$JPID/status" 2>/dev/null)
t1=$(date +%s%N)
kill -INT "$JPID"
wait "$JPID"
jrc=$?
t2=$(date +%s%N)
JPID=''
keys=$(redis-cli -p "$PORT" dbsize 2>/dev/null)
pong=$(redis-cli -p "$PORT" ping 2>/dev/null)
touch "$TMP/stop"
wait "$LPID"
LPID=''

traced=$(awk -v a="$t0" -v b="$t1" '$1 > a && $1 <= b { s += $2; n++ } END { if (n) printf "%.0f\n", s / n }' "$TMP/load.traced")
python3 - "$TMP/soak.json" "$TMP/soak.html" "${json10:-0}" "$SECS" "$IV" <<'EOF'
import json, os, sys
j = json.load(open(sys.argv[1]))
snaps = j.get("snapshots", [])
late = [s.get("late_ms") or 0 for s in snaps if s.get("reason") == "interval"]
lost = (snaps[-1].get("totals", {}).get("lost_events", 0) if snaps else 0)
print(f"   source {snaps[-1].get('totals', {}).get('source', '?') if snaps else '?'}; snapshots {len(snaps)}; lost events {lost}; late_ms max {max(late) if late else 0}, "
      f"over 200 ms: {sum(1 for l in late if l > 200)}")
n = len(snaps)
js, hs = os.path.getsize(sys.argv[1]), os.path.getsize(sys.argv[2])
j10, secs, iv = int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
after = max(1, round((secs - 10) / iv))
print(f"   JSON {js} bytes, {(js - j10) // after if j10 else 0} a snapshot after the first 10 s; "
      f"page {hs} bytes (the JSON + {hs - js})")
EOF
echo "   detach: $(((t2 - t1) / 1000000)) ms, jmptrace exit $jrc; redis answers ${pong:-nothing} with ${keys:-?} keys"
echo "   max RSS of jmptrace: ${hwm:-?} kB"
if [ -n "$traced" ]; then
	echo "   requests/s: untraced $untraced, traced $traced ($(awk -v t="$traced" -v u="$untraced" 'BEGIN { printf "%.2f", t / u }') of untraced)"
else
	echo "   requests/s: untraced $untraced, traced: no load run ended while traced"
fi
grep -E "passed over|events lost" "$TMP/jt.err" | sed 's/^/   /'
