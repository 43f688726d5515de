#!/usr/bin/perl
# leakreport.t - --leak-check's verdicts in every report: the text LEAK CHECK section and
# LEAK SUMMARY, JSON leak_check, --sort definitely-lost, folded and flame graph with
# --folded-cost definitely-lost, and pprof's leaked_space/leaked_objects. The figures are
# valgrind's for the same programs (valgrind --leak-check=full --show-leak-kinds=all).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempdir);
use Test::More;
use JT;
use JTCheck;

my $JT = JT::jmptrace();
BAIL_OUT("no executable jmptrace at $JT (make jmptrace, or set JMPTRACE)") unless -x $JT;
my @modes = $ENV{JT_MODES} ? split(/[\s,]+/, $ENV{JT_MODES}) : qw(pie static);

my ($GO) = grep { -x } map { "$_/go" } split(/:/, $ENV{PATH} // '');
# pprof keeps state under $HOME/pprof and PPROF_TMPDIR; keep both out of the real home.
my $HOME = tempdir('jt-leakreport-XXXXXX', TMPDIR => 1, CLEANUP => 1);
$ENV{HOME} = $HOME;
$ENV{PPROF_TMPDIR} = $HOME;
$ENV{GOCACHE} = "$HOME/gocache";

# tests/progs/leak 5: leak_here's 5 blocks (1024 + 16 i bytes) hang from the global
# leak_list: still reachable, 5,280 bytes, as valgrind says. Nothing is lost.
my $HERE_LINE = site_line('leak/leak_here.c', 'LEAK-SITE');
# tests/progs/inlined: 5 blocks of 500 from in_alloc (inlined into in_outer); sink() keeps
# the last one, the 4 others are definitely lost: 2,000 bytes in 4 blocks (valgrind's).
my $INL_LINE = site_line('inlined/inlined.c', 'inlined: alloc');

# The loss records of a snapshot whose first frame is function fn.
sub records_at {
	my ($snap, $fn) = @_;
	my $lc = $snap->{leak_check} or return ();
	return grep { @{ $_->{frames} } && ($_->{frames}[0]{function} // '') eq $fn } @{ $lc->{records} };
}

sub pprof_top {
	my ($file, $index) = @_;
	# Bytes as bytes, not kB; a count is left as it is.
	my @unit = $index =~ /space/ ? ('-unit=B') : ();
	my $r = run_cmd(argv => [$GO, 'tool', 'pprof', '-symbolize=none', "-sample_index=$index", '-top', @unit, $file],
			timeout => 60);
	is($r->{exit}, 0, "go tool pprof -sample_index=$index -top: exit 0") or diag($r->{stderr});
	return $r->{stdout} // '';
}

for my $mode (@modes) {
	subtest "leak-$mode: still reachable, nothing lost" => sub {
		my $r = run_jt('leak', $mode, args => [5],
			       jt_args => ['--leak-check', '--show-leak-kinds', 'all']);
		is($r->{exit}, 3, 'exit 3, the program\'s');
		my $s = snapshot_of($r, "leak-$mode") or return;
		my $lc = $s->{leak_check};
		ok(ref $lc eq 'HASH', 'JSON: leak_check is an object') or return;
		my @here = records_at($s, 'leak_here');
		is(scalar @here, 1, 'JSON: one record at leak_here') or diag(explain($lc->{records}));
		my $rec = $here[0] or return;
		is($rec->{leak_kind}, 'still_reachable', 'JSON: leak_here\'s blocks are still reachable');
		is($rec->{bytes}, 5280, 'JSON: 5,280 bytes');
		is($rec->{blocks}, 5, 'JSON: in 5 blocks');
		is($rec->{frames}[0]{line}, $HERE_LINE, "JSON: at leak_here.c:$HERE_LINE");
		is_deeply($lc->{summary}{definitely_lost}, { bytes => 0, blocks => 0 }, 'JSON: nothing definitely lost');
		is($lc->{summary}{possibly_lost}{blocks}, 0, 'JSON: nothing possibly lost');
		ok(is_false($lc->{attached}), 'JSON: not attached');
		my $st = $s->{stacks}[ $rec->{stack} ];
		is($st->{frames}[0]{function}, 'leak_here', 'JSON: "stack" names leak_here\'s entry');
		my $T = scalar @{ $lc->{records} };
		like($r->{report}, qr/^5,280 bytes in 5 blocks are still reachable in loss record $rec->{record} of $T\n    at 0x[0-9a-f]+: leak_here \(leak_here\.c:$HERE_LINE\)\n/m,
		     'text: the record and its stack');
		like($r->{report}, qr/^LEAK SUMMARY:\n   definitely lost: 0 bytes in 0 blocks\n   indirectly lost: 0 bytes in 0 blocks\n     possibly lost: 0 bytes in 0 blocks\n/m,
		     'text: the LEAK SUMMARY');
	};
}

for my $mode (@modes) {
	subtest "inlined-$mode: 4 of 5 blocks definitely lost, in every format" => sub {
		my $r = run_jt('inlined', $mode,
			       jt_args => ['--leak-check', '--sort', 'definitely-lost', '--pprof', 'heap.pb.gz',
					   '--folded', 'lost.folded', '--folded-cost', 'definitely-lost',
					   '--flamegraph', 'lost.svg']);
		is($r->{exit}, 0, 'exit 0') or diag($r->{stderr});
		my $s = snapshot_of($r, "inlined-$mode") or return;
		my $lc = $s->{leak_check};
		ok(ref $lc eq 'HASH', 'JSON: leak_check is an object') or return;
		my @recs = records_at($s, 'in_alloc');
		my ($lost) = grep { $_->{leak_kind} eq 'definitely_lost' } @recs;
		# valgrind: still reachable (pie; the static builds' registers may hold only an interior pointer).
		my ($kept) = grep { $_->{leak_kind} ne 'definitely_lost' } @recs;
		ok($lost && $kept && @recs == 2, 'JSON: in_alloc\'s stack split in two records, one definitely lost')
			or return diag(explain($lc->{records}));
		is($lost->{bytes}, 2000, 'JSON: 2,000 bytes definitely lost');
		is($lost->{blocks}, 4, 'JSON: in 4 blocks');
		is($lost->{indirect_bytes}, 0, 'JSON: nothing indirectly');
		is($lost->{frames}[0]{line}, $INL_LINE, "JSON: at inlined.c:$INL_LINE");
		is($kept->{bytes}, 500, "JSON: the kept block, 500 bytes, $kept->{leak_kind}");
		is($kept->{leak_kind}, 'still_reachable', 'JSON: the kept block is still reachable, as valgrind says')
			if $mode eq 'pie';
		is($lost->{stack}, $kept->{stack}, 'JSON: both records name the same stack entry');
		is($s->{stacks}[ $lost->{stack} ]{live_blocks}, 5, 'JSON: that entry has the 5 live blocks');
		is_deeply($lc->{summary}{definitely_lost}, { bytes => 2000, blocks => 4 }, 'JSON: summary, definitely lost');
		my $T = scalar @{ $lc->{records} };

		my $text = $r->{report};
		like($text, qr/^2,000 bytes in 4 blocks are definitely lost in loss record $lost->{record} of $T\n    at 0x[0-9a-f]+: in_alloc \(inlined\.c:$INL_LINE\) \(inlined\)\n    by 0x[0-9a-f]+: in_outer /m,
		     'text: the record and its stack');
		unlike($text, qr/are still reachable in loss record/, 'text: reachable records not listed by default');
		like($text, qr/^LEAK SUMMARY:\n   definitely lost: 2,000 bytes in 4 blocks\n/m, 'text: the LEAK SUMMARY');
		like($text, qr/^top 1 of 1 stack by bytes definitely lost:\n\n#1: 2,000 bytes in 4 blocks definitely lost; live 2,500 bytes in 5 blocks, /m,
		     'text: --sort definitely-lost');
		like($text, qr/^LEAK CHECK \(at exit: 1 thread stopped [\d.]+ (?:us|ms|s); /m, 'text: the check\'s figures');

		my $folded = JT::slurp("$r->{dir}/lost.folded") // '';
		like($folded, qr/\A[^\n]*;main;in_outer;in_alloc 2000\n\z/, 'folded: one line, in_alloc 2000');
		my $svg = JT::slurp("$r->{dir}/lost.svg") // '';
		like($svg, qr/in_alloc \(2,000 bytes, 100\.00%\)/, 'flame graph: in_alloc, 2,000 bytes');
		like($svg, qr/bytes definitely lost/, 'flame graph: names the figure');

		{
			# The consumer is installed by .ci/run: its absence is a failure, not a skip.
			ok($GO, 'go is installed (golang-go): go tool pprof reads the profile') or last;
			my $top = pprof_top("$r->{dir}/heap.pb.gz", 'leaked_space');
			like($top, qr/^\s*2000B\s+100%\s+100%\s+2000B\s+100%\s+in_alloc\b/m, 'pprof leaked_space: in_alloc 2000B');
			$top = pprof_top("$r->{dir}/heap.pb.gz", 'leaked_objects');
			like($top, qr/^\s*4\s+100%\s+100%\s+4\s+100%\s+in_alloc\b/m, 'pprof leaked_objects: in_alloc 4');
		}
	};
}

# A suppression that matches in_outer takes the lost record out of the text, the summary's
# definitely lost line, the cost and pprof's leaked figures; JSON keeps it, marked.
for my $mode (@modes) {
	subtest "inlined-$mode: a suppressed loss record" => sub {
		my $dir = tempdir('jt-leakreport-XXXXXX', TMPDIR => 1, CLEANUP => 1);
		JT::spew("$dir/supp", "leak:in_outer\n");
		my $r = run_jt('inlined', $mode,
			       jt_args => ['--leak-check', '--suppressions', "$dir/supp",
					   '--folded', 'lost.folded', '--folded-cost', 'definitely-lost']);
		my $s = snapshot_of($r, "inlined-$mode") or return;
		my $lc = $s->{leak_check} or return fail('JSON: leak_check');
		my ($lost) = grep { $_->{leak_kind} eq 'definitely_lost' } records_at($s, 'in_alloc');
		ok($lost && is_true($lost->{suppressed}), 'JSON: the lost record is there, "suppressed": true');
		is_deeply($lc->{summary}{definitely_lost}, { bytes => 0, blocks => 0 }, 'JSON: summary, nothing definitely lost');
		cmp_ok($lc->{summary}{suppressed}{bytes}, '>=', 2000, 'JSON: summary, suppressed holds its 2,000 bytes');
		unlike($r->{report}, qr/2,000 bytes in 4 blocks are definitely lost/, 'text: the record is not listed');
		like($r->{report}, qr/^   definitely lost: 0 bytes in 0 blocks\n/m, 'text: nothing definitely lost');
		is(JT::slurp("$r->{dir}/lost.folded"), '', 'folded: empty');
	};
}

# Killed by a signal, the process never reached _exit: no check could run, and the reports say so.
subtest 'killsig-pie: killed before _exit' => sub {
	my $r = run_jt('killsig', 'pie', args => ['kill'], jt_args => ['--leak-check']);
	my $s = snapshot_of($r, 'killsig-pie') or return;
	ok(exists $s->{leak_check} && !defined $s->{leak_check}, 'JSON: "leak_check": null');
	like($r->{report}, qr/^LEAK CHECK: no check could run \(the process was gone before it could be\n/m,
	     'text: one line says no check could run');
	unlike($r->{report}, qr/LEAK SUMMARY/, 'text: no LEAK SUMMARY');
};

done_testing();
