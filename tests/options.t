#!/usr/bin/perl
# options.t - the command line: every bad value refused with one line and exit 2 (and
# --duration without -p), each option accepted and seen to take effect, every option
# documented in --help, the manual page and the README (whose links to doc/ all resolve), a program that cannot be run
# named with the reason, a stack cut at --depth marked in both reports, and the attach
# line and --help warning against SIGKILL.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempdir);
use Test::More;
use JT;
use JTCheck;

my $JT = JT::jmptrace();
-x $JT or plan skip_all => "no jmptrace at $JT";
system('make', '-s', '-C', root() . '/tests/progs') == 0
	or BAIL_OUT('cannot build the test programs (make -C tests/progs)');

my $leak = JT::prog_path('leak', 'pie');

# Runs jmptrace with @args and checks: exit 2, exactly one line on stderr that names
# $name, and the program (leak, which prints a line) not run.
sub refused {
	my ($what, $name, @args) = @_;
	my $r = JT::run_cmd(argv => [$JT, @args], timeout => 20);
	is($r->{exit}, 2, "$what: exit 2") or diag("stderr: $r->{stderr}");
	my @lines = split /\n/, $r->{stderr}, -1;
	ok(@lines == 2 && $lines[1] eq '', "$what: exactly one line on stderr")
		or diag("stderr:\n$r->{stderr}");
	like($lines[0] // '', qr/^jmptrace: .*\Q$name\E/, "$what: the line names $name");
	is($r->{stdout}, '', "$what: the program does not run");
	return $r;
}

subtest 'bad values are refused' => sub {
	for my $v ('0', 'abc', '1x', '9', '100', '99999999999999999999', '-1', '+2', ' 2', '') {
		refused("--tracer-threads '$v'", '--tracer-threads', '--tracer-threads', $v, '--', $leak, 1, 0);
	}
	refused('--tracer-threads=0', '--tracer-threads', '--tracer-threads=0', '--', $leak, 1, 0);
	for my $v ('foo', '', 'DW', 'dw ', 'libunwind2') {
		refused("--unwinder '$v'", '--unwinder', '--unwinder', $v, '--', $leak, 1, 0);
	}
	refused("--depth 0", '--depth', '--depth', '0', '--', $leak, 1, 0);
	refused("--depth 257", '--depth', '--depth', '257', '--', $leak, 1, 0);
	refused("--top 1x", '--top', '--top', '1x', '--', $leak, 1, 0);
	refused("-p abc", '-p', '-p', 'abc');
	for my $o ('--sort', '--folded-cost') {
		for my $v ('', 'LIVE', 'live ', 'leaked', 'byte') {
			refused("$o '$v'", $o, $o, $v, '--', $leak, 1, 0);
		}
	}
	for my $o ('--min-size', '--max-size') {
		for my $v ('', '-1', '1x', '4kk', '1.5', '99999999999999999999', '17179869184G', '17179869184g', '4t', '4KB', ' 4') {
			refused("$o '$v'", $o, $o, $v, '--', $leak, 1, 0);
		}
	}
	refused("--max-size '0'", '--max-size', '--max-size', '0', '--', $leak, 1, 0);
	my $r0 = refused('--min-size above --max-size', '--min-size', '--min-size', '4k', '--max-size', '4095', '--', $leak, 1, 0);
	like($r0->{stderr}, qr/above --max-size 4095/, '--min-size above --max-size: says so');
	for my $v ('0', '0.05', 'inf', 'nan', '', 'abc', '31536001') {
		refused("--interval '$v'", '--interval', '--interval', $v, '--', $leak, 1, 0);
	}
	for my $v ('', 'ALL', 'stdstring,', ',length64', 'stdstring,,newarray', 'multiple', 'all,none', 'length 64') {
		refused("--leak-heuristics '$v'", '--leak-heuristics', '--leak-check', '--leak-heuristics', $v, '--', $leak, 1, 0);
	}
	for my $v ('', 'definitely', 'definite,', 'lost', 'Reachable', 'all,possible') {
		refused("--show-leak-kinds '$v'", '--show-leak-kinds', '--leak-check', '--show-leak-kinds', $v, '--', $leak, 1, 0);
	}
	for my $o ('--sort', '--folded-cost') {
		my $r = refused("$o definitely-lost without --leak-check", '--leak-check', $o, 'definitely-lost', '--', $leak, 1, 0);
		like($r->{stderr}, qr/definitely-lost needs --leak-check/, "$o definitely-lost without --leak-check: says why");
	}
	refused('--leak-check with --tracer-threads 2', '--leak-check', '--leak-check', '--tracer-threads', '2', '--', $leak, 1, 0);
	# Seconds must be finite, at least a millisecond and at most a year: inf, 1e18 and
	# 1e400 were once accepted and detached at once. A jmptrace that accepted one would
	# attach to the -p process, and be killed by run_cmd's timeout: that must be a process
	# of our own that nothing depends on, never this test itself.
	my $dir = tempdir('jt-opts-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my $sleeper = JT::spawn(argv => ['sleep', '600'], dir => $dir, name => 'sleep');
	for my $v ('inf', 'infinity', '1e18', '1e400', 'nan', '-1', '0', '0.0', '0.0001', '1e-400',
		   '31536001', '0x10', ' 5', '5s', 'abc', '') {
		refused("--duration '$v'", '--duration', '--duration', $v, '-p', $sleeper->{pid});
	}
	kill 'KILL', $sleeper->{pid};
	JT::reap($sleeper, 10);
	my $r = refused('--duration without -p', '--duration', '--duration', '2', '--', $leak, 1, 0);
	like($r->{stderr}, qr/needs -p/, '--duration without -p: says it needs -p');
};

# An unknown option or a missing argument: what is wrong in one line and where to read
# more in a second, as getopt-based tools (strace, coreutils) say it, and exit 2 as the
# manual page says; not the whole --help starting with the binary's full path.
subtest 'an unknown option or a missing argument: two lines, exit 2' => sub {
	my $try = "Try 'jmptrace --help' for more information.";
	my $dtry = "Try 'jmptrace diff --help' for more information.";
	for my $c (['--foo', ['--foo', '--', $leak, 1, 0], "jmptrace: unrecognized option '--foo'", $try],
		   ['--foo=1', ['--foo=1', '--', $leak, 1, 0], "jmptrace: unrecognized option '--foo=1'", $try],
		   ['-x', ['-x', '--', $leak, 1, 0], "jmptrace: invalid option -- 'x'", $try],
		   ['--pin=1', ['--pin=1', '--', $leak, 1, 0], "jmptrace: option '--pin' doesn't allow an argument", $try],
		   ['--json at the end', ['--json'], "jmptrace: option '--json' requires an argument", $try],
		   ['-p at the end', ['-p'], "jmptrace: option requires an argument -- 'p'", $try],
		   ['no program', [], 'jmptrace: no program to run and no -p PID given', $try],
		   ['-- and no program', ['--'], 'jmptrace: no program to run and no -p PID given', $try],
		   ['diff --foo', ['diff', '--foo', 'a.json', 'b.json'], "jmptrace: diff: unrecognized option '--foo'", $dtry],
		   ['diff --json at the end', ['diff', 'a.json', 'b.json', '--json'], "jmptrace: diff: option '--json' requires an argument", $dtry],
		   ['diff with one snapshot', ['diff', 'a.json'], 'jmptrace: diff: give two snapshots, OLD.json[:N] NEW.json[:N]', $dtry]) {
		my ($what, $args, $line, $more) = @$c;
		my $r = JT::run_cmd(argv => [$JT, @$args], timeout => 20);
		is($r->{exit}, 2, "$what: exit 2");
		is($r->{stderr}, "$line\n$more\n", "$what: says what is wrong, and where to read more");
		is($r->{stdout}, '', "$what: nothing on stdout, the program not run");
	}
	like(JT::slurp(root() . '/doc/jmptrace.1') // '', qr/^2 for a usage error or a bad option value\.$/m,
	     'the manual page says exit 2 for a usage error');
};

# Starts heartbeat (9 threads that allocate all the time) in a scratch directory and waits
# until it runs. Returns ($p, $dir, $beats: a sub that reads its count), or () after it
# failed to run.
sub heartbeat_start {
	my $dir = tempdir('jt-opts-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my $hb = "$dir/hb";
	my $p = JT::spawn(argv => [JT::prog_path('heartbeat', 'pie'), $hb], dir => $dir, name => 'prog');
	my $beats = sub { my $v = JT::slurp($hb) // ''; $v =~ /^(\d+)/ ? $1 : -1 };
	return ($p, $dir, $beats) if ok(JT::wait_until(sub { $beats->() > 100 }, 30), 'the program runs');
	JT::reap($p, 1);
	return ();
}

# Ends heartbeat with SIGTERM, and checks that it never saw a stray signal.
sub heartbeat_stop {
	my ($p) = @_;
	kill 'TERM', $p->{pid};
	ok(defined JT::reap($p, 10), 'the program ends on SIGTERM');
	unlike(JT::slurp($p->{out}) // '', qr/BROKEN/, 'the program never saw a stray signal');
}

subtest '--duration with -p detaches after that time' => sub {
	my ($p, $dir, $beats) = heartbeat_start() or return;
	for my $d ('0.5', '1e0') {
		my $r = JT::run_cmd(argv => [$JT, '--duration', $d, '--json', "$dir/r.json", '-o', "$dir/r.txt", '-p', $p->{pid}]);
		is($r->{exit}, 0, "--duration $d: exit 0");
		my $cmd = JT::prog_path('heartbeat', 'pie') . " $dir/hb";	# its command line, as ps shows it
		like($r->{stderr}, qr/^jmptrace: attached to process $p->{pid} \(\Q$cmd\E\), 9 threads; Ctrl-C, SIGTERM or SIGHUP detaches; never SIGKILL jmptrace \(pid \d+\): that would kill process $p->{pid}\n\z/,
		     "--duration $d: one line on stderr says it attached, and warns against SIGKILL");
		my $json = JT::read_json("$dir/r.json");
		my $snap = $json && $json->{snapshots}[-1];
		is($snap && $snap->{reason}, 'duration', "--duration $d: the snapshot is taken for the duration");
		ok($snap && is_false($snap->{exited}), "--duration $d: the process still runs");
		ok($snap && $snap->{totals}{alloc_calls} > 0, "--duration $d: its allocations were seen");
	}
	my $before = $beats->();
	ok(JT::wait_until(sub { $beats->() > $before + 50 }, 60), 'the program runs on after the detaches');
	heartbeat_stop($p);
};

# When the trace of a --interval 0.2 --duration 1.1 run began, in time_ms (after the
# attach), from its first snapshot: due 200 ms after it, or 1,100 for the duration's (when
# every interval snapshot was skipped, so late was the first).
sub due_start {
	my ($snaps) = @_;
	my $s = $snaps->[0] // {};
	return ($s->{due_ms} // 0) - (($s->{reason} // '') eq 'duration' ? 1100 : 200);
}

# The snapshots of one --interval 0.2 --duration 1.1 run ($r, its JSON's @$snaps): each
# due 200 ms after the one before (the first 200 ms after the trace began, the duration's
# 1,100), skipping only due times that passed while the one before was taken late; each
# taken within 20 ms of its due time, or late with a reason in its JSON and under -v.
sub check_due_times {
	my ($r, $snaps, $try) = @_;
	my @snaps = @$snaps;
	my $t0 = due_start(\@snaps);
	ok($t0 >= 0 && $t0 <= $snaps[0]{time_ms}, "run $try: the trace began at $t0 ms of time_ms, after the attach");
	my ($next, $before) = ($t0 + 200, undef);
	for my $i (0 .. $#snaps) {
		my $s = $snaps[$i];
		my $n = $i + 1;
		my $due = $s->{due_ms} // -1;
		my $what = "run $try, snapshot $n ($s->{reason}, due at $due, taken at $s->{time_ms} ms)";
		$next = $t0 + 1100 if $s->{reason} eq 'duration';
		# Due times that passed while the snapshot before was taken late are skipped; and
		# after a snapshot that took longer than the interval to write, those until the
		# program ran as long again (due.c), which stderr says with the longest time.
		my ($took) = ($r->{stderr} // '') =~ /^jmptrace: \d+ --interval snapshots? passed over in all: writing one took up to ([\d,]+) ms$/m;
		$took =~ s/,//g if defined $took;
		for (my $d = $next; $d < $due && $d <= $t0 + 1000; $d += 200) {
			my $spaced = defined $took && $before && $d <= $before->{time_ms} + 2 * $took + 8;
			ok($before && (($before->{late_why} && $before->{time_ms} + 4 >= $d) || $spaced),
			   "$what: due time $d skipped, as snapshot " . ($n - 1) . ' was taken late, after it, or took '
			   . ($took // '?') . ' ms, longer than the interval');
			$next = $d + 200;
		}
		is($due, $next, "$what: due at $next ms");
		$next = $due + 200;
		my $late = $s->{time_ms} - $due;
		# late_ms is the snapshot's own time_ms - due_ms (0 when the coarse clock of time_ms
		# reads a little before the due time). Measured when the due time was seen, it read up
		# to 20 ms less where jmptrace then waited for a CPU, and such a snapshot went late
		# without a reason.
		is($s->{late_ms} // -1000, $late > 0 ? $late : 0, "$what: late_ms is time_ms - due_ms");
		ok(!$s->{late_why} || $late > 10, "$what: a reason only when more than 10 ms late");
		if (abs($late) <= 20) {
			pass("$what: within 10% of the interval");
		} else {
			ok($late > 0 && $s->{late_why}, "$what: $late ms late, and it says why: " . ($s->{late_why} // 'NOTHING'));
			like($r->{stderr}, qr/^jmptrace: snapshot $n \($s->{reason}\) is $s->{late_ms} ms late, due at $due ms: \Q$s->{late_why}\E$/m,
			     "$what: -v says it is late, and why");
		}
		$before = $s;
	}
}

# --interval 0.2 --duration 1.1 on heartbeat (9 threads that allocate all the time): the
# snapshots fall due at 200, 400, 600, 800 and 1,000 ms and the duration's at 1,100 ms after
# the trace began (in time_ms, which counts from before the attach), not from the last
# snapshot (which once gave 312, 720 and 1,012 ms for 0.3 s). Each is taken within 10% of the interval of its due time,
# or says in its JSON (late_ms, late_why) and under -v that it is late and why: a busy host
# may delay one, but never silently. A due time passed while a late snapshot was being
# taken is skipped, not made up with a burst.
subtest '--interval 0.2 --duration 1.1: snapshots at their due times, or late with a reason' => sub {
	my ($p, $dir) = heartbeat_start() or return;
	for my $try (1 .. 3) {
		my $r = JT::run_cmd(argv => [$JT, '-v', '--interval', '0.2', '--duration', '1.1',
					     '--json', "$dir/r.json", '-o', "$dir/r.txt", '-p', $p->{pid}]);
		is($r->{exit}, 0, "run $try: exit 0");
		my $json = JT::read_json("$dir/r.json");
		my @snaps = @{ ($json // {})->{snapshots} // [] };
		is(($snaps[-1] // {})->{reason}, 'duration', "run $try: the last snapshot is the duration's");
		check_due_times($r, \@snaps, $try);
		my $t0 = due_start(\@snaps);
		ok(!(grep { $_->{reason} eq 'interval' && ($_->{due_ms} // 0) > $t0 + 1000 } @snaps),
		   "run $try: no interval snapshot due after 1,000 ms");
	}
	heartbeat_stop($p);
};

subtest 'a program that cannot be run: one line that says why' => sub {
	my $dir = tempdir('jt-opts-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	mkdir "$dir/true" or die "$dir/true: $!\n";
	for my $c (['an empty program name', '', qr/: empty program name$/],
		   ['a directory', $dir, qr/: Is a directory$/],
		   ['a directory with a slash', "$dir/", qr/: Is a directory$/],
		   ['a device', '/dev/null', qr/: not a regular file$/],
		   ['a name not in $PATH', 'jt-no-such-program', qr/: no such program in \$PATH$/]) {
		my ($what, $prog, $want) = @$c;
		my $r = JT::run_cmd(argv => [$JT, '--', $prog], timeout => 60);
		is($r->{exit}, 1, "$what: exit 1");
		my @lines = split /\n/, $r->{stderr}, -1;
		ok(@lines == 2 && $lines[1] eq '', "$what: one line on stderr") or diag("stderr:\n$r->{stderr}");
		like($lines[0] // '', qr/^jmptrace: cannot run '\Q$prog\E'/, "$what: names the program");
		like($lines[0] // '', $want, "$what: says why");
	}
	# A directory in $PATH is passed over, as execvp does: the program further on runs.
	local $ENV{PATH} = "$dir:$ENV{PATH}";
	my $r = JT::run_cmd(argv => [$JT, '-o', '/dev/null', '--', 'true'], timeout => 60);
	is($r->{exit}, 0, 'a directory "true" first in $PATH: /usr/bin/true runs');
	is($r->{stderr}, '', 'and nothing is said');
};

# The options of --help, as the list of long names and short letters it shows.
my $help = JT::run_cmd(argv => [$JT, '--help'], timeout => 60);
my @opts = $help->{stdout} =~ /^\s+((?:-\w, )?--?[\w-]+)/mg;

subtest '--help, the manual page and the README list every option' => sub {
	is($help->{exit}, 0, '--help exits 0');
	# An option glued to the end of the line before it is missing from @opts, so from the
	# checks below (--sort was, after --show-runtime's text).
	my @glued_opts = $help->{stdout} =~ /^([^\n]*\S {2,}--?[a-zA-Z][^\n]*)$/mg;
	is(join(' / ', @glued_opts), '', '--help: every option starts a line of its own');
	like($help->{stdout}, qr/^Never stop jmptrace with SIGKILL \(kill -9\): a launched program dies with it,\nand an attached process is left with breakpoints in its code and is killed\nby SIGTRAP at the next one \(not with --source uprobe, unless --leak-check\)\.\n\z/m,
	     '--help warns against SIGKILL');
	my @names = map { my @n = split /, /; @n } @opts;
	for my $want (qw(--tracer-threads --unwinder --no-cpu-follow --no-emulate -v --verbose)) {
		ok((grep { $_ eq $want } @names), "--help shows $want");
	}
	# --sections: the names --help lists are the ones the parser takes (it names them when refused).
	my ($listed) = $help->{stdout} =~ /--sections LIST\n\s+the text report's sections, a comma list of ([^(]*?)\s*\(default/;
	my $bad = JT::run_cmd(argv => [$JT, '--sections', 'nosuch', '--', '/bin/true'], timeout => 60);
	my ($taken) = $bad->{stderr} =~ /give a comma list of ([^\n]*)$/m;
	s/\s+/ /g for grep { defined } $listed, $taken;
	is($listed, $taken, '--help lists every section name --sections takes');
	my $man = JT::slurp(root() . '/doc/jmptrace.1') // '';
	my $readme = JT::slurp(root() . '/README.md') // '';
	for my $n (@names) {
		(my $troff = $n) =~ s/-/\\-/g;
		ok(index($man, $troff) >= 0, "doc/jmptrace.1 documents $n");
		ok($readme =~ /(?<![\w-])\Q$n\E(?![\w-])/, "README documents $n");
	}
	unlike($readme, qr/JMPTRACE_(?:THREADS|UNWIND|NO_CPU_FOLLOW|NO_EMULATE|DEBUG)/,
	       'the README names none of the removed environment variables');
	# An example ends (.RE) before a paragraph break: text right after it ran into the example.
	my @glued = $man =~ /^\.RE\n([^.\n][^\n]*)/mg;
	is(join(' / ', @glued), '', 'doc/jmptrace.1: a paragraph break after every example');
	# `make ... && prog &` puts the whole list in a background subshell: $! is the subshell,
	# and `jmptrace -p $!` would trace the shell, not the program.
	my @sub = $readme =~ /^([^\n]*&&[^\n]*&[ \t]*(?:#[^\n]*)?\n(?=[^\n]*\$!))/mg;
	is(join(' / ', @sub), '', 'README: no `-p $!` after a background list (its $! is a subshell)');
	SKIP: {
		skip 'no man or groff', 2
			unless system('sh', '-c', 'command -v man >/dev/null && command -v groff >/dev/null') == 0;
		my $r = JT::run_cmd(argv => ['sh', '-c', 'man -l "$1" | cat', 'sh', root() . '/doc/jmptrace.1'], timeout => 60);
		like($r->{stdout}, qr/--tracer-threads/, 'man -l renders the page');
		$r = JT::run_cmd(argv => ['groff', '-man', '-Tutf8', '-ww', root() . '/doc/jmptrace.1'], timeout => 60);
		is($r->{stderr}, '', 'groff -ww gives no warning');
	}
};

# GitHub's anchor of a heading: lower case, punctuation but - and _ dropped, spaces to -.
sub anchor_of {
	my ($h) = @_;
	$h = lc $h;
	$h =~ s/[^\w\- ]//g;
	$h =~ s/ /-/g;
	return $h;
}

# README.md is the short one a newcomer reads; the rest is in doc/*.md, each linked from
# it, and every relative link of those files (with its #anchor) leads somewhere.
subtest 'README: short, and every doc/ file and link reachable' => sub {
	my $readme = JT::slurp(root() . '/README.md') // '';
	my $lines = () = $readme =~ /\n/g;
	cmp_ok($lines, '<=', 250, 'README.md is at most 250 lines (the rest goes to doc/)');
	my @docs = map { s{^\Q${\root()}\E/}{}r } glob(root() . '/doc/*.md');
	ok(@docs >= 5, 'doc/ has the moved sections') or diag("doc: @docs");
	for my $d (@docs) {
		ok($readme =~ /\]\(\Q$d\E[)#]/, "README links $d");
	}
	my @bad;
	for my $f ('README.md', @docs) {
		my $text = JT::slurp(root() . "/$f") // '';
		(my $dir = $f) =~ s{[^/]*$}{};
		$text =~ s/^```.*?^```//msg;    # code: `operator new[](nothrow)` is no link
		$text =~ s/`[^`\n]*`//g;
		while ($text =~ /\]\(([^)\s]+)\)/g) {
			my $link = $1;
			my ($target, $frag) = split /#/, $link, 2;
			next if $target =~ m{^[a-z]+:};
			my $path = $target eq '' ? $f : $dir . $target;
			1 while $path =~ s{[^/]+/\.\./}{};
			my $dest = JT::slurp(root() . "/$path");
			if (!defined $dest) { push @bad, "$f: $link (no such file)"; next }
			next unless defined $frag;
			my %anchors = map { anchor_of($_) => 1 } $dest =~ /^#+ +(.*?)\s*$/mg;
			push @bad, "$f: $link (no such heading)" unless $anchors{$frag};
		}
	}
	is(join("\n", @bad), '', 'every relative link resolves, anchors included');
};

# The leak program's one big leak, checked exactly (as integration.t does).
sub leak_checked {
	my ($r, $name) = @_;
	is($r->{exit}, 0, "$name: the program's exit status");
	is($r->{stdout}, "leak: leaked 10 blocks\n", "$name: the program's stdout");
	my $s = snapshot_of($r, $name) or return;
	my $bytes = 0;
	$bytes += 1024 + 16 * $_ for 0 .. 9;
	check_site($s, $name, func => 'leak_here', file => 'leak/leak_here.c', marker => 'LEAK-SITE',
		   live_bytes => $bytes, live_blocks => 10, alloc_calls => 10, nstacks => 1,
		   caller => ['main', 'leak/main.c', 'CALL-LEAK']);
	return $s;
}

# The leak_here stack of a leak run, and the text report's block for it.
sub leak_stack {
	my ($r) = @_;
	my $s = last_snapshot($r) or return;
	my ($st) = stacks_with_frame0($s, 'leak_here');
	my ($block) = ($r->{report} // '') =~ /^(#\d+: [^\n]*\n    at 0x[0-9a-f]+: leak_here .*?\n)\n/ms;
	# Addresses differ from run to run (ASLR), and so do block ages: compare the rest.
	$block =~ s/0x[0-9a-f]+/0x?/g if defined $block;
	$block =~ s/; oldest block [\d,]+ ms old, newest [\d,]+ ms$/; oldest block ? ms old, newest ? ms/m if defined $block;
	return ($st, $block, $s);
}

# Every stack has no "truncated" key, or the value true; returns how many have it.
sub cut_stacks {
	my ($s, $name) = @_;
	my @bad = grep { exists $_->{truncated} && !is_true($_->{truncated}) } @{ $s->{stacks} };
	ok(!@bad, "$name: \"truncated\" is only ever true");
	return scalar grep { exists $_->{truncated} } @{ $s->{stacks} };
}

subtest 'a stack cut at --depth is marked' => sub {
	for my $mode (qw(pie static)) {
		my $full = run_jt('leak', $mode, args => [10, 0]);
		my ($st, $block, $s) = leak_stack($full);
		ok($st && $block, "$mode: the leak_here stack, and its block in the text report") or next;
		# leak_here, main, __libc_start_call_main, __libc_start_main_impl, _start.
		my @pcs = grep { !$_->{inlined} } @{ $st->{frames} };
		cmp_ok(scalar(@pcs), '>=', 3, "$mode: leak_here's stack has " . scalar(@pcs) . ' frames');
		is(cut_stacks($s, "$mode, default depth"), 0, "$mode, default depth: no stack is cut");
		unlike($full->{report}, qr/stack cut/, "$mode, default depth: no stack is marked cut");

		# Exactly as deep as the stack: whole, and no mark.
		my $n = @pcs;
		my $exact = run_jt('leak', $mode, args => [10, 0], jt_args => ['--depth', $n]);
		my ($st2, $block2) = leak_stack($exact);
		ok($st2 && !exists $st2->{truncated}, "$mode, --depth $n: leak_here's stack is whole");
		is($block2, $block, "$mode, --depth $n: its text is as without --depth");

		# One frame less: cut, and marked in both reports.
		my $m = $n - 1;
		my $cut = run_jt('leak', $mode, args => [10, 0], jt_args => ['--depth', $m]);
		my ($st3, $block3, $s3) = leak_stack($cut);
		ok($st3 && is_true($st3->{truncated}), "$mode, --depth $m: leak_here's stack is \"truncated\": true");
		is_deeply([map { $_->{function} } grep { !$_->{inlined} } @{ $st3->{frames} // [] }],
			  [map { $_->{function} } @pcs[0 .. $m - 1]], "$mode, --depth $m: its first $m frames are kept");
		(my $want = $block) =~ s/^    by [^\n]*\n\z//m;
		is($block3, "$want    ... (stack cut at --depth $m)\n",
		   "$mode, --depth $m: the text report ends the stack with a line saying so");
		my $ncut = cut_stacks($s3, "$mode, --depth $m");
		# The main list (up to the first section) shows the live stacks no suppression matches.
		my ($main) = $cut->{report} =~ /^(top \d+ of .*?)^[A-Z]/ms;
		my $lines = () = ($main // '') =~ /^    \.\.\. \(stack cut at --depth $m\)\n\n/mg;
		my $listed = grep { $_->{truncated} && $_->{live_blocks} && !exists $_->{suppressed} } @{ $s3->{stacks} };
		is($lines, $listed, "$mode, --depth $m: one line per cut stack of the live list ($listed) in the text report");
		# The JSON text differs from a whole stack's only by the key, after the frames.
		my $json = JT::slurp("$cut->{dir}/report.json");
		# (format 2: a stack's frames are numbers in the file's frame table)
		my $keys = () = $json =~ /[\}\d]\], "truncated": true\}/g;
		is($keys, $ncut, "$mode, --depth $m: the key follows the frames of each cut stack");
	}
};

subtest '-v and --verbose print debug lines; without them stderr is empty' => sub {
	my $quiet = run_jt('leak', 'pie', args => [10, 0]);
	leak_checked($quiet, 'no -v');
	is($quiet->{stderr}, '', 'no -v: nothing on stderr');
	for my $v ('-v', '--verbose') {
		my $r = run_jt('leak', 'pie', args => [10, 0], jt_args => [$v]);
		leak_checked($r, $v);
		like($r->{stderr}, qr/^jmptrace: breakpoint on malloc at 0x[0-9a-f]+ in /m, "$v: a line per breakpoint");
		like($r->{stderr}, qr/^jmptrace: \d+ tracer threads?, CPU placement on, breakpoints emulated$/m,
		     "$v: the settings line");
	}
	# The environment variable that used to do this is gone.
	local $ENV{JMPTRACE_DEBUG} = 1;
	my $r = run_jt('leak', 'pie', args => [10, 0]);
	is($r->{stderr}, '', 'JMPTRACE_DEBUG=1 no longer prints anything');
};

sub handovers { my $n = () = ($_[0] // '') =~ /handed from tracer thread/g; $n }

subtest '--tracer-threads' => sub {
	for my $mode (qw(pie static)) {
		my $one = run_jt('threads', $mode, args => [300, 5, 40], jt_args => ['--verbose', '--tracer-threads', 1]);
		is($one->{exit}, 0, "$mode, 1: exit 0");
		like($one->{stderr}, qr/^jmptrace: 1 tracer thread, /m, "$mode, 1: one tracer thread runs");
		is(handovers($one->{stderr}), 0, "$mode, 1: no hand-over line");
		unlike($one->{stderr}, qr/tracer thread 1:/, "$mode, 1: no tracer thread 1");
		my $s1 = snapshot_of($one, "$mode, 1");
		my $three = run_jt('threads', $mode, args => [300, 5, 40], jt_args => ['--verbose', '--tracer-threads=3']);
		is($three->{exit}, 0, "$mode, 3: exit 0");
		like($three->{stderr}, qr/^jmptrace: 3 tracer threads, /m, "$mode, 3: three tracer threads run");
		like($three->{stderr}, qr/^jmptrace: tracer thread 2: \d+ breakpoint hits\b/m, "$mode, 3: tracer thread 2 ran");
		my $s3 = snapshot_of($three, "$mode, 3");
		is($s3->{totals}{live_blocks}, $s1->{totals}{live_blocks}, "$mode: 3 tracer threads, the same live blocks")
			if $s1 && $s3;
	}
};

subtest '--unwinder' => sub {
	for my $mode (qw(pie static)) {
		for my $u (qw(dw libunwind)) {
			my $r = run_jt('leak', $mode, args => [10, 0], jt_args => ['--verbose', '--unwinder', $u]);
			leak_checked($r, "$mode, --unwinder $u");
			like($r->{stderr}, qr/^jmptrace: unwind: \Q$u\E backend$/m, "$mode: the $u backend is used");
			my @other = $r->{stderr} =~ /^jmptrace: unwind: (\w+) backend$/mg;
			is_deeply([grep { $_ ne $u } @other], [], "$mode: no other backend");
		}
	}
	local $ENV{JMPTRACE_UNWIND} = 'libunwind';
	my $r = run_jt('leak', 'pie', args => [10, 0], jt_args => ['--verbose']);
	like($r->{stderr}, qr/^jmptrace: unwind: dw backend$/m, 'JMPTRACE_UNWIND no longer chooses');
};

subtest '--no-emulate' => sub {
	my $r = run_jt('leak', 'pie', args => [10, 0], jt_args => ['--verbose', '--no-emulate']);
	leak_checked($r, '--no-emulate');
	like($r->{stderr}, qr/breakpoints stepped over$/m, 'the settings line says so');
	like($r->{stderr}, qr/stepping thread/, 'breakpoints are stepped over');
	my $e = run_jt('leak', 'pie', args => [10, 0], jt_args => ['--verbose']);
	unlike($e->{stderr}, qr/stepping thread/, 'without it, no breakpoint is stepped over');
	my ($a, $b) = (last_snapshot($r), last_snapshot($e));
	is_deeply($a->{totals}, $b->{totals}, 'the same totals either way') if $a && $b;
};

# CPUs each thread of $pid may run on, from Cpus_allowed_list, and its scheduling policy.
sub thread_placement {
	my ($pid) = @_;
	my @t;
	opendir(my $d, "/proc/$pid/task") or return ();
	for my $tid (grep { /^\d+$/ } readdir $d) {
		my $st = JT::slurp("/proc/$pid/task/$tid/status") // '';
		my $stat = JT::slurp("/proc/$pid/task/$tid/stat") // '';
		my ($cpus) = $st =~ /^Cpus_allowed_list:\s*(\S+)/m;
		$stat =~ s/^.*\) //s;
		my $policy = (split / /, $stat)[38];	# field 41 of stat, the third after "comm)"
		push @t, { tid => $tid, cpus => $cpus // '?', policy => $policy // -1 };
	}
	return @t;
}

# A placement change is a tracer thread bound to fewer CPUs than jmptrace started with, or
# in SCHED_IDLE (policy 5).
sub placement_changed {
	my ($pid, $start) = @_;
	return grep { $_->{cpus} ne $start || $_->{policy} == 5 } thread_placement($pid);
}

subtest '--no-cpu-follow' => sub {
	my @cpus = thread_placement($$);
	plan skip_all => 'one CPU: nothing to follow' if JT::allowed_cpus() <= 1;
	my $dir = tempdir('jt-opts-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	for my $follow (1, 0) {
		my $hb = "$dir/hb$follow";
		my @flag = $follow ? () : ('--no-cpu-follow');
		my $j = JT::spawn(argv => [$JT, @flag, '-o', '/dev/null', '--', JT::prog_path('heartbeat', 'pie'), $hb],
				  dir => $dir, name => "jt$follow");
		my $beats = sub { my $v = JT::slurp($hb) // ''; $v =~ /^(\d+)/ ? $1 : -1 };
		ok(JT::wait_until(sub { $beats->() > 500 }, 60), "follow=$follow: the program runs");
		my @changed;
		# Placement is looked at a few times a second; watch for a second and a half.
		JT::wait_until(sub { push @changed, placement_changed($j->{pid}, $cpus[0]{cpus}); @changed && $follow }, 1.5);
		if ($follow) {
			ok(@changed > 0, 'by default a tracer thread is bound to a CPU or made SCHED_IDLE');
		} else {
			is(scalar(@changed), 0, '--no-cpu-follow: no tracer thread changed CPUs or policy')
				or diag(join("\n", map { "$_->{tid}: cpus $_->{cpus} policy $_->{policy}" } @changed));
		}
		kill 'TERM', $j->{pid};
		ok(defined JT::reap($j, 30), "follow=$follow: jmptrace ends with the program on SIGTERM");
	}
};

done_testing();
