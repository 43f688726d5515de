#!/usr/bin/perl
# flamegraph.t - --folded writes one "frame;...;frame value" line per stack, outermost first, with
# the figure --folded-cost picks, and --flamegraph an SVG flame graph of the same figures that
# headless Chromium renders: every frame is in its DOM with its figure, hovering names it, a
# click zooms (the frame takes the full width, its callers stay, the rest hides), Reset Zoom
# and the root undo it, and Search highlights the matches and shows their share. An inlined
# function is a frame of its own.
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
my @modes = $ENV{JT_MODES} ? split(/[\s,]+/, $ENV{JT_MODES}) : qw(pie static);

# The flame graph's geometry (report_flame.c): the frames span 1180 px; narrower than 0.1 px
# they are left out.
my $FULL = 1180;
my $MIN_W = 0.1;

# tests/progs/profile: what each phase allocates, by cost.
my %PHASE = (
	calls => { big_phase => 256, small_phase => 10, temp_loop => 100, hist_sizes => 8 },
	bytes => { big_phase => 1048576, small_phase => 10000, temp_loop => 6400,
		   hist_sizes => 1 + 8 + 16 + 17 + 100 + 1024 + 1025 + 65536 },
	live => { small_phase => 10000 },
	temporary => { temp_loop => 100 },
);
my %UNIT = (live => 'bytes', peak => 'bytes', bytes => 'bytes', calls => 'calls',
	    temporary => 'temporary allocations');

sub chromium {
	for my $name (qw(chromium chromium-browser)) {
		for my $dir (split /:/, $ENV{PATH} // '') {
			return "$dir/$name" if -x "$dir/$name";
		}
	}
	return undef;
}

sub slurp {
	open(my $fh, '<:raw', $_[0]) or return undef;
	local $/;
	my $s = <$fh>;
	close $fh;
	return $s;
}

sub commify { my $n = reverse $_[0]; $n =~ s/(\d{3})(?=\d)/$1,/g; return scalar reverse $n }

# Runs profile-MODE with --folded and --flamegraph (and --folded-cost COST unless undef).
sub formats_run {
	my ($mode, $cost) = @_;
	my @args = ('--folded', 'out.folded', '--flamegraph', 'out.svg');
	push @args, '--folded-cost', $cost if defined $cost;
	my $r = run_jt('profile', $mode, jt_args => \@args);
	$r->{folded} = slurp("$r->{dir}/out.folded");
	$r->{svg} = slurp("$r->{dir}/out.svg");
	return $r;
}

# The folded file as [path, value] pairs; every line must be "frames value".
sub parse_folded {
	my ($text, $name) = @_;
	my (@lines, %seen, @bad);
	for my $l (split /\n/, $text // '') {
		if ($l =~ /^(\S[^;]*(?:;[^;]+)*) (\d+)$/ && $2 > 0 && !$seen{$1}++) {
			push @lines, [$1, $2];
		} else {
			push @bad, $l;
		}
	}
	is_deeply(\@bad, [], "$name: every line is 'frame;...;frame value', value > 0, no path twice");
	return @lines;
}

# The one line whose stack ends in main;FUNC (outermost first: _start first).
sub phase_line {
	my ($lines, $func) = @_;
	my @hits = grep { $_->[0] =~ /(?:^|;)main;\Q$func\E$/ } @$lines;
	return @hits == 1 ? $hits[0] : undef;
}

sub check_folded {
	my ($r, $cost, $name) = @_;
	ok(defined $r->{folded}, "$name: folded file written") or return ();
	my @lines = parse_folded($r->{folded}, $name);
	my %want = %{ $PHASE{$cost} // {} };
	for my $func (sort keys %want) {
		my $l = phase_line(\@lines, $func);
		ok($l, "$name: one line ends in main;$func") or next;
		like($l->[0], qr/^_start;/, "$name: $func: outermost frame _start comes first");
		is($l->[1], $want{$func}, "$name: $func $want{$func}");
	}
	for my $func (grep { !$want{$_} } sort keys %{ $PHASE{bytes} }) {
		ok(!phase_line(\@lines, $func), "$name: no line for $func");
	}
	my $sum = 0;
	$sum += $_->[1] for @lines;
	my $t = last_snapshot($r) ? last_snapshot($r)->{totals} : {};
	my %total_of = (live => 'live_bytes', bytes => 'bytes_allocated', calls => 'alloc_calls');
	is($sum, $t->{ $total_of{$cost} }, "$name: the lines sum to totals.$total_of{$cost}")
		if $total_of{$cost};
	return @lines;
}

# Every frame the SVG must draw, as its title: the folded paths' prefixes with their sums.
sub expected_titles {
	my ($lines, $cost) = @_;
	my (%v, $total);
	for my $l (@$lines) {
		my @f = split /;/, $l->[0];
		$total += $l->[1];
		$v{ join(';', @f[0 .. $_]) } += $l->[1] for 0 .. $#f;
	}
	$v{''} = $total;
	my @t;
	for my $p (keys %v) {
		next if $v{$p} / $total * $FULL < $MIN_W;
		my $n = $p eq '' ? 'all' : (split /;/, $p)[-1];
		push @t, sprintf('%s (%s %s, %.2f%%)', $n, commify($v{$p}), $UNIT{$cost},
				 100 * $v{$p} / $total);
	}
	return [sort @t], $total;
}

# The page Chromium opens: the SVG inlined into HTML, and the same file as a standalone
# document in an <object>. Its script drives both the way a user would and writes what it
# measured into <pre id="result">.
my $HARNESS_JS = <<'JS';
function nameOf(g) { var t = g.querySelector('title').textContent; return t.slice(0, t.lastIndexOf(' (')); }
function frame(svg, name) {
  return [].filter.call(svg.querySelectorAll('g.frame'), function (g) { return nameOf(g) === name; })[0];
}
function w(g) { return +g.querySelector('rect').getAttribute('width'); }
function drive(svg, target, mid) {
  var doc = svg.ownerDocument, win = doc.defaultView, r = {}, g = frame(svg, target), m = frame(svg, mid);
  function fire(el, type) { el.dispatchEvent(new win.MouseEvent(type, { bubbles: true, view: win })); }
  var frames = [].slice.call(svg.querySelectorAll('g.frame'));
  r.titles = frames.map(function (f) { return f.querySelector('title').textContent; });
  r.api = typeof svg.jtFlame;
  if (!g || !m) { r.missing = true; return r; }
  r.before = w(g);
  fire(g.querySelector('rect'), 'mouseover');
  r.details = svg.querySelector('#details').textContent;
  fire(g.querySelector('rect'), 'mouseout');
  r.details_out = svg.querySelector('#details').textContent;
  fire(g.querySelector('rect'), 'click');
  r.zoom = { width: w(g), bbox: g.querySelector('rect').getBBox().width,
    x: +g.querySelector('rect').getAttribute('x'),
    unzoom_shown: !svg.querySelector('#unzoom').classList.contains('hide'), frames: {} };
  frames.forEach(function (f) {
    r.zoom.frames[nameOf(f) + '@' + f.getAttribute('data-d')] = {
      hidden: getComputedStyle(f).display === 'none', parent: f.classList.contains('parent'), width: w(f) };
  });
  fire(svg.querySelector('#unzoom'), 'click');
  r.unzoomed = { width: w(g), unzoom_shown: !svg.querySelector('#unzoom').classList.contains('hide'),
    hidden: frames.filter(function (f) { return getComputedStyle(f).display === 'none'; }).length };
  fire(m.querySelector('rect'), 'click');
  r.mid = { width: w(m), target: w(g) };
  fire(frame(svg, 'all').querySelector('rect'), 'click');
  r.root = { width: w(g), hidden: frames.filter(function (f) { return f.classList.contains('hide'); }).length };
  win.prompt = function () { return '_phase$'; };
  fire(svg.querySelector('#search'), 'click');
  r.search = { matched: svg.querySelector('#matched').textContent, button: svg.querySelector('#search').textContent,
    hits: frames.filter(function (f) { return f.querySelector('rect').getAttribute('fill') === 'rgb(230,0,230)'; }).map(nameOf).sort() };
  fire(svg.querySelector('#search'), 'click');
  r.reset = { matched: svg.querySelector('#matched').textContent, button: svg.querySelector('#search').textContent,
    hits: frames.filter(function (f) { return f.querySelector('rect').getAttribute('fill') === 'rgb(230,0,230)'; }).length };
  return r;
}
window.addEventListener('load', function () {
  var out = {}, o = document.getElementById('standalone');
  try {
    out.inline = drive(document.querySelector('#inline svg'), TARGET, MID);
    out.standalone = o.contentDocument ? drive(o.contentDocument.documentElement, TARGET, MID) : null;
  } catch (e) { out.error = String(e); }
  document.getElementById('result').textContent = JSON.stringify(out);
});
JS

# Opens the flame graph in headless Chromium; returns the harness's measurements or undef.
sub chromium_drive {
	my ($r, $target, $mid, $name) = @_;
	my $chromium = chromium() or return undef;
	my $dir = $r->{dir};
	(my $inline = $r->{svg}) =~ s/^<\?xml[^>]*\?>\s*//;
	my $js = $HARNESS_JS;
	$js =~ s/\bTARGET\b/'$target'/g;
	$js =~ s/\bMID\b/'$mid'/g;
	open(my $fh, '>', "$dir/harness.html") or die "$dir/harness.html: $!\n";
	print $fh "<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body>\n",
		"<div id=\"inline\">$inline</div>\n",
		"<object id=\"standalone\" type=\"image/svg+xml\" data=\"file://$dir/out.svg\"></object>\n",
		"<pre id=\"result\"></pre>\n<script>\n$js</script>\n</body></html>\n";
	close $fh;
	my $c = run_cmd(timeout => 60, argv => [$chromium, '--headless', '--disable-gpu', '--no-sandbox',
		"--user-data-dir=$dir/chromium", '--allow-file-access-from-files',
		'--dump-dom', "file://$dir/harness.html"]);
	my ($res) = ($c->{stdout} // '') =~ m{<pre id="result">(.*?)</pre>}s;
	ok(defined $res && length $res, "$name: Chromium ran the harness")
		or return diag("chromium: exit " . ($c->{exit} // 'none') . "\n" . ($c->{stderr} // ''));
	my %ent = (amp => '&', lt => '<', gt => '>', quot => '"');
	$res =~ s/&(amp|lt|gt|quot);/$ent{$1}/g;
	my $out = eval { JSON::PP->new->decode($res) };
	ok($out && !$out->{error}, "$name: the harness's result") or return diag($out ? $out->{error} : $res);
	return $out;
}

# What one rendering of the graph (inline or standalone) must show after clicking $target.
sub check_view {
	my ($v, $cost, $lines, $target, $mid, $name) = @_;
	ok($v, "$name: rendered") or return;
	is($v->{api}, 'object', "$name: the embedded script ran");
	my ($titles, $total) = expected_titles($lines, $cost);
	is_deeply([sort @{ $v->{titles} }], $titles, "$name: every frame in the DOM, each with its figure");
	return if $v->{missing};
	my $tv = $PHASE{$cost}{$target} // 0;
	my $title = sprintf('%s (%s %s, %.2f%%)', $target, commify($tv), $UNIT{$cost}, 100 * $tv / $total);
	ok((grep { $_ eq $title } @{ $v->{titles} }), "$name: a frame titled '$title'");
	is($v->{details}, "Function: $title", "$name: hovering fills the details line");
	is($v->{details_out}, ' ', "$name: leaving it clears the line");
	cmp_ok(abs($v->{before} - $tv / $total * $FULL), '<', 0.01, "$name: $target is its share of $FULL px wide");
	my $z = $v->{zoom};
	is($z->{width}, $FULL, "$name: after a click on $target its width is the full $FULL px");
	cmp_ok(abs($z->{bbox} - $FULL), '<', 0.01, "$name: and it renders $FULL px wide");
	is($z->{x}, 10, "$name: from the left margin");
	ok($z->{unzoom_shown}, "$name: Reset Zoom appears");
	my @callers = grep { !$z->{frames}{$_}{hidden} && $z->{frames}{$_}{parent} } keys %{ $z->{frames} };
	my @shown = grep { !$z->{frames}{$_}{hidden} } keys %{ $z->{frames} };
	ok((grep { /^main\@/ } @callers) && (grep { /^all\@0$/ } @callers),
	   "$name: its callers (main, all) stay, faded");
	ok(!(grep { $z->{frames}{$_}{width} != $FULL } @callers), "$name: at full width");
	is(scalar(@shown), scalar(@callers) + 1, "$name: every other frame is hidden")
		or diag(join(', ', sort @shown));
	is_deeply($v->{unzoomed}, { width => $v->{before}, unzoom_shown => JSON::PP::false, hidden => 0 },
		  "$name: Reset Zoom restores the graph");
	is($v->{mid}{width}, $FULL, "$name: a click on $mid: full width");
	my $mv = 0;
	$mv += $_->[1] for grep { $_->[0] =~ /(?:^|;)\Q$mid\E;/ } @$lines;
	cmp_ok(abs($v->{mid}{target} - $tv / $mv * $FULL), '<', 0.01,
	       "$name: $target under it is its share of $mid");
	is_deeply($v->{root}, { width => $v->{before}, hidden => 0 }, "$name: a click on the root unzooms");
	my @hits = sort grep { $PHASE{$cost}{$_} && /_phase$/ } keys %{ $PHASE{bytes} };
	my $hv = 0;
	$hv += $PHASE{$cost}{$_} for @hits;
	is_deeply($v->{search}, { matched => sprintf('Matched: %.2f%%', 100 * $hv / $total),
				  button => 'Reset Search', hits => \@hits },
		  "$name: Search '_phase\$' highlights @hits and shows their share");
	is_deeply($v->{reset}, { matched => ' ', button => 'Search', hits => 0 }, "$name: Reset Search undoes it");
}

sub check_svg {
	my ($r, $cost, $lines, $target, $mid, $name) = @_;
	ok(defined $r->{svg}, "$name: SVG written") or return;
	my $out = chromium_drive($r, $target, $mid, $name) or return;
	check_view($out->{inline}, $cost, $lines, $target, $mid, "$name, inline in HTML");
	check_view($out->{standalone}, $cost, $lines, $target, $mid, "$name, standalone");
}

ok(chromium(), 'chromium is installed (Debian chromium): the flame graph is opened with it');

for my $mode (@modes) {
	subtest "flamegraph-$mode: cost live (the default)" => sub {
		my $r = formats_run($mode, undef);
		is($r->{exit}, 0, 'jmptrace exit 0');
		my @lines = check_folded($r, 'live', "live") or return;
		check_svg($r, 'live', \@lines, 'small_phase', 'main', 'live');
		my ($title) = ($r->{svg} // '') =~ m{<text id="title"[^>]*>(.*?)</text>};
		my ($sub) = ($r->{svg} // '') =~ m{<text id="subtitle"[^>]*>(.*?)</text>};
		my $live = commify(last_snapshot($r) ? last_snapshot($r)->{totals}{live_bytes} : -1);
		is($title, 'Heap flame graph: live bytes', 'live: the title names the cost');
		like($sub // '', qr{^\S*/profile-\Q$mode\E \(pid \d+\), snapshot 1 \(exit\): \Q$live\E bytes in all$},
		     'live: the subtitle names the command and the total');
	};
	subtest "flamegraph-$mode: cost bytes" => sub {
		my $r = formats_run($mode, 'bytes');
		is($r->{exit}, 0, 'jmptrace exit 0');
		my @lines = check_folded($r, 'bytes', 'bytes') or return;
		check_svg($r, 'bytes', \@lines, 'big_phase', 'main', 'bytes');
	};
	for my $cost (qw(calls temporary)) {
		subtest "flamegraph-$mode: cost $cost" => sub {
			my $r = formats_run($mode, $cost);
			is($r->{exit}, 0, 'jmptrace exit 0');
			my @lines = check_folded($r, $cost, $cost);
			my $f = (sort keys %{ $PHASE{$cost} })[0];
			my @titles = ($r->{svg} // '') =~ m{<title>(\Q$f\E \(.*?)</title>}g;
			like($titles[0] // '', qr{^\Q$f (@{[commify($PHASE{$cost}{$f})]} $UNIT{$cost}\E, [\d.]+%\)$},
			     "$cost: the SVG's $f frame counts $UNIT{$cost}");
		};
	}
	subtest "flamegraph-$mode: cost peak" => sub {
		my $r = formats_run($mode, 'peak');
		is($r->{exit}, 0, 'jmptrace exit 0');
		my @lines = parse_folded($r->{folded}, 'peak');
		my $l = phase_line(\@lines, 'big_phase');
		ok($l && $l->[1] == 1048576, 'peak: big_phase holds exactly 1 MiB at the peak') or diag($r->{folded});
		ok(!phase_line(\@lines, $_), "peak: nothing from $_") for qw(small_phase temp_loop hist_sizes);
	};
	# tests/progs/inlined: in_alloc is inlined into in_outer; its frame is a frame of its own,
	# called by in_outer.
	subtest "flamegraph-$mode: an inlined function" => sub {
		my $r = run_jt('inlined', $mode, jt_args => ['--folded', 'out.folded']);
		is($r->{exit}, 0, 'jmptrace exit 0');
		my @lines = parse_folded(slurp("$r->{dir}/out.folded"), 'inlined');
		my @hits = grep { $_->[0] =~ /^_start;.*;main;in_outer;in_alloc$/ } @lines;
		is(scalar(@hits), 1, 'inlined: one line ends in main;in_outer;in_alloc (the inlined frame innermost)');
		is($hits[0][1], 2500, 'inlined: in_alloc 2500') if @hits;
	};
}

done_testing();
