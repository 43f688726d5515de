#!/usr/bin/perl
# outputs.t - where every report goes (-o, --json, the six formats, --html, diff --json): a symlink is
# followed and stays one, a FIFO, a character device and /dev/fd/N are written in place, "-" is
# standard output, a symlink planted at a temporary name is never followed, and a path that
# cannot be written is refused before the program runs, or makes jmptrace exit 1 after it.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempdir);
use IO::Uncompress::Gunzip qw(gunzip $GunzipError);
use JSON::PP ();
use POSIX qw(mkfifo);
use Test::More;
use JT;

my $JT = JT::jmptrace();
-x $JT or plan skip_all => "no jmptrace at $JT";

umask(022);
my $PROG = prog_path('leak', 'pie');
# leak 3 STATUS: leak_here leaks 1024 + 1040 + 1056 = 3120 bytes in 3 blocks; it prints this.
my $PROG_LINE = "leak: leaked 3 blocks\n";

sub json_of { my $j = eval { JT::decode_report($_[0]) }; return $j }

# A report's snapshot (or a diff) holds leak_here's 3120 live bytes.
sub json_has_leak {
	my ($stacks, $bytes_key) = @_;
	return scalar grep {
		my $f = $_->{frames}[0];
		$f && ($f->{function} // '') eq 'leak_here' && ($_->{$bytes_key} // 0) == 3120
	} @{ $stacks // [] };
}

# Every output kind: its option, and what its content must hold (exact figures of leak 3).
my @KINDS = (
	{ name => '-o', opt => '-o', check => sub { $_[0] =~ /^#\d+: 3,120 bytes in 3 blocks live;.*\n\s+at 0x\w+: leak_here /m } },
	{ name => '--json', opt => '--json', check => sub {
		my $j = json_of($_[0]) or return 0;
		my $s = $j->{snapshots} && $j->{snapshots}[-1] or return 0;
		return json_has_leak($s->{stacks}, 'live_bytes') && $s->{totals}{live_blocks} >= 5;
	} },
	{ name => '--pprof', opt => '--pprof', check => sub {
		my ($in, $out) = ($_[0]);
		gunzip(\$in => \$out) or return 0;
		return index($out, 'leak_here') >= 0 && index($out, 'inuse_space') >= 0;
	} },
	{ name => '--folded', opt => '--folded', check => sub { $_[0] =~ /^_start;[^\n ]*;main;leak_here 3120$/m && $_[0] =~ /;leak_small 8$/m } },
	{ name => '--flamegraph', opt => '--flamegraph', check => sub { $_[0] =~ /<title>leak_here \(3,120 bytes, / && $_[0] =~ m{</svg>\n\z} } },
	{ name => '--massif', opt => '--massif', check => sub { $_[0] =~ /^desc: / && $_[0] =~ /^ *n\d+: 3120 0x[0-9A-F]+: leak_here /m } },
	{ name => '--csv', opt => '--csv', check => sub { $_[0] =~ /^\d+,3,3120,[^\n]*leak_here/m } },
	{ name => '--dot', opt => '--dot', check => sub { $_[0] =~ /^digraph / && $_[0] =~ /"leak_here" \[label="leak_here\\nself 3,120 bytes/ } },
	{ name => '--html', opt => '--html', check => sub {
		$_[0] =~ /\A<!DOCTYPE html>/ && $_[0] =~ m{</html>\n\z} or return 0;
		my ($data) = $_[0] =~ m{<script type="application/json" id="jt-data">(.*?)</script>}s;
		my $j = json_of($data // '') or return 0;
		my $s = $j->{snapshots} && $j->{snapshots}[-1] or return 0;
		return json_has_leak([grep { $_->{live_blocks} == 3 } @{ $s->{stacks} }], 'live_bytes');
	} },
	{ name => 'diff --json', diff => 1, check => sub {
		my $j = json_of($_[0]) or return 0;
		return json_has_leak($j->{stacks}, 'new_live_bytes') && $j->{live_bytes_delta} == 0;
	} },
);

# The two reports diff --json compares: one run of leak 3, written once.
my $REPORTS = tempdir('jt-outputs-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $REPORT = "$REPORTS/r.json";
{
	my $r = run_cmd(argv => [$JT, '-o', '/dev/null', '--json', $REPORT, '--', $PROG, 3, 0]);
	ok(-s $REPORT && json_of(JT::slurp($REPORT)), 'the report diff --json reads is written')
		or BAIL_OUT("no report for diff: $r->{stderr}");
}

# The argv that writes kind $k to $path: the program (leak 3 STATUS, or @prog), or a diff.
sub argv_of {
	my ($k, $path, %o) = @_;
	return [$JT, 'diff', '--json', $path, $REPORT, $REPORT] if $k->{diff};
	my @text = $k->{opt} eq '-o' ? () : ('-o', "$o{dir}/text.txt");
	return [$JT, @text, $k->{opt}, $path, '--', @{ $o{prog} // [$PROG, 3, $o{status} // 0] }];
}

sub run_kind {
	my ($k, $path, %o) = @_;
	return run_cmd(dir => $o{dir}, argv => argv_of($k, $path, %o), timeout => 60);
}

# A reader of FIFO $fifo: spawned cat, its output in the returned handle's {out}.
sub fifo_reader {
	my ($dir, $fifo) = @_;
	return JT::spawn(dir => $dir, name => 'reader', argv => ['cat', $fifo]);
}

sub new_dir { tempdir('jt-outputs-XXXXXX', TMPDIR => 1, CLEANUP => 1) }

# One line on stderr, the whole of it.
sub one_line { $_[0] =~ /\Ajmptrace: [^\n]+\n\z/ }

subtest 'a symlink to a file is followed: the target gets the content, the symlink stays' => sub {
	for my $k (@KINDS) {
		my $dir = new_dir();
		JT::spew("$dir/target", "old\n");
		chmod 0640, "$dir/target";
		symlink('target', "$dir/link") or die "symlink: $!\n";
		my $r = run_kind($k, "$dir/link", dir => $dir, status => 5);
		is($r->{exit}, $k->{diff} ? 0 : 5, "$k->{name}: exit is the program's status") or diag($r->{stderr});
		ok(-l "$dir/link" && readlink("$dir/link") eq 'target', "$k->{name}: the symlink is still a symlink to target");
		ok($k->{check}->(JT::slurp("$dir/target") // ''), "$k->{name}: the target holds the report");
		is((stat("$dir/target"))[2] & 07777, 0640, "$k->{name}: the target keeps its mode");
		my @left = grep { !/^(?:target|link|text\.txt|stdin|stdout|stderr)$/ } map { s{.*/}{}r } glob("$dir/* $dir/.[!.]*");
		is("@left", '', "$k->{name}: no temporary file is left");
	}
};

subtest 'a FIFO with a reader: the reader gets the content, the FIFO stays a FIFO' => sub {
	for my $k (@KINDS) {
		my $dir = new_dir();
		mkfifo("$dir/fifo", 0644) or die "mkfifo: $!\n";
		my $reader = fifo_reader($dir, "$dir/fifo");
		my $r = run_kind($k, "$dir/fifo", dir => $dir);
		my $st = JT::reap($reader, 30);
		is($r->{exit}, 0, "$k->{name}: exit 0") or diag($r->{stderr});
		is($st, 0, "$k->{name}: the reader saw the end of the stream");
		ok(-p "$dir/fifo", "$k->{name}: still a FIFO");
		ok($k->{check}->(JT::slurp($reader->{out}) // ''), "$k->{name}: the reader got the report");
	}
};

subtest 'a character device (mknod in a temporary directory) is written in place and stays one' => sub {
	my $dir = new_dir();
	if ($> != 0 || !mknod_null("$dir/probe")) {
		plan skip_all => 'mknod needs root with CAP_MKNOD (not here)';
	}
	for my $k (@KINDS) {
		my $kdir = new_dir();
		mknod_null("$kdir/null") or die "mknod: $!\n";
		my $r = run_kind($k, "$kdir/null", dir => $kdir);
		is($r->{exit}, 0, "$k->{name}: exit 0") or diag($r->{stderr});
		ok(-c "$kdir/null" && !-l "$kdir/null", "$k->{name}: still a character device");
		is($r->{stderr}, '', "$k->{name}: nothing on stderr");
	}
};

# A copy of /dev/null: character device 1,3.
sub mknod_null { system('mknod', $_[0], 'c', '1', '3') == 0 && -c $_[0] }

# A copy of /dev/full (1,7) in the test's directory when root may make one, so that a
# jmptrace that replaces its output cannot harm the system's; else /dev/full itself.
sub full_device {
	my ($dir) = @_;
	return "$dir/full" if $> == 0 && system('mknod', "$dir/full", 'c', '1', '7') == 0 && -c "$dir/full";
	return '/dev/full';
}

subtest '/dev/full: exit 1 with one line, though the program ran to its end' => sub {
	for my $k (@KINDS) {
		my $dir = new_dir();
		my $full = full_device($dir);
		my $r = run_kind($k, $full, dir => $dir, status => 3);
		is($r->{exit}, 1, "$k->{name}: exit 1, not the program's 3");
		ok(one_line($r->{stderr}) && $r->{stderr} =~ m{'\Q$full\E': No space left on device\n\z},
		   "$k->{name}: one line naming the file and the reason") or diag($r->{stderr});
		ok(-c $full && !-l $full, "$k->{name}: $full is still a character device");
	}
};

subtest '"-" is standard output, and no file named "-" is made' => sub {
	for my $k (@KINDS) {
		my $dir = new_dir();
		my $r = run_kind($k, '-', dir => $dir);
		is($r->{exit}, 0, "$k->{name}: exit 0") or diag($r->{stderr});
		my $out = $r->{stdout};
		# The program's own line comes first: it writes it before it exits.
		$out =~ s/\A\Q$PROG_LINE\E// unless $k->{diff};
		ok($k->{check}->($out), "$k->{name}: the report is on stdout");
		ok(!-e "$dir/-", "$k->{name}: no file named '-'");
	}
};

subtest 'a symlink planted at a temporary name is never followed' => sub {
	for my $k (@KINDS) {
		my $dir = new_dir();
		JT::spew("$dir/victim", "victim\n");
		my @planted = ("$dir/out.tmp", "$dir/.out.tmp", "$dir/out~", "$dir/out.new", "$dir/.out.swp", "$dir/out.1");
		symlink("$dir/victim", $_) or die "symlink: $!\n" for @planted;
		my $r = run_kind($k, "$dir/out", dir => $dir);
		is($r->{exit}, 0, "$k->{name}: exit 0") or diag($r->{stderr});
		is(JT::slurp("$dir/victim"), "victim\n", "$k->{name}: the file the symlinks point to is unchanged");
		is(scalar(grep { -l $_ && readlink($_) eq "$dir/victim" } @planted), scalar(@planted),
		   "$k->{name}: every planted symlink is still there");
		ok(!-l "$dir/out" && $k->{check}->(JT::slurp("$dir/out") // ''), "$k->{name}: the report is a new regular file");
		is((stat("$dir/out"))[2] & 07777, 0644, "$k->{name}: with the mode fopen would give it (umask 022)");
	}
};

subtest '/dev/fd/N from a shell\'s process substitution is written in place' => sub {
	for my $k (@KINDS) {
		my $dir = new_dir();
		my $cmd = join(' ', map { "'$_'" } @{ argv_of($k, 'PATH', dir => $dir) });
		$cmd =~ s/'PATH'/>(cat > '$dir\/got')/;
		# $! is the process substitution's cat (bash 5.1 and later): its file is complete after the wait.
		my $r = run_cmd(dir => $dir, timeout => 60, argv => ['bash', '-c', "$cmd; s=\$?; wait \$!; exit \$s"]);
		is($r->{exit}, 0, "$k->{name}: exit 0") or diag($r->{stderr});
		ok($k->{check}->(JT::slurp("$dir/got") // ''), "$k->{name}: the pipe got the report");
	}
};

subtest 'a directory that does not exist: refused before the program runs' => sub {
	for my $k (@KINDS) {
		my $dir = new_dir();
		my $r = run_kind($k, "$dir/no/such/dir/out", dir => $dir, prog => ['/usr/bin/touch', "$dir/marker"]);
		is($r->{exit}, 1, "$k->{name}: exit 1");
		ok(one_line($r->{stderr}) && $r->{stderr} =~ m{'\Q$dir\E/no/such/dir/out': No such file or directory\n\z},
		   "$k->{name}: one line naming the file and the reason") or diag($r->{stderr});
		ok(!-e "$dir/marker", "$k->{name}: the program did not run") unless $k->{diff};
		is($r->{stdout}, '', "$k->{name}: nothing was diffed") if $k->{diff};
		ok(!-e "$dir/text.txt", "$k->{name}: no other report was left behind");
	}
};

subtest '-p with --duration: a path that cannot be written is refused before attaching' => sub {
	my $dir = new_dir();
	my $hb = "$dir/hb";
	my $p = JT::spawn(dir => $dir, name => 'hb', argv => [prog_path('heartbeat', 'pie'), $hb]);
	ok(wait_until(sub { heartbeat($hb) >= 1 }, 30), 'the process runs');
	for my $k (grep { !$_->{diff} } @KINDS) {
		my $r = run_cmd(dir => $dir, timeout => 60,
				argv => [$JT, '--duration', '1', $k->{opt}, "$dir/no/such/dir/out", '-p', $p->{pid}]);
		is($r->{exit}, 1, "$k->{name}: exit 1");
		ok(one_line($r->{stderr}) && $r->{stderr} =~ /No such file or directory\n\z/,
		   "$k->{name}: one line, and no attach line") or diag($r->{stderr});
	}
	is(join(',', traced_threads($p->{pid})), '', 'the process was never left traced');
	kill 'TERM', $p->{pid};
	JT::reap($p, 10);
};

subtest 'several snapshots (--interval) into FIFOs: every one, in order, each stream whole' => sub {
	my $dir = new_dir();
	my %fifo = map { $_ => "$dir/$_" } qw(json folded text);
	mkfifo($_, 0644) or die "mkfifo: $!\n" for values %fifo;
	my %reader = map { $_ => JT::spawn(dir => $dir, name => $_, argv => ['cat', $fifo{$_}]) } keys %fifo;
	my $r = run_cmd(dir => $dir, timeout => 120,
			argv => [$JT, '--interval', '0.5', '-o', $fifo{text}, '--json', $fifo{json},
				 '--folded', $fifo{folded}, '--', prog_path("profile", "pie"), 2]);
	is($r->{exit}, 0, 'exit 0') or diag($r->{stderr});
	JT::reap($reader{$_}, 30) for keys %reader;
	my $j = json_of(JT::slurp($reader{json}{out}) // '');
	my @seq = map { $_->{seq} } @{ $j ? $j->{snapshots} : [] };
	ok(@seq >= 3, 'the JSON stream is one document with every snapshot (' . scalar(@seq) . ')');
	is("@seq", join(' ', 1 .. @seq), 'in order, from 1');
	is(@seq ? $j->{snapshots}[-1]{reason} : undef, 'exit', 'the last one at exit');
	my $text = JT::slurp($reader{text}{out}) // '';
	my $n = () = $text =~ /^==== jmptrace heap report ====$/mg;
	is($n, scalar(@seq), 'the text stream has as many reports');
	my $folded = JT::slurp($reader{folded}{out}) // '';
	ok($folded =~ /;small_phase 10000$/m, 'the folded stream has the stacks');
	ok(!glob("$dir/*.1*"), 'no numbered file was made beside the FIFOs');
};

# The one rule of every file but JSON's: it holds one snapshot, the last, or with --interval
# each snapshot has its own numbered file; -o's text report is such a file, as the formats are.
subtest '--interval: -o, like every format, writes one numbered file per snapshot' => sub {
	my $dir = new_dir();
	my $r = run_cmd(dir => $dir, timeout => 120,
			argv => [$JT, '--interval', '0.5', '-o', "$dir/report.txt", '--json', "$dir/r.json",
				 '--folded', "$dir/heap.folded", '--', prog_path('profile', 'pie'), 2]);
	is($r->{exit}, 0, 'exit 0') or diag($r->{stderr});
	my $j = json_of(JT::slurp("$dir/r.json") // '');
	my $n = scalar @{ $j ? $j->{snapshots} : [] };
	ok($n >= 3, "the JSON file holds every snapshot ($n)");
	ok(!-e "$dir/report.txt", 'no report.txt: every snapshot has its number');
	for my $i (1 .. $n) {
		my $text = JT::slurp("$dir/report.$i.txt") // '';
		my $reports = () = $text =~ /^==== jmptrace heap report ====$/mg;
		is($reports, 1, "report.$i.txt holds one report");
		# Every snapshot's file, empty when it holds no stack yet: under ASan the first came
		# before the program's first allocation (its stdout buffer), and once failed CI so.
		ok(-e "$dir/heap.$i.folded" && ($i < $n || -s _), "heap.$i.folded beside it" . ($i == $n ? ', with stacks' : ''));
	}
	like(JT::slurp("$dir/report.$n.txt") // '', qr/^snapshot: exit$/m, "report.$n.txt is the one at exit");
	ok(!-e "$dir/report." . ($n + 1) . '.txt', "no report." . ($n + 1) . '.txt');
};

subtest 'without --interval, -o holds its process\'s last snapshot, as every format does; -f: a child\'s in a file named with its pid' => sub {
	my $dir = new_dir();
	my $r = run_cmd(dir => $dir, argv => [$JT, '-f', '-o', "$dir/r.txt", '--json', "$dir/r.json",
					      '--folded', "$dir/heap.folded", '--', prog_path('forker', 'pie'), 'fork']);
	is($r->{exit}, 0, 'exit 0') or diag($r->{stderr});
	my $j = json_of(JT::slurp("$dir/r.json") // '');
	my @snaps = @{ $j ? $j->{snapshots} : [] };
	is(scalar(@snaps), 2, 'the JSON file holds both snapshots');
	my ($child, $parent) = @snaps;
	my $text = JT::slurp("$dir/r.txt") // '';
	my $reports = () = $text =~ /^==== jmptrace heap report ====$/mg;
	is($reports, 1, 'r.txt holds one report');
	like($text, qr/^pid:      $parent->{pid}\n(?:.*\n)*?live:     111 bytes in 1 block from 1 stack$/m,
	     "r.txt: the parent's ($parent->{pid}), its 111 bytes in 1 block") if $parent;
	# Before, the child's report was written to r.txt and replaced by its parent's: lost.
	my $ctext = $child ? JT::slurp("$dir/r.$child->{pid}.txt") // '' : '';
	like($ctext, qr/^pid:      $child->{pid}\n(?:.*\n)*?live:     2,220 bytes in 10 blocks from 1 stack$/m,
	     "r.$child->{pid}.txt: the child's report, its 2,220 bytes in 10 blocks") if $child;
	like($ctext, qr/^command:  \S*forker-pie fork$/m, 'the child\'s header names its command');
	like(JT::slurp("$dir/heap.$child->{pid}.folded") // '', qr/;child_leak 2220$/m, "heap.$child->{pid}.folded: the child's stacks")
		if $child;
	unlike(JT::slurp("$dir/heap.folded") // '', qr/child_leak/, 'heap.folded: the parent\'s alone');
	my @extra = grep { !m{/(?:r|heap)\.\Q$child->{pid}\E\.(?:txt|folded)$} } glob("$dir/r.*.txt"), glob("$dir/heap.*.folded");
	is("@extra", '', 'no other numbered file');
};

# With -p and stderr a terminal (script(1) gives it one), the status line spells its figures
# as the report does (128,512, never 128512). heartbeat keeps a 72-byte block every 64 rounds,
# so its live bytes pass 1,000 once it has run a while.
subtest 'the status line spells figures as the report does' => sub {
	my $dir = new_dir();
	my $hb = "$dir/heartbeat";
	my $p = JT::spawn(argv => [prog_path('heartbeat', 'pie'), $hb], dir => $dir, name => 'prog');
	JT::wait_until(sub { JT::heartbeat($hb) > 100 }, 30);
	my $q = sub { my $s = $_[0]; $s =~ s/'/'\\''/g; "'$s'" };
	my $s = JT::spawn(dir => $dir, name => 'script',
			  argv => ['script', '-qfec', join(' ', 'exec', map { $q->($_) } $JT, '--source', JT::source(), '-p', $p->{pid}, '-o', "$dir/r.txt"),
				   '/dev/null']);
	my $num = qr/\d{1,3}(?:,\d{3})*/;
	my $grouped = JT::wait_until(sub { (JT::slurp($s->{out}) // '') =~ /, live \d{1,3},\d{3} bytes/ }, 120);
	ok($grouped, 'a status line with 1,000 live bytes or more');
	my $out = JT::slurp($s->{out}) // '';
	kill 'TERM', $1 if $out =~ /never SIGKILL jmptrace \(pid (\d+)\)/;
	JT::reap($s, 60);
	kill 'TERM', $p->{pid};
	JT::reap($p, 10);
	$out = JT::slurp($s->{out}) // '';
	my @lines = grep { /^jmptrace: pid \d+: .*events/ } map { s/\s+\z//r } split /\r/, $out;
	ok(@lines >= 1, scalar(@lines) . ' status lines');
	# The uprobe source says its lost events too.
	my $lost = JT::source() eq 'uprobe' ? qr/, $num lost/ : qr//;
	my @bad = grep { !/^jmptrace: pid \d+: $num events\/s, live $num bytes in $num blocks?, $num stacks?$lost$/ } @lines;
	ok(!@bad, 'every status line: "N events/s, live N bytes in N blocks, N stacks", each N grouped by 3')
		or diag(join("\n", @bad));
	like(JT::slurp("$dir/r.txt") // '', qr/^  live +$num bytes in $num blocks?$/m, 'the report at the detach spells them alike');
};

done_testing();
