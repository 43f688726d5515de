#!/usr/bin/perl
# cxxnames.t - C++ frames are named short (template arguments, parameter lists and return types
# elided, as pprof does) in the text report, folded stacks, flame graph, DOT and pprof's name,
# and jmptrace diff's text, and in full with --full-names, in JSON always and in pprof's
# system_name. tests/progs/cxx
# leaks a std::vector<int>'s buffer through std::vector<int>::reserve, inlined into
# cx_vector_leak() from libstdc++'s headers: one allocation call per round.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempdir);
use Test::More;
use JT;

my $JT = JT::jmptrace();
BAIL_OUT("no executable jmptrace at $JT (make jmptrace, or set JMPTRACE)") unless -x $JT;
system('make', '-s', '-C', root() . '/tests/progs') == 0
	or BAIL_OUT('cannot build the test programs (make -C tests/progs)');
my @modes = $ENV{JT_MODES} ? split(/[\s,]+/, $ENV{JT_MODES}) : qw(pie static);

# The consumers are installed by .ci/run: a missing one is a failure, never a skip.
sub have { my ($cmd) = @_; system("command -v $cmd >/dev/null 2>&1") == 0 }
ok(have($_), "$_ is installed") for qw(go dot);
my $HOME = tempdir('jt-cxxnames-home-XXXXXX', TMPDIR => 1, CLEANUP => 1);
@ENV{qw(HOME PPROF_TMPDIR GOCACHE)} = ($HOME, $HOME, "$HOME/gocache");

my $ROUNDS = 3;
my $SHORT = 'std::vector::reserve';
my $FULL = 'std::vector<int, std::allocator<int> >::reserve(unsigned long)';

# Runs cxx with every format; the figure of folded, flame graph and DOT is allocation calls.
sub run_formats {
	my ($mode, @opts) = @_;
	my $dir = tempdir('jt-cxxnames-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my $r = run_cmd(argv => [$JT, @opts, '--folded-cost', 'calls', '-o', "$dir/r.txt", '--json', "$dir/r.json",
				 '--folded', "$dir/r.folded", '--flamegraph', "$dir/r.svg", '--dot', "$dir/r.dot",
				 '--pprof', "$dir/r.pb.gz", '--', JT::prog_path('cxx', $mode), $ROUNDS, 1]);
	is($r->{exit}, 0, "@opts: exit 0") or diag($r->{stderr});
	my %out = (dir => $dir, json => read_json("$dir/r.json"));
	$out{$_} = JT::slurp("$dir/r.$_") // '' for qw(txt folded svg dot);
	return \%out;
}

# The DOT graph's width as Graphviz lays it out, in points.
sub dot_width {
	my ($file) = @_;
	my $r = run_cmd(argv => ['dot', '-Tsvg', $file]);
	return ($r->{stdout} // '') =~ /<svg width="(\d+)pt"/ ? $1 : 0;
}

sub pprof_out {
	my ($file, @args) = @_;
	my $r = run_cmd(argv => ['go', 'tool', 'pprof', @args, $file], timeout => 120);
	is($r->{exit}, 0, "go tool pprof @args: exit 0") or diag($r->{stderr});
	return $r->{stdout} // '';
}

# The folded lines through cx_vector_leak and the vector's reserve, as name the frames.
sub folded_reserve {
	my ($folded, $caller, $reserve) = @_;
	my @lines = grep { /;\Q$caller\E;\Q$reserve\E;/ } split /\n/, $folded;
	my $sum = 0;
	$sum += /(\d+)$/ ? $1 : 0 for @lines;
	return $sum;
}

for my $mode (@modes) {
	subtest "cxx-$mode: short names" => sub {
		my $o = run_formats($mode);
		like($o->{txt}, qr/^    by 0x[0-9a-f]+: \Q$SHORT\E \(vector\.tcc:\d+\) \(inlined\)\n    by 0x[0-9a-f]+: cx_vector_leak \(cx_vector_leak\.cpp:\d+\)$/m,
		     "text: $SHORT, then cx_vector_leak");
		unlike($o->{txt}, qr/std::vector</, 'text: no template arguments');
		is(folded_reserve($o->{folded}, 'cx_vector_leak', $SHORT), $ROUNDS, "folded: $ROUNDS calls through $SHORT");
		unlike($o->{folded}, qr/[<(]/, 'folded: no template arguments or parameter lists');
		like($o->{svg}, qr/<title>\Q$SHORT\E \($ROUNDS calls, [\d.]+%\)<\/title>/, "flame graph: $SHORT");
		unlike($o->{svg}, qr/<title>std::vector&lt;/, 'flame graph: no template arguments');
		like($o->{dot}, qr/^  "\Q$SHORT\E" \[label="\Q$SHORT\E\\nself 0 calls \(0\.00%\)\\ntotal $ROUNDS calls /m,
		     "DOT: the node $SHORT");
		like($o->{dot}, qr/^  "cx_vector_leak" -> "\Q$SHORT\E" \[label="$ROUNDS"/m, "DOT: cx_vector_leak -> $SHORT");
		my @frames = map { @{ $_->{frames} } } @{ ($o->{json}{snapshots} // [{}])->[-1]{stacks} // [] };
		is(scalar(grep { ($_->{function} // '') eq $FULL } @frames), 1, "JSON: the full name $FULL");
		ok(!grep({ ($_->{function} // '') eq $SHORT } @frames), 'JSON: never the short name');
		like(pprof_out("$o->{dir}/r.pb.gz", '-traces'), qr/^\s+\Q$SHORT\E \(inline\)$/m, "pprof: name $SHORT");
		# -raw shows a function's system_name after its name and file: s=START_LINE(SYSTEM_NAME).
		like(pprof_out("$o->{dir}/r.pb.gz", '-raw'), qr/^\s+\Q$SHORT\E \S+\/vector\.tcc:\d+ s=\d+\(\Q$FULL\E\)$/m,
		     "pprof: name $SHORT, system_name $FULL");

		my $f = run_formats($mode, '--full-names');
		like($f->{txt}, qr/^    by 0x[0-9a-f]+: \Q$FULL\E \(vector\.tcc:\d+\) \(inlined\)\n    by 0x[0-9a-f]+: cx_vector_leak\(\) \(cx_vector_leak\.cpp:\d+\)$/m,
		     "--full-names: text: $FULL");
		is(folded_reserve($f->{folded}, 'cx_vector_leak()', $FULL), $ROUNDS, "--full-names: folded: $FULL");
		like($f->{svg}, qr/<title>\Qstd::vector&lt;int, std::allocator&lt;int&gt; &gt;::reserve(unsigned long)\E \($ROUNDS calls/,
		     "--full-names: flame graph: $FULL");
		like($f->{dot}, qr/^  "\Q$FULL\E" \[label="\Q$FULL\E\\nself 0 calls/m, "--full-names: DOT: the node $FULL");
		my @ff = map { @{ $_->{frames} } } @{ ($f->{json}{snapshots} // [{}])->[-1]{stacks} // [] };
		is(scalar(grep { ($_->{function} // '') eq $FULL } @ff), 1, "--full-names: JSON: $FULL");

		# jmptrace diff reads the full names of JSON and shows them as the report does.
		my $one = run_cmd(argv => [$JT, '-o', '/dev/null', '--json', "$o->{dir}/one.json", '--',
					   JT::prog_path('cxx', $mode), 1, 1]);
		is($one->{exit}, 0, 'a run of one round: exit 0');
		my $grew = qr/^#\d+: \+400 bytes \(\+2 blocks\): 200 -> 600 live bytes\n(?:    [ab][ty] .*\n)*?/m;
		for my $d ([[], $SHORT, 'cx_vector_leak'], [['--full-names'], $FULL, 'cx_vector_leak()']) {
			my ($opts, $name, $caller) = @$d;
			my $r = run_cmd(argv => [$JT, 'diff', @$opts, "$o->{dir}/one.json", "$o->{dir}/r.json"]);
			is($r->{exit}, 0, "diff @$opts: exit 0") or diag($r->{stderr});
			like($r->{stdout}, qr/$grew    by \Q$name\E \(vector\.tcc:\d+\) \(inlined\)\n    by \Q$caller\E \(cx_vector_leak\.cpp:\d+\)$/m,
			     "diff @$opts: the vector's buffer grew by 400 bytes, through $name");
		}

		my ($ws, $wf) = (dot_width("$o->{dir}/r.dot"), dot_width("$f->{dir}/r.dot"));
		ok($ws > 0 && $ws < $wf, "DOT: short names lay out narrower ($ws pt) than full ones ($wf pt)");
	};
}

done_testing();
