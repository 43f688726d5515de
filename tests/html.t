#!/usr/bin/perl
# html.t - --html writes one self-contained page holding every snapshot's JSON (the same as
# --json's), and headless Chromium driven with real mouse and key events (tests/lib/cdp.py)
# shows it: a click on a band of the heap chart shows that stack's frames, the flame graph
# switches between live bytes and allocation calls and zooms on a click, the call tree
# expands a row into its callees with their exact figures, and the snapshot selector puts
# another snapshot's exact figures in the tables. The page asks for nothing but itself.
# Its rows are named by the code that called the allocator's wrappers (built in, and
# --alloc-fn), its header has the text report's figures (the runtime's apart, lost events
# said), loss records come biggest first, the growth table keeps its columns however many
# snapshots there are, and the peak's dot sits on the chart's area.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempdir);
use JSON::PP ();
use POSIX ();
use Test::More;
use JT;

my $JT = JT::jmptrace();
-x $JT or plan skip_all => "no jmptrace at $JT";
# Debian's python3 with python3-websocket drives Chromium over the DevTools protocol.
my $PY = '/usr/bin/python3';
my $CDP = "$FindBin::Bin/lib/cdp.py";
my ($chromium) = grep { -x } map { "$_/chromium" } split /:/, $ENV{PATH} // '';
$chromium or plan skip_all => 'no chromium (Debian package chromium)';
system($PY, '-c', 'import websocket') == 0
	or plan skip_all => 'no python3 websocket module (Debian package python3-websocket)';
# Screenshots go here to be looked at (kept when JT_HTML_SHOTS names a directory).
my $SHOTS = $ENV{JT_HTML_SHOTS} // tempdir('jt-shots-XXXXXX', TMPDIR => 1, CLEANUP => 1);

sub commify { my $n = reverse $_[0]; $n =~ s/(\d{3})(?=\d)/$1,/g; return scalar reverse $n }

sub label {
	my ($fr) = @_;
	return $fr->{function} if defined $fr->{function};
	return "$fr->{module}+$fr->{offset}" if defined $fr->{module};
	return $fr->{address};
}

# The lines the page's stack panel shows for a stack's frames (valgrind's at/by).
sub frame_lines {
	my ($st) = @_;
	my @l;
	for my $i (0 .. $#{ $st->{frames} }) {
		my $fr = $st->{frames}[$i];
		my $place = defined $fr->{file} ? "$fr->{file}:$fr->{line}" : defined $fr->{module} ? "in $fr->{module}" : '';
		push @l, ($i ? 'by ' : 'at ') . "$fr->{address}: " . label($fr) . ($place ne '' ? " ($place)" : '')
			. ($fr->{inlined} ? ' (inlined)' : '');
	}
	return \@l;
}

# Runs cdp.py on page with steps; returns its decoded answer, or undef after saying why.
sub drive {
	my ($page, $steps, $name) = @_;
	my $dir = tempdir('jt-cdp-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	JT::spew("$dir/steps.json", JSON::PP->new->encode($steps));
	my $r = run_cmd(timeout => 120, argv => [$PY, $CDP, $page, "$dir/steps.json"]);
	my $out = eval { JSON::PP->new->decode($r->{stdout}) };
	ok($out, "$name: cdp.py drove Chromium") or diag("exit " . ($r->{exit} // 'none') . "\n$r->{stderr}");
	return undef unless $out;
	is_deeply($out->{errors}, [], "$name: no script error or console error");
	is_deeply($out->{requests}, ["file://$page"], "$name: the page asks for nothing but itself (no network, no other file)");
	return $out;
}

# JavaScript that gives the viewport point of a band's inside that the band itself is on top at.
sub band_point {
	my ($id) = @_;
	return "(() => { const p = document.querySelector('#chart .band[data-stack=\"$id\"]'); if (!p) return null;"
		. " p.scrollIntoView({block: 'center'}); const r = p.ownerSVGElement.getBoundingClientRect(), b = p.getBBox();"
		. " for (let x = b.x + b.width - 2; x > b.x; x -= 3) for (let y = b.y + 1; y < b.y + b.height; y += 1)"
		. " if (p.isPointInFill(new DOMPoint(x, y)) && document.elementFromPoint(r.left + x, r.top + y) === p)"
		. " return [r.left + x, r.top + y]; return null; })()";
}

# Each band of the chart: its stack and its live bytes at the snapshot (the timeline's last sample).
my $BANDS = "Object.fromEntries([...document.querySelectorAll('#chart .band')].map(b => [b.dataset.stack, Number(b.dataset.last)]))";
# A row of the live table: id, live bytes and blocks, the oldest block's age when the JSON
# has ages, where the stack allocated (its "site" frame: the first outside the allocator's wrappers).
sub live_row {
	my ($snap, $st) = @_;
	my $aged = grep { exists $_->{oldest_age_ms} } @{ $snap->{stacks} };
	my $fr = $st->{frames}[$st->{site} // 0];
	return [$st->{id}, commify($st->{live_bytes}), commify($st->{live_blocks}),
		($aged ? (exists $st->{oldest_age_ms} ? commify($st->{oldest_age_ms}) : '') : ()),
		label($fr) . (defined $fr->{file} ? ' (' . ($fr->{file} =~ s{.*/}{}r) . ":$fr->{line})" : defined $fr->{module} ? " (in $fr->{module})" : '')];
}

my $PANEL = "[...document.querySelectorAll('#frames .frame')].map(e => e.textContent)";
my $HEAD = "document.getElementById('frames-head')?.textContent";
sub node_value { "(() => { const g = document.querySelector('#flame .fgnode[data-name=\"$_[0]\"]'); return g && Number(g.dataset.value); })()" }
sub node_width { "(() => { const g = document.querySelector('#flame .fgnode[data-name=\"$_[0]\"] rect'); return g && Math.round(Number(g.getAttribute('width'))); })()" }
sub tree_row { "#tree tr.trow[data-depth=\"$_[0]\"][data-name=\"$_[1]\"]" }
sub tree_cells { my $s = tree_row(@_); "(() => { const r = document.querySelector('$s'); return r && [...r.querySelectorAll('td[data-field]')].map(td => td.textContent); })()" }
sub table_rows { "[...document.querySelectorAll('#table-$_[0] tr.row')].map(r => [...r.cells].map(c => c.textContent))" }

my $leak_line = site_line('slowleak/main.c', 'SITE:sl_leak');
my $churn_line = site_line('slowleak/main.c', 'SITE:sl_churn');

# ---- a run with many snapshots: tests/progs/slowleak under --interval 0.1 (about 20) ----
my $r = run_jt('slowleak', 'pie', args => [2000], jt_args => ['--interval', '0.1', '--html', 'page.html']);
is($r->{exit}, 0, 'slowleak under --interval --html: exit 0') or diag($r->{stderr});
my $page = "$r->{dir}/page.html";
my $html = JT::slurp($page) // '';
my $snaps = $r->{json} ? $r->{json}{snapshots} : [];
cmp_ok(scalar @$snaps, '>=', 12, 'many snapshots were taken (' . scalar(@$snaps) . ')');
like($html, qr/\A<!DOCTYPE html>/, 'the page is HTML');
unlike($html, qr/<(?:link|img|iframe)\b|\bsrc=|\bhref=|\@import|url\(/i, 'no external script, stylesheet, font or image');
my ($embedded) = $html =~ m{<script type="application/json" id="jt-data">(.*?)</script>}s;
my $data = eval { JT::decode_report($embedded // '') };
is_deeply($data && $data->{snapshots}, $snaps, 'the page embeds every snapshot exactly as --json wrote it');

my $last = $snaps->[-1];
my ($leak) = stacks_at_site($last, 'main.c', $leak_line);
my ($churn) = grep { my $f = $_->{frames}[0]; $f && ($f->{line} // 0) == $churn_line } @{ $last->{stacks} };
ok($leak && $churn, 'the JSON has the leak and the churn stacks') or BAIL_OUT('no stacks to look for');
my @up = map { label($_) } reverse @{ $leak->{frames} };	# outermost first
my $nfirst = scalar grep { $_->{pid} == $last->{pid} } @$snaps;
my ($leak1) = stacks_at_site($snaps->[0], 'main.c', $leak_line);

my @steps = (
	# 0-3: the heap chart: the leak's band, clicked, shows its frames and figures.
	{ eval => "document.querySelectorAll('#chart .band').length" },
	{ clickat => band_point($leak->{id} // 'none') },
	{ eval => $PANEL }, { eval => $HEAD },
	# 4-5: the peak is marked with its figure; each band ends at its stack's live bytes.
	{ eval => "document.getElementById('peak-label').textContent" }, { eval => $BANDS },
	# 6: the chart runs from the first sample of the run, every snapshot's samples joined.
	{ eval => "[document.getElementById('chart-start').textContent, Number(document.getElementById('chart').dataset.samples)]" },
	{ shot => "$SHOTS/html-chart.png" },
	# 6-9: the flame graph of live bytes, then of allocation calls (the button clicked).
	{ eval => node_value(label($leak->{frames}[0])) }, { eval => node_value('all') },
	{ click => '#fg-calls' },
	{ eval => "[" . node_value(label($leak->{frames}[0])) . ", " . node_value(label($churn->{frames}[0])) . ", " . node_value('all') . "]" },
	# 10-13: a click on main zooms on it (full width) and shows the largest stack through it.
	{ click => "#flame .fgnode[data-name=\"$up[-2]\"]" },
	{ eval => node_width($up[-2]) }, { eval => "document.getElementById('flame').getAttribute('width') - 1" },
	{ eval => "document.getElementById('fg-what').textContent" },
	# 14-15: a click on the leak's frame shows the leak's stack.
	{ click => "#flame .fgnode[data-name=\"$up[-1]\"]" }, { eval => $PANEL },
	{ shot => "$SHOTS/html-flame.png" },
	{ click => '#fg-live' },
);
my $flame_end = $#steps;
# The top-down tree: each row of the leak's path, from _start to main, expanded in turn.
for my $d (0 .. $#up - 1) {
	push @steps, { click => tree_row($d, $up[$d]) };
}
my $tree_at = @steps;
push @steps, { eval => tree_cells($#up, $up[-1]) }, { eval => tree_cells($#up, label($churn->{frames}[0])) },
	{ shot => "$SHOTS/html-tree.png" },
	# Bottom-up: the leak's function at the top, its caller under it once expanded.
	{ click => '#tree-up' }, { eval => tree_cells(0, $up[-1]) },
	{ click => tree_row(0, $up[-1]) }, { eval => tree_cells(1, $up[-2]) }, { eval => $PANEL };
# The tables of the last snapshot, then the first snapshot picked in the selector (a click
# opens it, Home and Enter choose the first).
my $sel_at = @steps;
push @steps, { eval => table_rows('live') }, { eval => "document.getElementById('snap').options.length" },
	{ click => '#snap' }, { key => 'Home' }, { key => 'Enter' }, { eval => $HEAD },
	{ eval => table_rows('live') }, { eval => table_rows('calls') },
	{ eval => "document.getElementById('summary').textContent" },
	{ eval => $BANDS }, { eval => "document.getElementById('chart-end').textContent" },
	{ shot => "$SHOTS/html-snapshot1.png" },
	{ click => '#table-peak tr.row' }, { eval => $HEAD },
	# The growth table, when the JSON has "growth" (from a process's second snapshot on).
	{ click => '#snap' }, { key => 'End' }, { key => 'Enter' }, { eval => table_rows('growth') },
	# However many snapshots, the growth table has the same columns and fits the page.
	{ eval => "[...document.querySelectorAll('#table-growth th')].map(c => c.textContent)" },
	{ eval => "[document.getElementById('table-growth').offsetWidth, document.getElementById('main').clientWidth]" },
	{ eval => "document.getElementById('lost').hidden" }, { shot => "$SHOTS/html-growth.png" };

my $out = drive($page, \@steps, 'slowleak page');
SKIP: {
	skip 'Chromium could not be driven', 1 unless $out;
	my $res = $out->{results};
	# The chart: the two stacks that vary and the rest, each its own band.
	cmp_ok($res->[0], '>=', 3, "the chart has a band per top stack and one for the rest ($res->[0])");
	is_deeply($res->[2], frame_lines($leak), 'a click on the leak\'s band shows its frames with file:line');
	like($res->[3], qr/^stack \Q$leak->{id}\E: \Q${\ commify($leak->{live_bytes})}\E bytes live in \Q$leak->{live_blocks}\E blocks, \Q$leak->{alloc_calls}\E allocation calls/,
	     "... and its figures ($res->[3])");
	is($res->[4], 'peak ' . commify($last->{peak}{live_bytes}) . ' bytes at ' . commify($last->{peak}{time_ms}) . ' ms',
	   'the peak is marked with its bytes and time');

	my %bands = map { ($_->{id} => $_->{live_bytes}) } grep { $_->{live_bytes} } @{ $last->{stacks} };
	$bands{other} = 0;
	$bands{$_} //= 0 for keys %{ $res->[5] };
	is_deeply($res->[5], \%bands, 'each band of the chart ends at its stack\'s live bytes at the snapshot, the rest at 0 ('
		  . join(', ', map { "$_: $bands{$_}" } sort keys %bands) . ')');
	my $nsamples = 0; $nsamples += scalar @{ $_->{timeline} } for grep { $_->{pid} == $last->{pid} } @$snaps;
	is_deeply($res->[6], [commify($snaps->[0]{timeline}[0]{time_ms}) . ' ms', $nsamples],
		  "the chart of the last snapshot runs from the run's first sample, over the $nsamples samples of all its snapshots");
	# The flame graph leaves out what the text's lists leave out: the runtime's and suppressed stacks.
	my $live_sum = 0; $live_sum += $_->{live_bytes} for grep { !$_->{suppressed} } @{ $last->{stacks} };
	my $calls_sum = 0; $calls_sum += $_->{alloc_calls} for grep { !$_->{runtime} } @{ $last->{stacks} };
	is($res->[8], $leak->{live_bytes}, "flame graph of live bytes: the leak's frame holds its live bytes ($leak->{live_bytes})");
	is($res->[9], $live_sum, "... and the root every stack's ($live_sum)");
	is_deeply($res->[11], [$leak->{alloc_calls}, $churn->{alloc_calls}, $calls_sum],
		  "allocation calls clicked: leak $leak->{alloc_calls}, churn $churn->{alloc_calls}, all $calls_sum");
	is($res->[13], $res->[14], "a click on $up[-2] zooms: it takes the whole width ($res->[14] px)");
	like($res->[15], qr/zoomed on \Q$up[-2]\E$/, '... and the page says so');
	is_deeply($res->[17], frame_lines($leak), "a click on $up[-1] shows the leak's frames");

	my ($lc, $cc) = @$res[$tree_at, $tree_at + 1];
	is_deeply($lc, [map { commify($leak->{$_}) } qw(live_bytes live_blocks alloc_calls alloc_bytes)],
		  "top-down tree, $up[0] expanded down to $up[-2]: the $up[-1] row has the leak's exact figures");
	is_deeply($cc, [map { commify($churn->{$_}) } qw(live_bytes live_blocks alloc_calls alloc_bytes)],
		  '... and the churn row the churn\'s');
	is_deeply($res->[$tree_at + 4], [map { commify($leak->{$_}) } qw(live_bytes live_blocks alloc_calls alloc_bytes)],
		  "bottom-up tree: $up[-1] at the top with the leak's figures");
	is_deeply($res->[$tree_at + 6], [map { commify($leak->{$_}) } qw(live_bytes live_blocks alloc_calls alloc_bytes)],
		  "... expanded: its caller $up[-2] appears under it");
	is_deeply($res->[$tree_at + 7], frame_lines($leak), '... and the click showed the leak\'s frames');

	is_deeply($res->[$sel_at], [live_row($last, $leak)], 'the last snapshot\'s live table: the leak alone, exact figures');
	is($res->[$sel_at + 1], scalar @$snaps, 'the selector lists every snapshot');
	like($res->[$sel_at + 5], qr/^stack \Q$leak1->{id}\E: \Q${\ commify($leak1->{live_bytes})}\E bytes live in \Q$leak1->{live_blocks}\E blocks,/,
	     "the stack shown stays shown, with the first snapshot's figures ($res->[$sel_at + 5])");
	my @live1 = sort { $b->{live_bytes} <=> $a->{live_bytes} } grep { $_->{live_bytes} } @{ $snaps->[0]{stacks} };
	is_deeply($res->[$sel_at + 6], [map { live_row($snaps->[0], $_) } @live1],
		  'first snapshot picked: the live table has its exact figures (' . join(', ', map { $_->{live_bytes} } @live1) . ')');
	my @calls1 = sort { $b->{alloc_calls} <=> $a->{alloc_calls} } grep { $_->{alloc_calls} } @{ $snaps->[0]{stacks} };
	is_deeply([map { $_->[1] } @{ $res->[$sel_at + 7] }], [map { commify($_->{alloc_calls}) } @calls1],
		  '... and the calls table its calls');
	my $t1 = $snaps->[0]{totals};
	like($res->[$sel_at + 8], qr/^pid \d+, \Q$snaps->[0]{reason}\E at \Q${\ commify($snaps->[0]{time_ms})}\E ms: \Q${\ commify($t1->{live_bytes} - $t1->{suppressed}{live_bytes})}\E bytes live/,
	     "... and the summary its totals ($res->[$sel_at + 8])");
	my %bands1 = map { ($_->{id} => $_->{live_bytes}) } grep { $_->{live_bytes} } @{ $snaps->[0]{stacks} };
	$bands1{other} = 0;
	$bands1{$_} //= 0 for keys %{ $res->[$sel_at + 9] };
	is_deeply($res->[$sel_at + 9], \%bands1, 'the chart shows the first snapshot\'s timeline: each band ends at that snapshot\'s live bytes ('
		  . join(', ', map { "$_: $bands1{$_}" } sort keys %bands1) . ')');
	is($res->[$sel_at + 10], commify($snaps->[0]{time_ms}) . ' ms', '... at its time');
	my ($peak1) = sort { $b->{peak_bytes} <=> $a->{peak_bytes} } @{ $snaps->[0]{stacks} };
	like($res->[$sel_at + 13], qr/^stack \Q$peak1->{id}\E: .* peak \Q${\ commify($peak1->{peak_bytes})}\E bytes/,
	     'a click on the first row of its peak table shows that stack');
	SKIP: {
		skip 'this JSON has no "growth"', 3 unless $last->{growth};
		my $g = $last->{growth};
		my @b;
		my @want = map {
			my $x = $_;
			my ($st) = grep { $_->{id} == $x->{id} } @{ $last->{stacks} };
			@b = @{ $x->{live_bytes} };
			# The largest step: the first snapshot after which it grew most.
			my $k = 0;
			for my $i (1 .. $#b) { $k = $i if $b[$i] - $b[$i - 1] > ($k ? $b[$k] - $b[$k - 1] : 0) }
			[$x->{id}, commify($b[0]), commify($b[-1]), join(" \x{2192} ", map { commify($_) } @b),
			 $k ? '+' . commify($b[$k] - $b[$k - 1]) . ' by ' . commify($g->{times_ms}[$k]) . ' ms' : '',
			 commify(POSIX::floor($x->{rate_bytes_per_s} + 0.5)), $x->{grew_every_interval} ? 'grew' : '', live_row($last, $st)->[-1]]
		} @{ $g->{stacks} };
		is_deeply($res->[$sel_at + 17], \@want, 'the last snapshot picked again: the growth table has its exact figures: '
			  . 'the first and last, every figure in the sparkline\'s title, the largest step');
		my $n = scalar @{ $g->{times_ms} };
		is_deeply($res->[$sel_at + 18], ['stack', commify($g->{times_ms}[0]) . ' ms', commify($g->{times_ms}[-1]) . ' ms',
						  "$n snapshots", 'largest step', 'bytes/s', 'every interval', 'allocated at'],
			  "... in 8 columns for its $n snapshots (a column per snapshot was unreadable after 20)");
		cmp_ok($res->[$sel_at + 19][0], '<=', $res->[$sel_at + 19][1],
		       "... and it fits the page ($res->[$sel_at + 19][0] px of $res->[$sel_at + 19][1])");
	}
	is($res->[$sel_at + 20], JSON::PP::true, 'no event was lost: the page says nothing of lost events');
}

# ---- rows named by the code that called the allocator's wrapper (tests/progs/wrapped) ----
# wr_parse leaks 10 x 100 bytes through xmalloc (a wrapper jmptrace knows), wr_cache 3 x 3,000
# through cw_alloc and cw_raw (named by --alloc-fn 'cw_*'), wr_small 24 bytes from malloc
# itself; wr_spike's mebibyte, freed at once, is the peak, which no timeline sample holds.
# The text report keeps the wrappers' frames, and so does the stack panel.
my %wsite = map { ($_ => site_line('wrapped/main.c', "SITE:$_")) } qw(wr_parse wr_cache wr_small);
my $w = run_jt('wrapped', 'pie', jt_args => ['--leak-check', '--alloc-fn', 'cw_*', '--html', 'page.html']);
is($w->{exit}, 0, 'wrapped --leak-check --alloc-fn cw_* --html: exit 0') or diag($w->{stderr});
my $ws = last_snapshot($w);
my @wstacks = $ws ? @{ $ws->{stacks} } : ();
my %by = map { my $st = $_; my $fr = $st->{frames}[$st->{site} // 0]; (($fr->{function} // '?') => $st) } @wstacks;
is_deeply([map { $by{$_} ? [map { $_->{function} } @{ $by{$_}{frames} }[0 .. $by{$_}{site}]] : undef } qw(wr_parse wr_cache wr_small)],
	  [[qw(xmalloc wr_parse)], [qw(cw_raw cw_alloc wr_cache)], ['wr_small']],
	  'JSON: each stack\'s "site" is its first frame outside xmalloc, and outside cw_alloc and cw_raw (--alloc-fn)')
	or diag(explain([map { [$_->{site}, map { $_->{function} } @{ $_->{frames} }] } @wstacks]));
my @rt = grep { $_->{runtime} } @wstacks;
ok(@rt == 1 && $rt[0]{live_bytes} > 0, 'the stdout buffer is a runtime stack ("runtime": true)');
my $rtb = @rt ? $rt[0]{live_bytes} : 0;
like($w->{report} // '', qr/^live:     10,024 bytes in 14 blocks from 3 stacks, runtime \Q${\ commify($rtb)}\E bytes in 1 block$/m,
     'the text report: 10,024 bytes in 14 blocks, and the runtime\'s apart');
my $where = sub { my ($f) = @_; "$f (main.c:$wsite{$f})" };
my $wpage = "$w->{dir}/page.html";
$out = drive($wpage, [
	{ eval => table_rows('live') }, { eval => table_rows('leaks') },
	{ eval => "[...document.querySelectorAll('#legend span')].map(e => e.textContent)" },
	{ eval => "document.getElementById('summary').textContent" },
	{ eval => node_value('all') },
	{ click => '#table-leaks tr.row' }, { eval => $PANEL },
	{ eval => "[...document.querySelectorAll('#frames .frame.site')].map(e => e.textContent)" },
	# The peak's dot, and whether the area's top edge has a vertex there.
	{ eval => "(() => { const d = document.querySelector('#chart circle'), cx = +d.getAttribute('cx'), cy = +d.getAttribute('cy');"
		. " const bands = [...document.querySelectorAll('#chart .band')], top = bands[bands.length - 1];"
		. " const pts = top.getAttribute('d').replace(/[MZ]/g, '').split('L').map(p => p.split(',').map(Number));"
		. " return [cx, cy, pts.some(p => Math.abs(p[0] - cx) < 0.5 && Math.abs(p[1] - cy) < 0.5)]; })()" },
	{ shot => "$SHOTS/html-wrapped.png" },
], 'wrapped page');
SKIP: {
	skip 'Chromium could not be driven', 8 unless $out;
	my $res = $out->{results};
	is_deeply([map { [$_->[1], $_->[-1]] } @{ $res->[0] }],
		  [['9,000', $where->('wr_cache')], ['1,000', $where->('wr_parse')], ['24', $where->('wr_small')]],
		  'the live table names each row by the caller of the wrappers: wr_cache, wr_parse, wr_small, with file:line');
	is_deeply([map { [$_->[1], $_->[2], $_->[-1]] } @{ $res->[1] }],
		  [['definitely lost', '9,000', $where->('wr_cache')], ['definitely lost', '1,000', $where->('wr_parse')],
		   ['definitely lost', '24', $where->('wr_small')], ['still reachable (suppressed)', commify($rtb), $res->[1][3][-1]]],
		  'loss records biggest first (memcheck numbers them smallest first), the suppressed runtime one last');
	my @leg = grep { /^wr_/ } @{ $res->[2] };
	$wsite{wr_spike} = site_line('wrapped/main.c', 'SITE:wr_spike');
	is_deeply(\@leg, [map { "$_ main.c:$wsite{$_} (stack $by{$_}{id})" } qw(wr_spike wr_cache wr_parse wr_small)],
		  'the chart\'s legend names the callers too: ' . join(', ', @leg));
	like($res->[3], qr/^pid \d+, exit at [\d,]+ ms: 10,024 bytes live in 14 blocks from 3 stacks, runtime \Q${\ commify($rtb)}\E bytes in 1 block; peak 1,048,576 bytes; 16 allocation calls, 1,062,696 bytes allocated, 1 free; source: \Q${\ JT::source()}\E$/,
	     "the header has the text report's figures, the runtime's stdout buffer apart ($res->[3])");
	is($res->[4], 10024, 'the flame graph of live bytes counts the program\'s 10,024 bytes, not the runtime\'s');
	is_deeply([map { s/^(?:at|by) 0x[0-9a-f]+: //r =~ s/ \(.*//r } @{ $res->[6] }[0 .. 3]], [qw(cw_raw cw_alloc wr_cache main)],
		  'the stack panel of the biggest record keeps the wrappers\' frames');
	like(join('', @{ $res->[7] }), qr/^by 0x[0-9a-f]+: wr_cache \(.*main\.c:\Q$wsite{wr_cache}\E\)$/, '... and marks the frame that names the row');
	my $dot = ref $res->[8] eq 'ARRAY' ? $res->[8] : [];
	ok($dot->[2], "the peak's dot (" . join(', ', map { $_ // '?' } @$dot[0, 1]) . ') sits on a vertex of the chart\'s top edge, not above it');
}
# Without --alloc-fn, cw_raw is no wrapper: the row is cw_raw's.
my $w0 = run_jt('wrapped', 'pie');
my ($c0) = grep { ($_->{frames}[1]{function} // '') eq 'cw_alloc' } @{ (last_snapshot($w0) // {})->{stacks} // [] };
is($c0 ? $c0->{site} : -1, 0, 'without --alloc-fn the cache stack\'s site is its first frame, cw_raw\'s');
for my $bad ('', '**', "cw _alloc") {
	my $refused = run_cmd(argv => [$JT, "--alloc-fn", $bad, '--', prog_path('wrapped', 'pie')]);
	is($refused->{exit}, 2, "--alloc-fn '$bad': exit 2");
	like($refused->{stderr}, qr/\Ajmptrace: invalid value '\Q$bad\E' for option --alloc-fn: [^\n]+\n\z/, '... one line says why');
	unlike($refused->{stdout}, qr/done/, '... before the program ran');
}

# ---- lost events, said on the page's header with the text's figures ----
SKIP: {
	skip 'the uprobe source needs root and uprobes', 3
		unless $> == 0 && -e '/sys/bus/event_source/devices/uprobe/type';
	# A 64 KiB ring per thread cannot hold 8 threads' 20,000 pairs each (as in uprobe.t; 5,000 lost none at times).
	my $u = run_jt('threads', 'pie', args => [20000], jt_args => ['--source', 'uprobe', '--buffer-size', '64k', '--html', 'page.html']);
	my $lost = (last_snapshot($u) // {})->{totals}{lost_events} // 0;
	ok($lost > 0, "threads under 64 KiB rings: events were lost ($lost)") or diag($u->{stderr});
	my $o2 = drive("$u->{dir}/page.html", [{ eval => "[document.getElementById('lost').hidden, document.getElementById('lost').textContent]" },
					      { shot => "$SHOTS/html-lost.png" }], 'lost events page');
	skip 'Chromium could not be driven', 2 unless $o2;
	is_deeply($o2->{results}[0], [JSON::PP::false, 'LOST: ' . commify($lost) . ' events: the kernel\'s ring buffers overflowed (--buffer-size), '
				      . 'so the live, peak, call and growth figures, the chart and the flame graph are short of them'],
		  'the header says the lost events and the figures they make short');
}

# ---- the page to a stream: written once, when the run ends ----
my $s = run_cmd(argv => [$JT, '--interval', '0.2', '--html', '-', '--', prog_path('slowleak', 'pie'), 500]);
is($s->{exit}, 0, '--html - : exit 0');
like($s->{stdout}, qr/\Aleaked \d+\n<!DOCTYPE html>/, '... the program\'s output, then the page');
my @docs = $s->{stdout} =~ /<!DOCTYPE html>/g;
is(scalar @docs, 1, '... once');

# ---- a name that would end the script early ("</script>", "<!--") is kept as it is ----
my $odd = '</script><!--<script>x';
my $o = run_jt('slowleak', 'pie', args => [100, $odd], jt_args => ['--html', 'page.html']);
unlike(JT::slurp("$o->{dir}/page.html") // '', qr/\Q$odd\E/, 'a command line with </script> is escaped in the page');
$out = drive("$o->{dir}/page.html", [{ eval => "document.getElementById('title').textContent" }], 'odd command page');
SKIP: {
	skip 'Chromium could not be driven', 1 unless $out;
	is($out->{results}[0], 'jmptrace: ' . last_snapshot($o)->{command}, "... and the page shows it whole ($out->{results}[0])");
}

# ---- a leak check: the summary and the loss records ----
my $l = run_jt(undef, undef, path => root() . '/samples/leaky', jt_args => ['--leak-check', '--html', 'page.html']);
my $lsnap = last_snapshot($l);
my $recs = $lsnap && $lsnap->{leak_check} ? $lsnap->{leak_check}{records} : [];
ok((grep { $_->{leak_kind} eq 'definitely_lost' } @$recs), 'samples/leaky --leak-check: definite losses in the JSON');
$out = drive("$l->{dir}/page.html", [{ eval => table_rows('leaks') }, { eval => "document.getElementById('leak-summary').textContent" }, { click => '#table-leaks tr.row' },
				     { eval => $PANEL }, { shot => "$SHOTS/html-leaks.png" }], 'leak check page');
SKIP: {
	skip 'Chromium could not be driven', 3 unless $out;
	# Biggest first, the suppressed ones last (the JSON has memcheck's order, smallest first).
	my @order = sort { ($a->{suppressed} ? 1 : 0) <=> ($b->{suppressed} ? 1 : 0)
			   || $b->{bytes} + $b->{indirect_bytes} <=> $a->{bytes} + $a->{indirect_bytes} || $b->{record} <=> $a->{record} } @$recs;
	is_deeply([map { [@$_[0 .. 3]] } @{ $out->{results}[0] }],
		  [map { [$_->{record}, $_->{leak_kind} =~ s/_/ /r . ($_->{suppressed} ? ' (suppressed)' : ''),
			  commify($_->{bytes}), commify($_->{blocks})] } @order],
		  'the leak table lists every loss record with its exact bytes and blocks, biggest first');
	my $sm = $lsnap->{leak_check}{summary};
	is($out->{results}[1], join('; ', map { my $k = $_; (s/_/ /r) . ': ' . commify($sm->{$k}{bytes}) . ' bytes in ' . commify($sm->{$k}{blocks}) . ' blocks' }
				   qw(definitely_lost indirectly_lost possibly_lost still_reachable)), "the leak summary: $out->{results}[1]");
	is_deeply($out->{results}[3], frame_lines($order[0]), 'a click on the first row (the biggest record) shows its frames');
}

# ---- a path that cannot be written is refused before the run ----
my $bad = run_cmd(argv => [$JT, '--html', '/nonexistent/dir/page.html', '--', prog_path('slowleak', 'pie'), 10]);
is($bad->{exit}, 1, '--html to a missing directory: exit 1');
like($bad->{stderr}, qr/cannot write the HTML report '\/nonexistent\/dir\/page.html'/, '... saying why');
unlike($bad->{stdout}, qr/leaked/, '... before the program ran');

# ---- a stream that cannot take the page: said, and the exit status is 1 ----
my $full = run_cmd(argv => [$JT, '--html', '/dev/full', '--', prog_path('slowleak', 'pie'), 10]);
is($full->{exit}, 1, '--html /dev/full: exit 1');
like($full->{stderr}, qr/cannot write the HTML report '\/dev\/full': No space left on device/, '... saying why');
like($full->{stdout}, qr/^leaked \d+\n\z/, '... the program ran as ever');

done_testing();
