#!/usr/bin/perl
# workers.t - several tracer threads: program threads handed between them are counted
# exactly, stepping over breakpoints brings them back, and a detach leaves none traced.
use strict;
use warnings;
no warnings qw(portable);	# 64-bit addresses from /proc/PID/maps
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempdir);
use POSIX qw(WIFEXITED WEXITSTATUS);
use Test::More;
use JT;
use JTCheck;

my $JT = JT::jmptrace();
-x $JT or plan skip_all => "no jmptrace at $JT";
plan skip_all => 'tracer threads take breakpoint stops of the ptrace source: run in the ptrace pass only'
	if JT::source() ne 'ptrace';
my @modes = $ENV{JT_MODES} ? split(/[\s,]+/, $ENV{JT_MODES}) : @JT::MODES;

# --verbose prints one line per hand-over; count them by destination.
sub handovers {
	my ($stderr) = @_;
	my %to;
	$to{$1}++ while ($stderr // '') =~ /handed from tracer thread \d+ to (\d+)/g;
	return \%to;
}

# The threads test program under jmptrace with the given options (and --verbose); checks every
# figure that does not depend on timing. Returns the run; {snap} is its last snapshot.
sub same_totals {
	my ($got, $want, $name) = @_;
	for my $f (qw(alloc_calls bytes_allocated live_bytes live_blocks)) {
		is($got->{$f}, $want->{$f}, "$name: $f ($want->{$f}) as with one tracer thread");
	}
	is($got->{calls}{malloc}, $want->{calls}{malloc}, "$name: malloc calls ($want->{calls}{malloc}) as with one");
	is($got->{frees}, $want->{frees}, "$name: frees ($want->{frees}) as with one");
	is($got->{unknown_frees}, 0, "$name: no unknown frees");
	is($got->{calls}{free}, $want->{calls}{free}, "$name: free calls ($want->{calls}{free}) as with one");
}

sub threads_run {
	my ($mode, $name, $k, %o) = @_;
	my $r = run_jt('threads', $mode, jt_args => ['--verbose', @{ $o{opts} // [] }],
		       args => [$k, 5, 40, @{ $o{args} // [] }]);
	is($r->{exit}, 0, "$name: exit 0");
	is($r->{stdout}, "threads: done\n", "$name: stdout");
	my $s = snapshot_of($r, $name) or return $r;
	check_site($s, $name, func => 'th_leak', file => 'threads/th_leak.c', marker => 'SITE:th_leak',
		   live_bytes => 8 * 5 * 40, live_blocks => 8 * 5, alloc_calls => 8 * 5,
		   alloc_bytes => 8 * 5 * 40);
	check_gone($s, $name, 'th_churn');
	$r->{snap} = $s;
	return $r;
}

for my $mode (@modes) {
	subtest "threads-$mode, 1, 2 and 3 tracer threads" => sub {
		my %calls;
		for my $n (1, 2, 3) {
			my $r = threads_run($mode, "$n tracer threads", 2000, opts => ['--tracer-threads', $n]);
			my $to = handovers($r->{stderr});
			if ($n == 1) {
				is(scalar(keys %$to), 0, '1 tracer thread: no hand-over');
			} else {
				ok(($to->{1} // 0) > 0, "$n tracer threads: threads handed to tracer thread 1 ("
				   . ($to->{1} // 0) . ')');
				ok(($to->{2} // 0) > 0, "$n tracer threads: and to tracer thread 2") if $n == 3;
			}
			$calls{$n} = $r->{snap} && $r->{snap}{totals};
		}
		return unless $calls{1} && $calls{2} && $calls{3};
		# integration.t checks the one-tracer-thread figures exactly (8 x 800 more mallocs
		# for K 200 -> 1000). Whichever tracer thread saw a call, the totals must be the same.
		same_totals($calls{$_}, $calls{1}, "$_ tracer threads") for (2, 3);
	};
}

# No emulation: every breakpoint is stepped over with the whole process stopped, which only
# tracer thread 0 does; threads on other tracer threads are sent to it and recalled.
for my $mode (qw(pie static)) {
	subtest "threads-$mode, stepping over every breakpoint with 2 tracer threads" => sub {
		my $one = threads_run($mode, 'emulation, 1 tracer thread', 300, opts => ['--tracer-threads', 1]);
		my $r = threads_run($mode, 'no emulation', 300, opts => ['--tracer-threads', 2, '--no-emulate']);
		same_totals($r->{snap}{totals}, $one->{snap}{totals}, 'no emulation') if $r->{snap} && $one->{snap};
		my $to = handovers($r->{stderr});
		ok(($to->{0} // 0) > 0, 'threads were handed back to tracer thread 0 (' . ($to->{0} // 0) . ')');
		ok(($r->{stderr} // '') =~ /stepping thread/, 'breakpoints were stepped over');
		unlike($r->{stderr} // '', qr/without stopping the other threads|could not be brought back/,
		       'never stepped with other threads running');
	};
}

# A program under seccomp may not be allowed pause(), where a thread waits while it is
# handed over; the program here gets EPERM from it, and would run on into the vDSO's
# bytes after the syscall instruction (it did: SIGSEGV) had jmptrace parked it there.
for my $mode (qw(pie static)) {
	subtest "threads-$mode under a seccomp filter that denies pause(), 2 tracer threads" => sub {
		my $one = threads_run($mode, 'seccomp, 1 tracer thread', 1000, opts => ['--tracer-threads', 1], args => [1, 1]);
		my $r = threads_run($mode, 'seccomp, 2 tracer threads', 1000, opts => ['--tracer-threads', 2], args => [1, 1]);
		same_totals($r->{snap}{totals}, $one->{snap}{totals}, 'seccomp') if $r->{snap} && $one->{snap};
		ok((handovers($r->{stderr})->{1} // 0) > 0, 'threads were handed to tracer thread 1');
	};
}

# Attach with 2 tracer threads to a program with 8 busy threads; detach; repeat.
for my $mode (qw(pie static)) {
	subtest "attach and detach with 2 tracer threads, heartbeat-$mode" => sub {
		my $dir = tempdir('jt-work-XXXXXX', TMPDIR => 1, CLEANUP => 1);
		my $hb = "$dir/heartbeat";
		my $p = JT::spawn(argv => [JT::prog_path('heartbeat', $mode), $hb], dir => $dir, name => 'prog');
		ok(JT::wait_until(sub { heartbeat($hb) > 1000 }, 30), 'the program runs') or return JT::reap($p, 1);
		my ($handed, $fails) = (0, 0);
		for my $i (1 .. 10) {
			my $j = JT::spawn(argv => [$JT, '--tracer-threads', 2, '--verbose', '-p', $p->{pid},
						   '--json', "$dir/r$i.json", '-o', "$dir/r$i.txt"],
					  dir => $dir, name => "jt$i");
			JT::wait_until(sub { JT::attach_done($j) }, 30);
			# Long enough for the busy threads to be spread over both tracer threads.
			JT::wait_until(sub { scalar(keys %{ handovers(JT::slurp($j->{err})) }) }, 30);
			select(undef, undef, undef, 0.05 * ($i % 4));
			kill 'INT', $j->{pid};
			my $js = JT::reap($j, 30);
			my $err = JT::slurp($j->{err}) // '';
			$handed++ if (handovers($err)->{1} // 0) > 0;
			my @traced = traced_threads($p->{pid});
			my $ok = defined $js && WIFEXITED($js) && WEXITSTATUS($js) == 0 && !@traced
				&& kill(0, $p->{pid}) && JT::read_json("$dir/r$i.json");
			$fails++ unless $ok;
			diag("cycle $i: status " . ($js // 'timeout') . ", traced: @traced\n$err") unless $ok;
			last unless kill(0, $p->{pid});
		}
		is($fails, 0, '10 attach/detach cycles: jmptrace exits 0, writes its report, no thread left traced');
		ok($handed >= 5, "threads were handed to the second tracer thread in most cycles ($handed of 10)");
		my $before = heartbeat($hb);
		ok(JT::wait_until(sub { heartbeat($hb) > $before + 100 }, 60), 'the heartbeat advances after the detaches');
		unlike(JT::slurp($p->{out}) // '', qr/BROKEN/, 'the program never saw corruption or a stray signal');
		kill 'TERM', $p->{pid};
		my $ps = JT::reap($p, 10);
		ok(defined $ps, 'the program ends on SIGTERM');
	};
}

done_testing();
