#!/usr/bin/perl
# formats.t - --massif, --csv and --dot on tests/progs/profile, whose every figure is known,
# each opened by its real consumer: ms_print, a CSV parser, dot -Tsvg.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use List::Util qw(sum0);
use Test::More;
use JT;

my $JT = JT::jmptrace();
-x $JT or plan skip_all => "no jmptrace at $JT";
my @modes = $ENV{JT_MODES} ? split(/[\s,]+/, $ENV{JT_MODES}) : qw(pie static);

my $SRC = src_path('profile/profile.c');
my %LINE = map { $_ => line_of($SRC, "profile: $_") } qw(big small temp hist);
my $MIB = 256 * 4096;
my @PHASES = qw(big_phase small_phase temp_loop hist_sizes);

# The consumers are installed by .ci/run: a missing one is a failure, never a skip.
sub have { my ($cmd) = @_; system("command -v $cmd >/dev/null 2>&1") == 0 }
ok(have('ms_print'), 'ms_print is installed (Debian valgrind)');
ok(have('dot'), 'dot is installed (Debian graphviz)');

sub slurp_file {
	my ($path) = @_;
	open(my $fh, '<:raw', $path) or return undef;
	local $/;
	my $s = <$fh>;
	close $fh;
	return $s;
}

# Runs a command, returns [exit status, stdout+stderr].
sub run_capture {
	my (@argv) = @_;
	my $r = run_cmd(argv => \@argv, timeout => 60);
	return [$r->{exit} // -1, ($r->{stdout} // '') . ($r->{stderr} // '')];
}

# --- CSV -----------------------------------------------------------------------------

# RFC 4180: records end with CRLF, a quoted field doubles its quotes and may hold commas
# and line breaks. Returns a list of array refs.
sub parse_csv {
	my ($text) = @_;
	my (@rows, @row, $field, $quoted);
	my $i = 0;
	$field = '';
	while ($i < length $text) {
		my $c = substr($text, $i, 1);
		if ($quoted) {
			if ($c eq '"' && substr($text, $i + 1, 1) eq '"') { $field .= '"'; $i += 2; next }
			if ($c eq '"') { $quoted = 0; $i++; next }
			$field .= $c; $i++; next;
		}
		if ($c eq '"') { $quoted = 1; $i++; next }
		if ($c eq ',') { push @row, $field; $field = ''; $i++; next }
		if ($c eq "\r" && substr($text, $i + 1, 1) eq "\n") {
			push @row, $field; push @rows, [@row]; @row = (); $field = ''; $i += 2; next;
		}
		die "bare line feed at byte $i\n" if $c eq "\n";
		$field .= $c; $i++;
	}
	die "last record without CRLF\n" if @row || $field ne '';
	return @rows;
}

# The rows as hashes keyed by the header's names; the header as an array ref.
sub csv_rows {
	my ($path) = @_;
	my $text = slurp_file($path) // return;
	my @rows = eval { parse_csv($text) };
	return if $@ || !@rows;
	my $head = shift @rows;
	my @out;
	for my $r (@rows) {
		return unless @$r == @$head;
		my %h;
		@h{@$head} = @$r;
		push @out, \%h;
	}
	return ($head, \@out);
}

# The one row whose innermost frame is $func at profile.c:$line.
sub csv_row_of {
	my ($rows, $func, $line) = @_;
	my @hit = grep { $_->{frames} =~ /^\Q$func\E \(profile\.c:$line\)( <- |$)/ } @$rows;
	return @hit == 1 ? $hit[0] : undef;
}

sub check_csv {
	my ($mode, $path) = @_;
	my ($head, $rows) = csv_rows($path);
	ok($head, "$mode csv: parses as RFC 4180 with a header row") or return;
	my @fixed = qw(stack_id alloc_calls alloc_bytes frees temporary live_blocks live_bytes
		       peak_blocks peak_bytes);
	is_deeply([@$head[0 .. $#fixed]], \@fixed, "$mode csv: the counter columns, in order");
	is($head->[-1], 'frames', "$mode csv: frames last");
	my @le = @$head[@fixed .. $#$head - 1];
	ok(!grep(!/^le_\d+$/, @le), "$mode csv: histogram columns named le_N (@le)");
	# A bucket has a column exactly when some row counts an allocation in it.
	my @used = grep { my $c = $_; grep { $_->{$c} } @$rows } @le;
	is_deeply(\@used, \@le, "$mode csv: every histogram column is non-zero somewhere");
	ok(!grep({ sum0(@$_{@le}) != $_->{alloc_calls} } @$rows),
	   "$mode csv: every row's histogram adds up to its allocation calls");
	my @order = map { [$_->{live_bytes}, $_->{stack_id}] } @$rows;
	my @sorted = sort { $b->[0] <=> $a->[0] || $a->[1] <=> $b->[1] } @order;
	is_deeply(\@order, \@sorted, "$mode csv: rows by live bytes, then stack id");
	my %want = (
		small_phase => { line => $LINE{small}, alloc_calls => 10, alloc_bytes => 10000,
				 frees => 0, temporary => 0, live_blocks => 10, live_bytes => 10000,
				 peak_blocks => 0, peak_bytes => 0, hist => { le_1024 => 10 } },
		temp_loop => { line => $LINE{temp}, alloc_calls => 100, alloc_bytes => 6400,
			       frees => 100, temporary => 100, live_blocks => 0, live_bytes => 0,
			       peak_blocks => 0, peak_bytes => 0, hist => { le_64 => 100 } },
		hist_sizes => { line => $LINE{hist}, alloc_calls => 8, alloc_bytes => 67727,
				frees => 8, temporary => 0, live_blocks => 0, live_bytes => 0,
				peak_blocks => 0, peak_bytes => 0,
				hist => { map { ("le_$_" => 1) } 1, 8, 16, 32, 128, 1024, 2048, 65536 } },
		big_phase => { line => $LINE{big}, alloc_calls => 256, alloc_bytes => $MIB,
			       frees => 256, temporary => 0, live_blocks => 0, live_bytes => 0,
			       hist => { le_4096 => 256 } },
	);
	my %rows;
	for my $func (@PHASES) {
		my $w = $want{$func};
		my $row = csv_row_of($rows, $func, $w->{line});
		ok($row, "$mode csv: one row at $func (profile.c:$w->{line})") or next;
		$rows{$func} = $row;
		like($row->{frames}, qr/^\Q$func\E \(profile\.c:$w->{line}\) <- main \(profile\.c:\d+\)/,
		     "$mode csv: ${func}'s frames, innermost first, then main");
		my %got = map { $_ => $row->{$_} } grep { exists $w->{$_} } @fixed;
		my %exp = map { $_ => $w->{$_} } grep { exists $w->{$_} } @fixed;
		is_deeply(\%got, \%exp, "$mode csv: ${func}'s counters");
		my %hist = map { $_ => $row->{$_} } grep { $row->{$_} } @le;
		is_deeply(\%hist, $w->{hist}, "$mode csv: ${func}'s histogram");
	}
	# The peak is exact: big_phase held all of its 256 blocks.
	if (my $big = $rows{big_phase}) {
		ok($big->{peak_bytes} == $MIB && $big->{peak_blocks} == 256,
		   "$mode csv: big_phase's peak $big->{peak_bytes} bytes in $big->{peak_blocks} blocks, all of $MIB in 256");
	}
	return $rows;
}

# --- massif ------------------------------------------------------------------------------

# ms_print's report cut into the snapshot table rows and each detailed snapshot's tree.
# Returns { peak => N, detailed => [N...], rows => {N => [time, total]}, tree => {N => text} }.
sub parse_ms_print {
	my ($out) = @_;
	my %p = (rows => {}, tree => {});
	($p{detailed}) = $out =~ /^ Detailed snapshots: \[(.*)\]$/m or return;
	($p{peak}) = $p{detailed} =~ /(\d+) \(peak\)/;
	my $cur;
	for my $l (split /\n/, $out) {
		if ($l =~ /^\s*(\d+)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)$/) {
			$cur = $1;
			$p{rows}{$1} = [map { (my $v = $_) =~ s/,//g; $v } $2, $3];
		} elsif (defined $cur && $l =~ /^[|\s>-]*[\d.]+% \(/) {
			$p{tree}{$cur} .= "$l\n";
		}
	}
	return \%p;
}

# Reads a massif.out as massif-visualizer's parser does (KDE massifdata/parserprivate.cpp):
# fixed line order, "desc: ", "cmd: ", "time_unit: ", each snapshot's seven lines, a tree of
# "nK: BYTES LABEL" lines indented one space per level with exactly K children. Adds
# massif's own invariant: a node's bytes are its children's sum. Returns an error or ''.
sub massif_strict {
	my ($text) = @_;
	my @l = split /\n/, $text, -1;
	pop @l if @l && $l[-1] eq '';
	my $i = 0;
	my $next = sub { $i < @l ? $l[$i++] : undef };
	for my $pre ('desc: ', 'cmd: ', 'time_unit: ') {
		my $x = $next->() // return "missing $pre";
		return "line $i: want '$pre'" unless index($x, $pre) == 0;
	}
	my ($tree, $peaks);
	$tree = sub {
		my ($depth) = @_;
		my $x = $next->() // return (undef, 'tree cut short');
		$x =~ /^ {$depth}n(\d+): (\d+) (.+)$/ or return (undef, "line $i: bad tree line at depth $depth: $x");
		my ($k, $bytes, $sum) = ($1, $2, 0);
		for (1 .. $k) {
			my ($b, $err) = $tree->($depth + 1);
			return (undef, $err) if $err;
			$sum += $b;
		}
		return (undef, "line $i: $bytes bytes, children $sum") if $k && $sum != $bytes;
		return ($bytes, '');
	};
	while ($i < @l) {
		my @f;
		for my $re (qr/^#-----------$/, qr/^snapshot=(\d+)$/, qr/^#-----------$/, qr/^time=(\d+)$/,
			    qr/^mem_heap_B=(\d+)$/, qr/^mem_heap_extra_B=(\d+)$/, qr/^mem_stacks_B=(\d+)$/,
			    qr/^heap_tree=(empty|detailed|peak)$/) {
			my $x = $next->() // return 'snapshot cut short';
			$x =~ $re or return "line $i: '$x' is not $re";
			push @f, $1;
		}
		next if $f[-1] eq 'empty';
		$peaks++ if $f[-1] eq 'peak';
		my ($b, $err) = $tree->(0);
		return $err if $err;
		return "line $i: tree of $b bytes in a snapshot of $f[4]" if $b > $f[4] + $f[5] + $f[6];
	}
	return ($peaks // 0) == 1 ? '' : 'not one peak snapshot';
}

sub check_massif {
	my ($mode, $path, $rows) = @_;
	my $text = slurp_file($path);
	ok(defined $text, "$mode massif: written") or return;
	like($text, qr/\Adesc: \(none\)\ncmd: \S*profile-$mode\ntime_unit: ms\n#-----------\nsnapshot=0\n/,
	     "$mode massif: desc, cmd and time_unit lines, then snapshot 0");
	my @snaps = $text =~ /^snapshot=(\d+)$/mg;
	is_deeply(\@snaps, [0 .. $#snaps], "$mode massif: snapshots numbered from 0");
	ok(@snaps <= 100, "$mode massif: at most 100 snapshots (" . scalar(@snaps) . ')');
	is(massif_strict($text), '', "$mode massif: reads as massif-visualizer reads it, trees add up");
	my $ms = run_capture('ms_print', $path);
	is($ms->[0], 0, "$mode massif: ms_print exits 0") or diag($ms->[1]);
	my $p = parse_ms_print($ms->[1]);
	ok($p && defined $p->{peak}, "$mode massif: ms_print names a peak snapshot")
		or return diag($ms->[1]);
	my ($graph) = $ms->[1] =~ /^(\s+[KM]?B\n[\d.]+\^.*?\n\s+0 \+-+>m?s\n)/ms;
	like($graph // '', qr/#/, "$mode massif: ms_print draws the graph, with the peak's column") or diag($ms->[1]);
	# Beside the program's phases, only the C library's start-up blocks (static) are live
	# at the peak, and still at exit.
	my $others = sum0(map { $_->{live_bytes} }
			  grep { my $r = $_; !grep { $r->{frames} =~ /^$_ / } @PHASES } @$rows);
	my $peak = $p->{rows}{$p->{peak}}[1];
	my $want = $MIB + $others;
	is($peak, $want, "$mode massif: the peak snapshot holds $MIB + $others bytes");
	is($peak, sum0(map { $_->{peak_bytes} } @$rows), "$mode massif: the peak is the CSV's peak_bytes added up");
	my $big = (grep { $_->{frames} =~ /^big_phase / } @$rows)[0];
	my $tree = $p->{tree}{$p->{peak}} // '';
	my $bigb = $big ? $big->{peak_bytes} : -1;
	(my $bigc = $bigb) =~ s/(\d)(?=(\d{3})+$)/$1,/g;
	like($tree, qr/^->[\d.]+% \(\Q$bigc\EB\) 0x[0-9A-F]+: big_phase \(profile\.c:$LINE{big}\)\n[ |] ->[\d.]+% \(\Q$bigc\EB\) 0x[0-9A-F]+: main \(profile\.c:\d+\)$/m,
	     "$mode massif: the peak's tree has big_phase (profile.c:$LINE{big}) with $bigc bytes, called by main")
		or diag($tree);
	my $last = $#snaps;
	like($p->{detailed}, qr/\b$last$/, "$mode massif: the last snapshot is detailed");
	is($p->{rows}{$last}[1], 10000 + $others, "$mode massif: the last snapshot holds " . (10000 + $others) . ' bytes');
	like($p->{tree}{$last} // '', qr/^->[\d.]+% \(10,000B\) 0x[0-9A-F]+: small_phase \(profile\.c:$LINE{small}\)$/m,
	     "$mode massif: the last tree has small_phase (profile.c:$LINE{small}) with 10,000 bytes");
	unlike($p->{tree}{$last} // '', qr/big_phase|temp_loop|hist_sizes/, "$mode massif: and no freed phase");
}

# --- DOT ---------------------------------------------------------------------------------

# The SVG's nodes (title => text lines) and edges (title => label).
sub parse_svg {
	my ($svg) = @_;
	my (%nodes, %edges);
	while ($svg =~ m{<g id="[^"]*" class="(node|edge)">\s*<title>([^<]*)</title>(.*?)</g>}sg) {
		my ($kind, $title, $body) = ($1, $2, $3);
		$title =~ s/&#45;/-/g; $title =~ s/&gt;/>/g; $title =~ s/&lt;/</g; $title =~ s/&amp;/&/g;
		my @text = $body =~ m{<text[^>]*>([^<]*)</text>}g;
		if ($kind eq 'node') { $nodes{$title} = \@text } else { $edges{$title} = \@text }
	}
	return (\%nodes, \%edges);
}

sub check_dot {
	my ($mode, $path, $name, $checks) = @_;
	ok(-s $path, "$mode dot $name: written") or return;
	my $r = run_capture('dot', '-Tsvg', '-o', "$path.svg", $path);
	is($r->[0], 0, "$mode dot $name: dot -Tsvg exits 0") or diag($r->[1]);
	my ($nodes, $edges) = parse_svg(slurp_file("$path.svg") // '');
	$checks->($nodes, $edges);
}

for my $mode (@modes) {
	subtest "profile-$mode" => sub {
		my $r = run_jt('profile', $mode, jt_args => ['--massif', 'out.massif', '--csv', 'out.csv',
							      '--dot', 'out.dot']);
		is($r->{exit}, 0, "$mode: jmptrace exits 0") or diag($r->{stderr});
		my $rows = check_csv($mode, "$r->{dir}/out.csv") or return;
		check_massif($mode, "$r->{dir}/out.massif", $rows);
		check_dot($mode, "$r->{dir}/out.dot", 'live', sub {
			my ($nodes, $edges) = @_;
			is_deeply($nodes->{small_phase}, ['small_phase', 'self 10,000 bytes (' . pct(10000, 10000 + others($rows)) . ')',
							  'total 10,000 bytes (' . pct(10000, 10000 + others($rows)) . ')'],
				  "$mode dot live: node small_phase, self and total 10,000 bytes");
			is_deeply($edges->{'main->small_phase'}, ['10,000'], "$mode dot live: edge main -> small_phase, 10,000");
			ok(!grep({ $nodes->{$_} } qw(big_phase temp_loop hist_sizes)), "$mode dot live: no freed phase");
		});
	};
}

# The DOT graph of another cost: bytes allocated in all, where every phase shows.
sub others { sum0(map { $_->{live_bytes} } grep { my $r = $_; !grep { $r->{frames} =~ /^$_ / } @PHASES } @{ $_[0] }) }
sub pct { sprintf('%.2f%%', 100 * $_[0] / $_[1]) }

subtest 'profile-pie --folded-cost bytes' => sub {
	my $r = run_jt('profile', 'pie', jt_args => ['--folded-cost', 'bytes', '--dot', 'out.dot']);
	is($r->{exit}, 0, 'jmptrace exits 0') or diag($r->{stderr});
	my $total = $MIB + 10000 + 6400 + 67727;
	check_dot('pie', "$r->{dir}/out.dot", 'bytes', sub {
		my ($nodes, $edges) = @_;
		is_deeply($nodes->{big_phase}, ['big_phase', 'self 1,048,576 bytes (' . pct($MIB, $total) . ')',
						'total 1,048,576 bytes (' . pct($MIB, $total) . ')'],
			  'node big_phase, self and total 1,048,576 bytes');
		is_deeply($nodes->{main}, ['main', 'self 0 bytes (0.00%)', 'total 1,132,703 bytes (100.00%)'],
			  'node main, self 0 and total 1,132,703 bytes');
		is_deeply($edges->{'main->hist_sizes'}, ['67,727'], 'edge main -> hist_sizes, 67,727');
		is_deeply($edges->{'main->temp_loop'}, ['6,400'], 'edge main -> temp_loop, 6,400');
		like(slurp_file("$r->{dir}/out.dot"), qr/cost: bytes, 1,132,703 bytes in all\\l0 functions below 0\.5% of the total left out/,
		     'the title gives the cost, the total and what was left out');
	});
};

done_testing();
