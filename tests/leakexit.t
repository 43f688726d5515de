#!/usr/bin/perl
# leakexit.t - --leak-check at _exit runs every time, also when the _exit hit arrives while
# jmptrace is stopping the process for another thread (a step over a breakpoint): leakexit's
# threads loop in malloc/free while main loses one block of 4,242 bytes and calls _exit.
# Before the fix the check was skipped in about 1 run in 15 ("no check could run"); the runs
# are looped so that a 1-in-10 failure is caught (40 runs: missed with a chance of 1.5%).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JT;
use JTCheck;

my $JT = JT::jmptrace();
BAIL_OUT("no executable jmptrace at $JT (make jmptrace, or set JMPTRACE)") unless -x $JT;
my @modes = $ENV{JT_MODES} ? split(/[\s,]+/, $ENV{JT_MODES}) : @MODES;
my $RUNS = 40;
my $LOST_LINE = site_line('leakexit/main.c', 'jt-site: lost');
my $KEPT_LINE = site_line('leakexit/main.c', 'jt-site: kept');

# The one definite loss record of a run's last snapshot, or a diagnosis of what is wrong.
sub check_run {
	my ($r) = @_;
	return "exit $r->{exit}, not 0" unless defined $r->{exit} && $r->{exit} == 0;
	my $s = last_snapshot($r) or return $r->{json_error} // 'no snapshot';
	my $lc = $s->{leak_check};
	return 'no leak check at _exit: ' . ($r->{report} =~ /^(LEAK CHECK.*)$/m ? $1 : 'leak_check null')
		unless ref $lc eq 'HASH';
	my $def = $lc->{summary}{definitely_lost};
	return "definitely lost $def->{bytes} bytes in $def->{blocks} blocks, not 4242 in 1"
		unless $def->{bytes} == 4242 && $def->{blocks} == 1;
	my ($rec) = grep { $_->{leak_kind} eq 'definitely_lost' && !$_->{suppressed} } @{ $lc->{records} };
	my $f = $rec && $rec->{frames}[0];
	return 'the definite record is not at lose (main.c:' . $LOST_LINE . '): ' . describe_frame($f // {})
		unless $f && frame_func_is($f, 'lose') && ($f->{line} // 0) == $LOST_LINE;
	my $kept = grep { $_->{leak_kind} eq 'still_reachable' && $_->{bytes} == 100 } @{ $lc->{records} };
	return 'the kept block of 100 bytes is not still reachable' unless $kept;
	return '';
}

for my $mode (@modes) {
	# --no-emulate steps over every breakpoint with the process stopped: a collection is
	# nearly always under way when main enters _exit. The default (emulation) too, fewer runs.
	for my $how (['--no-emulate'], []) {
		my $n = @$how ? $RUNS : $RUNS / 4;
		my $name = "leakexit-$mode" . (@$how ? " $how->[0]" : '');
		my (%bad, $first);
		for (1 .. $n) {
			my $r = run_jt('leakexit', $mode, jt_args => ['--leak-check', '--show-leak-kinds', 'all', @$how]);
			my $why = check_run($r);
			next if $why eq '';
			$bad{$why}++;
			$first //= $r->{report};
		}
		my $nbad = 0;
		$nbad += $_ for values %bad;
		is($nbad, 0, "$name: the check at _exit found 4,242 bytes in 1 block definitely lost in each of $n runs")
			or diag(join("\n", map { "$bad{$_} x $_" } sort keys %bad) . "\nfirst bad report:\n" . ($first // ''));
	}
}
done_testing();
