#!/usr/bin/perl
# diff.t - `jmptrace diff`: two snapshots of samples/server (SIGUSR1 twice) name remember()
# as the growth with its exact bytes, in text and in JSON; two runs of one program at other
# addresses (profile-pie and profile-nopie) match by function and line; bad arguments give
# one line on stderr and exit 2 (usage) or 1 (input); --interval writes periodic snapshots.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempdir);
use POSIX qw(WIFEXITED WEXITSTATUS);
use Test::More;
use JT;

my $JT = JT::jmptrace();
-x $JT or plan skip_all => "no jmptrace at $JT";
my $SERVER = JT::root() . '/samples/server';
my $SERVER_C = JT::root() . '/samples/server.c';

# A figure as the text output prints it: thousands separators, and a sign when asked.
sub num {
	my ($v, $sign) = @_;
	my $s = reverse abs($v);
	$s =~ s/(\d{3})(?=\d)/$1,/g;
	$s = reverse $s;
	return $s unless $sign && $v != 0;
	return ($v < 0 ? '-' : '+') . $s;
}

sub blocks_word { abs($_[0]) == 1 ? 'block' : 'blocks' }

# Runs jmptrace diff with args in a scratch directory.
sub run_diff { run_cmd(argv => [$JT, 'diff', @_], timeout => 60) }

# Sums live_bytes and live_blocks of the snapshot's stacks whose frame 0 is $func.
sub live_of {
	my ($snap, $func) = @_;
	my @st = stacks_with_frame0($snap, $func);
	return (sum_field('live_bytes', @st), sum_field('live_blocks', @st), scalar @st);
}

# The growth section's first entry: its "#1:" line and its first frame line.
sub first_growth {
	my ($text) = @_;
	my ($sec) = $text =~ /^top \d+ of \d+ stacks? that grew, by live bytes:\n\n(.*?)(?:\n\n|\z)/ms;
	return () unless defined $sec;
	my @l = split /\n/, $sec;
	return @l;
}

# ---------------------------------------------------------------------------------------
# samples/server under jmptrace: SIGUSR1, a second later SIGUSR1 again (and again until
# remember has grown enough), then SIGTERM.

my $sdir = tempdir('jt-diff-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $F = "$sdir/server.json";
my ($snap1, $snap2, $server_ok);
my $NEW = 2;	# the snapshot diffed against the first

subtest 'samples/server: two snapshots on SIGUSR1' => sub {
	ok(-x $SERVER, "$SERVER is built (make samples-build)") or return;
	my $j = spawn(argv => [$JT, '--json', $F, '-o', "$sdir/server.txt", '--', $SERVER],
		      dir => $sdir, name => 'jt');
	ok(wait_until(sub { catches_signal($j->{pid}, 10) }, 30), 'jmptrace handles SIGUSR1')
		or return reap($j, 1);
	ok(wait_until(sub { (JT::slurp($j->{out}) // '') =~ /^server: pid \d+, 4 workers$/m }, 30),
	   'the server runs') or return reap($j, 1);
	my $nsnaps = sub { my $x = read_json($F); $x ? scalar @{ $x->{snapshots} // [] } : 0 };
	select(undef, undef, undef, 0.5);
	kill 'USR1', $j->{pid};
	ok(wait_until(sub { $nsnaps->() >= 1 }, 30), 'the first SIGUSR1 wrote a snapshot')
		or return reap($j, 1);
	# More snapshots, a second apart, until remember has grown past what else can grow: the
	# request buffers in flight, at most 4 of 1,535 bytes (so remember must be first).
	my $first = read_json($F)->{snapshots}[0];
	my $grown = sub {
		my $x = read_json($F) or return 0;
		return (live_of($x->{snapshots}[-1], 'remember'))[0] - (live_of($first, 'remember'))[0];
	};
	for my $n (2 .. 10) {
		select(undef, undef, undef, 1.0);
		kill 'USR1', $j->{pid};
		ok(wait_until(sub { $nsnaps->() >= $n }, 30), "SIGUSR1 number $n wrote a snapshot")
			or return reap($j, 1);
		$NEW = $n;
		last if $grown->() > 8192;
	}
	# SIGTERM goes on to the launched server, which dies of it.
	kill 'TERM', $j->{pid};
	ok(defined reap($j, 60), 'jmptrace ends with the server on SIGTERM') or diag(JT::slurp($j->{err}) // '');
	my $x = read_json($F);
	ok($x, 'the JSON report is valid') or return;
	($snap1, $snap2) = @{ $x->{snapshots} }[0, $NEW - 1];
	is(join(',', map { $_->{reason} } @{ $x->{snapshots} }[0 .. $NEW - 1]), join(',', ('sigusr1') x $NEW),
	   "the first $NEW are the SIGUSR1 ones");
	my ($b1, $k1) = live_of($snap1, 'remember');
	my ($b2, $k2) = live_of($snap2, 'remember');
	ok($b2 - $b1 > 8192, "remember holds over 8,192 bytes more in snapshot $NEW ($b1 -> $b2 bytes)");
	is($b2 - $b1, 256 * ($k2 - $k1), 'every block remember keeps is 256 bytes');
	$server_ok = 1;
};

subtest 'diff F:1 F:N names remember first, with its bytes' => sub {
	plan skip_all => 'no server snapshots' unless $server_ok;
	my ($b1, $k1, $n1) = live_of($snap1, 'remember');
	my ($b2, $k2, $n2) = live_of($snap2, 'remember');
	is($n1 . '/' . $n2, '1/1', 'one remember stack in each snapshot (its 4 threads share it)');
	my $line = line_of($SERVER_C, 'grows forever');
	my $r = run_diff("$F:1", "$F:$NEW");
	is($r->{exit}, 0, 'exit 0');
	is($r->{stderr}, '', 'nothing on stderr');
	my $out = $r->{stdout} // '';
	my @g = first_growth($out);
	is($g[0], sprintf('#1: %s bytes (%s %s): %s -> %s live bytes', num($b2 - $b1, 1), num($k2 - $k1, 1),
			  blocks_word($k2 - $k1), num($b1), num($b2)),
	   'the first growth: remember\'s delta and figures from the JSON report');
	is($g[1], "    at remember (server.c:$line)", "its frame 0: remember at server.c:$line, the malloc");
	like($g[2] // '', qr/^    by handle \(server\.c:\d+\)$/, 'called by handle');
	like($g[3] // '', qr/^    by worker \(server\.c:\d+\)$/, 'called by worker');
	my ($pid, $t1, $t2) = ($snap1->{pid}, $snap1->{totals}, $snap2->{totals});
	like($out, qr/^old:  \Q$F\E, snapshot 1 of \d+ \(sigusr1\), pid $pid\b/m, 'the header names the old snapshot');
	like($out, qr/^new:  \Q$F\E, snapshot $NEW of \d+ \(sigusr1\), pid $pid\b/m, 'and the new one');
	my $live = sprintf('live:  %s -> %s bytes (%s), %s -> %s blocks (%s)', num($t1->{live_bytes}),
			   num($t2->{live_bytes}), num($t2->{live_bytes} - $t1->{live_bytes}, 1),
			   num($t1->{live_blocks}), num($t2->{live_blocks}),
			   num($t2->{live_blocks} - $t1->{live_blocks}, 1));
	like($out, qr/^\Q$live\E$/m, 'the totals old -> new: ' . $live);
	like($out, qr/^SUMMARY: live bytes \Q${\ num($t1->{live_bytes})} -> ${\ num($t2->{live_bytes})}\E \(/m,
	     'the SUMMARY line');

	# --json: the same figures, read back with JSON::PP.
	my $dj = "$sdir/diff.json";
	$r = run_diff('--json', $dj, "$F:1", "$F:$NEW");
	is($r->{exit}, 0, '--json: exit 0');
	my $d = read_json($dj);
	ok($d, '--json: the file is JSON') or return;
	is($d->{old}{snapshot} . '/' . $d->{new}{snapshot}, "1/$NEW", "--json: old and new are snapshots 1 and $NEW");
	is($d->{old}{reason} . '/' . $d->{new}{reason}, 'sigusr1/sigusr1', '--json: their reasons');
	is($d->{old}{live_bytes} . '/' . $d->{new}{live_bytes}, "$t1->{live_bytes}/$t2->{live_bytes}",
	   '--json: the totals\' live bytes');
	is($d->{live_bytes_delta}, $t2->{live_bytes} - $t1->{live_bytes}, '--json: live_bytes_delta');
	my $s0 = $d->{stacks}[0];
	ok($s0 && frame_func_is($s0->{frames}[0], 'remember'), '--json: the first stack is remember\'s')
		or return;
	is(join('/', @$s0{qw(live_bytes_delta live_blocks_delta old_live_bytes new_live_bytes)}),
	   join('/', $b2 - $b1, $k2 - $k1, $b1, $b2), '--json: its delta, block delta, old and new live bytes');
	ok(frame_file_is($s0->{frames}[0], 'server.c') && $s0->{frames}[0]{line} == $line,
	   "--json: its frame 0 is server.c:$line");
	my @order = map { $_->{live_bytes_delta} } @{ $d->{stacks} };
	is_deeply(\@order, [sort { $b <=> $a } @order], '--json: stacks ordered by delta, highest first');

	# FILE alone is its last snapshot, FILE:-1 too.
	my $n = scalar @{ read_json($F)->{snapshots} };
	$r = run_diff("$F:1", $F);
	like($r->{stdout} // '', qr/^new:  \Q$F\E, snapshot $n of $n \(/m, "FILE alone is snapshot $n of $n");
	$r = run_diff("$F:-$n", "$F:-1");
	like($r->{stdout} // '', qr/^old:  \Q$F\E, snapshot 1 of $n .*\nnew:  \Q$F\E, snapshot $n of $n /m,
	     "FILE:-$n and FILE:-1 count from the end");
};

# ---------------------------------------------------------------------------------------
# Two runs of profile, PIE and not: other addresses, the same functions and lines.

subtest 'profile-pie against profile-nopie: matched by function and line' => sub {
	my $p = run_jt('profile', 'pie');
	my $n = run_jt('profile', 'nopie');
	is($p->{exit} . '/' . $n->{exit}, '0/0', 'both runs exit 0');
	my ($sp, $sn) = (last_snapshot($p), last_snapshot($n));
	ok($sp && $sn, 'both have a report') or return;
	my ($ap) = stacks_with_frame0($sp, 'small_phase');
	my ($an) = stacks_with_frame0($sn, 'small_phase');
	ok($ap && $an, 'both have the small_phase stack') or return;
	isnt($ap->{frames}[0]{address}, $an->{frames}[0]{address},
	     "its addresses differ ($ap->{frames}[0]{address}, $an->{frames}[0]{address})");
	my $dj = "$p->{dir}/diff.json";
	my $r = run_diff('--json', $dj, "$p->{dir}/report.json", "$n->{dir}/report.json");
	is($r->{exit}, 0, 'exit 0');
	my $out = $r->{stdout} // '';
	like($out, qr/^no stack grew$/m, 'no stack grew');
	like($out, qr/^no stack shrank$/m, 'no stack shrank');
	like($out, qr/^live:  10,000 -> 10,000 bytes \(0\), 10 -> 10 blocks \(0\)$/m, 'live 10,000 -> 10,000 bytes');
	like($out, qr/^SUMMARY: live bytes 10,000 -> 10,000 \(0\); 0 stacks grew by 0 bytes, 0 shrank by 0 bytes, \d+ unchanged$/m,
	     'SUMMARY: nothing changed');
	my $d = read_json($dj);
	ok($d, '--json: the file is JSON') or return;
	my @small = grep { frame_func_is($_->{frames}[0], 'small_phase') } @{ $d->{stacks} };
	is(scalar @small, 1, 'one small_phase row: both runs\' stacks matched');
	is(join('/', map { $_ ? (ref $_ ? 0 + $_ : $_) : 0 } @{ $small[0] // {} }{qw(live_bytes_delta live_blocks_delta
	   old_live_bytes new_live_bytes in_old in_new)}), '0/0/10000/10000/1/1', 'zero delta, 10,000 bytes on each side');
	my @unmatched = grep { !is_true($_->{in_old}) || !is_true($_->{in_new}) } @{ $d->{stacks} };
	is(scalar @unmatched, 0, 'every stack of one run matched one of the other')
		or diag(join("\n", map { JT::describe_frame($_->{frames}[0]) } @unmatched));
};

# ---------------------------------------------------------------------------------------
# Errors: one line on stderr (a usage error: and a line on where to read more), nothing on
# stdout, exit 2 for usage and 1 for the input.

subtest 'errors' => sub {
	my $dir = tempdir('jt-diff-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my $p = run_jt('profile', 'pie');
	my $good = "$p->{dir}/report.json";
	JT::spew("$dir/empty.json", qq({"snapshots": []}\n));
	JT::spew("$dir/array.json", qq([1, 2]\n));
	JT::spew("$dir/text.json", "not json at all\n");
	JT::spew("$dir/cut.json", qq({"snapshots": [{"stacks": []}\n));
	JT::spew("$dir/syntax.json", qq({"snapshots": [\n  {"a": 1,,}\n]}\n));
	JT::spew("$dir/nothing.json", "\n");
	# Our words, never json-c's ("null expected"): the text report is the usual mistake.
	my $not_json = "a JSON report with '\\{' \\(jmptrace diff reads the files that --json writes\\)\$";
	my @cases = (
		[ 'one argument', [$good], 2, qr/give two snapshots, OLD\.json\[:N\] NEW\.json\[:N\]/, 1 ],
		[ 'three arguments', [$good, $good, $good], 2, qr/give two snapshots/, 1 ],
		[ 'unknown option', ['--bogus', $good, $good], 2, qr/unrecognized option '--bogus'/, 1 ],
		[ '--top without a number', ['--top', 'x', $good, $good], 2, qr/--top: give a number, not 'x'/ ],
		[ '--json without a value', [$good, $good, '--json'], 2, qr/option '--json' requires an argument/, 1 ],
		[ 'snapshot 0', ["$good:0", $good], 2, qr/'\Q$good\E:0': give FILE or FILE:N/ ],
		[ 'a missing file', ["$dir/none.json", $good], 1, qr/\Q$dir\E\/none\.json: No such file or directory/ ],
		[ 'a directory', [$dir, $good], 1, qr/\Q$dir\E: Is a directory/ ],
		[ 'not JSON', ["$dir/text.json", $good], 1, qr/text\.json: not JSON: it begins with 'n', $not_json/ ],
		[ 'the text report', [$good, "$p->{dir}/report.txt"], 1,
		  qr/report\.txt: not JSON: it begins with '=', $not_json/ ],
		[ 'a syntax error', ["$dir/syntax.json", $good], 1, qr/syntax\.json: not JSON: a syntax error at line 2, column 11$/ ],
		[ 'an empty file', ["$dir/nothing.json", $good], 1, qr/nothing\.json: not JSON: the file is empty$/ ],
		[ 'cut JSON', [$good, "$dir/cut.json"], 1, qr/cut\.json: not JSON \(the file ends before the value does\)/ ],
		[ 'not a report', ["$dir/array.json", $good], 1, qr/array\.json: not a jmptrace JSON report/ ],
		[ 'no snapshots', ["$dir/empty.json", $good], 1, qr/empty\.json: the report has no snapshots/ ],
		[ 'no such snapshot', ["$good:2", $good], 1, qr/\Q$good\E: no snapshot 2: the report has 1/ ],
		[ 'no such snapshot from the end', [$good, "$good:-3"], 1, qr/no snapshot -3: the report has 1/ ],
	);
	for my $c (@cases) {
		my ($name, $args, $exit, $re, $try) = @$c;
		my $r = run_diff(@$args);
		is($r->{exit}, $exit, "$name: exit $exit");
		# A usage error is followed by where to read more, as getopt-based tools say it.
		my $more = $try ? "Try 'jmptrace diff --help' for more information\\.\n" : '';
		like($r->{stderr}, qr/\Ajmptrace: diff: (?:(?!\n).)*$re(?:(?!\n).)*\n$more\z/,
		     "$name: one line on stderr" . ($try ? ', and where to read more' : ''))
			or diag($r->{stderr});
		is($r->{stdout}, '', "$name: nothing on stdout");
	}
	my $r = run_diff('--json', "$dir/no/such/dir/d.json", $good, $good);
	is($r->{exit}, 1, 'an unwritable --json file: exit 1');
	like($r->{stderr}, qr/\Ajmptrace: diff: cannot write '\Q$dir\E\/no\/such\/dir\/d\.json': No such file or directory\n\z/,
	     'an unwritable --json file: one line on stderr');
};

# ---------------------------------------------------------------------------------------
# Snapshots of two programs, or of a parent and its forked child (-f, one report): the
# diff is made, with one line of warning; two runs of one program give none.

subtest 'different programs, or a parent and its child: one line of warning' => sub {
	my $x = run_jt('leak', 'pie', args => [3, 0]);
	my $y = run_jt('leak', 'pie', args => [4, 0]);
	my $f = run_jt('forker', 'pie', args => ['fork'], jt_args => ['-f']);
	is("$x->{exit}/$y->{exit}/$f->{exit}", '0/0/0', 'the three runs exit 0');
	my ($ra, $rb, $rf) = map { "$_->{dir}/report.json" } $x, $y, $f;
	my @snaps = @{ ($f->{json} // {})->{snapshots} // [] };
	is(scalar @snaps, 2, 'forker -f: two snapshots, the child\'s and the parent\'s') or return;
	my ($pa, $pf1, $pf2) = (last_snapshot($x)->{pid}, $snaps[0]{pid}, $snaps[1]{pid});
	isnt($pf1, $pf2, 'forker -f: two pids');

	my $r = run_diff($ra, $rb);
	is($r->{exit}, 0, 'two runs of leak-pie: exit 0');
	is($r->{stderr}, '', 'two runs of leak-pie: no warning');
	like($r->{stdout}, qr/^#1: \+[\d,]+ bytes \(\+1 block\)/m, 'two runs of leak-pie: the diff');

	$r = run_diff($ra, $rf);
	is($r->{exit}, 0, 'leak-pie against forker-pie: exit 0');
	is($r->{stderr}, "jmptrace: diff: warning: the snapshots are of different programs, leak-pie (pid $pa) and forker-pie (pid $pf2)\n",
	   'leak-pie against forker-pie: one line says they are different programs');
	like($r->{stdout}, qr/^SUMMARY: /m, 'leak-pie against forker-pie: the diff all the same');

	$r = run_diff("$rf:1", "$rf:2");
	is($r->{exit}, 0, 'forker -f, snapshot 1 against 2: exit 0');
	is($r->{stderr}, "jmptrace: diff: warning: the snapshots are of different processes of one run, pid $pf1 and pid $pf2 (a parent and its child?)\n",
	   'forker -f, snapshot 1 against 2: one line says they are two processes of one run');
	like($r->{stdout}, qr/^SUMMARY: /m, 'forker -f, snapshot 1 against 2: the diff all the same');

	$r = run_diff("$rf:2", $rf);
	is($r->{stderr}, '', 'forker -f, one snapshot against itself: no warning');
};

# ---------------------------------------------------------------------------------------
# --interval: profile sleeps 2 s first, so a 0.2 s interval gives at least 5 snapshots
# before its phases; the first and the last then differ by small_phase's 10 blocks.

subtest '--interval 0.2: periodic snapshots, and a diff of the first and the last' => sub {
	my $r = run_jt('profile', 'pie', jt_args => ['--interval', '0.2'], args => ['2']);
	is($r->{exit}, 0, 'exit 0');
	my @snaps = @{ ($r->{json} // {})->{snapshots} // [] };
	my @iv = grep { ($_->{reason} // '') eq 'interval' } @snaps;
	ok(@iv >= 5, 'at least 5 snapshots with reason "interval" (' . scalar(@iv) . ' of ' . scalar(@snaps) . ')')
		or diag(join(',', map { $_->{reason} // '?' } @snaps));
	is(($snaps[-1] // {})->{reason}, 'exit', 'the last one is at exit');
	return unless @iv;
	my $d = run_diff("$r->{dir}/report.json:1", "$r->{dir}/report.json");
	is($d->{exit}, 0, 'diff of the first and the last: exit 0');
	my @g = first_growth($d->{stdout} // '');
	like($g[0] // '', qr/^#1: \+10,000 bytes \(\+10 blocks\): 0 -> 10,000 live bytes\b/,
	     'small_phase\'s 10 blocks of 1,000 bytes are the growth');
	my $line = site_line('profile/profile.c', 'profile: small');
	is($g[1], "    at small_phase (profile.c:$line)", "at small_phase (profile.c:$line)");
};

done_testing();
