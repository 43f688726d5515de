#!/usr/bin/perl
# uprobe_defs.t - the uprobe source's probe definitions (lines of tracefs's uprobe_events, group
# jmptrace_PID) never outlive jmptrace but after a SIGKILL, and the next run removes a killed
# one's. The kernel keeps a definition until someone removes it; one left behind takes any
# int3 at its address in any process for its own, so a later ptrace session on the same
# library silently loses that function's calls. Cases: 10 ordinary runs (launched, launched
# with -f and children, attached then detached by SIGINT); the way out of a dying jmptrace
# (SIGQUIT, and a real SIGSEGV while a snapshot is written, through the JMPTRACE_TEST_FAULT
# hook), 3 runs
# each, where the attached program must also go on; SIGKILL, whose definitions stay (the test
# can see them) until the next run. Root only, serial (other runs clean stale groups too).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempdir);
use POSIX qw(WIFSIGNALED WTERMSIG WIFEXITED WEXITSTATUS);
use Test::More;
use JT;

my $JT = JT::jmptrace_bin();
BAIL_OUT("no executable jmptrace at $JT (make jmptrace, or set JMPTRACE)") unless -x $JT;
plan skip_all => 'chooses its sources itself: run in the ptrace pass only' if JT::source() ne 'ptrace';
plan skip_all => 'needs root: the uprobe source defines probes in tracefs' unless $> == 0;
plan skip_all => 'the kernel has no uprobe PMU' unless -d '/sys/bus/event_source/devices/uprobe';
my ($EVENTS) = grep { -w $_ } map { "$_/uprobe_events" } '/sys/kernel/tracing', '/sys/kernel/debug/tracing';
plan skip_all => 'tracefs is not mounted (run jmptrace --source uprobe once)' unless $EVENTS;

# Definitions in tracefs are the perf path's (the BPF path's links make none): keep it.
$ENV{JMPTRACE_TEST_UPROBE_PATH} = 'perf';

# The way out is for fatal signals: a background job of a non-interactive shell starts with
# SIGQUIT ignored, and jmptrace would keep that.
$SIG{$_} = 'DEFAULT' for qw(QUIT INT TERM HUP);

my @SRC = ('--source', 'uprobe');
my $dir = tempdir('jt-udefs-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $ALLOC = prog_path('allocators', 'pie');
my $HB = prog_path('heartbeat', 'pie');

# The definitions of jmptrace pid $pid's group now.
sub defs_of {
	my ($pid) = @_;
	my $all = JT::slurp($EVENTS) // '';
	return scalar(() = $all =~ /^.:jmptrace_\Q$pid\E\//mg);
}

sub start_hb {
	my $p = JT::spawn(argv => [$HB, "$dir/hb"], dir => $dir, name => 'prog');
	JT::wait_until(sub { heartbeat("$dir/hb") > 1000 }, 30) or BAIL_OUT('the heartbeat program did not start');
	return $p;
}

sub attach {
	my ($p, @env) = @_;
	local %ENV = (%ENV, @env);
	my $j = JT::spawn(argv => [$JT, @SRC, '-p', $p->{pid}, '-o', "$dir/report.txt"], dir => $dir, name => 'jt');
	JT::wait_until(sub { JT::attach_done($j) }, 30) or diag(JT::slurp($j->{err}) // '');
	return $j;
}

# Whether the heartbeat goes on (the program was let go as it was).
sub beats {
	my $before = heartbeat("$dir/hb");
	return JT::wait_until(sub { heartbeat("$dir/hb") > $before + 1000 }, 10);
}

# 1. Ordinary runs.
{
	my @left;
	for my $run (1 .. 10) {
		my ($kind, $j, $p);
		if ($run <= 4) {
			$kind = 'launched';
			$j = JT::spawn(argv => [$JT, @SRC, '-o', "$dir/r.txt", '--', $ALLOC], dir => $dir, name => 'jt');
		} elsif ($run <= 7) {
			$kind = 'launched -f with children';
			$j = JT::spawn(argv => [$JT, @SRC, '-f', '-o', "$dir/r.txt", '--', 'sh', '-c', "$ALLOC; $ALLOC"],
				       dir => $dir, name => 'jt');
		} else {
			$kind = 'attached, then SIGINT';
			$p = start_hb();
			$j = attach($p);
			select(undef, undef, undef, 0.3);
			kill 'INT', $j->{pid};
		}
		my $st = JT::reap($j, 60);
		push @left, "$kind (run $run): status " . ($st // 'hung') . ', ' . defs_of($j->{pid}) . ' left'
			if !defined $st || defs_of($j->{pid});
		if ($p) {
			ok(beats(), "run $run: the attached program goes on after the detach");
			JT::kill_group($p->{pid});
			JT::reap($p, 10);
		}
	}
	is(scalar(@left), 0, 'no definition is left after any of 10 ordinary runs') or diag(join("\n", @left));
}

# 2. The way out of a dying jmptrace: a fatal signal, a fault in the reader.
for my $case (['SIGQUIT', 'QUIT', []], ['a SIGSEGV in a snapshot', 'USR1', [JMPTRACE_TEST_FAULT => 'snapshot:1']]) {
	my ($what, $sig, $env) = @$case;
	for my $run (1 .. 3) {
		my $p = start_hb();
		my $j = attach($p, @$env);
		select(undef, undef, undef, 0.5);
		my $during = defs_of($j->{pid});
		kill $sig, $j->{pid};
		my $st = JT::reap($j, 60);
		my $err = JT::slurp($j->{err}) // '';
		ok($during > 0 && defined $st && WIFSIGNALED($st) && $err =~ /every traced process was let go/,
		   "$what, run $run: jmptrace died by its signal after letting the program go ($during definitions while it ran)")
			or diag('status ' . ($st // 'hung') . ": $err");
		is(defs_of($j->{pid}), 0, "$what, run $run: none of its definitions is left");
		ok(beats(), "$what, run $run: the program goes on");
		JT::kill_group($p->{pid});
		JT::reap($p, 10);
	}
}

# 3. SIGKILL: what it leaves, the next run removes.
{
	my $p = start_hb();
	my $j = attach($p);
	select(undef, undef, undef, 0.5);
	kill 'KILL', $j->{pid};
	JT::reap($j, 30);
	my $after_kill = defs_of($j->{pid});
	ok($after_kill > 0, "SIGKILL leaves its definitions ($after_kill): the kernel cannot know them ours");
	ok(beats(), 'the program goes on after the SIGKILL');
	JT::kill_group($p->{pid});
	JT::reap($p, 10);
	my $r = run_cmd(argv => [$JT, @SRC, '-o', '/dev/null', '--', $ALLOC], timeout => 60);
	is($r->{status}, 0, 'the next run succeeds');
	is(defs_of($j->{pid}), 0, "the next run removed the killed one's definitions");
}

done_testing();
