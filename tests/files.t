#!/usr/bin/perl
# files.t - --json and --html grow with what changed (JSON format 2): python3 doing a fixed
# amount of dict/list/json work, once with one snapshot and once with --interval 0.5 (0.1 under
# the uprobe source, which takes a fifth of the time), writes
# a page and a JSON of at most 3x the one-snapshot run's (the page at most 8 MB), with the same
# call count at exit; each stack's frames are in the file once, and a frame once; jmptrace
# diff reads format 2 as it reads the same snapshots written as format 1, headless Chromium
# shows the page's summary and frames with the JSON's figures and when the page was written,
# a format-1 file made before format 2 (tests/fixtures/v1-slowleak.json) still diffs, and
# jmptrace killed mid-way leaves the page of an earlier snapshot, whole.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempdir);
use JSON::PP ();
use Test::More;
use JT;

my $JT = JT::jmptrace();
-x $JT or plan skip_all => "no jmptrace at $JT";
my $PY = '/usr/bin/python3';
-x $PY or plan skip_all => "no $PY";

sub commify { my $n = reverse $_[0]; $n =~ s/(\d{3})(?=\d)/$1,/g; return scalar reverse $n }

# About 0.3 s of work untraced (2-4 s traced): its allocations go through malloc (strings,
# lists and dict tables past pymalloc's 512 bytes), from about a thousand stacks.
my $WORK = <<'EOF';
import json, re, collections, sys, time
d = {}
for i in range(3000):
    d["k%d" % i] = ["x" * (i % 700), list(range(i % 200)), {str(j): j for j in range(i % 40)}]
    if i % 1000 == 999 and len(sys.argv) > 1:
        time.sleep(float(sys.argv[1]))
t = json.dumps({k: v[1] for k, v in list(d.items())[:500]})
back = json.loads(t)
c = collections.Counter(re.findall(r"\d+", t))
print(len(d), len(back), len(c))
EOF

# Runs python3 with the work under jmptrace with @args; returns the run, its raw (format 2)
# JSON decoded as it is, and the sizes of the JSON and the page.
my $PAUSE = JT::source() eq 'uprobe' ? '0.15' : '0';
sub run_py {
	my ($name, @args) = @_;
	my $dir = tempdir("jt-files-$name-XXXXXX", TMPDIR => 1, CLEANUP => 1);
	JT::spew("$dir/work.py", $WORK);
	# A fixed hash seed: the same allocations in both runs.
	my $r = run_cmd(dir => $dir, timeout => 120, argv => ['env', 'PYTHONHASHSEED=0', $JT, '--json', "$dir/r.json",
		'--html', "$dir/r.html", '-o', "$dir/r.txt", @args, '--', $PY, "$dir/work.py", $PAUSE]);
	is($r->{exit}, 0, "$name: python3 under jmptrace exits 0") or diag($r->{stderr});
	is($r->{stdout}, "3000 500 500\n", "$name: its output is its own");
	$r->{text} = JT::slurp("$dir/r.json") // '';
	$r->{raw} = eval { JSON::PP->new->decode($r->{text}) };
	$r->{json} = eval { JT::decode_report($r->{text}) };
	$r->{json_size} = -s "$dir/r.json";
	$r->{html_size} = -s "$dir/r.html";
	return $r;
}

my $one = run_py('one');
# The work takes 2-4 s under the ptrace source, a fraction of a second under the uprobe
# source: there it pauses 0.15 s three times as it builds (in both runs), and the
# snapshots come every 0.1 s.
my $IV = JT::source() eq 'uprobe' ? '0.1' : '0.5';
my $many = run_py('interval', '--interval', $IV);
my ($s1, $sn) = ($one->{json}{snapshots}, $many->{json}{snapshots});
ok($s1 && @$s1 == 1, 'one snapshot without --interval') or BAIL_OUT('no JSON');
cmp_ok(scalar @$sn, '>=', 3, "several snapshots with --interval $IV (" . scalar(@$sn) . ')');
cmp_ok(scalar @{ $s1->[0]{stacks} }, '>=', 300, 'python3 allocates from many stacks (' . scalar(@{ $s1->[0]{stacks} }) . ')');

subtest 'the files grow with what changed' => sub {
	diag(sprintf('one snapshot: JSON %d, page %d bytes; %d snapshots: JSON %d, page %d bytes',
		     $one->{json_size}, $one->{html_size}, scalar @$sn, $many->{json_size}, $many->{html_size}));
	cmp_ok($one->{html_size}, '<=', 8 << 20, 'the one-snapshot page is at most 8 MB');
	cmp_ok($many->{json_size}, '<=', 3 * $one->{json_size}, 'the JSON with --interval is at most 3x the one-snapshot JSON');
	cmp_ok($many->{html_size}, '<=', 3 * $one->{html_size}, 'the page with --interval is at most 3x the one-snapshot page');
	is($sn->[-1]{reason}, 'exit', 'the last snapshot is the exit');
	# The uprobe source loses events while a snapshot is written (issue 33 item 1, not this file's):
	# then the figures are short of them, said in "lost_events".
	my $lost = $sn->[-1]{totals}{lost_events} // 0;
	local $TODO = "the uprobe source lost $lost events during the snapshots (snapshots off the event path: issue 33 item 1)"
		if $lost;
	is($sn->[-1]{totals}{alloc_calls}, $s1->[0]{totals}{alloc_calls},
	   "the exit snapshot's allocation calls are the one-snapshot run's ($s1->[0]{totals}{alloc_calls})");
	is_deeply($sn->[-1]{totals}{calls}, $s1->[0]{totals}{calls}, '... and so are its calls per function');
};

subtest 'format 2: stacks that changed, frames once' => sub {
	my $raw = $many->{raw};
	is($raw->{format}, 2, '"format": 2');
	my (%ids, $with_frames, @table, @listed);
	for my $s (@{ $raw->{snapshots} }) {
		push @table, map { JSON::PP->new->canonical->encode($_) } @{ $s->{new_frames} };
		push @listed, scalar @{ $s->{stacks} };
		for my $st (@{ $s->{stacks} }) {
			$ids{"$s->{heap}:$st->{id}"}++;
			$with_frames++ if $st->{frames};
		}
	}
	is($with_frames, scalar keys %ids, "each stack's frames once in the file (" . scalar(keys %ids) . ' stacks)');
	my %u = map { $_ => 1 } @table;
	is(scalar keys %u, scalar @table, 'each frame once in the frame table (' . scalar(@table) . ' frames)');
	my @full = map { scalar @{ $_->{stacks} } } @$sn;
	ok($listed[0] == $full[0] && (grep { $listed[$_] < $full[$_] } 1 .. $#listed),
	   "the first snapshot lists every stack, later ones fewer than their whole list (@listed of @full)");
	# Rebuilt, a snapshot's stacks are those of format 1: live ones by live bytes, then the others.
	my $last = $sn->[-1];
	my $live = grep { $_->{live_blocks} } @{ $last->{stacks} };
	my $sum = 0;
	$sum += $_->{live_bytes} for @{ $last->{stacks} };
	is($sum, $last->{totals}{live_bytes}, "the exit snapshot's rebuilt stacks add up to its live bytes ($sum)");
	ok(!(grep { !$_->{frames} || !@{ $_->{frames} } || grep { !defined } @{ $_->{frames} } } @{ $last->{stacks} }),
	   'every rebuilt stack has its frames');
};

# Format 2's snapshots rewritten as format 1 (each whole, frames as objects): diff reads both the same.
subtest 'jmptrace diff reads format 2' => sub {
	my $dir = tempdir('jt-files-diff-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my @v1;
	for my $s (@$sn) {
		my %o = %$s;
		delete @o{qw(heap stacks_listed new_frames stacks_changed)};
		push @v1, \%o;
	}
	JT::spew("$dir/v1.json", JSON::PP->new->canonical->encode({ snapshots => \@v1 }));
	my $f2 = "$many->{dir}/r.json";
	my $n = @$sn;
	my $a = run_cmd(argv => [$JT, 'diff', "$f2:1", "$f2:$n"], timeout => 60);
	my $b = run_cmd(argv => [$JT, 'diff', "$dir/v1.json:1", "$dir/v1.json:$n"], timeout => 60);
	is($a->{exit}, 0, 'diff of the first and the last snapshot exits 0') or diag($a->{stderr});
	my ($t1, $tn) = ($sn->[0]{totals}, $sn->[-1]{totals});
	my $d = $tn->{live_bytes} - $t1->{live_bytes};
	like($a->{stdout} // '', qr/^live:  \Q${\ commify($t1->{live_bytes})} -> ${\ commify($tn->{live_bytes})}\E bytes /m,
	     "its live totals are the snapshots' ($t1->{live_bytes} -> $tn->{live_bytes})");
	(my $x = $a->{stdout} // '') =~ s/^(old|new):.*\n//mg;
	(my $y = $b->{stdout} // 'none') =~ s/^(old|new):.*\n//mg;
	ok(length($x) > 200 && $x eq $y, 'the same report as from the format-1 rewrite (' . length($x) . ' bytes)')
		or diag("format 2:\n$x\nformat 1:\n$y");
	my $c = run_cmd(argv => [$JT, 'diff', "$one->{dir}/r.json", $f2], timeout => 60);
	my $l1 = $s1->[0]{totals};
	like($c->{stdout} // '', qr/^live:  \Q${\ commify($l1->{live_bytes})} -> ${\ commify($tn->{live_bytes})}\E bytes /m,
	     'the one-snapshot run against the exit snapshot: their live totals');
};

subtest 'jmptrace diff reads format 1 (a file made before format 2)' => sub {
	my $fx = JT::root() . '/tests/fixtures/v1-slowleak.json';
	my $d = run_cmd(argv => [$JT, 'diff', "$fx:1", "$fx:3"], timeout => 60);
	is($d->{exit}, 0, 'diff of the fixture exits 0') or diag($d->{stderr});
	like($d->{stdout} // '', qr/^live:  15,800 -> 21,800 bytes \(\+6,000\), 28 -> 34 blocks \(\+6\)$/m, 'its live totals');
	like($d->{stdout} // '', qr/^#1: \+6,000 bytes \(\+6 blocks\): 3,000 -> 9,000 live bytes\n    at sl_leak /m,
	     'its growth: sl_leak');
};

# jmptrace killed mid-way (SIGKILL: no last write) leaves the page of a snapshot before, whole.
subtest 'a run killed mid-way leaves a whole page' => sub {
	my $dir = tempdir('jt-files-kill-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my $j = spawn(dir => $dir, name => 'jt', argv => [$JT, '--interval', '0.2', '--html', "$dir/k.html", '-o', '/dev/null',
		'--', JT::prog_path('slowleak', 'pie'), 3000]);
	my $seen = wait_until(sub { -s "$dir/k.html" }, 30);
	select(undef, undef, undef, 0.7);
	kill 'KILL', $j->{pid};
	reap($j, 20);
	ok($seen, 'the page was written during the run') or return;
	my $html = JT::slurp("$dir/k.html") // '';
	like($html, qr{</html>\n\z}, 'the page is whole');
	my ($data) = $html =~ m{<script type="application/json" id="jt-data">(.*?)</script>}s;
	my $d = eval { JT::decode_report($data // '') };
	ok($d && $d->{format} == 2 && @{ $d->{snapshots} } >= 1, 'its data is format 2 JSON with '
	   . scalar(@{ $d ? $d->{snapshots} : [] }) . ' snapshots') or return;
	my ($leak) = grep { ($_->{frames}[0]{function} // '') eq 'sl_leak' } @{ $d->{snapshots}[-1]{stacks} };
	ok($leak && $leak->{live_bytes} % 1000 == 0 && $leak->{live_bytes} > 0,
	   "its last snapshot has sl_leak's stack with its frames (" . ($leak ? $leak->{live_bytes} : 'none') . ' bytes)');
};

my ($chromium) = grep { -x } map { "$_/chromium" } split /:/, $ENV{PATH} // '';
SKIP: {
	skip 'no chromium (Debian package chromium)', 1 unless $chromium;
	skip 'no python3 websocket module', 1 unless system($PY, '-c', 'import websocket') == 0;
	subtest 'the page shows format 2 in Chromium' => sub {
		my $dir = tempdir('jt-files-cdp-XXXXXX', TMPDIR => 1, CLEANUP => 1);
		my $page = "$many->{dir}/r.html";
		JT::spew("$dir/steps.json", JSON::PP->new->encode([
			{ eval => "document.getElementById('summary').textContent" },
			{ eval => "document.getElementById('written').textContent" },
			{ eval => "[...document.querySelectorAll('#table-live tr.row')].map(r => r.cells[0].textContent)" },
			{ click => '#table-live tr.row' },
			{ eval => "[...document.querySelectorAll('#frames .frame')].map(e => e.textContent)" }]));
		my $r = run_cmd(timeout => 120, argv => [$PY, "$FindBin::Bin/lib/cdp.py", $page, "$dir/steps.json"]);
		my $out = eval { JSON::PP->new->decode($r->{stdout}) };
		ok($out, 'cdp.py drove Chromium') or return diag($r->{stderr});
		is_deeply($out->{errors}, [], 'no script error');
		my $res = $out->{results};
		my $s = $sn->[-1];
		my $t = $s->{totals};
		my $sup = $t->{suppressed}{live_bytes} // 0;
		my $nlive = grep { $_->{live_blocks} && !$_->{suppressed} } @{ $s->{stacks} };
		like($res->[0], qr/^pid $s->{pid}, exit at \Q${\ commify($s->{time_ms})}\E ms: \Q${\ commify($t->{live_bytes} - $sup)}\E bytes live in .* from \Q${\ commify($nlive)}\E stacks?[,;].* \Q${\ commify($t->{alloc_calls})}\E allocation calls/,
		     "the summary has the exit snapshot's figures ($res->[0])");
		my $n = @$sn;
		like($res->[1], qr/^page written \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC with $n snapshots, the last #$s->{seq} \(exit\)$/,
		     "it says when it was written, with what ($res->[1])");
		my @rows = grep { $_->{live_bytes} && !$_->{runtime} && !$_->{suppressed} } @{ $s->{stacks} };
		@rows = sort { $b->{live_bytes} <=> $a->{live_bytes} } @rows;
		my $top = $rows[0];
		is($res->[2][0], $top->{id}, "the live table's first row is the JSON's largest stack ($top->{id})");
		is(scalar @{ $res->[4] // [] }, scalar @{ $top->{frames} }, 'a click on it shows each of its frames (' . scalar(@{ $top->{frames} }) . ')');
		like($res->[4][0] // '', qr/^at \Q$top->{frames}[0]{address}\E: /, '... the first at its address');
	};
}

done_testing();
