#!/usr/bin/perl
# stall.t - an output never stalls the traced program, and a failed write keeps what was
# written (issue 30). A FIFO whose reader opened it and sleeps (-o and --json, launched and
# attached, --interval 0.2): the program, which times itself (tests/progs/stallbeat), is
# never paused 100 ms, SIGINT ends jmptrace within a second, with exit 1 and the snapshots
# not written said, and an attached program runs on. The output, over 4 snapshots behind
# with nothing moved for half a second, drops the later ones, said once. Before, the write blocked inside the
# stop: the program froze until the reader went, and jmptrace, deaf to SIGINT, could only be
# killed. A --json file on a 24 KiB tmpfs that fills after a few snapshots stays valid JSON
# with every snapshot written before, and the failure is said once (before: cut in the
# middle). Each case runs 5 times.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempdir);
use JSON::PP ();
use POSIX qw(mkfifo WNOHANG WIFEXITED WEXITSTATUS);
use Time::HiRes qw(clock_gettime CLOCK_MONOTONIC sleep);
use Test::More;
use JT;

my $JT = JT::jmptrace();
-x $JT or plan skip_all => "no jmptrace at $JT";

my $RUNS = 5;
my $PROG = prog_path('stallbeat', 'static');
my $MAX_GAP_US = 100_000;	# the issue's bound on a pause the output may cause
my $SIGINT_SECS = 1;		# the issue's bound from SIGINT to jmptrace's exit
my $STALL_SECS = 1.4;		# the reader sleeps this long after jmptrace starts: 6 snapshots, the 6th dropped
my $F_SETPIPE_SZ = 1031;

sub now_ms { clock_gettime(CLOCK_MONOTONIC) * 1000 }

# A reader of $fifo that opens it, shrinks its buffer to a page (the first snapshot fills it)
# and never reads. Returns its pid.
sub sleeping_reader {
	my ($fifo) = @_;
	my $pid = fork() // die "fork: $!\n";
	if (!$pid) {
		open(my $fh, '<', $fifo) or POSIX::_exit(1);
		fcntl($fh, $F_SETPIPE_SZ, 4096);
		sleep 60;
		POSIX::_exit(0);
	}
	return $pid;
}

sub end_reader {
	my ($pid) = @_;
	kill 'KILL', $pid;
	waitpid($pid, 0);
}

# Waits at most $secs for spawned $h to end; returns (wait status or undef, when it ended in ms).
sub wait_end {
	my ($h, $secs) = @_;
	my $until = now_ms() + $secs * 1000;
	while (now_ms() < $until) {
		return ($?, now_ms()) if waitpid($h->{pid}, WNOHANG) == $h->{pid};
		sleep 0.005;
	}
	return (undef, undef);
}

# stallbeat's windows: [end_ms, maxgap_us] each, and its END figure (or undef).
sub beats {
	my $out = JT::slurp($_[0]) // '';
	my @w;
	push @w, [$1, $2] while $out =~ /^W (\d+) (\d+) \d+$/mg;
	return (\@w, $out =~ /^END (\d+)$/m ? $1 : undef);
}

# What one run under a sleeping reader showed, as a line for a diag when it is not right.
sub judge {
	my ($r) = @_;
	my @bad;
	push @bad, 'SIGINT did not end jmptrace within ' . $SIGINT_SECS . ' s' . (defined $r->{secs} ? sprintf(' (%.2f s)', $r->{secs}) : ' (still running after 3 s)')
		unless defined $r->{secs} && $r->{secs} < $SIGINT_SECS;
	push @bad, 'the program was paused ' . ($r->{gap} // 'for ever') . ' us'
		unless defined $r->{gap} && $r->{gap} < $MAX_GAP_US;
	push @bad, 'exit ' . ($r->{exit} // 'none') . ', not 1' unless ($r->{exit} // -1) == 1;
	push @bad, 'stderr does not say once what was not written: ' . $r->{stderr}
		unless (() = $r->{stderr} =~ /^jmptrace: the report '[^']*' was not read: \d+ of \d+ snapshots \([\d,]+ bytes\) were not written$/mg) == 1
		&& (() = $r->{stderr} =~ /is not being read: its later snapshots are dropped$/mg) == 1;
	push @bad, $r->{why} if $r->{why};
	return @bad ? join('; ', @bad) : '';
}

# jmptrace launched with the FIFO as $opt's output; SIGINT to its group (as a terminal's ^C).
sub run_launched {
	my ($opt, $dir) = @_;
	my $fifo = "$dir/fifo";
	mkfifo($fifo, 0644) or die "mkfifo: $!\n";
	my $reader = sleeping_reader($fifo);
	my @o = $opt eq '-o' ? ('-o', $fifo) : ('-o', '/dev/null', '--json', $fifo);
	my $j = JT::spawn(dir => $dir, name => 'jt', argv => [$JT, '--interval', '0.2', @o, '--', $PROG, 30]);
	sleep $STALL_SECS;
	my $sent = now_ms();
	kill 'INT', -$j->{pid};
	my ($st, $ended) = wait_end($j, 3);
	end_reader($reader);
	$st //= JT::reap($j, 10);
	# The windows after the first snapshot's (at 200 ms, where the symbols are first read).
	my ($w) = beats($j->{out});
	my @in = @$w ? grep { $_->[0] > $w->[0][0] + 300 } @$w : ();
	my ($gap) = sort { $b <=> $a } map { $_->[1] } @in;
	return { secs => defined $ended ? ($ended - $sent) / 1000 : undef, gap => $gap, why => @in ? '' : 'no window while traced',
		 exit => defined $st && WIFEXITED($st) ? WEXITSTATUS($st) : undef, stderr => JT::slurp($j->{err}) // '' };
}

# jmptrace -p on a running stallbeat; SIGINT to jmptrace alone detaches; the program must run on.
sub run_attached {
	my ($opt, $dir) = @_;
	my $fifo = "$dir/fifo";
	mkfifo($fifo, 0644) or die "mkfifo: $!\n";
	my $p = JT::spawn(dir => $dir, name => 'prog', argv => [$PROG, 60]);
	JT::wait_until(sub { (beats($p->{out}))[0]->@* >= 2 }, 10);
	my $reader = sleeping_reader($fifo);
	my @o = $opt eq '-o' ? ('-o', $fifo) : ('-o', '/dev/null', '--json', $fifo);
	my $j = JT::spawn(dir => $dir, name => 'jt', argv => [$JT, '--interval', '0.2', @o, '-p', $p->{pid}]);
	my $attached = JT::wait_until(sub { JT::attach_done($j) }, 10) ? now_ms() : undef;
	sleep $STALL_SECS;
	my $sent = now_ms();
	kill 'INT', $j->{pid};
	my ($st, $ended) = wait_end($j, 3);
	end_reader($reader);
	$st //= JT::reap($j, 10);
	my $gone = $ended // now_ms();
	# Alive: its windows go on after jmptrace ended, untraced.
	my $after = $gone + 300;
	my $alive = JT::wait_until(sub { grep { $_->[0] > $after } (beats($p->{out}))[0]->@* }, 3);
	my @traced = JT::traced_threads($p->{pid});
	kill 'TERM', $p->{pid};
	JT::reap($p, 10);
	# The windows from the attach to the detach (the window the attach ended in is left out).
	my ($w) = beats($p->{out});
	my @in = grep { defined $attached && $_->[0] > $attached + 150 && $_->[0] <= $gone + 250 } @$w;
	my ($gap) = sort { $b <=> $a } map { $_->[1] } @in;
	my $why = !defined $attached ? 'jmptrace did not attach' : !@in ? 'no window while traced'
		: !$alive ? 'the program does not run on after the detach' : @traced ? "still traced: @traced" : '';
	return { secs => defined $ended ? ($ended - $sent) / 1000 : undef, gap => $gap, why => $why,
		 exit => defined $st && WIFEXITED($st) ? WEXITSTATUS($st) : undef, stderr => JT::slurp($j->{err}) // '' };
}

for my $mode (qw(launched attached)) {
	for my $opt ('-o', '--json') {
		my (@bad, $worst_gap, $worst_secs);
		for my $i (1 .. $RUNS) {
			my $dir = tempdir('jt-stall-XXXXXX', TMPDIR => 1, CLEANUP => 1);
			my $r = $mode eq 'launched' ? run_launched($opt, $dir) : run_attached($opt, $dir);
			my $why = judge($r);
			push @bad, "run $i: $why" if $why;
			$worst_gap = $r->{gap} if defined $r->{gap} && ($worst_gap // 0) < $r->{gap};
			$worst_secs = $r->{secs} if defined $r->{secs} && ($worst_secs // 0) < $r->{secs};
		}
		is(scalar @bad, 0, "$mode, $opt FIFO whose reader sleeps: never paused, SIGINT ends jmptrace within a second, exit 1, what was lost said ($RUNS runs)")
			or diag(join("\n", @bad));
		note(sprintf('%s %s: longest pause %s us, longest SIGINT to exit %s s', $mode, $opt, $worst_gap // '?',
			     defined $worst_secs ? sprintf('%.3f', $worst_secs) : '?'));
	}
}

# Snapshots whose writers take long (a test hook makes each take $SLOW_MS ms, as a big program's
# do) under --interval 0.2 and the ptrace source: the program's threads go on while a snapshot
# is written (issue 33), so stallbeat is never paused 100 ms; the snapshots due meanwhile are
# passed over, said once, and counted at the end. Before, the writers ran with the program
# stopped at its breakpoint: each snapshot paused it as long as they took.
my $SLOW_MS = 600;
{
	my @bad;
	for my $i (1 .. 3) {
		my $dir = tempdir('jt-stall-XXXXXX', TMPDIR => 1, CLEANUP => 1);
		local $ENV{JMPTRACE_TEST_SLOW} = "writers:$SLOW_MS";
		my $r = run_cmd(dir => $dir, timeout => 60, argv => [$JT, '--source', 'ptrace', '--interval', '0.2',
			'-o', "$dir/r.txt", '--json', "$dir/r.json", '--', $PROG, 3]);
		my @w = $r->{stdout} =~ /^W \d+ (\d+) \d+$/mg;
		# From the second window on (the first holds the program's start under the tracer).
		my ($gap) = sort { $b <=> $a } @w[1 .. $#w];
		my $j = eval { JT::decode_report(JT::slurp("$dir/r.json") // '') };
		my @snaps = @{ ($j // {})->{snapshots} // [] };
		my ($passed, $took) = $r->{stderr} =~ /^jmptrace: (\d+) --interval snapshots? passed over in all: writing one took up to ([\d,]+) ms$/m;
		$took =~ s/,//g if defined $took;
		my $said = () = $r->{stderr} =~ /^jmptrace: a snapshot was still being written when the next fell due: with --interval that short, the ones due meanwhile are passed over \(the text report counts them\)$/mg;
		my $why = ($r->{exit} // -1) != 0 ? 'exit ' . ($r->{exit} // 'none') . ": $r->{stderr}"
			: !defined $gap ? 'no window while traced: ' . $r->{stdout}
			: $gap >= $MAX_GAP_US ? "the program was paused $gap us"
			: !$j ? 'no JSON'
			: @snaps < 3 || @snaps > 8 ? scalar(@snaps) . ' snapshots, not one a write (3 to 8)'
			: $snaps[-1]{reason} ne 'exit' ? "the last snapshot is $snaps[-1]{reason}"
			: grep({ $snaps[$_]{seq} != $_ + 1 } 0 .. $#snaps) ? 'the snapshots are not in their order'
			: $said != 1 ? "the passing over is said $said times: $r->{stderr}"
			: !$passed ? "no count of the snapshots passed over: $r->{stderr}"
			: $took < $SLOW_MS ? "writing one took up to $took ms, less than the hook's $SLOW_MS"
			: '';
		push @bad, "run $i: $why" if $why;
		note("run $i: longest pause $gap us, " . scalar(@snaps) . " snapshots, $passed passed over") unless $why;
	}
	is(scalar @bad, 0, "writers taking $SLOW_MS ms under --interval 0.2, ptrace source: never paused, the ones due meanwhile passed over and said (3 runs)")
		or diag(join("\n", @bad));
}

SKIP: {
	skip 'mounting a 24 KiB tmpfs needs root', 1 unless $> == 0;
	my (@bad, $mounted);
	for my $i (1 .. $RUNS) {
		my $dir = tempdir('jt-stall-XXXXXX', TMPDIR => 1, CLEANUP => 1);
		mkdir "$dir/mnt" or die "mkdir: $!\n";
		if (system('mount', '-t', 'tmpfs', '-o', 'size=24k', 'tmpfs', "$dir/mnt") != 0) {
			last;
		}
		$mounted++;
		# slowleak's first snapshot is about 6.5 KB, the others about 2.2 KB (JSON format 2 lists
		# only what changed): the ninth or so does not fit, of about 20.
		my $r = run_cmd(dir => $dir, timeout => 60, argv => [$JT, '--interval', '0.1', '-o', '/dev/null',
			'--json', "$dir/mnt/r.json", '--', prog_path('slowleak', 'static'), 2000]);
		my $text = JT::slurp("$dir/mnt/r.json") // '';
		system('umount', "$dir/mnt");
		my $j = eval { JT::decode_report($text) };
		my @seq = map { $_->{seq} } @{ ($j // {})->{snapshots} // [] };
		my @fail = $r->{stderr} =~ /^jmptrace: cannot write the JSON report '[^']*': No space left on device$/mg;
		my $why = !$j ? 'the JSON left is not valid: ' . ($@ =~ s/\n.*//sr) . ' (' . length($text) . ' bytes, ends with ' . substr($text, -40) . ')'
			: !@seq ? 'no snapshot was kept'
			: "@seq" ne join(' ', 1 .. @seq) ? "the snapshots kept are not 1 to N: @seq"
			: grep({ !$_->{totals} || !$_->{stacks} } @{ $j->{snapshots} }) ? 'a snapshot kept is not whole'
			: @fail != 1 ? 'the failure is not said once: ' . $r->{stderr}
			: $r->{stderr} !~ /^jmptrace: the report '[^']*': (\d+) of (\d+) snapshots were not written$/m ? 'no count of the snapshots not written: ' . $r->{stderr}
			: $1 + @seq != $2 ? "$1 of $2 not written, but " . scalar(@seq) . ' kept'
			: ($r->{exit} // -1) != 1 ? 'exit ' . ($r->{exit} // 'none') . ', not 1'
			: '';
		push @bad, "run $i: $why" if $why;
		note("run $i: " . scalar(@seq) . ' snapshots kept') unless $why;
	}
	skip 'cannot mount a tmpfs here', 1 unless $mounted;
	is(scalar @bad, 0, "--json on a full 24 KiB tmpfs: valid JSON with the whole snapshots before, failure said once, exit 1 ($RUNS runs)")
		or diag(join("\n", @bad));
}

done_testing();
