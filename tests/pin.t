#!/usr/bin/perl
# pin.t - --pin: the program's threads run on their tracer thread's CPU while traced, the
# counts stay exact, and after a -p detach every thread has its own affinity back.
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
my @modes = $ENV{JT_MODES} ? split(/[\s,]+/, $ENV{JT_MODES}) : @JT::MODES;
my $NTHREADS = 4;	# tests/progs/attach/attach.h

# Cpus_allowed_list of every thread of $pid, as { tid => list }.
sub affinities {
	my ($pid) = @_;
	my %a;
	opendir(my $d, "/proc/$pid/task") or return {};
	for my $tid (grep { /^\d+$/ } readdir $d) {
		my $st = JT::slurp("/proc/$pid/task/$tid/status") // '';
		$a{$tid} = $1 if $st =~ /^Cpus_allowed_list:\s*(\S+)/m;
	}
	return \%a;
}

# True when $n threads of $pid are there and each may run on one CPU only.
sub all_pinned {
	my ($pid, $n) = @_;
	my $a = affinities($pid);
	return keys %$a == $n && !grep { !/^\d+$/ } values %$a;
}

sub show { my $a = $_[0]; join(' ', map { "$_:$a->{$_}" } sort keys %$a) }

# The first child of jmptrace (the launched program).
sub child_of {
	my ($pid) = @_;
	for my $f (glob("/proc/$pid/task/*/children")) {
		my ($c) = split(' ', JT::slurp($f) // '');
		return $c if $c;
	}
	return undef;
}

sub wait_ready { my $f = $_[0]; JT::wait_until(sub { (JT::slurp($f) // '') =~ /ready/ }, 30) }

like(JT::run_cmd(argv => [$JT, '--help'])->{stdout}, qr/--pin.*CHANGES THE\s+PROGRAM'S CPU AFFINITY/s,
     '--help documents --pin as a change to the program');

# Under --verbose each tracer thread says how many of its stops it sampled (every
# 64th) and how many of those crossed CPUs. The share depends on the host; the counts do not.
subtest 'the share of cross-CPU stops is printed per tracer thread' => sub {
	my $r = run_jt('threads', 'pie', args => [1000, 5, 40], jt_args => ['--verbose', '--tracer-threads', 2]);
	is($r->{exit}, 0, 'exit 0');
	my @l = ($r->{stderr} // '') =~ /^jmptrace: tracer thread (\d+): \d+ breakpoint hits, (\d+) stops; cross-CPU stops: (\d+) of (\d+) sampled \(every 64th stop\), ([\d.]+)%;/mg;
	is(scalar(@l) / 5, 2, 'a line for each of the 2 tracer threads') or diag($r->{stderr});
	while (my ($idx, $stops, $cross, $sampled, $pct) = splice(@l, 0, 5)) {
		is($sampled, int(($stops + 63) / 64), "tracer thread $idx: every 64th of its $stops stops sampled");
		ok($cross <= $sampled, "tracer thread $idx: $cross cross-CPU of $sampled ($pct%)");
	}
};

# A snapshot on SIGUSR1 takes tracer thread 0 out of SCHED_IDLE while it writes (the program
# waits at its breakpoints meanwhile) and must give it back: due.c counted a due time as
# armed when there was none (no --interval), so the hurry outlived the snapshot, thread 0
# stayed in SCHED_OTHER for the rest of the run, the program's stops crossed CPUs (0.2% ->
# 58%) and it ran 7 times slower; redis-server attached answered 650 SET/s instead of 4,200.
# Thread 0's class is read from /proc (field 41 of its stat, 5 = SCHED_IDLE) before and
# after: where it was idle-class before (a CPU to spare), it must be so again after.
sub policy_of {
	my ($pid, $tid) = @_;
	my $st = JT::slurp("/proc/$pid/task/$tid/stat") // return undef;
	$st =~ s/^.*\) //s;
	return (split(' ', $st))[38];
}

sub idle_samples {
	my ($pid, $n) = @_;
	my $idle = 0;
	for (1 .. $n) {
		my $p = policy_of($pid, $pid);
		$idle++ if defined $p && $p == 5;
		select(undef, undef, undef, 0.1);
	}
	return $idle;
}

subtest 'a SIGUSR1 snapshot gives tracer thread 0 its scheduling class back' => sub {
	my $dir = tempdir('jt-pin-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my $j = JT::spawn(argv => [$JT, '--json', "$dir/r.json", '-o', "$dir/r.txt", '--',
				   JT::prog_path('stallbeat', 'pie'), 8], dir => $dir, name => 'jt');
	ok(JT::wait_until(sub { (JT::slurp($j->{out}) // '') =~ /^W /m }, 30), 'the program runs')
		or return JT::reap($j, 1);
	my $before = idle_samples($j->{pid}, 10);
	kill 'USR1', $j->{pid};
	ok(JT::wait_until(sub { my $x = JT::read_json("$dir/r.json"); $x && @{ $x->{snapshots} // [] } }, 30),
	   'the SIGUSR1 snapshot is written');
	select(undef, undef, undef, 0.5);
	my $after = idle_samples($j->{pid}, 20);
	SKIP: {
		skip "thread 0 was never idle-class before the snapshot (a busy host, or no CAP_SYS_NICE)", 1
			unless $before;
		ok($after > 0, "idle-class again after it ($before of 10 samples before, $after of 20 after)");
	}
	my $st = JT::reap($j, 60);
	ok(defined $st && WIFEXITED($st) && WEXITSTATUS($st) == 0, 'jmptrace exits 0') or diag(JT::slurp($j->{err}));
};

# Launch: counts exact with several tracer threads and threads handed between them.
for my $mode (@modes) {
	subtest "--pin, threads-$mode: exact counts" => sub {
		my $r = run_jt('threads', $mode, jt_args => ['--pin', '--tracer-threads', 2], args => [1000, 5, 40]);
		is($r->{exit}, 0, 'exit 0');
		is($r->{stdout}, "threads: done\n", 'stdout');
		my $s = snapshot_of($r, '--pin') or return;
		check_site($s, '--pin', func => 'th_leak', file => 'threads/th_leak.c', marker => 'SITE:th_leak',
			   live_bytes => 8 * 5 * 40, live_blocks => 8 * 5, alloc_calls => 8 * 5,
			   alloc_bytes => 8 * 5 * 40);
		check_gone($s, '--pin', 'th_churn');
	};
}

# A thread handed to a tracer thread is pinned to its CPU as it arrives, before it runs on,
# the threads a recall brings to tracer thread 0 too: with --no-emulate every breakpoint
# is stepped with the whole process stopped, so threads of tracer thread 1 are recalled to
# tracer thread 0 all the time, and threads are born meanwhile. A recall once seized them
# with handover_arrived, which does not pin: they ran on the other CPU until the next tick
# (200 ms) or stop. Under -v each tracer thread counts the stops of a thread that had run on
# after it came, still pinned elsewhere (before: 233 to 451 a run; now none). Whether a
# given thread arrives during a recall is up to the scheduler, so the test counts every
# arrival of a run rather than catching one thread's affinity in /proc at the right instant.
subtest '--pin: threads a recall brings over are pinned as they arrive' => sub {
	for my $try (1 .. 3) {
		my $r = run_jt('threads', 'pie', args => [1000, 5, 40],
			       jt_args => ['-v', '--pin', '--no-emulate', '--tracer-threads', 2]);
		is($r->{exit}, 0, "run $try: exit 0");
		my $err = $r->{stderr} // '';
		my $steps = () = $err =~ /^jmptrace: stepping thread \d+ over /mg;
		ok($steps > 0, "run $try: breakpoints stepped with the process stopped ($steps)");
		my %late = $err =~ /^jmptrace: tracer thread (\d+): --pin: (\d+) stops of a thread that ran on unpinned after it came to it$/mg;
		is(join(',', map { "$_:$late{$_}" } sort keys %late), '0:0,1:0',
		   "run $try: no thread ran on unpinned after it came to either tracer thread");
	}
};

# A child that is not followed (no -f) leaves with the affinity it would have had untraced,
# not the pinned one it inherited: a subshell (fork) and a command (vfork, in dash).
subtest '--pin: a child not followed gets its own affinity' => sub {
	# The children print their affinity. Traced, the shell first waits until it is pinned
	# (within the 0.2 s tick, however long that takes a slow host), so they fork after that.
	my $show = '(grep Cpus_allowed_list /proc/self/status; true); grep Cpus_allowed_list /proc/self/status; true';
	my $pinned = 'until grep -Eq "^Cpus_allowed_list:[[:space:]]*[0-9]+\$" /proc/$$/status; do sleep 0.05; done; ';
	my $native = JT::run_cmd(argv => ['/bin/sh', '-c', $show]);
	my $r = JT::run_cmd(argv => [$JT, '--pin', '-o', '/dev/null', '--', '/bin/sh', '-c', $pinned . $show]);
	is($r->{exit}, 0, 'exit 0');
	like($native->{stdout}, qr/^Cpus_allowed_list:/, 'the child says its affinity');
	is($r->{stdout}, $native->{stdout}, 'the same as untraced');
};

# Launch: the waiting threads (which never stop) are pinned too.
for my $mode (qw(pie static)) {
	subtest "--pin, attach-$mode launched: every thread on one CPU" => sub {
		my $dir = tempdir('jt-pin-XXXXXX', TMPDIR => 1, CLEANUP => 1);
		my $j = JT::spawn(argv => [$JT, '--pin', '--json', "$dir/r.json", '-o', "$dir/r.txt", '--',
					   JT::prog_path('attach', $mode)], dir => $dir, name => 'jt', stdin_pipe => 1);
		ok(wait_ready($j->{out}), 'the program is ready') or return JT::reap($j, 1);
		my $pid = child_of($j->{pid});
		ok(JT::wait_until(sub { all_pinned($pid, $NTHREADS + 1) }, 60),
		   'each of its threads may run on one CPU only') or diag(show(affinities($pid)));
		print { $j->{stdin} } "g";
		my $st = JT::reap($j, 60);
		ok(defined $st && WIFEXITED($st) && WEXITSTATUS($st) == 0, 'jmptrace exits 0');
		like(JT::slurp($j->{out}) // '', qr/ready\ndone\n/, 'the program ran to its end');
		my $json = JT::read_json("$dir/r.json");
		my $s = $json && $json->{snapshots} ? $json->{snapshots}[-1] : undef;
		ok($s, 'a report') or return;
		check_site($s, 'launched', func => 'new_leak', file => 'attach/new_leak.c', marker => 'SITE:new_leak',
			   live_bytes => 64 * 3 * $NTHREADS, live_blocks => 3 * $NTHREADS,
			   alloc_calls => 3 * $NTHREADS, alloc_bytes => 64 * 3 * $NTHREADS);
	};
}

# -p: pinned while attached, each thread's own affinity back after the detach.
# The CPUs we may run on (taskset, a cpuset), not every CPU /proc/cpuinfo lists.
my @cpus = JT::allowed_cpus();
SKIP: {
	skip 'needs 2 CPUs (' . scalar(@cpus) . ' allowed)', 3 if @cpus < 2;
	for my $spec (['attach', 'pie', 1], ['heartbeat', 'pie', 2], ['heartbeat', 'static', 2]) {
		my ($prog, $mode, $ntt) = @$spec;
		subtest "--pin -p, $prog-$mode, $ntt tracer threads: affinity given back at detach" => sub {
			my $dir = tempdir('jt-pin-XXXXXX', TMPDIR => 1, CLEANUP => 1);
			my $hb = "$dir/hb";
			my $p = JT::spawn(argv => [JT::prog_path($prog, $mode), $prog eq 'heartbeat' ? ($hb) : ()],
					  dir => $dir, name => 'prog', stdin_pipe => 1);
			if ($prog eq 'attach') {
				ok(wait_ready($p->{out}), 'the program is ready') or return JT::reap($p, 1);
			} else {
				ok(JT::wait_until(sub { (JT::slurp($hb) // '') =~ /^(\d+)/ && $1 > 1000 }, 30),
				   'the program runs') or return JT::reap($p, 1);
			}
			# Threads with affinities of their own: the last one on the last CPU only.
			my @tids = sort { $a <=> $b } keys %{ affinities($p->{pid}) };
			system('taskset', '-pc', $cpus[-1], $tids[-1]) == 0 or diag('taskset failed');
			my $before = affinities($p->{pid});
			my $j = JT::spawn(argv => [$JT, '--pin', '--tracer-threads', $ntt, '-p', $p->{pid}, '--json', "$dir/r.json", '-o', "$dir/r.txt"],
					  dir => $dir, name => 'jt');
			JT::wait_until(sub { JT::attach_done($j) }, 30);
			ok(JT::wait_until(sub { all_pinned($p->{pid}, scalar @tids) }, 60),
			   'attached: each thread may run on one CPU only') or diag(show(affinities($p->{pid})));
			select(undef, undef, undef, 0.3);
			kill 'INT', $j->{pid};
			my $js = JT::reap($j, 30);
			ok(defined $js && WIFEXITED($js) && WEXITSTATUS($js) == 0, 'jmptrace detaches and exits 0')
				or diag(JT::slurp($j->{err}));
			is(show(affinities($p->{pid})), show($before), 'every thread has its own affinity back');
			if ($prog eq 'attach') {
				print { $p->{stdin} } "g";
				my $ps = JT::reap($p, 30);
				ok(defined $ps && WIFEXITED($ps) && WEXITSTATUS($ps) == 0, 'the program runs to its end');
			} else {
				unlike(JT::slurp($p->{out}) // '', qr/BROKEN/, 'the program is unharmed');
				kill 'TERM', $p->{pid};
				ok(defined JT::reap($p, 10), 'the program ends on SIGTERM');
			}
		};
	}
}

done_testing();
