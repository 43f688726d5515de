#!/usr/bin/perl
# blockmem.t - the tracer's memory per live block (issue 33): tests/progs/hold keeps N blocks of
# 32 bytes live; a SIGUSR1 snapshot shows every one applied (exact live blocks and bytes at
# hold_one's line), then jmptrace's peak RSS (VmHWM, the old and new arrays of any growth
# counted) is read. Minus the same run holding 1,000 blocks (code, libraries, debug
# information and the snapshot's own memory cancel out), over the difference in blocks, it
# must be at most 24 bytes a block, with each event source (the table that doubled took 35 to
# 42 at this N). Exact calls and an unchanged program output at exit.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use File::Temp qw(tempdir);
use POSIX qw(WIFEXITED WEXITSTATUS);
use JT;

my $JT = JT::jmptrace_bin();
-x $JT or plan skip_all => "no jmptrace at $JT";
my @sources = JT::sources();

# 600,000 blocks: about 11 MiB of table, far above what else moves between two runs (a few
# hundred kB), in about 30 s under ptrace on a 2-CPU VM; bench/run.sh measures 2,000,000.
my $BIG = 600_000;
my $SMALL = 1_000;
my $MAX_BYTES = 24;
my $SIZE = 32;
my $PROG = prog_path('hold', 'pie');
my $LINE = site_line('hold/main.c', 'SITE:hold_one');

sub vmhwm_kb {
	my ($pid) = @_;
	my ($kb) = (JT::slurp("/proc/$pid/status") // '') =~ /^VmHWM:\s+(\d+) kB/m;
	return $kb;
}

# True once process $pid is gone or a zombie.
sub ended {
	my ($pid) = @_;
	my $st = JT::slurp("/proc/$pid/stat") // return 1;
	return $st =~ /\) Z /;
}

# "live BLOCKS/BYTES" of the stacks at hold_one's malloc.
sub at_site {
	my ($s) = @_;
	my @st = stacks_at_site($s, 'main.c', $LINE);
	return sprintf('live %d/%d', sum_field('live_blocks', @st), sum_field('live_bytes', @st));
}

# Runs hold M under jmptrace --source SOURCE and returns its VmHWM in kB once M blocks are
# live and a SIGUSR1 snapshot has counted them, or undef (having said why), and 0. When
# $again and the run says it lost events, returns (undef, how many) asserting nothing of
# its figures.
sub hold_run {
	my ($source, $m, $again) = @_;
	my $dir = tempdir('jt-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my ($gate, $json) = ("$dir/gate", "$dir/r.json");
	my $j = spawn(argv => [$JT, '--source', $source, '--json', $json, '-o', "$dir/r.txt", '--', $PROG, $m, $gate],
		      dir => $dir, name => 'jt');
	my ($kb, $early);
	subtest "hold $m, $source" => sub {
		my $held = wait_until(sub { -e $gate || ended($j->{pid}) }, JT::timeout_secs());
		ok($held && -e $gate, "the program holds $m blocks") or return diag(JT::slurp($j->{err}) // '');
		kill 'USR1', $j->{pid};
		my $x = wait_until(sub { my $r = read_json($json); $r && @{ $r->{snapshots} // [] } ? $r : undef }, 60);
		ok($x, 'SIGUSR1 wrote a snapshot') or return diag(JT::slurp($j->{err}) // '');
		my $s = $x->{snapshots}[0];
		return pass("$early events lost (said): run again") if $again && ($early = $s->{totals}{lost_events} // 0);
		is($s->{totals}{live_blocks}, $m + 1, "it counts every block live: $m and the table");
		is(at_site($s), sprintf('live %d/%d', $m, $m * $SIZE), "hold_one (main.c:$LINE): $m blocks of $SIZE bytes");
		$kb = vmhwm_kb($j->{pid});
		ok($kb, "jmptrace's VmHWM: " . ($kb // 'none') . ' kB');
	};
	unlink $gate;
	my $st = reap($j, JT::timeout_secs());
	ok(defined $st && WIFEXITED($st) && WEXITSTATUS($st) == 0, "hold $m, $source: jmptrace exits 0 like the program")
		or diag('status ' . ($st // 'timeout') . "\n" . (JT::slurp($j->{err}) // ''));
	is(JT::slurp($j->{out}), "held $m\n", "hold $m, $source: the program's output");
	my $s = (read_json($json) // {})->{snapshots};
	$s = $s && $s->[-1];
	my $lost = $early || ($s ? $s->{totals}{lost_events} // 0 : 0);
	# Said lost (see JT::run_unlost): the caller runs it again, and asserts on that run.
	return (undef, $lost) if $lost && $again;
	is($s && join(' ', $s->{reason}, calls_of($s, 'malloc'), calls_of($s, 'free'), $s->{totals}{live_blocks}, $lost),
	   join(' ', 'exit', $m + 1, $m + 1, 0, 0), "hold $m, $source: at exit $m + 1 mallocs and frees, none live, none lost");
	return ($kb, 0);
}

# hold_run, again while a run says it lost events: three runs at most.
sub hold_unlost {
	my ($source, $m) = @_;
	for my $try (1 .. 3) {
		my ($kb, $lost) = hold_run($source, $m, $try < 3);
		return $kb unless $lost;
		diag("hold $m, $source: $lost events lost (said), run again");
	}
}

for my $source (@sources) {
	my $small = hold_unlost($source, $SMALL);
	my $big = hold_unlost($source, $BIG);
	SKIP: {
		skip("$source: a run failed", 1) unless $small && $big;
		my $per = ($big - $small) * 1024 / ($BIG - $SMALL);
		ok($per <= $MAX_BYTES, sprintf('%s: %.1f bytes a live block in the tracer (%d - %d kB over %d blocks), at most %d',
					       $source, $per, $big, $small, $BIG - $SMALL, $MAX_BYTES));
	}
}

done_testing();
