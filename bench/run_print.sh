# run_print.sh - what bench/run.sh prints from its jobs' medians: the tables, the ratios, the bars and what bounds them.
# Sourced by run.sh after its jobs ran, not run: it reads run.sh's job arrays (J_*), TMP and
# the tools' N, and uses lib.sh's helpers.

# Marginal microseconds per pair of a job, or NA.
us_per_pair() {
	local j=$1
	[ "${J_FAIL[$j]:-1}" = 0 ] || { echo NA; return; }
	awk -v a="${J_MED[$j]}" -v b="${J_MED0[$j]}" -v n="${J_N[$j]}" \
		'BEGIN { d = (a - b) / n / 1000; if (d <= 0) d = 0.0005; printf "%.4f\n", d }'
}

# Marginal pairs per second of a job, or NA.
pairs_per_s() {
	local u
	u=$(us_per_pair "$1")
	[ "$u" = NA ] && { echo NA; return; }
	awk -v u="$u" 'BEGIN { printf "%.0f\n", 1e6 / u }'
}

has_job() { [ -n "${J_TOOL[$1]:-}" ]; }

# Share of sampled stops, over all the job's timed runs, where the target had stopped on
# another CPU than its tracer thread: "1.2% (7/598)", or "-" when the tool does not say.
cross_share() {
	awk '{ c += $1; s += $2 } END { if (s) printf "%.1f%% (%d/%d)", 100 * c / s, c, s; else print "-" }' \
		"$TMP/$1.x" 2>/dev/null || echo -
}

ratio() {
	local a b
	has_job "$1" && has_job "$2" || return 0
	a=$(us_per_pair "$1"); b=$(us_per_pair "$2")
	if [ "$a" = NA ] || [ "$b" = NA ]; then
		printf '  %-34s %s\n' "$1 / $2" "n/a (a run failed)"
		return
	fi
	awk -v a="$a" -v b="$b" -v l="$1 / $2" 'BEGIN { printf "  %-34s %10.4g", l, a / b }'
	case $1 in
	jmptrace*)	printf '   cross-CPU stops: %s %s, %s %s' "$1" "$(cross_share "$1")" \
				"$2" "$(cross_share "$2")" ;;
	esac
	echo
}

print_table() {
	local j
	echo
	echo "== time per malloc+free pair (median of the repetitions; marginal = (t(N) - t(0)) / N)"
	printf '%-22s %10s %5s %10s %10s %12s %12s\n' tool N reps "median s" "s at N=0" \
		"us/pair" "marginal us"
	for j in "${JOBS[@]}"; do
		# The uprobe source's start-up varies by seconds: its figures are the loop's, below.
		case $j in *-8t|uprobe|uprobe-perf) continue ;; esac
		if [ "${J_FAIL[$j]}" = 1 ]; then
			printf '%-22s %10s %5s %10s\n' "$j" "${J_N[$j]}" "${J_REPS[$j]}" FAILED
			continue
		fi
		awk -v j="$j" -v n="${J_N[$j]}" -v r="${J_REPS[$j]}" -v a="${J_MED[$j]}" \
			-v b="${J_MED0[$j]}" -v m="$(us_per_pair "$j")" 'BEGIN {
			printf "%-22s %10d %5d %10.3f %10.3f %12.4f %12.4f\n", j, n, r, a / 1e9,
				b / 1e9, a / n / 1000, m }'
	done
	echo
	echo "== ratios of marginal cost per pair; cross-CPU stops: share of the sampled stops"
	echo "   (every 64th) where the target had stopped on another CPU than its tracer thread"
	ratio jmptrace floor
	ratio jmptrace-pin floor
	ratio jmptrace-pinned floor-pinned
	ratio jmptrace2 floor
	ratio jmptrace2 jmptrace
	ratio jmptrace2-pinned jmptrace-pinned
	ratio heaptrack jmptrace
	ratio massif jmptrace
	ratio ltrace jmptrace
	ratio floor untraced
}

# Each run's cost per pair inside the workload's loop (start and exit left out), for the
# ptrace tracers: whether a run may cost one of two prices by chance (issue 35), and
# jmptrace's dearest run against the floor's median.
print_spread() {
	local j fm
	echo
	echo "== spread over the runs: us per pair inside the workload's loop, each run"
	for j in floor jmptrace jmptrace2 floor-pinned jmptrace-pinned jmptrace-pin; do
		has_job "$j" && [ "${J_FAIL[$j]}" = 0 ] && [ -s "$TMP/$j.loop" ] || continue
		sort -n "$TMP/$j.loop" | awk -v j="$j" -v n="${J_N[$j]}" '{ v[NR] = $1 / n / 1000 }
			END { printf "  %-16s", j; for (i = 1; i <= NR; i++) printf " %7.2f", v[i]
				printf "   dearest/cheapest %.2f\n", v[NR] / v[1] }'
	done
	has_job jmptrace && has_job floor && [ "${J_FAIL[jmptrace]}" = 0 ] && [ "${J_FAIL[floor]}" = 0 ] || return 0
	fm=$(loop_us_per_pair floor)
	sort -n "$TMP/jmptrace.loop" | tail -n 1 | awk -v n="${J_N[jmptrace]}" -v f="$fm" \
		'{ printf "  jmptrace'"'"'s dearest run / the floor'"'"'s median: %.3f (bar: at most 1.3) %s\n",
			$1 / n / 1000 / f, ($1 / n / 1000 / f <= 1.3) ? "met" : "MISSED" }'
}

print_threads() {
	local tool r1 r8 rp
	echo
	echo "== threads: $THREADS threads sharing the same N pairs, vs 1 thread (marginal pairs/s)"
	echo "   (pinned: the 1-thread run with tracer and target on CPU 0 by taskset, the best"
	echo "   single-thread rate; a host where placement fails cannot inflate that ratio)"
	printf '%-12s %10s %14s %14s %14s %10s %10s\n' tool N "1 thread/s" "1 pinned/s" \
		"$THREADS threads/s" "ratio" "vs pinned"
	for tool in untraced floor jmptrace jmptrace-1tt jmptrace2; do
		has_job "$tool-8t" || continue
		# jmptrace-1tt (one tracer thread) is compared with jmptrace's 1-thread rates.
		r1=$(pairs_per_s "${tool%-1tt}"); r8=$(pairs_per_s "$tool-8t")
		rp=NA
		has_job "${tool%-1tt}-pinned" && rp=$(pairs_per_s "${tool%-1tt}-pinned")
		awk -v t="$tool" -v n="${J_N[$tool-8t]}" -v a="$r1" -v p="$rp" -v b="$r8" 'BEGIN {
			q = (a == "NA" || b == "NA") ? "n/a" : sprintf("%.2f", b / a)
			r = (p == "NA" || b == "NA") ? "n/a" : sprintf("%.2f", b / p)
			printf "%-12s %10d %14s %14s %14s %10s %10s\n", t, n, a, p, b, q, r }'
	done
}

# Prints "a / b" of two figures and whether it meets a bar: at most (le) or at least (ge) bar;
# not judged when the runs lost events (lost > 0).
bar_line() {
	local label=$1 a=$2 b=$3 op=$4 bar=$5 lost=$6
	if [ "$a" = NA ] || [ "$b" = NA ]; then
		printf '  %-34s %s\n' "$label" "n/a (a run failed)"
		return
	fi
	awk -v l="$label" -v a="$a" -v b="$b" -v op="$op" -v bar="$bar" -v lost="$lost" 'BEGIN {
		r = a / b; ok = (op == "le") ? (r <= bar) : (r >= bar)
		v = (lost > 0) ? "NOT JUDGED: " lost " events lost" : ok ? "met" : "MISSED"
		printf "  %-34s %10.3f   (bar: %s %s) %s\n", l, r, (op == "le") ? "at most" : "at least", bar, v }'
}

# The figures issue 18 sets bars for: the uprobe source's cost per pair against the ptrace
# floor, and its 8-thread event rate against its 1-thread rate. They are timed inside the
# workload's loop: the uprobe source's start-up and tear-down (opening and closing its perf
# events) take seconds and vary by seconds, more than a marginal over N pairs can remove.
# A bar is judged only when no event was lost: a lost event costs the reader nothing.
print_uprobe() {
	local j lost1 lost8
	echo
	echo "== event sources: us per malloc+free pair inside the workload's loop (median)"
	if [ $UPROBE = 0 ]; then
		echo "  uprobe: $UPROBE_WHY"
		return
	fi
	for j in untraced floor jmptrace uprobe uprobe-perf; do
		has_job "$j" || continue
		printf '  %-38s %10s\n' "$(source_label "$j")" "$(loop_us_per_pair "$j")"
	done
	lost1=$(sum_of "$TMP/uprobe.lost")
	lost8=$(sum_of "$TMP/uprobe-8t.lost")
	bar_line "uprobe / floor" "$(loop_us_per_pair uprobe)" "$(loop_us_per_pair floor)" le 0.25 "$lost1"
	bar_line "uprobe 8 threads / 1 thread (rate)" "$(loop_pairs_per_s uprobe-8t)" \
		"$(loop_pairs_per_s uprobe)" ge 1.5 $((lost1 + lost8))
	echo "  lost events in the uprobe source's timed runs: $lost1 (1 thread), $lost8 ($THREADS threads)"
	print_uprobe_bound
}

# What bounds the 8-thread ratio on this host. One thread keeps the program's thread busy
# all the time (t us a pair: the kernel's probes and copies) while the reader, on another
# CPU, applies the samples (r us a pair). With every CPU busy, C CPUs give at most C/(t + r)
# pairs a second: the ratio is at most C/(1 + r/t), and at most what the untraced workload
# itself reaches (the threads share the CPUs' caches, and a vCPU may be a hyperthread).
print_uprobe_bound() {
	local t r c u1 u8
	t=$(loop_us_per_pair uprobe)
	r=$(median <"$TMP/uprobe.reader" | awk -v n="${J_N[uprobe]}" 'NF { printf "%.4f\n", $1 / n / 1000 }')
	u1=$(us_per_pair untraced) u8=$(us_per_pair untraced-8t)
	c=$(nproc)
	if [ "$t" = NA ] || [ -z "$r" ]; then
		echo "  what bounds the ratio: n/a (no reader CPU in the uprobe runs' --verbose)"
		return
	fi
	awk -v t="$t" -v r="$r" -v c="$c" -v u1="$u1" -v u8="$u8" -v th="$THREADS" 'BEGIN {
		printf "  what bounds the ratio here: %d CPUs; one thread costs itself %.3f us a pair and the\n", c, t
		printf "    reader %.3f us on another CPU, so %d threads reach at most %d/(1 + %.3f/%.3f) = %.3f;\n",
			r, th, c, r, t, c / (1 + r / t)
		if (u1 != "NA" && u8 != "NA" && u8 > 0)
			printf "    the untraced workload itself: %d threads / 1 thread = %.3f\n", th, u1 / u8
	}'
}

sum_of() { awk '{ s += $1 } END { print s + 0 }' "$1"; }

source_label() {
	case $1 in
	untraced)	echo "untraced" ;;
	floor)		echo "ptrace floor (bench/floor.c)" ;;
	jmptrace)	echo "jmptrace (ptrace source)" ;;
	uprobe)		echo "jmptrace --source uprobe ($UPROBE_PATH path)" ;;
	uprobe-perf)	echo "jmptrace --source uprobe (perf path)" ;;
	esac
}

# jmptrace's own cost per traced process: start and exit of /bin/true under each source
# (median of 5 alternating rounds). The uprobe source's perf path closes each probe with
# a grace period of its own; the BPF path's links close together.
print_startup() {
	local src r t0 t1
	echo
	echo "== start and exit: jmptrace -- /bin/true, median of 5 alternating rounds, ms"
	for src in ptrace uprobe uprobe-perf; do : >"$TMP/start.$src"; done
	for r in 1 2 3 4 5; do
		for src in ptrace uprobe uprobe-perf; do
			case $src in uprobe*) [ $UPROBE = 1 ] || continue ;; esac
			t0=$(date +%s%N)
			if [ $src = uprobe-perf ]; then
				JMPTRACE_TEST_UPROBE_PATH=perf "$JT" --source uprobe -o /dev/null -- /bin/true >/dev/null 2>&1
			else
				"$JT" --source "$src" -o /dev/null -- /bin/true >/dev/null 2>&1
			fi
			t1=$(date +%s%N)
			echo $(((t1 - t0) / 1000000)) >>"$TMP/start.$src"
		done
	done
	for src in ptrace uprobe uprobe-perf; do
		[ -s "$TMP/start.$src" ] || continue
		printf '  %-38s %10s\n' "$(case $src in ptrace) echo "jmptrace (ptrace source)" ;; *) source_label "$src" ;; esac)" \
			"$(median <"$TMP/start.$src")"
	done
}
