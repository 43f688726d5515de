#!/usr/bin/perl
# sigstack.t - a stack captured inside a signal handler that interrupted an allocator call
# goes through "<signal handler called>" and the interrupted call, whose return address
# jmptrace replaced, all the way to main. tests/progs/sigstack has its own async-signal-safe
# malloc, calloc and realloc, each of which sends itself SIGUSR1 from its middle; the
# handler allocates. A fourth malloc's handler malloc sends SIGUSR2 from its middle, whose
# handler allocates too: two replaced return addresses in flight. Every link mode, both
# unwinder backends; exact blocks, bytes and frames (function, file:line from markers).
# The same in 4 threads at once. Then, as the issue saw it, a 1 kHz SIGALRM whose handler allocates lands wherever it
# lands in a loop of allocator calls: each of its 300 blocks' stacks reaches main too. Between those calls the
# loop calls memset through the PLT 10000 times, so that in the static executable, whose stubs into the
# ifunc-chosen memset have no CFI, a few of the 300 land on the stub's jump in nearly every run (8 to 13 in
# most; the unwinders stopped there, or went into garbage, before they knew a stub as a function's entry).
#
# Environment: JMPTRACE (the binary under test), JT_TIMEOUT, JT_MODES (e.g. "pie static").
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
my $SIG = '<signal handler called>';

# A frame as [function, file, marker]; file under tests/progs/sigstack.
sub at { [$_[0], $_[1], site_line("sigstack/$_[1]", $_[2])] }

my $usr1 = at('ss_on_usr1', 'ss_handler.c', 'SITE:usr1');
my $usr2 = at('ss_on_usr2', 'ss_handler.c', 'SITE:usr2');
my $in_malloc = at('malloc', 'ss_alloc.c', 'KICK:malloc');
my $MAIN = at('main', 'main.c', 'CALL:rounds');
my $THREAD = at('ss_thread', 'main.c', 'CALL:thread');

# Each handler stack, innermost first, up to $outer (main, or the thread function); per
# round one block of this many bytes.
sub expected {
	my ($outer) = @_;
	my $rounds = sub { (at('ss_use_' . $_[0], 'ss_use.c', "SITE:use_$_[0]"), at('ss_rounds', 'ss_rounds.c', "CALL:$_[0]"), $outer) };
	return (
		{ name => 'SIGUSR1 in malloc', bytes => 24, frames => [$usr1, $SIG, $in_malloc, $rounds->('malloc')] },
		{ name => 'SIGUSR1 in calloc', bytes => 24,
		  frames => [$usr1, $SIG, at('calloc', 'ss_alloc.c', 'KICK:calloc'), $rounds->('calloc')] },
		{ name => 'SIGUSR1 in realloc', bytes => 24,
		  frames => [$usr1, $SIG, at('realloc', 'ss_alloc.c', 'KICK:realloc'), $rounds->('realloc')] },
		{ name => 'SIGUSR1 in malloc, outer', bytes => 24, frames => [$usr1, $SIG, $in_malloc, $rounds->('nested')] },
		{ name => 'SIGUSR2 in the SIGUSR1 handler\'s malloc', bytes => 40,
		  frames => [$usr2, $SIG, $in_malloc, $usr1, $SIG, $in_malloc, $rounds->('nested')] },
	);
}

sub frame_is {
	my ($f, $want) = @_;
	return 0 unless $f;
	return ($f->{function} // '') eq $SIG && !defined $f->{file} unless ref $want;
	my ($func, $file, $line) = @$want;
	return frame_func_is($f, $func) && frame_file_is($f, $file) && ($f->{line} // -1) == $line;
}

sub want_text { ref $_[0] ? "$_[0][0] ($_[0][1]:$_[0][2])" : $_[0] }

# Stacks whose first frames are exactly @$want.
sub stacks_like {
	my ($snap, $want) = @_;
	return grep {
		my $fr = $_->{frames};
		!grep { !frame_is($fr->[$_], $want->[$_]) } 0 .. $#$want
	} @{ $snap->{stacks} // [] };
}

# Handler blocks (frame 0 in a handler), and how many of them have $outer on their stack.
sub handler_blocks {
	my ($snap, $outer) = @_;
	my ($all, $reach) = (0, 0);
	for my $s (@{ $snap->{stacks} // [] }) {
		next unless frame_func_is($s->{frames}[0] // {}, 'ss_on_usr1') || frame_func_is($s->{frames}[0] // {}, 'ss_on_usr2');
		$all += $s->{live_blocks};
		$reach += $s->{live_blocks} if grep { frame_func_is($_, $outer) } @{ $s->{frames} };
	}
	return ($all, $reach);
}

# $n blocks per stack (rounds times threads); $outer: $MAIN or $THREAD.
sub check_stacks {
	my ($snap, $name, $n, $outer) = @_;
	my ($all, $reach) = handler_blocks($snap, $outer->[0]);
	is($all, 5 * $n, "$name: $all handler blocks");
	is($reach, $all, "$name: every handler block's stack reaches $outer->[0] ($reach of $all)");
	for my $e (expected($outer)) {
		my @st = stacks_like($snap, $e->{frames});
		is(scalar(@st), 1, "$name: $e->{name}: one stack " . join(' <- ', map { want_text($_) } @{ $e->{frames} }))
			or diag("stacks:\n" . describe_stacks($snap, 20) . "\n" . join("\n", map {
				join("\n  ", 'frames:', map { describe_frame($_) } @{ $_->{frames} }) } @{ $snap->{stacks} }));
		is(sum_field('live_blocks', @st), $n, "$name: $e->{name}: $n live blocks");
		is(sum_field('live_bytes', @st), $n * $e->{bytes}, "$name: $e->{name}: " . $n * $e->{bytes} . ' live bytes');
		is(sum_field('alloc_calls', @st), $n, "$name: $e->{name}: $n allocation calls");
	}
	my @sig = grep { ($_->{function} // '') eq $SIG } map { @{ $_->{frames} } } @{ $snap->{stacks} };
	my @bad = grep { defined $_->{file} || $_->{line} != 0 || !is_false($_->{inlined}) || !defined $_->{module} } @sig;
	ok(@sig >= 6 && !@bad, "$name: " . scalar(@sig) . " signal frames: a module, no file, line 0, not inlined")
		or diag(describe_frame($bad[0]));
}

# The text report names the signal frame, and never as a bare module offset.
sub check_text {
	my ($report, $name) = @_;
	my ($u2, $u1, $m) = map { $_->[2] } $usr2, $usr1, $in_malloc;
	like($report, qr/^    at 0x[0-9a-f]+: ss_on_usr2 \(ss_handler\.c:$u2\)\n    by 0x[0-9a-f]+: \Q$SIG\E\n    by 0x[0-9a-f]+: malloc \(ss_alloc\.c:$m\)\n    by 0x[0-9a-f]+: ss_on_usr1 \(ss_handler\.c:$u1\)\n    by 0x[0-9a-f]+: \Q$SIG\E\n    by 0x[0-9a-f]+: malloc \(ss_alloc\.c:$m\)\n    by 0x[0-9a-f]+: ss_use_nested /m,
	     "$name: text report: the nested stack, with both signal frames");
	unlike($report, qr/libc\.so\.6\+0x/, "$name: text report has no bare libc.so.6+0x frame");
}

for my $mode (@modes) {
	for my $be (qw(dw libunwind)) {
		subtest "sigstack-$mode, $be unwinder" => sub {
			my $prog = "sigstack-$mode";
			my %s;
			for my $n (10, 20) {
				my $nat = run_native('sigstack', $mode, [$n]);
				is($nat->{stdout}, "sigstack: usr1 " . 4 * $n . " usr2 $n\n", "native $n: stdout");
				my $r = run_jt('sigstack', $mode, args => [$n], jt_args => ['--unwinder', $be]);
				same_as_native($r, $nat, "sigstack $n");
				is($r->{stderr}, '', "sigstack $n: nothing on stderr");
				$s{$n} = snapshot_of($r, "sigstack $n") or next;
				check_shape($s{$n}, "sigstack $n", reason => 'exit', exit_status => 0, killed_by => undef,
					    prog => $prog);
				check_stacks($s{$n}, "sigstack $n", $n, $MAIN);
				check_text($r->{report}, "sigstack $n");
			}
			return unless both($s{10}, $s{20});
			# Per round: malloc in main, in ss_use_realloc and in ss_use_nested, and 5 in handlers.
			check_call_deltas($s{10}, $s{20}, 'sigstack 10 -> 20', is_static($mode),
					  malloc => 80, calloc => 10, realloc => 10, free => 40);
			check_total_deltas($s{10}, $s{20}, 'sigstack 10 -> 20', live_blocks => 50,
					   live_bytes => 10 * (4 * 24 + 40), unknown_frees => 0);
		};
	}
}

# Four threads at once, each signalling itself: each thread's own replaced return
# addresses are put back, never another's. The threads' identical stacks are one each.
for my $mode (@modes) {
	subtest "sigstack-$mode threads" => sub {
		my $nat = run_native('sigstack', $mode, ['threads', 10]);
		is($nat->{stdout}, "sigstack: usr1 160 usr2 40\n", 'native: stdout');
		my $r = run_jt('sigstack', $mode, args => ['threads', 10]);
		same_as_native($r, $nat, 'sigstack threads');
		my $s = snapshot_of($r, 'sigstack threads') or return;
		check_shape($s, 'sigstack threads', reason => 'exit', exit_status => 0, killed_by => undef,
			    prog => "sigstack-$mode");
		check_stacks($s, 'sigstack threads', 4 * 10, $THREAD);
	};
}

# The timer: where the signal lands differs from run to run, so only what holds for every
# landing place is checked.
for my $mode (@modes) {
	for my $be (qw(dw libunwind)) {
		subtest "sigstack-$mode timer, $be unwinder" => sub {
			my $nat = run_native('sigstack', $mode, ['timer', 300]);
			is($nat->{stdout}, "sigstack: alrm 300\n", 'native: stdout');
			my $r = run_jt('sigstack', $mode, args => ['timer', 300], jt_args => ['--unwinder', $be]);
			same_as_native($r, $nat, 'sigstack timer');
			my $s = snapshot_of($r, 'sigstack timer') or return;
			my $line = site_line('sigstack/ss_handler.c', 'SITE:alrm');
			my @st = stacks_with_frame0($s, 'ss_on_alrm', $line);
			is(sum_field('live_blocks', @st), 300, '300 handler blocks at ss_handler.c:' . $line);
			is(sum_field('live_bytes', @st), 300 * 16, '4800 bytes');
			my @sig = grep { frame_is($_->{frames}[1], $SIG) } @st;
			is(sum_field('live_blocks', @sig), 300, 'all 300 have <signal handler called> as frame 1');
			my @main = grep { grep { frame_func_is($_, 'main') } @{ $_->{frames} } } @st;
			is(sum_field('live_blocks', @main), 300, 'all 300 reach main (' . sum_field('live_blocks', @main) . ')')
				or diag(join("\n", map { join("\n  ", 'frames:', map { describe_frame($_) } @{ $_->{frames} }) }
					       grep { my $x = $_; !grep { $_ == $x } @main } @st));
		};
	}
}

done_testing();
