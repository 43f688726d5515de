#!/usr/bin/env bash
# tests/prove.sh - prove, then on a failure the failed tests' diagnostics again, last, where the tail of a CI log shows them.
# prove prints a test's diagnostics where they happen, often hundreds of lines above
# its summary; a CI that keeps only the log's tail would show which test failed but
# never why. Arguments are prove's.
set -u
log=$(mktemp)
trap 'rm -f "$log"' EXIT
prove --failures "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
if [ "$rc" != 0 ]; then
	echo "---- the failures' diagnostics, again ----"
	# A failure's block: its "not ok" or "Failed test" line and the "#" lines after it (got, expected, diag).
	awk '/^[ \t]*not ok / { print; n = 15; next }
	     /^[ \t]*#[ \t]+Failed test/ { n = 15 }
	     n > 0 && /^[ \t]*#/ { print; n--; next }
	     { n = 0 }' "$log" | tail -n 40
	echo "Result: FAIL"
fi
exit "$rc"
