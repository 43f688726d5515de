#!/usr/bin/perl
# unlocked.t - unwinds outside the tracer lock against what changes under them: with 2
# tracer threads, threads of dlchurn allocate deep in their stacks while main loads and
# unloads libraries (the dynamic linker's breakpoint changes the module set and breakpoint
# table) or execs; every run must end cleanly with exact figures. Repeated, as a missing
# gate fails only in some runs.
#
# Environment: JMPTRACE, JT_TIMEOUT, JT_MODES (e.g. "pie,static"), JT_RUNS (runs per
# dynamic mode and unwinder, default 10).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JT;
use JTCheck;

my $JT = JT::jmptrace();
-x $JT or plan skip_all => "no jmptrace at $JT";
my @modes = $ENV{JT_MODES} ? split(/[ ,]+/, $ENV{JT_MODES}) : @JT::MODES;
my $RUNS = $ENV{JT_RUNS} // 10;

# dlchurn's figures (tests/progs/dlchurn/dlchurn.h).
my ($THREADS, $DEPTH, $CHURN_SIZE, $LEAK_SIZE, $KEEP_EVERY, $KEEP_SIZE) = (4, 49, 56, 88, 16, 24);
# About as long for the pairs as for the dlopen rounds (~0.6 s each under jmptrace).
my ($K, $D) = (10000, 1000);

# One dlchurn run under jmptrace; returns its last snapshot (undef when there is none).
sub dlchurn_run {
	my ($mode, $name, $opts, @args) = @_;
	my $r = run_jt('dlchurn', $mode, jt_args => ['--tracer-threads', @$opts], args => \@args);
	is($r->{exit}, 0, "$name: exit 0") or diag("signal " . ($r->{signal} // 'none'));
	is($r->{stdout}, "dlchurn: done\n", "$name: stdout");
	is($r->{stderr}, '', "$name: nothing on stderr") or diag($r->{stderr});
	return snapshot_of($r, $name);
}

# The functions of a stack, innermost first, up to and including the first $last.
sub funcs_to {
	my ($stack, $last) = @_;
	my @f;
	for my $fr (@{ $stack->{frames} }) {
		push @f, $fr->{function} // '??';
		last if $f[-1] eq $last;
	}
	return join(' ', @f);
}

# Every stack of dc_keep (DEPTH distinct functions deep) is the same, and whole: a wrong
# unwind makes a stack of its own, or shortens one.
sub check_deep_stacks {
	my ($s, $name, $k) = @_;
	my $n = $THREADS * int($k / $KEEP_EVERY);
	check_site($s, $name, func => 'dc_keep', file => 'dlchurn/dc_churn.c', marker => 'SITE:dc_keep',
		   live_bytes => $n * $KEEP_SIZE, live_blocks => $n, alloc_calls => $n, nstacks => 1,
		   caller => ['dc_churn', 'dlchurn/dc_churn.c', 'CALL:dc_keep']);
	my $want = join(' ', 'dc_keep', 'dc_churn', map({ "dc_deep$_" } reverse(0 .. $DEPTH - 1)), 'worker');
	my @bad = grep { funcs_to($_, 'worker') ne $want || @{ $_->{frames} } != $DEPTH + 5 }
		  stacks_with_frame0($s, 'dc_keep');
	ok(!@bad, "$name: every dc_keep stack is dc_keep dc_churn dc_deep" . ($DEPTH - 1)
	   . " .. dc_deep0 worker, then start_thread and clone3")
		or diag(describe_stacks({ stacks => \@bad }));
}

# The figures of a run with K pairs per thread, against the reference run without pairs:
# the leak sites exact, the churn site gone, and every total differing by the pairs and
# dc_keep's blocks alone.
sub check_run {
	my ($s, $ref, $name, $k) = @_;
	my $kept = $THREADS * int($k / $KEEP_EVERY);
	check_site($s, $name, func => 'dc_leak', file => 'dlchurn/dc_leak.c', marker => 'SITE:dc_leak',
		   live_bytes => $THREADS * $LEAK_SIZE, live_blocks => $THREADS, alloc_calls => $THREADS,
		   alloc_bytes => $THREADS * $LEAK_SIZE, nstacks => 1,
		   caller => ['worker', 'dlchurn/main.c', 'CALL:dc_leak']);
	check_deep_stacks($s, $name, $k);
	check_gone($s, $name, 'dc_churn');
	is($s->{totals}{unknown_frees}, 0, "$name: no unknown frees");
	is(scalar(@{ $s->{invalid_frees} // [] }), 0, "$name: no invalid frees");
	# dc_churn made exactly 4K malloc+free pairs, and dc_keep 4K/16 mallocs.
	check_call_deltas($ref, $s, "$name against no pairs", 0, malloc => $THREADS * $k + $kept,
			  free => $THREADS * $k);
	check_total_deltas($ref, $s, "$name against no pairs", alloc_calls => $THREADS * $k + $kept,
			   frees => $THREADS * $k, live_blocks => $kept, live_bytes => $kept * $KEEP_SIZE,
			   bytes_allocated => $THREADS * $k * $CHURN_SIZE + $kept * $KEEP_SIZE,
			   unknown_frees => 0);
}

# Runs dlchurn K D $runs times with 2 tracer threads and the given unwinder; returns how
# many runs failed.
sub repeated {
	my ($mode, $unwinder, $k, $d, $runs) = @_;
	my $ref = dlchurn_run($mode, "reference (1 tracer thread, no pairs)", [1], 0, $d) or return $runs;
	my $failed = 0;
	for my $i (1 .. $runs) {
		my $ok = subtest "run $i of $runs: dlchurn $k $d, 2 tracer threads, unwinder $unwinder" => sub {
			my $s = dlchurn_run($mode, "run $i", [2, '--unwinder', $unwinder], $k, $d) or return;
			check_run($s, $ref, "run $i", $k);
		};
		$failed++ unless $ok;
	}
	return $failed;
}

# The dynamic builds load and unload libraries while the threads allocate. Both unwinders:
# the libunwind backend looks modules up at every frame (the default only when it builds a
# rule), so it is the one that meets a change of the module set most often.
for my $mode (grep { $_ eq 'pie' || $_ eq 'nopie' } @modes) {
	for my $unwinder (qw(dw libunwind)) {
		subtest "dlchurn-$mode, unwinder $unwinder: dlopen and dlclose while threads allocate, $RUNS runs" => sub {
			my $failed = repeated($mode, $unwinder, $K, $D, $RUNS);
			is($failed, 0, "$failed of $RUNS runs failed");
		};
	}
}

# The static builds have no dynamic linker: the same figures without the dlopen rounds.
for my $mode (grep { /static/ } @modes) {
	subtest "dlchurn-$mode: threads allocate, no dlopen" => sub {
		is(repeated($mode, 'dw', $K, 0, 1), 0, 'the run passed');
	};
}

# An exec while the other threads allocate, right after a dlopen in the dynamic builds (their
# unwinds start over then): the threads are gone, the new image runs to its end.
for my $mode (@modes) {
	subtest "dlchurn-$mode: exec while threads allocate, 3 runs" => sub {
		for my $i (1 .. 3) {
			my $r = run_jt('dlchurn', $mode, jt_args => ['--tracer-threads', 2], args => [$K / 10, 0, 'exec']);
			is($r->{exit}, 0, "exec run $i: exit 0") or diag("signal " . ($r->{signal} // 'none'));
			is($r->{stdout}, "dlchurn: exec'd\n", "exec run $i: stdout is the new image's");
			is($r->{stderr}, '', "exec run $i: nothing on stderr") or diag($r->{stderr});
			my $s = snapshot_of($r, "exec run $i") or next;
			is($s->{exit_status}, 0, "exec run $i: the snapshot says exit status 0");
			check_gone($s, "exec run $i", $_) for qw(dc_churn dc_keep dc_leak);
		}
	};
}

done_testing();
