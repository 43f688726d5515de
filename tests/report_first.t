#!/usr/bin/perl
# report_first.t - the text report leads with the answer: samples/leaky's first 40 lines hold
# its leak (strdup in set, leaky.c) and not glibc's stdout buffer, which the runtime line counts
# (4,096 bytes); --sections is validated and picks sections; --top 0 writes no empty headers;
# GROWTH over slowleak's snapshots (--interval, launched and attached) names sl_leak first,
# grown in every interval at about SL_LEAK_SIZE * 10 bytes/s, and sl_churn not.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempdir);
use List::Util qw(sum);
use Test::More;
use JT;

my $JT = JT::jmptrace();
-x $JT or plan skip_all => "no jmptrace at $JT";
my $LEAKY = JT::root() . '/samples/leaky';
-x $LEAKY or plan skip_all => "no $LEAKY (make samples-build)";
my $LEAK_LINE = JT::line_of(JT::root() . '/samples/leaky.c', 'LEAK: the old value is lost');

# slowleak's figures (tests/progs/slowleak/main.c).
my ($SL_LEAK_SIZE, $SL_LEAK_MS, $SL_CHURN_SIZE, $SL_RING) = (1000, 100, 512, 25);
my $SL_RATE = $SL_LEAK_SIZE * 1000 / $SL_LEAK_MS;

# The text reports of a -o file, one per snapshot.
sub reports { return grep { length } split /(?=^==== jmptrace heap report ====\n)/m, $_[0] // '' }

# The first $n lines of a text.
sub head_lines { my ($text, $n) = @_; my @l = split /\n/, $text // ''; return join("\n", @l[0 .. ($n < @l ? $n : @l) - 1]) . "\n" }

# The id of the one stack of $snap whose frame 0 is function $func, or undef.
sub stack_id {
	my ($snap, $func) = @_;
	my @st = grep { $_->{frames}[0] && JT::frame_func_is($_->{frames}[0], $func) } @{ $snap->{stacks} // [] };
	return @st == 1 ? $st[0]{id} : undef;
}

subtest 'samples/leaky: the leak on the first screen, the stdout buffer on the runtime line' => sub {
	my $r = JT::run_jt(undef, undef, path => $LEAKY);
	is($r->{exit}, 0, 'exit 0');
	my $head = head_lines($r->{report}, 40);
	like($head, qr/^#1: 2,565 bytes in 494 blocks live;.*\n    at 0x[0-9a-f]+: __strdup \(strdup\.c:\d+\)\n    by 0x[0-9a-f]+: set \(leaky\.c:$LEAK_LINE\) \(inlined\)\n/m,
	     "the first live stack is the leak: strdup in set (leaky.c:$LEAK_LINE)");
	unlike($head, qr/_IO_file_doallocate/, 'glibc\'s stdout buffer is not in the first 40 lines as a stack');
	like($head, qr/^live: +2,582 bytes in 497 blocks from 2 stacks, runtime 4,096 bytes in 1 block\n/m,
	     'the figures under the header: live less the runtime, the runtime apart');
	like($r->{report}, qr/^runtime: 4,096 bytes in 1 block from 1 stack of the C library/m,
	     'the runtime line counts the 4,096 bytes of the stdout buffer');
	unlike($r->{report}, qr/_IO_file_doallocate/, 'the buffer is in no list');
	like($r->{report}, qr/\nSUMMARY: 2,582 bytes in 497 blocks still live from 2 stacks \(and the runtime's 4,096 bytes in 1 block\)\n\z/,
	     'the summary line is the last');
	my ($buf) = grep { grep { ($_->{function} // '') eq '_IO_file_doallocate' } @{ $_->{frames} } }
		@{ JT::last_snapshot($r)->{stacks} // [] };
	is($buf && $buf->{suppressed}, '^_IO_file_doallocate$', 'JSON: the buffer\'s stack names the runtime rule');
	is($buf && $buf->{live_bytes}, 4096, 'JSON: 4,096 bytes live');

	my $s = JT::run_jt(undef, undef, path => $LEAKY, jt_args => ['--show-runtime']);
	like($s->{report}, qr/^#1: 4,096 bytes in 1 block live;.*\n    at 0x[0-9a-f]+: _IO_file_doallocate /m,
	     '--show-runtime: the buffer is a stack again (the first)');
	unlike($s->{report}, qr/^runtime:/m, '--show-runtime: no runtime line');
};

subtest '--sections and --top 0' => sub {
	my $dir = tempdir('jt-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	for my $bad ('live,nope', '', 'live,', 'LIVE') {
		my $r = JT::run_cmd(argv => [$JT, '--sections', $bad, '--', $LEAKY]);
		is($r->{exit}, 2, "--sections '$bad': exit 2");
		like($r->{stderr}, qr/\Ajmptrace: invalid value '\Q$bad\E' for option --sections: give a comma list of leaks, growth, live, peak, calls, bytes, temporary, invalid, totals, pages\n\z/,
		     "--sections '$bad': one line says why");
		is($r->{stdout}, '', "--sections '$bad': the program did not run");
	}
	my $r = JT::run_jt(undef, undef, path => $LEAKY, jt_args => ['--sections', 'peak,totals']);
	is($r->{exit}, 0, '--sections peak,totals: exit 0');
	like($r->{report}, qr/^PEAK: /m, 'the peak section is there');
	like($r->{report}, qr/^totals:\n/m, 'the totals are there');
	unlike($r->{report}, qr/^(?:top \d+ of \d+ stacks by live bytes:|MOST |LIVE$)/m, 'no live list, no other section');
	like($r->{report}, qr/\nSUMMARY: 2,582 bytes in 497 blocks /, 'the summary is always there');

	$r = JT::run_jt(undef, undef, path => $LEAKY, jt_args => ['--top', '0']);
	is($r->{exit}, 0, '--top 0: exit 0');
	unlike($r->{report}, qr/^(?:top \d+ of|PEAK:|LIVE$|MOST |runtime:|#\d+:)/m, '--top 0: no list, no header of one');
	like($r->{report}, qr/^live: +2,582 bytes in 497 blocks from 2 stacks/m, '--top 0: the figures are there');
	like($r->{report}, qr/^totals:\n/m, '--top 0: the totals are there');

	$r = JT::run_jt(undef, undef, path => JT::prog_path('profile', 'pie'));
	my ($calls) = $r->{report} =~ /^(MOST ALLOCATION CALLS\n.*?)(?=^[A-Z])/ms;
	like($calls // '', qr/^top 3 of 4 stacks by allocation calls:\n/m, 'without --top, a section after the first lists 3 stacks (of 4)');
	is(scalar(() = ($calls // '') =~ /^#\d+:/mg), 3, 'three entries');
};

# The field $f of stack $id in each of @snaps (0 where it is missing).
sub series { my ($f, $id, @snaps) = @_; return map { my $sn = $_; ((grep { $_->{id} == $id } @{ $sn->{stacks} })[0] // {})->{$f} // 0 } @snaps }

# slowleak's loop calls sl_churn, then sl_leak when a leak is due (one is due every
# SL_LEAK_MS of wall time, and late ones are made at once), then sleeps 2 ms: 62 churn calls
# between two snapshots mean 60 whole turns of the loop in between, over more than 118 ms,
# so at least one leak. A loaded host may starve the program for a whole interval; such an
# interval is said, and its "every interval" verdict is the program's, not jmptrace's.
my $RAN_CALLS = 62;

# Checks a run's GROWTH at its last snapshot taken by --interval (every interval is whole there).
sub check_growth {
	my ($r, $what) = @_;
	my @snaps = @{ $r->{json}{snapshots} // [] };
	my @due = grep { defined $_->{due_ms} } @snaps;
	cmp_ok(scalar(@due), '>=', 3, "$what: at least 3 snapshots by --interval") or return;
	my $s = $due[-1];
	my $g = $s->{growth};
	ok($g, "$what: the snapshot has \"growth\"") or return;
	is_deeply($g->{times_ms}, [map { $_->{time_ms} } @due], "$what: times_ms are the snapshots' time_ms");
	my $leak = stack_id($s, 'sl_leak');
	my $churn = stack_id($s, 'sl_churn');
	ok(defined $leak && defined $churn, "$what: one sl_leak stack, one sl_churn stack") or return;
	my $first = $g->{stacks}[0] // {};
	is($first->{id}, $leak, "$what: sl_leak grew most") or diag(explain($g));
	my @lb = series('live_bytes', $leak, @due);
	is_deeply($first->{live_bytes}, \@lb, "$what: its live_bytes are the snapshots' figures of that stack");
	my @calls = series('alloc_calls', $churn, @due);
	my @ran = map { $calls[$_] - $calls[$_ - 1] >= $RAN_CALLS } 1 .. $#due;
	my @grew = map { $lb[$_] > $lb[$_ - 1] } 1 .. $#due;
	diag("$what: sl_leak @lb, sl_churn's calls @calls at the snapshots") if grep { !$_ } @ran;
	ok(!grep({ $ran[$_] && !$grew[$_] } 0 .. $#ran), "$what: sl_leak grew in every interval in which slowleak ran");
	# An interval without an allocation or a free (the program held or starved) does not count.
	# (The heap's events: the stacks' allocations and frees, not the calls, of which one may
	# be in flight at a snapshot.)
	my @events = map { my $sn = $_; $sn->{totals}{unknown_frees} + sum(map { $_->{alloc_calls} + $_->{frees} } @{ $sn->{stacks} }) } @due;
	my @moved = map { $events[$_] != $events[$_ - 1] } 1 .. $#due;
	is(JT::is_true($first->{grew_every_interval}), (grep { $moved[$_] && !$grew[$_] } 0 .. $#grew) ? 0 : 1,
	   "$what: grew_every_interval says whether it grew in every interval with allocations or frees");
	ok(JT::is_true($first->{grew_every_interval}), "$what: sl_leak grew in every interval") if !grep { !$_ } @ran;
	is(($lb[-1] - $lb[0]) % $SL_LEAK_SIZE, 0, "$what: it grew by whole leaks");
	my $span = $due[-1]{time_ms} - $due[0]{time_ms};
	my $rate = $first->{rate_bytes_per_s} // 0;
	ok(abs($rate * $span / 1000 - ($lb[-1] - $lb[0])) < 1, "$what: rate $rate bytes/s is the growth over $span ms");
	# The leaks follow the wall clock only while slowleak runs: a snapshot taken late (a
	# loaded host: late_why says why) or an interval it did not run in leaves no rate to expect.
	my @late = grep { defined $_->{late_why} } @due;
	diag("$what: snapshots late: " . join('; ', map { "$_->{late_ms} ms, $_->{late_why}" } @late)) if @late;
	ok($rate >= 0.6 * $SL_RATE && $rate <= 1.4 * $SL_RATE, "$what: rate $rate bytes/s, near $SL_RATE")
		or diag("sl_leak @lb, sl_churn's calls @calls, at @{[map { $_->{time_ms} } @due]} ms")
		if !@late && !grep { !$_ } @ran;
	my ($c) = grep { $_->{id} == $churn } @{ $g->{stacks} };
	ok(!$c || JT::is_false($c->{grew_every_interval}), "$what: sl_churn did not grow in every interval");
	my @cs = series('live_bytes', $churn, @due);
	ok(!grep({ $_ > $SL_CHURN_SIZE * $SL_RING } @cs), "$what: sl_churn never held more than its ring (@cs)");
	# The text report of that snapshot: GROWTH first, sl_leak its #1.
	my @texts = reports($r->{report});
	my $text = $texts[$#due] // '';
	my $every = JT::is_true($first->{grew_every_interval}) ? 'in' : 'not in';
	like(head_lines($text, 40), qr/^GROWTH over ${\ scalar(@due)} snapshots, from [\d,]+ ms to [\d,]+ ms\ntop \d+ of \d+ growing stacks? by bytes grown:\n\n#1: grew [\d,]+ bytes at [\d,]+ bytes\/s, $every every interval\n    live bytes at each snapshot: [\d, >.()a-z-]+\n    at 0x[0-9a-f]+: sl_leak \(main\.c:\d+\)\n/m,
	     "$what: the text's first screen has GROWTH, sl_leak first");
	my @grown = map { $_->{live_bytes}[-1] - $_->{live_bytes}[0] } @{ $g->{stacks} };
	is_deeply(\@grown, [sort { $b <=> $a } @grown], "$what: sorted by growth");
}

subtest 'slowleak --interval 0.3, launched: GROWTH names the leak' => sub {
	# The text reports on stderr, a stream, which gets every snapshot's.
	my $r = JT::run_jt('slowleak', 'pie', args => [2000], jt_args => ['--interval', '0.3'], no_o => 1);
	$r->{report} = $r->{stderr};
	is($r->{exit}, 0, 'exit 0');
	like($r->{stdout}, qr/^leaked \d+\n\z/, 'it says what it leaked');
	ok(!exists $r->{json}{snapshots}[0]{growth}, 'no "growth" in the first snapshot');
	check_growth($r, 'launched');
};

subtest 'slowleak --interval 0.3, attached with -p: GROWTH names the leak' => sub {
	my $dir = tempdir('jt-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my $p = JT::spawn(argv => [JT::prog_path('slowleak', 'pie'), 2500], dir => $dir, name => 'sl');
	select(undef, undef, undef, 0.2);
	my $j = JT::spawn(argv => [$JT, '-p', $p->{pid}, '--interval', '0.3', '--json', "$dir/r.json", '-o', "$dir/r.txt"],
			  dir => $dir, name => 'jt');
	my $js = JT::reap($j);
	my $ps = JT::reap($p);
	is($js, 0, 'jmptrace exit 0');
	is($ps, 0, 'slowleak exit 0');
	# With --interval, -o writes one numbered file per snapshot: r.1.txt, r.2.txt, ...
	my $r = { json => JT::read_json("$dir/r.json"),
		  report => join('', map { JT::slurp("$dir/r.$_.txt") // '' } 1 .. 100) };
	check_growth($r, 'attached');
};

done_testing();
