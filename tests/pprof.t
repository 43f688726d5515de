#!/usr/bin/perl
# pprof.t - --pprof FILE writes a gzip-compressed profile.proto that go tool pprof reads as it
# is (no symbolization of its own): the four sample types with the heap's exact figures, the
# functions with file:line, inlined frames as Line entries, and mappings with build ids.
use strict;
use warnings;
# Addresses are 64-bit: hex() of one above 0xffffffff is fine on this x86-64-only tool.
no warnings 'portable';
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempdir);
use Test::More;
use JT;

my $JT = JT::jmptrace();
-x $JT or plan skip_all => "no jmptrace at $JT";
my @modes = $ENV{JT_MODES} ? split(/[\s,]+/, $ENV{JT_MODES}) : qw(pie static);

# go tool pprof is the consumer: CI installs it (golang-go), so its absence is a failure.
my ($GO) = grep { -x } map { "$_/go" } split(/:/, $ENV{PATH} // '');
if (!$GO) {
	fail('go is installed (Debian golang-go): go tool pprof reads the profile');
	done_testing();
	exit 1;
}
# pprof keeps state under $HOME/pprof and PPROF_TMPDIR; keep both out of the real home.
my $HOME = tempdir('jt-pprof-XXXXXX', TMPDIR => 1, CLEANUP => 1);
$ENV{HOME} = $HOME;
$ENV{PPROF_TMPDIR} = $HOME;
$ENV{GOCACHE} = "$HOME/gocache";

my $PROFILE_SRC = src_path('profile/profile.c');
my $INLINED_SRC = src_path('inlined/inlined.c');

# The figures of tests/progs/profile, by the function that calls malloc:
# [alloc_objects, alloc_space, inuse_objects, inuse_space].
my %PROFILE = (
	big_phase => [256, 256 * 4096, 0, 0],
	small_phase => [10, 10 * 1000, 10, 10 * 1000],
	temp_loop => [100, 100 * 64, 0, 0],
	hist_sizes => [8, 1 + 8 + 16 + 17 + 100 + 1024 + 1025 + 65536, 0, 0],
);

# Runs go tool pprof on file; never lets it symbolize (the profile must carry its symbols).
sub pprof {
	my ($file, @args) = @_;
	my $r = run_cmd(argv => [$GO, 'tool', 'pprof', '-symbolize=none', @args, $file], timeout => 60);
	is($r->{exit}, 0, "go tool pprof @args: exit 0") or diag($r->{stderr});
	return $r->{stdout} // '';
}

# Parses go tool pprof -raw: { samples => [[values...], [location ids...]], locations =>
# { id => { address, mapping, lines => [[function, file, line], ...] } }, mappings => [...] }.
sub parse_raw {
	my ($text) = @_;
	my (%p, $section, $loc);
	$p{samples} = [];
	$p{mappings} = [];
	for my $l (split /\n/, $text) {
		if ($l =~ /^(Samples|Locations|Mappings):?\s*$/) {
			$section = $1;
		} elsif (($section // '') eq 'Samples' && $l =~ /^\s*([\d\s]+):\s*([\d\s]*)$/) {
			push @{ $p{samples} }, [[split ' ', $1], [split ' ', $2]];
		} elsif (($section // '') eq 'Locations' && $l =~ /^\s*(\d+): (0x[0-9a-f]+) M=(\d+) (.*)$/) {
			$loc = $p{locations}{$1} = { address => hex($2), mapping => $3, lines => [] };
			push @{ $loc->{lines} }, parse_line($4) if $4 ne '';
		} elsif (($section // '') eq 'Locations' && $loc && $l =~ /^\s{6,}(\S.*)$/) {
			push @{ $loc->{lines} }, parse_line($1);
		} elsif (($section // '') eq 'Mappings' && $l =~ m{^(\d+): (0x[0-9a-f]+)/(0x[0-9a-f]+)/(0x[0-9a-f]+) (\S+) ?(\S*)}) {
			push @{ $p{mappings} }, { id => $1, start => hex($2), limit => hex($3), offset => hex($4),
						  file => $5, build_id => $6 };
		}
	}
	return \%p;
}

# "func /path/file.c:12 s=0" -> [func, file, line]
sub parse_line {
	my ($s) = @_;
	$s =~ s/\s+s=\d+$//;
	return $s =~ /^(\S+) (.*):(\d+)$/ ? [$1, $2, $3] : [$s, '', 0];
}

# Sums each sample's values by the function of its leaf's innermost Line.
sub by_leaf {
	my ($p) = @_;
	my %sum;
	for my $s (@{ $p->{samples} }) {
		my ($vals, $locs) = @$s;
		my $loc = $p->{locations}{ $locs->[0] // 0 } or next;
		my $fn = $loc->{lines}[0] ? $loc->{lines}[0][0] : sprintf('0x%x', $loc->{address});
		$sum{$fn}[$_] += $vals->[$_] for 0 .. 3;
	}
	return \%sum;
}

# The rows of go tool pprof -top: [flat, name], in its order.
sub top_rows {
	my ($text) = @_;
	my ($rows, $in) = ([], 0);
	for my $l (split /\n/, $text) {
		if ($l =~ /^\s+flat\s+flat%/) { $in = 1; next }
		push @$rows, [$1, $2] if $in && $l =~ /^\s*(\S+)\s+\S+%\s+\S+%\s+\S+\s+\S+%\s+(.+?)\s*$/;
	}
	return $rows;
}

# The GNU build id of an ELF file, as readelf -n prints it.
sub build_id_of {
	my ($path) = @_;
	my $out = `readelf -n '$path' 2>/dev/null`;
	return $out =~ /Build ID: ([0-9a-f]+)/ ? $1 : undef;
}

# Runs prog under jmptrace with --pprof; returns (run, profile path, JSON snapshot).
sub run_pprof {
	my ($prog, $mode) = @_;
	my $r = run_jt($prog, $mode, jt_args => ['--pprof', 'heap.pb.gz']);
	is($r->{exit}, 0, "$prog-$mode: exit 0") or diag($r->{stderr});
	my $file = "$r->{dir}/heap.pb.gz";
	ok(-s $file, "$prog-$mode: the profile was written");
	ok(!-e "$file.tmp", "$prog-$mode: no .tmp file is left");
	my $magic = substr(JT::slurp($file) // '', 0, 2);
	is(unpack('H4', $magic // ''), '1f8b', "$prog-$mode: it is gzip-compressed");
	return ($r, $file, last_snapshot($r));
}

for my $mode (@modes) {
	subtest "profile-$mode" => sub {
		my ($r, $file, $snap) = run_pprof('profile', $mode);
		my $live = $snap->{totals}{live_bytes};
		ok($live >= 10000, "JSON live bytes $live");

		# The default sample type is inuse_space, and its top entry is the text report's.
		my $top = pprof($file, '-top', '-unit=B');
		like($top, qr/^Type: inuse_space$/m, 'default sample type: inuse_space');
		like($top, qr/^jmptrace: \S*profile-$mode \(pid \d+\), snapshot 1 \(exit\)$/m, 'the comment names jmptrace');
		like($top, qr/Total samples = ${live}B\b/, "inuse_space total = the report's live bytes ($live)");
		is_deeply(top_rows($top)->[0], ['10000B', 'small_phase'], 'top entry: small_phase, 10000B flat');
		like($r->{report}, qr/#1: 10,000 bytes in 10 blocks live.*\n\s+at 0x[0-9a-f]+: small_phase /,
		     'the text report\'s first stack is small_phase, 10,000 bytes');

		# Ranking by call count and by bytes allocated.
		my $rows = top_rows(pprof($file, '-top', '-sample_index=alloc_objects'));
		is_deeply([map { "$_->[1] $_->[0]" } @$rows[0 .. 3]],
			  ['big_phase 256', 'temp_loop 100', 'small_phase 10', 'hist_sizes 8'],
			  'alloc_objects: big_phase 256, temp_loop 100, small_phase 10, hist_sizes 8');
		$rows = top_rows(pprof($file, '-top', '-unit=B', '-sample_index=alloc_space'));
		is_deeply($rows->[0], ['1048576B', 'big_phase'], 'alloc_space: big_phase first, 1048576B');

		# Exact figures of every sample type, from -raw.
		my $raw = parse_raw(pprof($file, '-raw'));
		my $sum = by_leaf($raw);
		for my $fn (sort keys %PROFILE) {
			is_deeply($sum->{$fn}, $PROFILE{$fn}, "$fn: [alloc_objects, alloc_space, inuse_objects, inuse_space] = [@{ $PROFILE{$fn} }]");
		}
		my $inuse = 0;
		$inuse += $_->[0][3] for @{ $raw->{samples} };
		is($inuse, $live, "the samples' inuse_space adds up to the live bytes ($live)");

		# Source lines: small_phase at its malloc, called from main.
		my $small = site_line('profile/profile.c', 'profile: small');
		my $traces = pprof($file, '-traces', '-lines', '-unit=B');
		like($traces, qr/^\s+10000B\s+small_phase \Q$PROFILE_SRC\E:$small\n\s+main \Q$PROFILE_SRC\E:\d+\n/m,
		     "-traces -lines: small_phase at profile.c:$small, called from main")
			or diag($traces);

		# Read as it is, pprof attempts no symbolization of its own (it would say so on stderr).
		my $plain = run_cmd(argv => [$GO, 'tool', 'pprof', '-top', $file], timeout => 60);
		ok($plain->{exit} == 0 && $plain->{stderr} eq '' && $plain->{stdout} =~ /small_phase/,
		   'go tool pprof -top with no -symbolize: no symbolization attempted, nothing on stderr')
			or diag($plain->{stderr});
		# Made to symbolize from the binaries, pprof opens the files our mappings name and
		# finds the same functions (this pprof does not check build ids: readelf does below).
		my $f = run_cmd(argv => [$GO, 'tool', 'pprof', '-traces', '-symbolize=force',
					 '-sample_index=alloc_objects', $file], timeout => 60);
		my $forced = $f->{stdout} // '';
		ok($f->{exit} == 0 && $f->{stderr} eq '', '-symbolize=force: every mapping\'s file opened, nothing on stderr')
			or diag($f->{stderr});
		for my $fn (sort keys %PROFILE) {
			like($forced, qr/^\s+$PROFILE{$fn}[0]\s+$fn\n\s+main\n/m,
			     "-symbolize=force: $fn ($PROFILE{$fn}[0] calls) called from main");
		}

		# Mappings: the executable first, each with its file's build id.
		my $maps = $raw->{mappings};
		ok(@$maps >= 1, scalar(@$maps) . ' mappings');
		is($maps->[0]{file}, prog_path('profile', $mode), 'mapping 1 is the executable');
		for my $m (@$maps) {
			my $want = build_id_of($m->{file});
			ok(defined $want && $m->{build_id} eq $want, "$m->{file}: build id $m->{build_id} = readelf -n's")
				or diag('readelf -n: ' . ($want // 'none'));
		}
		is(scalar(grep { $_->{mapping} < 1 || $_->{mapping} > @$maps } values %{ $raw->{locations} }), 0,
		   'every location lies in a mapping');
	};
}

# An allocation in an inlined function: one location, two Line entries, innermost first.
for my $mode (@modes) {
	subtest "inlined-$mode" => sub {
		my ($r, $file) = run_pprof('inlined', $mode);
		my ($alloc, $call) = (site_line('inlined/inlined.c', 'inlined: alloc'),
				      site_line('inlined/inlined.c', 'inlined: call'));
		my $raw = parse_raw(pprof($file, '-raw'));
		my @locs = grep { @{ $_->{lines} } && $_->{lines}[0][0] eq 'in_alloc' } values %{ $raw->{locations} };
		is(scalar(@locs), 1, 'one location of in_alloc');
		is_deeply($locs[0] && $locs[0]{lines}, [['in_alloc', $INLINED_SRC, $alloc], ['in_outer', $INLINED_SRC, $call]],
			  "its Lines: in_alloc (inlined.c:$alloc) inlined into in_outer (inlined.c:$call)");
		is_deeply(by_leaf($raw)->{in_alloc}, [5, 2500, 5, 2500], 'in_alloc: 5 blocks, 2500 bytes');
		like(pprof($file, '-traces', '-lines'),
		     qr/^\s+\S+\s+in_alloc \Q$INLINED_SRC\E:$alloc \(inline\)\n\s+in_outer \Q$INLINED_SRC\E:$call\n/m,
		     '-traces -lines: in_alloc (inline), then in_outer');
	};
}

# A file that cannot be written is refused before the program runs (tests/outputs.t has the rest).
subtest 'unwritable path' => sub {
	my $r = run_jt('profile', $modes[0], jt_args => ['--pprof', 'no/such/dir/heap.pb.gz']);
	like($r->{stderr}, qr{\Ajmptrace: cannot write the pprof profile 'no/such/dir/heap\.pb\.gz': No such file or directory\n\z},
	     'one line names the file and the reason');
	is($r->{exit}, 1, 'exit 1');
	ok(!defined $r->{report}, 'the program did not run: no text report');
};

done_testing();
