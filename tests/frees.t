#!/usr/bin/perl
# frees.t - frees are counted as the program makes them: glibc's own frees at thread exit
# are not the program's, a correct program has no unknown frees, and an invalid free
# (double free, free of an address inside a block or on the stack) is reported with its
# stack; after an attach, frees of older blocks stay unknown frees.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempdir);
use POSIX qw(WIFEXITED WEXITSTATUS);
use Test::More;
use JT;
use JTCheck;

my $JT = JT::jmptrace();
-x $JT or plan skip_all => "no jmptrace at $JT";
my @modes = $ENV{JT_MODES} ? split(/[\s,]+/, $ENV{JT_MODES}) : @JT::MODES;
# Thread exits fall differently from run to run: each figure is checked on several runs.
my $RUNS = $ENV{JT_FREES_RUNS} // 10;

# tests/progs/frees: 8 threads, thread i makes (i + 1) * K pairs and i + 1 free(NULL)s;
# main makes K pairs.
my $NTHREADS = 8;
sub frees_pairs { my ($k) = @_; $k * (1 + $NTHREADS * ($NTHREADS + 1) / 2) }
my $FREE_NULLS = $NTHREADS * ($NTHREADS + 1) / 2;

sub frees_run {
	my ($mode, $name, $k, $e) = @_;
	my $r = run_jt('frees', $mode, args => [$k, $e]);
	is($r->{exit}, 0, "$name: exit 0");
	is($r->{stdout}, "frees: done\n", "$name: stdout");
	my $s = snapshot_of($r, $name) or return;
	# Its stack tells a free of glibc's teardown not recognised (own.c) from a hit counted twice.
	is_deeply($s->{invalid_frees}, [], "$name: no invalid frees") or diag(explain($s->{invalid_frees}));
	check_gone($s, $name, 'fr_churn');
	return $s;
}

# Threads that return: nothing else frees, so the figures are the program's own, exactly.
for my $mode (@modes) {
	subtest "frees-$mode: threads that free everything, $RUNS runs" => sub {
		my $k = 100;
		for my $run (1 .. $RUNS) {
			my $name = "run $run";
			my $s = frees_run($mode, $name, $k, 0) or next;
			my $t = $s->{totals};
			is($t->{unknown_frees}, 0, "$name: unknown frees 0");
			is($t->{frees}, frees_pairs($k), "$name: frees " . frees_pairs($k) . ', the program\'s own');
			is(calls_of($s, 'free'), frees_pairs($k) + $FREE_NULLS,
			   "$name: free calls " . (frees_pairs($k) + $FREE_NULLS) . ' (with the free(NULL)s)');
		}
	};
}

# Odd threads call pthread_exit: its unwinder allocates and frees on its own (in a dynamic
# program it loads libgcc_s), the same with K = 0 as with K = 100; the program's part is
# then the difference, exactly.
for my $mode (@modes) {
	subtest "frees-$mode: threads that call pthread_exit" => sub {
		my $base = frees_run($mode, 'K 0', 0, 1) or return;
		is($base->{totals}{unknown_frees}, 0, 'K 0: unknown frees 0');
		for my $run (1 .. 3) {
			my $name = "K 100, run $run";
			my $s = frees_run($mode, $name, 100, 1) or next;
			is($s->{totals}{unknown_frees}, 0, "$name: unknown frees 0");
			check_call_deltas($base, $s, "$name: K 0 -> 100", is_static($mode),
					  malloc => frees_pairs(100), free => frees_pairs(100));
			check_total_deltas($base, $s, "$name: K 0 -> 100", frees => frees_pairs(100),
					   alloc_calls => frees_pairs(100), unknown_frees => 0, live_blocks => 0);
		}
	};
}

# tests/progs/badfree: its own allocator ignores its invalid frees; jmptrace lists them,
# most first, then in the order they were first made.
# bf_interior_free's are of a pointer inside a live block, told apart from the others.
my @INVALID = (
	# count, of those inside a live block, function, marker in bf_bad.c, marker of the call in main.c
	[3, 0, 'bf_double_free', 'SITE:bf_double_free', 'SITE:main_double'],
	[2, 2, 'bf_interior_free', 'SITE:bf_interior_free', 'SITE:main_interior'],
	[1, 0, 'bf_stack_free', 'SITE:bf_stack_free', 'SITE:main_stack'],
	[1, 0, 'bf_realloc_stack', 'SITE:bf_realloc_stack', 'SITE:main_realloc'],
);

sub check_invalid_json {
	my ($s) = @_;
	my @inv = @{ $s->{invalid_frees} // [] };
	is(scalar(@inv), scalar(@INVALID), 'JSON: ' . scalar(@INVALID) . ' invalid-free stacks')
		or diag(explain(\@inv));
	for my $i (0 .. $#INVALID) {
		my ($count, $inside, $func, $mark, $cmark) = @{ $INVALID[$i] };
		my $f = $inv[$i]{frames} // [];
		is($inv[$i]{count}, $count, "JSON: #" . ($i + 1) . " counts $count");
		is($inv[$i]{inside}, $inside, "JSON: #" . ($i + 1) . " $inside of them inside a live block");
		my $line = site_line('badfree/bf_bad.c', $mark);
		ok(frame_func_is($f->[0], $func) && frame_file_is($f->[0], 'bf_bad.c')
		   && ($f->[0]{line} // -1) == $line, "JSON: #" . ($i + 1) . " frame 0 is $func at bf_bad.c:$line")
			or diag(describe_frame($f->[0]));
		my $cline = site_line('badfree/main.c', $cmark);
		ok(frame_func_is($f->[1], 'main') && frame_file_is($f->[1], 'main.c')
		   && ($f->[1]{line} // -1) == $cline, "JSON: #" . ($i + 1) . " frame 1 is main at main.c:$cline")
			or diag(describe_frame($f->[1]));
	}
}

sub check_invalid_text {
	my ($text) = @_;
	like($text, qr/^7 invalid frees from 4 stacks: 2 of a pointer inside a live block, 5 of addresses that were no live block \(double frees, frees of non-heap pointers\):\n\n/m,
	     'text: the invalid-free header');
	for my $i (0 .. $#INVALID) {
		my ($count, $inside, $func, $mark, $cmark) = @{ $INVALID[$i] };
		my $what = $inside ? ', of a pointer inside a live block' : '';
		my $line = site_line('badfree/bf_bad.c', $mark);
		my $cline = site_line('badfree/main.c', $cmark);
		my $n = $i + 1;
		my $calls = $count == 1 ? 'call' : 'calls';
		like($text, qr/^Invalid free #$n: $count $calls from this stack\Q$what\E\n    at 0x[0-9a-f]+: \Q$func\E \(bf_bad\.c:$line\)\n    by 0x[0-9a-f]+: main \(main\.c:$cline\)\n/m,
		     "text: invalid free #$n, $count from $func (bf_bad.c:$line) called by main (main.c:$cline)");
	}
}

for my $mode (@modes) {
	subtest "badfree-$mode: invalid frees with their stacks" => sub {
		my $n = run_native('badfree', $mode);
		is($n->{stdout}, "badfree: 7 invalid frees ignored\n", 'native: stdout');
		my $r = run_jt('badfree', $mode);
		same_as_native($r, $n, 'traced');
		my $s = snapshot_of($r, 'badfree') or return;
		my $t = $s->{totals};
		is($t->{unknown_frees}, 7, 'unknown frees 7: the invalid ones');
		is($t->{frees}, 10, 'frees 10: the valid ones');
		is(calls_of($s, 'free'), 17, 'free calls 17: 10 valid, 6 invalid, 1 free(NULL)');
		is(calls_of($s, 'realloc'), 1, 'realloc calls 1 (of a stack address: an invalid free)');
		is($t->{live_blocks}, $mode =~ /static/ ? 5 : 0, 'live blocks: only the C library\'s in a static program');
		check_invalid_json($s);
		check_invalid_text($r->{report} // '');
	};
}

# attach: blocks made before the attach and freed after it are unknown frees, not invalid.
for my $mode (qw(pie static)) {
	subtest "attach-$mode: frees of blocks from before the attach are unknown, not invalid" => sub {
		my $dir = tempdir('jt-frees-XXXXXX', TMPDIR => 1, CLEANUP => 1);
		attach_released([JT::prog_path('attach', $mode)], $dir, '--json', "$dir/r.json", '-o', "$dir/r.txt")
			or return;
		my $x = read_json("$dir/r.json");
		my $s = $x && $x->{snapshots}[-1];
		ok($s, 'a last snapshot') or return;
		is($s->{totals}{unknown_frees}, 5, 'the 5 blocks from before the attach are unknown frees');
		is_deeply($s->{invalid_frees}, [], 'and no invalid frees');
		unlike(JT::slurp("$dir/r.txt") // '', qr/invalid free/i, 'the text report names no invalid free');
	};
}

done_testing();
