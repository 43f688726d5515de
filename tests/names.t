#!/usr/bin/perl
# names.t - what the reports call the program and a frame without a symbol.
# A program run through a symlink of another name (redis-server, a symlink to
# redis-check-rdb) is named by its command line, as ps shows it, in the attach line, the text
# report, JSON "command", jmptrace diff and pprof's "File:"; the executable's real path is
# the text report's "exe:" and JSON "exe". A frame in a stripped program (leak-pie-stripped)
# is spelled module+0xOFFSET alike in every format: text, folded, flame graph, massif
# (ms_print), CSV, DOT, pprof (go tool pprof -traces) and jmptrace diff.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Cwd qw(realpath);
use File::Temp qw(tempdir);
use Test::More;
use JT;
use JTCheck;

my $JT = JT::jmptrace();
BAIL_OUT("no executable jmptrace at $JT (make jmptrace, or set JMPTRACE)") unless -x $JT;
system('make', '-s', '-C', root() . '/tests/progs') == 0
	or BAIL_OUT('cannot build the test programs (make -C tests/progs)');
my @modes = $ENV{JT_MODES} ? split(/[\s,]+/, $ENV{JT_MODES}) : @MODES;

# The consumers are installed by .ci/run: a missing one is a failure, never a skip.
sub have { my ($cmd) = @_; system("command -v $cmd >/dev/null 2>&1") == 0 }
ok(have($_), "$_ is installed") for qw(go ms_print);
# pprof keeps state under $HOME/pprof and PPROF_TMPDIR; keep both out of the real home.
my $HOME = tempdir('jt-names-home-XXXXXX', TMPDIR => 1, CLEANUP => 1);
@ENV{qw(HOME PPROF_TMPDIR GOCACHE)} = ($HOME, $HOME, "$HOME/gocache");

# go tool pprof as a user runs it (it may symbolize what the profile leaves unnamed).
sub pprof_out {
	my ($file, @args) = @_;
	my $r = run_cmd(argv => ['go', 'tool', 'pprof', @args, $file], timeout => 120);
	is($r->{exit}, 0, "go tool pprof @args: exit 0") or diag($r->{stderr});
	return $r->{stdout} // '';
}

sub diff_out {
	my (@files) = @_;
	my $r = run_cmd(argv => [$JT, 'diff', @files]);
	is($r->{exit}, 0, 'jmptrace diff: exit 0') or diag($r->{stderr});
	return $r->{stdout} // '';
}

# The names of one report's program: text header, JSON, pprof's File:, the diff's header.
sub check_names {
	my ($what, $dir, $cmdline, $link, $real) = @_;
	my $text = JT::slurp("$dir/r.txt") // '';
	like($text, qr/^command:  \Q$cmdline\E\n/m, "$what: text report: command:  $cmdline");
	like($text, qr/^exe:      \Q$real\E\n/m, "$what: text report: exe:      $real");
	my $s = (read_json("$dir/r.json") // {})->{snapshots}[-1] // {};
	is($s->{command}, $cmdline, "$what: JSON command");
	is($s->{exe}, $real, "$what: JSON exe");
	(my $base = $link) =~ s{.*/}{};
	like(pprof_out("$dir/r.pb.gz", '-top'), qr/^File: \Q$base\E$/m, "$what: pprof: File: $base");
	like(diff_out("$dir/r.json", "$dir/r.json"), qr/^old:  .*, command \Q$cmdline\E$/m,
	     "$what: jmptrace diff: command $cmdline");
}

for my $mode (@modes) {
	subtest "leak-$mode launched through a symlink" => sub {
		my $dir = tempdir('jt-names-XXXXXX', TMPDIR => 1, CLEANUP => 1);
		my $link = "$dir/jt-named-$mode";
		symlink(JT::prog_path('leak', $mode), $link) or return fail("symlink: $!");
		my $r = run_cmd(argv => [$JT, '-o', "$dir/r.txt", '--json', "$dir/r.json", '--pprof', "$dir/r.pb.gz",
					 '--', $link, 3, 0, "tab\there"]);
		is($r->{exit}, 0, 'exit 0') or diag($r->{stderr});
		# As ps shows it: the arguments joined by blanks, a control character as '?'.
		check_names('launched', $dir, "$link 3 0 tab?here", $link, realpath(JT::prog_path('leak', $mode)));
	};

	subtest "attach-$mode attached through a symlink" => sub {
		my $dir = tempdir('jt-names-XXXXXX', TMPDIR => 1, CLEANUP => 1);
		my $link = "$dir/jt-attached-$mode";
		symlink(JT::prog_path('attach', $mode), $link) or return fail("symlink: $!");
		my $j = attach_released([$link, 'an-argument'], $dir, '--json', "$dir/r.json", '-o', "$dir/r.txt",
					'--pprof', "$dir/r.pb.gz") or return;
		like(JT::slurp($j->{err}) // '', qr/^jmptrace: attached to process $j->{target_pid} \(\Q$link an-argument\E\), /m,
		     'the attach line names the command line');
		check_names('attached', $dir, "$link an-argument", $link, realpath(JT::prog_path('attach', $mode)));
	};
}

# The JSON frames of the live stack of leak_here() (frame 0, N blocks) and of main (frame 1).
sub leak_here_frames {
	my ($json, $n) = @_;
	my $s = ($json // {})->{snapshots}[-1] // {};
	my @st = grep { $_->{live_blocks} == $n && @{ $_->{frames} } >= 2 } @{ $s->{stacks} // [] };
	return @st == 1 ? @{ $st[0]{frames} }[0, 1] : ();
}

# nm's [start, end) of function name in file.
sub symbol_range {
	my ($file, $name) = @_;
	my ($start, $size) = `nm -S --defined-only '$file'` =~ /^([0-9a-f]+) ([0-9a-f]+) T \Q$name\E$/m;
	return defined $size ? (hex($start), hex($start) + hex($size)) : ();
}

subtest 'a stripped program: one spelling of a frame without a symbol' => sub {
	my $dir = tempdir('jt-names-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my $prog = JT::prog_path('leak', 'pie') . '-stripped';
	my @fmts = ('-o', 'r.txt', '--json', 'r.json', '--folded', 'r.folded', '--flamegraph', 'r.svg',
		    '--massif', 'r.massif', '--csv', 'r.csv', '--dot', 'r.dot', '--pprof', 'r.pb.gz');
	my $r = run_cmd(dir => $dir, argv => [$JT, @fmts, '--', $prog, 3, 0]);
	is($r->{exit}, 0, 'exit 0') or diag($r->{stderr});
	my $r5 = run_cmd(dir => $dir, argv => [$JT, '--json', 'r5.json', '--', $prog, 5, 0]);
	is($r5->{exit}, 0, 'a second run with 5 blocks: exit 0') or diag($r5->{stderr});

	# The expected names, from the JSON's module and offset, checked against the symbol table.
	my @fr = leak_here_frames(read_json("$dir/r.json"), 3);
	is(scalar @fr, 2, "one live stack of leak_here's 3 blocks") or return;
	my @label;
	for my $c ([0, 'leak_here'], [1, 'main']) {
		my ($i, $func) = @$c;
		my $f = $fr[$i];
		ok(!defined $f->{function}, "frame $i has no function (the program is stripped)");
		is($f->{module}, 'leak-pie-stripped', "frame $i: module");
		my @range = symbol_range(JT::prog_path('leak', 'pie'), $func);
		my $off = defined $f->{offset} ? hex($f->{offset}) : -1;
		ok(@range && $off > $range[0] && $off <= $range[1], "frame $i: its offset lies in $func")
			or diag("offset " . ($f->{offset} // 'missing') . ", $func at @range");
		# Without an offset in the JSON, go on with the text report's spelling.
		$label[$i] = defined $f->{offset} ? sprintf('%s+0x%x', $f->{module}, $off)
			   : ((JT::slurp("$dir/r.txt") // '') =~ /^#\d+: 3,120 bytes in 3 blocks live.*\n +at 0x[0-9a-f]+: (\S+)\n +by 0x[0-9a-f]+: (\S+)/m)[$i]
			     // 'unknown';
	}
	my ($l0, $l1) = @label;
	note("frame 0: $l0, frame 1: $l1");
	my %out = map { $_ => JT::slurp("$dir/r.$_") // '' } qw(txt folded svg csv dot);
	like($out{txt}, qr/^ +at 0x[0-9a-f]+: \Q$l0\E\n +by 0x[0-9a-f]+: \Q$l1\E\n/m, 'text report');
	like($out{folded}, qr/;\Q$l1\E;\Q$l0\E 3120$/m, 'folded');
	like($out{svg}, qr/<title>\Q$l0\E \(3,120 bytes/, 'flame graph');
	my $ms = run_cmd(argv => ['ms_print', "$dir/r.massif"]);
	like($ms->{stdout} // '', qr/\(3,120B\) 0x[0-9A-F]+: \Q$l0\E\n.*\(3,120B\) 0x[0-9A-F]+: \Q$l1\E\n/,
	     'massif (ms_print)');
	like($out{csv}, qr/,\Q$l0\E <- \Q$l1\E <- /, 'CSV');
	like($out{dot}, qr/^  "\Q$l0\E" \[label="\Q$l0\E\\n/m, 'DOT');
	like(pprof_out("$dir/r.pb.gz", '-traces'), qr/^ +3\.05kB +\Q$l0\E\n +\Q$l1\E\n/m, 'pprof -traces');
	like(diff_out("$dir/r.json", "$dir/r5.json"), qr/^#1: \+[\d,]+ bytes \(\+2 blocks\).*\n    at \Q$l0\E\n    by \Q$l1\E\n/m,
	     'jmptrace diff');
	my $all = join('', values %out, $ms->{stdout} // '', pprof_out("$dir/r.pb.gz", '-traces'),
		       diff_out("$dir/r.json", "$dir/r5.json"));
	unlike($all, qr/\?\?\?|\[leak-pie-stripped\]/, 'no other spelling (??? or [module]) anywhere');
};

done_testing();
