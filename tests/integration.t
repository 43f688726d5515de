#!/usr/bin/perl
# integration.t - runs the programs of tests/progs under jmptrace in all four link modes and
# checks exact figures: live bytes, blocks and call sites of each leak, per-function call
# counts (as differences between two runs, since libc allocates on its own at start-up),
# every allocator, the peak, C++ operators and exceptions, threads, shared and dlopen'ed
# libraries, and the samples. Every program leaks from functions that sit in their own
# files; expected lines come from marker comments in the sources. target.t has what the
# program itself meets: its signals, stdin/stdout, fork and exec, -p, and bad input.
#
# Environment: JMPTRACE (the binary under test, default ./jmptrace), JT_TIMEOUT (seconds
# per run, default 120), JT_MODES (e.g. "pie static" to run fewer link modes).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Basename qw(basename);
use Test::More;
use JT;
use JTCheck;

my $JT = JT::jmptrace();
BAIL_OUT("no executable jmptrace at $JT (make jmptrace, or set JMPTRACE)") unless -x $JT;
system('make', '-s', '-C', root() . '/tests/progs') == 0
	or BAIL_OUT('cannot build the test programs (make -C tests/progs)');

my @modes = $ENV{JT_MODES} ? split(/[\s,]+/, $ENV{JT_MODES}) : @MODES;

# ---------------------------------------------------------------------------------------
# leak: leak_here() leaks N blocks; churn() frees all it takes; ctor and atexit leaks.

for my $mode (@modes) {
	subtest "leak-$mode" => sub {
		my $prog = "leak-$mode";
		my $n = run_native('leak', $mode, [10]);
		is($n->{stdout}, "leak: leaked 10 blocks\n", 'native: stdout');
		is($n->{exit}, 3, 'native: exit status 3');
		my $r = run_jt('leak', $mode, args => [10]);
		same_as_native($r, $n, 'leak 10');
		is($r->{stderr}, '', 'nothing on stderr when the report goes to -o');
		my $s = snapshot_of($r, 'leak 10') or return;
		check_shape($s, 'leak 10', reason => 'exit', exit_status => 3, killed_by => undef, prog => $prog);
		check_site($s, 'leak 10', func => 'leak_here', file => 'leak/leak_here.c', marker => 'LEAK-SITE',
			   live_bytes => leak_bytes(0, 10), live_blocks => 10, alloc_calls => 10,
			   alloc_bytes => leak_bytes(0, 10), nstacks => 1, module => $prog,
			   caller => ['main', 'leak/main.c', 'CALL-LEAK']);
		check_site($s, 'leak 10', func => 'leak_small', file => 'leak/leak_small.c', marker => 'SMALL-SITE',
			   live_bytes => 8, live_blocks => 1, alloc_calls => 1, module => $prog);
		check_site($s, 'leak 10', func => 'leak_in_ctor', file => 'leak/ctor.c', marker => 'CTOR-SITE',
			   live_bytes => 55, live_blocks => 1, alloc_calls => 1, module => $prog);
		check_site($s, 'leak 10', func => 'leak_at_exit', file => 'leak/ctor.c', marker => 'ATEXIT-SITE',
			   live_bytes => 77, live_blocks => 1, alloc_calls => 1, module => $prog);
		check_gone($s, 'leak 10', 'churn');
		my $line = site_line('leak/leak_here.c', 'LEAK-SITE');
		like($r->{report}, qr/leak_here/, 'text report names leak_here');
		like($r->{report}, qr/leak_here\.c:$line\b/, "text report gives leak_here.c:$line");

		# The same program with twice the blocks and exit status 0.
		my $n2 = run_native('leak', $mode, [20, 0]);
		my $r2 = run_jt('leak', $mode, args => [20, 0]);
		same_as_native($r2, $n2, 'leak 20 0');
		my $s2 = snapshot_of($r2, 'leak 20 0') or return;
		is($s2->{exit_status}, 0, 'leak 20 0: exit_status 0');
		check_site($s2, 'leak 20', func => 'leak_here', file => 'leak/leak_here.c', marker => 'LEAK-SITE',
			   live_bytes => leak_bytes(0, 20), live_blocks => 20, alloc_calls => 20, nstacks => 1);
		check_call_deltas($s, $s2, 'leak 10 -> 20', is_static($mode), malloc => 20, free => 10);
		check_total_deltas($s, $s2, 'leak 10 -> 20', live_blocks => 10, live_bytes => leak_bytes(10, 20),
				   bytes_allocated => leak_bytes(10, 20) + 10 * 64, alloc_calls => 20,
				   frees => 10, unknown_frees => 0);
	};
}

# ---------------------------------------------------------------------------------------
# Report options: the report on stderr without -o, --top, --depth.

for my $mode (grep { $_ eq 'pie' || $_ eq 'static' } @modes) {
	subtest "report options, leak-$mode" => sub {
		my $line = site_line('leak/leak_here.c', 'LEAK-SITE');
		my $r = run_jt('leak', $mode, args => [10], no_o => 1);
		is($r->{exit}, 3, 'without -o: exit status 3');
		is($r->{stdout}, "leak: leaked 10 blocks\n", 'without -o: stdout is only the program\'s');
		like($r->{stderr}, qr/leak_here\.c:$line\b/, 'without -o: the text report is on stderr');

		$r = run_jt('leak', $mode, args => [10], jt_args => ['--top', '1']);
		is($r->{exit}, 3, '--top 1: exit status 3');
		like($r->{report}, qr/leak_here/, '--top 1: the largest stack (leak_here) is listed');
		unlike($r->{report}, qr/leak_small/, '--top 1: the 8-byte leak_small stack is not');
		my $s = last_snapshot($r);
		ok($s && stacks_with_frame0($s, 'leak_small'), '--top 1: the JSON still has every stack');

		$r = run_jt('leak', $mode, args => [10], jt_args => ['--top', '1000']);
		like($r->{report}, qr/leak_small/, '--top 1000: leak_small is listed');

		# --depth N records at most N frames (return addresses) per stack; the JSON then
		# expands each into its inlined calls, all but the last marked "inlined": true.
		$r = run_jt('leak', $mode, args => [10], jt_args => ['--depth', '2']);
		is($r->{exit}, 3, '--depth 2: exit status 3');
		$s = snapshot_of($r, '--depth 2') or return;
		my @deep = grep { grep({ !$_->{inlined} } @{ $_->{frames} }) > 2 } @{ $s->{stacks} };
		ok(!@deep, '--depth 2: no stack has more than 2 frames that are not inlined')
			or diag(describe_stacks($s, 10));
		check_site($s, '--depth 2', func => 'leak_here', file => 'leak/leak_here.c', marker => 'LEAK-SITE',
			   live_bytes => leak_bytes(0, 10), live_blocks => 10, alloc_calls => 10,
			   caller => ['main', 'leak/main.c', 'CALL-LEAK']);
	};
}

# ---------------------------------------------------------------------------------------
# allocators: every C allocator entry, ROUNDS times; see allocators/main.c.

# Live at exit per round: [function, marker tag, live bytes, live blocks, alloc calls].
my @ALLOC_SITES = (
	['a_malloc', 'a_malloc', 101, 1, 1],
	['a_calloc', 'a_calloc', 77, 1, 1],
	['a_realloc_grow', 'a_realloc_grow', 4000, 1, 1],
	['a_realloc_shrink', 'a_realloc_shrink', 300, 1, 1],
	['a_realloc_null', 'a_realloc_null', 55, 1, 1],
	['a_reallocarray', 'a_reallocarray_2', 260, 1, 1],
	['a_posix_memalign', 'a_posix_memalign', 224, 2, 2],
	['a_aligned_alloc', 'a_aligned_alloc', 256, 1, 1],
	['a_memalign', 'a_memalign', 96, 1, 1],
	['a_valloc', 'a_valloc', 5000, 1, 1],
	['a_pvalloc', 'a_pvalloc', 8192, 1, 1],
);
# Calls per round; nested calls (realloc(NULL) -> malloc, posix_memalign(8) -> malloc,
# reallocarray -> realloc, realloc(p, 0) -> free) count only as the outer one.
my %ALLOC_CALLS = (malloc => 6, calloc => 1, realloc => 4, reallocarray => 2, posix_memalign => 2,
		   aligned_alloc => 1, memalign => 1, valloc => 1, pvalloc => 1, free => 2);
# Requested bytes of the successful allocations per round.
my $ALLOC_BYTES = (101 + 40 + 3000 + 66 + 77) + 77 + (4000 + 300 + 55) + (117 + 260) + (200 + 24)
	+ 256 + 96 + 5000 + 8192;

for my $mode (@modes) {
	subtest "allocators-$mode" => sub {
		my $prog = "allocators-$mode";
		my (%snap);
		for my $rounds (1, 3) {
			my $n = run_native('allocators', $mode, [$rounds]);
			is($n->{stdout}, "allocators: $rounds rounds\n", "native $rounds: stdout");
			my $r = run_jt('allocators', $mode, args => [$rounds]);
			same_as_native($r, $n, "allocators $rounds");
			is($r->{stderr}, '', "allocators $rounds: nothing on stderr");
			$snap{$rounds} = snapshot_of($r, "allocators $rounds");
		}
		my $s = $snap{3} or return;
		check_shape($s, 'allocators 3', reason => 'exit', exit_status => 0, killed_by => undef, prog => $prog);
		for my $site (@ALLOC_SITES) {
			my ($func, $tag, $bytes, $blocks, $calls) = @$site;
			check_site($s, 'allocators 3', func => $func, file => "allocators/$func.c",
				   marker => "SITE:$tag */", live_bytes => 3 * $bytes, live_blocks => 3 * $blocks,
				   alloc_calls => 3 * $calls, alloc_bytes => 3 * $bytes, module => $prog);
		}
		check_gone($s, 'allocators 3', $_) for qw(a_src a_malloc_fail a_realloc_zero a_free);
		# A dynamic program that avoids stdio allocates nothing before main (checked with
		# an LD_PRELOAD counter): there the totals of one round are exact as they stand.
		if (!is_static($mode) && $snap{1}) {
			my $one = $snap{1};
			my @bad = grep { calls_of($one, $_) != ($ALLOC_CALLS{$_} // 0) } @CALL_NAMES;
			ok(!@bad, 'allocators 1: every calls.* is exactly one round\'s')
				or diag(join(', ', map { "$_=" . calls_of($one, $_) . ' want ' . ($ALLOC_CALLS{$_} // 0) } @bad));
			my ($live, $blocks) = (0, 0);
			$live += $_->[2], $blocks += $_->[3] for @ALLOC_SITES;
			is($one->{totals}{live_bytes}, $live, "allocators 1: totals.live_bytes is $live");
			is($one->{totals}{live_blocks}, $blocks, "allocators 1: totals.live_blocks is $blocks");
			is($one->{totals}{bytes_allocated}, $ALLOC_BYTES, "allocators 1: totals.bytes_allocated is $ALLOC_BYTES");
			is($one->{totals}{unknown_frees}, 0, 'allocators 1: no unknown frees');
			# The highest point is just before a_free() frees its 77 bytes.
			is($one->{totals}{peak_live_bytes}, $live + 77, 'allocators 1: totals.peak_live_bytes is ' . ($live + 77));
		}
		return unless both($snap{1}, $snap{3});
		check_call_deltas($snap{1}, $s, 'allocators 1 -> 3', is_static($mode),
				  map { $_ => 2 * $ALLOC_CALLS{$_} } keys %ALLOC_CALLS);
		my ($live, $blocks) = (0, 0);
		$live += $_->[2], $blocks += $_->[3] for @ALLOC_SITES;
		check_total_deltas($snap{1}, $s, 'allocators 1 -> 3', live_bytes => 2 * $live,
				   live_blocks => 2 * $blocks, bytes_allocated => 2 * $ALLOC_BYTES, unknown_frees => 0);
	};
}

# The peak: a_peak(M) mallocs and frees M bytes after everything else, so the peak is
# M above the live bytes at that point, which do not depend on M.
for my $mode (@modes) {
	subtest "peak, allocators-$mode" => sub {
		my %s;
		for my $m (1000000, 3000000) {
			my $r = run_jt('allocators', $mode, args => [1, $m]);
			is($r->{exit}, 0, "peak $m: exit status 0");
			$s{$m} = snapshot_of($r, "peak $m");
		}
		return unless both($s{1000000}, $s{3000000});
		check_total_deltas($s{1000000}, $s{3000000}, 'peak 1e6 -> 3e6', peak_live_bytes => 2000000,
				   bytes_allocated => 2000000, live_bytes => 0, live_blocks => 0);
		check_call_deltas($s{1000000}, $s{3000000}, 'peak 1e6 -> 3e6', is_static($mode));
		cmp_ok($s{1000000}{totals}{peak_live_bytes}, '>=', 1000000 + $s{1000000}{totals}{live_bytes},
		       'peak 1e6: peak >= 1e6 + live at exit');
	};
}

# ---------------------------------------------------------------------------------------
# cxx: every operator new and delete, std::vector and std::string leaks, std::bad_alloc.

# Leaks per round: [function, file tag, bytes] with one block each.
my @CXX_NEW = (
	['cx_new', 40], ['cx_new_arr', 100], ['cx_new_nt', 40], ['cx_new_arr_nt', 70],
	['cx_new_al', 128], ['cx_new_arr_al', 256], ['cx_new_al_nt', 128], ['cx_new_arr_al_nt', 384],
);
# Operator calls per round: each cx_new_* once; each cx_del_* allocates with the matching
# new and releases with its delete; the vector and the string call operator new twice each.
my %CXX_CALLS = (
	'operator new' => 1 + 2 + 2 + 2, 'operator new[]' => 3, 'operator new(nothrow)' => 2,
	'operator new[](nothrow)' => 2, 'operator new(align)' => 3, 'operator new[](align)' => 3,
	'operator new(align, nothrow)' => 2, 'operator new[](align, nothrow)' => 2,
	map { $_ => 1 } grep { /^operator delete/ } @CALL_NAMES,
);
my $CXX_ROUND_BYTES = 40 + 100 + 40 + 70 + 128 + 256 + 128 + 384 + (24 + 200) + (32 + 101);

for my $mode (@modes) {
	subtest "cxx-$mode" => sub {
		my $prog = "cxx-$mode";
		my %snap;
		for my $a ([1, 1], [3, 1], [1, 3]) {
			my $k = "@$a";
			my $n = run_native('cxx', $mode, $a);
			is($n->{stdout}, "cxx: rounds $a->[0] caught $a->[1]\n", "native $k: stdout");
			is($n->{exit}, 0, "native $k: exit 0");
			my $r = run_jt('cxx', $mode, args => $a);
			same_as_native($r, $n, "cxx $k");
			is($r->{stderr}, '', "cxx $k: nothing on stderr");
			$snap{$k} = snapshot_of($r, "cxx $k");
		}
		my $s = $snap{'3 1'} or return;
		check_shape($s, 'cxx 3 1', reason => 'exit', exit_status => 0, killed_by => undef, prog => $prog);
		for my $e (@CXX_NEW) {
			my ($func, $bytes) = @$e;
			check_site($s, 'cxx 3 1', func => $func, file => "cxx/$func.cpp", marker => "SITE:$func */",
				   live_bytes => 3 * $bytes, live_blocks => 3, alloc_calls => 3,
				   alloc_bytes => 3 * $bytes, module => $prog);
		}
		check_gone($s, 'cxx 3 1', $_)
			for qw(cx_del cx_del_arr cx_del_sz cx_del_arr_sz cx_del_nt cx_del_arr_nt cx_del_al
			       cx_del_arr_al cx_del_sz_al cx_del_arr_sz_al cx_del_al_nt cx_del_arr_al_nt cx_throw);
		check_site($s, 'cxx 3 1', func => 'cx_vector_leak', file => 'cxx/cx_vector_leak.cpp',
			   marker => 'SITE:cx_vector_obj', live_bytes => 3 * 24, live_blocks => 3, alloc_calls => 3,
			   module => $prog);
		check_through($s, 'cxx 3 1 vector buffer', func => 'cx_vector_leak', file => 'cxx/cx_vector_leak.cpp',
			      marker => 'SITE:cx_vector_buf', live_bytes => 3 * 200, live_blocks => 3, alloc_calls => 3);
		check_through($s, 'cxx 3 1 string', func => 'cx_string_leak', file => 'cxx/cx_string_leak.cpp',
			      marker => 'SITE:cx_string', live_bytes => 3 * (32 + 101), live_blocks => 6, alloc_calls => 6);
		my $ml = site_line('cxx/cx_after_throw.cpp', 'SITE:cx_after_throw_malloc');
		my $nl = site_line('cxx/cx_after_throw.cpp', 'SITE:cx_after_throw_new');
		# Two call sites in one function, each checked by its line.
		my @m = stacks_with_frame0($s, 'cx_after_throw', $ml);
		my @nw = stacks_with_frame0($s, 'cx_after_throw', $nl);
		is(sum_field('live_bytes', @m) . '/' . sum_field('live_blocks', @m), '33/1',
		   "cxx 3 1: malloc after the caught throw is live at cx_after_throw.cpp:$ml")
			or diag(describe_stacks($s, 40));
		is(sum_field('live_bytes', @nw) . '/' . sum_field('live_blocks', @nw), '8/1',
		   "cxx 3 1: new after the caught throw is live at cx_after_throw.cpp:$nl");

		if (both($snap{'1 1'}, $s)) {
			check_call_deltas($snap{'1 1'}, $s, 'cxx rounds 1 -> 3', is_static($mode),
					  map { $_ => 2 * $CXX_CALLS{$_} } keys %CXX_CALLS);
			check_total_deltas($snap{'1 1'}, $s, 'cxx rounds 1 -> 3', live_blocks => 2 * 12,
					   live_bytes => 2 * $CXX_ROUND_BYTES, unknown_frees => 0);
		}
		# Each throw: operator new[] fails and throws (its malloc and the exception's are
		# nested in it), the catch frees the exception, cx_after_throw mallocs and news.
		if (both($snap{'1 1'}, $snap{'1 3'})) {
			check_call_deltas($snap{'1 1'}, $snap{'1 3'}, 'cxx throws 1 -> 3', is_static($mode),
					  'operator new[]' => 2, 'operator new' => 2, malloc => 2, free => 2);
			check_total_deltas($snap{'1 1'}, $snap{'1 3'}, 'cxx throws 1 -> 3', live_blocks => 4,
					   live_bytes => 2 * (33 + 8), bytes_allocated => 2 * (33 + 8));
			my @t = stacks_with_frame0($snap{'1 3'}, 'cx_after_throw');
			is(sum_field('live_blocks', @t), 6, 'cxx 1 3: 3 throws leave 6 blocks in cx_after_throw');
		}
	};
}

# ---------------------------------------------------------------------------------------
# threads: 8 threads, K malloc+free pairs and L leaked blocks of S bytes each.

for my $mode (@modes) {
	subtest "threads-$mode" => sub {
		my $prog = "threads-$mode";
		my %snap;
		for my $k (200, 1000) {
			my $n = run_native('threads', $mode, [$k, 5, 40]);
			my $r = run_jt('threads', $mode, args => [$k, 5, 40]);
			same_as_native($r, $n, "threads $k");
			is($r->{stdout}, "threads: done\n", "threads $k: stdout");
			$snap{$k} = snapshot_of($r, "threads $k");
		}
		my $s = $snap{1000} or return;
		check_shape($s, 'threads 1000', reason => 'exit', exit_status => 0, killed_by => undef, prog => $prog);
		check_site($s, 'threads 1000', func => 'th_leak', file => 'threads/th_leak.c', marker => 'SITE:th_leak',
			   live_bytes => 8 * 5 * 40, live_blocks => 8 * 5, alloc_calls => 8 * 5,
			   alloc_bytes => 8 * 5 * 40, module => $prog);
		check_gone($s, 'threads 1000', 'th_churn');
		return unless both($snap{200}, $s);
		check_call_deltas($snap{200}, $s, 'threads K 200 -> 1000', is_static($mode),
				  malloc => 8 * 800, free => 8 * 800);
		check_total_deltas($snap{200}, $s, 'threads K 200 -> 1000', live_bytes => 0, live_blocks => 0,
				   bytes_allocated => 8 * 800 * 48, alloc_calls => 8 * 800, frees => 8 * 800,
				   unknown_frees => 0);

		# Five waves of 8 threads, one after the other: 40 threads start and end traced.
		my $r = run_jt('threads', $mode, args => [100, 3, 24, 5]);
		is($r->{exit}, 0, 'threads, 5 waves: exit 0');
		is($r->{stdout}, "threads: done\n", 'threads, 5 waves: stdout');
		my $w = snapshot_of($r, 'threads, 5 waves') or return;
		check_site($w, 'threads, 5 waves', func => 'th_leak', file => 'threads/th_leak.c',
			   marker => 'SITE:th_leak', live_bytes => 5 * 8 * 3 * 24, live_blocks => 5 * 8 * 3,
			   alloc_calls => 5 * 8 * 3);
		check_gone($w, 'threads, 5 waves', 'th_churn');
		# At thread exit glibc frees its tcache and the blocks cached in it: its own business.
		is($w->{totals}{unknown_frees}, 0, 'threads, 5 waves: no unknown frees');
		is_deeply($w->{invalid_frees}, [], 'threads, 5 waves: no invalid frees');
	};
}

# ---------------------------------------------------------------------------------------
# plugin: leaks from a shared library and from a dlopen'ed one (linked in when static).

for my $mode (@modes) {
	subtest "plugin-$mode" => sub {
		my $prog = "plugin-$mode";
		my $n = run_native('plugin', $mode);
		is($n->{stdout}, "plugin: done\n", 'native: stdout');
		my $r = run_jt('plugin', $mode);
		same_as_native($r, $n, 'plugin');
		my $s = snapshot_of($r, 'plugin') or return;
		check_shape($s, 'plugin', reason => 'exit', exit_status => 0, killed_by => undef, prog => $prog);
		my $st = is_static($mode);
		check_site($s, 'plugin', func => 'solib_leak', file => 'plugin/solib.c', marker => 'SITE:solib_leak',
			   live_bytes => 300, live_blocks => 1, alloc_calls => 1,
			   module => $st ? $prog : 'libjtsolib.so', caller => ['main', 'plugin/main.c', 'SITE:call_solib']);
		check_site($s, 'plugin', func => 'plugin_leak', file => 'plugin/plugin.c', marker => 'SITE:plugin_leak',
			   live_bytes => 400, live_blocks => 1, alloc_calls => 1,
			   module => $st ? $prog : 'libjtplugin.so', caller => ['main', 'plugin/main.c', 'SITE:call_plugin']);
	};
}

# ---------------------------------------------------------------------------------------
# samples/: the figures their comments promise.

subtest 'samples' => sub {
	system('make', '-s', '-C', root() . '/samples') == 0 or return fail('make -C samples');
	my $sd = root() . '/samples';
	for my $sfx ('', '-static') {
		my $r = run_jt(undef, undef, path => "$sd/leaky$sfx");
		my $s = snapshot_of($r, "leaky$sfx") or next;
		my $l = line_of("$sd/leaky.c", 'LEAK: the old value');
		my @st = stacks_through($s, 'set', 'leaky.c', $l);
		is(sum_field('live_blocks', @st), 494, "leaky$sfx: 494 blocks live from set() at leaky.c:$l")
			or diag(describe_stacks($s, 10));

		$r = run_jt(undef, undef, path => "$sd/threads$sfx");
		$s = snapshot_of($r, "threads$sfx") or next;
		$l = line_of("$sd/threads.c", 'LEAK: not freed');
		@st = stacks_through($s, 'handle_job', 'threads.c', $l);
		is(sum_field('live_bytes', @st) . '/' . sum_field('live_blocks', @st), '102400/400',
		   "threads$sfx: 400 blocks of 256 bytes live from handle_job() at threads.c:$l")
			or diag(describe_stacks($s, 10));

		$r = run_jt(undef, undef, path => "$sd/shapes$sfx");
		$s = snapshot_of($r, "shapes$sfx") or next;
		for my $what ('Circle', 'Square') {
			$l = line_of("$sd/shapes.cpp", "new $what(");
			@st = stacks_through($s, 'make_shape', 'shapes.cpp', $l);
			is(sum_field('live_blocks', @st), 90, "shapes$sfx: 90 blocks live from new $what at shapes.cpp:$l")
				or diag(describe_stacks($s, 10));
		}
	}
};

done_testing();
