#!/usr/bin/perl
# target.t - the target comes first: runs tests/progs under jmptrace in all four link modes
# and checks that the program meets what it would untraced, with exact figures still: an
# exit(0) while threads allocate, death by each signal (jmptrace's exit 128+N), its own
# SIGUSR1, SIGTRAP, int3 and SIGSEGV, stdin and stdout byte for byte, fork and exec with
# and without -f, attaching with -p and detaching, its signal dispositions and environment;
# and bad input: one line on stderr and a non-zero exit. integration.t has the figures of
# the allocations themselves.
#
# Environment: JMPTRACE (the binary under test, default ./jmptrace), JT_TIMEOUT (seconds
# per run, default 120), JT_MODES (e.g. "pie static" to run fewer link modes).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Basename qw(basename);
use File::Temp qw(tempdir);
use POSIX qw(WIFEXITED WEXITSTATUS);
use Test::More;
use JT;
use JTCheck;

my $JT = JT::jmptrace();
BAIL_OUT("no executable jmptrace at $JT (make jmptrace, or set JMPTRACE)") unless -x $JT;
system('make', '-s', '-C', root() . '/tests/progs') == 0
	or BAIL_OUT('cannot build the test programs (make -C tests/progs)');

my @modes = $ENV{JT_MODES} ? split(/[\s,]+/, $ENV{JT_MODES}) : @MODES;

# racer: main calls exit(0) while 4 threads are in the middle of malloc/free loops.
for my $mode (@modes) {
	subtest "racer-$mode" => sub {
		my $prog = "racer-$mode";
		for my $try (1 .. 3) {
			my $r = run_jt('racer', $mode);
			is($r->{exit}, 0, "run $try: exit 0");
			is($r->{stdout}, "racer: done\n", "run $try: stdout");
			my $s = snapshot_of($r, "racer run $try") or next;
			check_shape($s, "racer run $try", reason => 'exit', exit_status => 0, killed_by => undef,
				    prog => $prog);
			check_site($s, "racer run $try", func => 'racer_leak', file => 'racer/racer.c',
				   marker => 'SITE:racer_leak', live_bytes => 77, live_blocks => 1, alloc_calls => 1);
			my @c = stacks_with_frame0($s, 'racer_churn');
			cmp_ok(sum_field('live_blocks', @c), '<=', 4,
			       "run $try: at most one block per thread live in racer_churn");
			if (($s->{totals}{lost_events} // 0) > 0) {
				# --source uprobe: four threads that do nothing but malloc and free outrun
				# the reader on a small host; what the kernel dropped is counted, and a
				# free of a block whose malloc was dropped is an unknown free, no more.
				cmp_ok($s->{totals}{unknown_frees}, '<=', $s->{totals}{lost_events},
				       "run $try: unknown frees only where events were lost");
			} else {
				is($s->{totals}{unknown_frees}, 0, "run $try: no unknown frees");
			}
			cmp_ok(calls_of($s, 'malloc'), '>=', 800, "run $try: at least 4 x 200 mallocs counted");
		}
	};
}

# ---------------------------------------------------------------------------------------
# killsig: killed by a signal -> jmptrace exits 128+sig; exit(42) -> 42.

my %SIGS = (term => ['SIGTERM', 15], abort => ['SIGABRT', 6], segv => ['SIGSEGV', 11], kill => ['SIGKILL', 9]);

for my $mode (@modes) {
	subtest "killsig-$mode" => sub {
		my $prog = "killsig-$mode";
		for my $how (qw(term abort segv kill exit)) {
			my $n = run_native('killsig', $mode, [$how]);
			my $r = run_jt('killsig', $mode, args => [$how]);
			is($r->{stdout}, "killsig: $how\n", "$how: stdout");
			same_as_native($r, $n, "killsig $how");
			my $s = snapshot_of($r, "killsig $how") or next;
			if ($how eq 'exit') {
				is($n->{exit}, 42, 'native exit: 42');
				check_shape($s, 'killsig exit', reason => 'exit', exit_status => 42, killed_by => undef,
					    prog => $prog);
			} else {
				my ($name, $num) = @{ $SIGS{$how} };
				is($n->{signal}, $num, "native $how: killed by $name");
				is($r->{exit}, 128 + $num, "killsig $how: jmptrace exits " . (128 + $num));
				check_shape($s, "killsig $how", exit_status => undef, killed_by => $name, prog => $prog);
			}
			# SIGKILL gives the tracer no chance to look at the dying process: only its
			# exit status and killed_by are required there.
			next if $how eq 'kill';
			check_site($s, "killsig $how", func => 'leak_before_death', file => 'killsig/leak_before_death.c',
				   marker => 'SITE:leak_before_death', live_bytes => 123, live_blocks => 1, alloc_calls => 1,
				   module => $prog, caller => ['main', 'killsig/main.c', 'leak_before_death();']);
		}
	};
}

# ---------------------------------------------------------------------------------------
# sigs: the program's own SIGUSR1, SIGTRAP, int3 and SIGSEGV reach its handlers.

for my $mode (@modes) {
	subtest "sigs-$mode" => sub {
		my $prog = "sigs-$mode";
		my %s;
		for my $n (100, 300) {
			my $nat = run_native('sigs', $mode, [$n]);
			is($nat->{stdout}, "sigs: usr1 $n trap 5 segv 2\n", "native $n: stdout");
			my $r = run_jt('sigs', $mode, args => [$n]);
			same_as_native($r, $nat, "sigs $n");
			$s{$n} = snapshot_of($r, "sigs $n");
		}
		my $s = $s{300} or return;
		check_shape($s, 'sigs 300', reason => 'exit', exit_status => 0, killed_by => undef, prog => $prog);
		check_site($s, 'sigs 300', func => 'sig_leak', file => 'sigs/sig_leak.c', marker => 'SITE:sig_leak',
			   live_bytes => 99, live_blocks => 1, alloc_calls => 1, module => $prog);
		check_gone($s, 'sigs 300', 'sig_churn');
		return unless both($s{100}, $s);
		check_call_deltas($s{100}, $s, 'sigs 100 -> 300', is_static($mode), malloc => 200, free => 200);
		check_total_deltas($s{100}, $s, 'sigs 100 -> 300', live_blocks => 0, unknown_frees => 0);
	};
}

# ---------------------------------------------------------------------------------------
# echo: stdin and stdout pass through untouched; the program's stderr is its own.

# 100000 bytes of every byte value, newlines and NULs included, the same every time.
sub echo_input {
	my $x = 12345;
	my $s = '';
	for (1 .. 100000) {
		$x = ($x * 1103515245 + 12345) % 2147483648;
		$s .= chr(($x >> 16) & 255);
	}
	return $s;
}

my $ECHO_IN = echo_input();
for my $mode (@modes) {
	subtest "echo-$mode" => sub {
		my $prog = "echo-$mode";
		my $r = run_jt('echo', $mode, stdin => $ECHO_IN);
		is($r->{exit}, 0, 'exit status 0');
		ok($r->{stdout} eq $ECHO_IN, 'stdout is the 100000 bytes of stdin, byte for byte')
			or diag('stdout has ' . length($r->{stdout}) . ' bytes');
		is($r->{stderr}, "echo: 100000 bytes\n", "stderr is only the program's own");
		my $s = snapshot_of($r, 'echo') or return;
		check_shape($s, 'echo', reason => 'exit', exit_status => 0, killed_by => undef, prog => $prog);
		# realloc to 4096, 8192, ..., 131072: six calls, the block ends at 131072 bytes.
		check_site($s, 'echo', func => 'echo_grow', file => 'echo/echo_grow.c', marker => 'SITE:echo_grow',
			   live_bytes => 131072, live_blocks => 1, alloc_calls => 6, module => $prog);

		$r = run_jt('echo', $mode, stdin => '');
		is($r->{stdout}, '', 'empty stdin: empty stdout');
		is($r->{stderr}, "echo: 0 bytes\n", 'empty stdin: stderr');
		$s = snapshot_of($r, 'echo empty') or return;
		check_site($s, 'echo empty', func => 'echo_grow', file => 'echo/echo_grow.c', marker => 'SITE:echo_grow',
			   live_bytes => 4096, live_blocks => 1, alloc_calls => 1);
	};
}

# ---------------------------------------------------------------------------------------
# forker: a fork (the child inherits the breakpoints), -f (from jmptrace --help), and an
# exec into another program, of another link mode, that must still be traced.

my %EXEC_TARGET = (pie => 'static', nopie => 'static-pie', static => 'pie', 'static-pie' => 'nopie');

for my $mode (@modes) {
	subtest "forker-$mode" => sub {
		my $prog = "forker-$mode";
		my $n = run_native('forker', $mode, ['fork']);
		is($n->{stdout}, "forker: child done\nforker: child exit 7\n", 'native: stdout');
		my $r = run_jt('forker', $mode, args => ['fork']);
		same_as_native($r, $n, 'fork');
		my $s = snapshot_of($r, 'fork') or return;
		is(scalar(@{ $r->{json}{snapshots} }), 1, 'fork without -f: one snapshot, the parent\'s');
		check_shape($s, 'fork', reason => 'exit', exit_status => 0, killed_by => undef, prog => $prog);
		check_site($s, 'fork', func => 'parent_leak', file => 'forker/leaks.c', marker => 'SITE:parent_leak',
			   live_bytes => 111, live_blocks => 1, alloc_calls => 1, module => $prog);
		check_gone($s, 'fork: the untraced child\'s blocks are not the parent\'s;', 'child_leak');

		$r = run_jt('forker', $mode, args => ['fork'], jt_args => ['-f']);
		same_as_native($r, $n, 'fork -f');
		my @snaps = @{ ($r->{json} // {})->{snapshots} // [] };
		is(scalar(@snaps), 2, 'fork -f: two snapshots') or return;
		my ($child) = grep { ($_->{exit_status} // -1) == 7 } @snaps;
		my ($parent) = grep { ($_->{exit_status} // -1) == 0 } @snaps;
		ok($child && $parent, 'fork -f: one snapshot exits 7 (the child), one 0 (the parent)') or return;
		isnt($child->{pid}, $parent->{pid}, 'fork -f: they have different pids');
		check_site($child, 'fork -f child', func => 'child_leak', file => 'forker/leaks.c',
			   marker => 'SITE:child_leak', live_bytes => 2220, live_blocks => 10, alloc_calls => 10,
			   module => $prog);
		check_site($parent, 'fork -f parent', func => 'parent_leak', file => 'forker/leaks.c',
			   marker => 'SITE:parent_leak', live_bytes => 111, live_blocks => 1, alloc_calls => 1);
		check_gone($parent, 'fork -f parent', 'child_leak');

		$n = run_native('forker', $mode, ['spawn']);
		is($n->{stdout}, "forker: system exit 3\n", 'native spawn: stdout');
		$r = run_jt('forker', $mode, args => ['spawn']);
		same_as_native($r, $n, 'system() (posix_spawn)');
		$s = snapshot_of($r, 'spawn') or return;
		check_site($s, 'spawn', func => 'parent_leak', file => 'forker/leaks.c', marker => 'SITE:parent_leak',
			   live_bytes => 111, live_blocks => 1, alloc_calls => 1, module => $prog);

		my $target = $EXEC_TARGET{$mode};
		my @args = ('exec', JT::prog_path('leak', $target), 3, 5);
		$n = run_native('forker', $mode, \@args);
		is($n->{stdout}, "leak: leaked 3 blocks\n", "native exec into leak-$target: stdout");
		$r = run_jt('forker', $mode, args => \@args);
		same_as_native($r, $n, "exec into leak-$target");
		$s = snapshot_of($r, "exec into leak-$target") or return;
		is($s->{exit_status}, 5, "exec into leak-$target: exit_status 5");
		check_site($s, "exec into leak-$target", func => 'leak_here', file => 'leak/leak_here.c',
			   marker => 'LEAK-SITE', live_bytes => leak_bytes(0, 3), live_blocks => 3, alloc_calls => 3,
			   module => "leak-$target", caller => ['main', 'leak/main.c', 'CALL-LEAK']);
		check_gone($s, "exec into leak-$target: the heap before the exec is gone;", 'parent_leak');
	};
}

# ---------------------------------------------------------------------------------------
# attach (jmptrace -p PID, from jmptrace --help): a running program with 4 waiting threads.
# The test waits until jmptrace catches SIGUSR1, asks for a snapshot with it (so jmptrace
# has finished attaching), and only then lets the program go on.

# Attaches to a started attach-MODE; returns (dir, program handle, jmptrace handle,
# first snapshot) with the program still waiting, or an empty list after a failure.
sub attach_started {
	my ($mode, $name) = @_;
	my $dir = tempdir('jt-attach-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my $p = spawn(argv => [JT::prog_path('attach', $mode)], dir => $dir, name => 'prog', stdin_pipe => 1);
	my $ready = wait_until(sub { (JT::slurp($p->{out}) // '') eq "ready\n" }, 30);
	ok($ready, "$name: the program is ready") or do { reap($p, 1); return };
	my $j = spawn(argv => [$JT, '-p', $p->{pid}, '--json', "$dir/r.json", '-o', "$dir/r.txt"],
		      dir => $dir, name => 'jt');
	my $caught = wait_until(sub { attach_done($j) }, 30);
	ok($caught, "$name: jmptrace handles SIGUSR1") or do { reap($j, 1); reap($p, 1); return };
	kill 'USR1', $j->{pid};
	my $js = wait_until(sub { my $x = read_json("$dir/r.json"); $x && @{ $x->{snapshots} // [] } ? $x : undef }, 30);
	ok($js, "$name: SIGUSR1 wrote a snapshot")
		or do { diag(JT::slurp($j->{err}) // ''); reap($j, 1); reap($p, 1); return };
	my $s = $js->{snapshots}[0];
	ok(is_true($s->{attached}), "$name: first snapshot: attached is true");
	ok(is_false($s->{exited}), "$name: first snapshot: exited is false");
	is($s->{totals}{alloc_calls} . '/' . $s->{totals}{live_blocks}, '0/0',
	   "$name: first snapshot: no calls and no known blocks yet (the program waits in read)");
	return ($dir, $p, $j, $s);
}

for my $mode (@modes) {
	subtest "attach-$mode" => sub {
		my $prog = "attach-$mode";
		my ($dir, $p, $j) = attach_started($mode, 'attach') or return;
		print { $p->{stdin} } "g";
		my $ps = reap($p, 60);
		my $js = reap($j, 60);
		ok(defined $ps && WIFEXITED($ps) && WEXITSTATUS($ps) == 0, 'the program exits 0')
			or diag('status ' . ($ps // 'timeout'));
		is(JT::slurp($p->{out}), "ready\ndone\n", 'the program\'s stdout');
		ok(defined $js && WIFEXITED($js) && WEXITSTATUS($js) == 0, 'jmptrace exits 0 like the program')
			or diag('status ' . ($js // 'timeout') . "\n" . (JT::slurp($j->{err}) // ''));
		my $x = read_json("$dir/r.json");
		my $s = $x && $x->{snapshots}[-1];
		ok($s, 'a last snapshot') or return;
		is($s->{reason}, 'exit', 'last snapshot: reason exit');
		ok(is_true($s->{attached}), 'last snapshot: attached is true');
		ok(is_true($s->{exited}), 'last snapshot: exited is true');
		is($s->{exit_status}, 0, 'last snapshot: exit_status 0');
		# From the attach on: 4 threads x 3 mallocs, and 5 frees of blocks made before it.
		my %calls = (malloc => 12, free => 5);
		my @bad = grep { calls_of($s, $_) != ($calls{$_} // 0) } @CALL_NAMES;
		ok(!@bad, 'calls: exactly 12 malloc and 5 free')
			or diag(join(', ', map { "$_=" . calls_of($s, $_) } @bad));
		is($s->{totals}{unknown_frees}, 5, 'the 5 blocks from before the attach are unknown frees');
		is($s->{totals}{live_blocks}, 12, 'live blocks: only those made after the attach');
		is($s->{totals}{live_bytes}, 12 * 64, 'live bytes');
		is($s->{totals}{bytes_allocated}, 12 * 64, 'bytes allocated');
		check_site($s, 'attach', func => 'new_leak', file => 'attach/new_leak.c', marker => 'SITE:new_leak',
			   live_bytes => 12 * 64, live_blocks => 12, alloc_calls => 12, module => $prog);
		check_gone($s, 'attach', 'old_leak');
	};

	# SIGINT detaches and leaves the program running: it must then finish as if it had
	# never been traced (no breakpoint left behind, no signal lost).
	subtest "attach and detach, attach-$mode" => sub {
		my ($dir, $p, $j) = attach_started($mode, 'detach') or return;
		kill 'INT', $j->{pid};
		my $js = reap($j, 60);
		ok(defined $js, 'jmptrace ends after SIGINT') or diag(JT::slurp($j->{err}) // '');
		print { $p->{stdin} } "g";
		my $ps = reap($p, 60);
		ok(defined $ps && WIFEXITED($ps) && WEXITSTATUS($ps) == 0, 'the detached program exits 0')
			or diag('status ' . ($ps // 'timeout'));
		is(JT::slurp($p->{out}), "ready\ndone\n", 'the detached program\'s stdout');
		my $x = read_json("$dir/r.json");
		my $s = $x && $x->{snapshots}[-1];
		ok($s && is_false($s->{exited}), 'the snapshot at detach has exited false');
	};
}

# ---------------------------------------------------------------------------------------
# The program's signal dispositions, mask and environment are its own: jmptrace must not
# leak its own (an ignored SIGPIPE would be inherited across exec).

subtest 'signal dispositions and environment pass through' => sub {
	my @argv = ('/bin/sh', '-c', 'grep -E "^Sig(Ign|Blk|Cgt)" /proc/self/status; env | grep -Ev "^(PWD|OLDPWD|_)=" | sort | md5sum; yes | head -2');
	my $n = run_cmd(argv => [@argv]);
	my $r = run_jt(undef, undef, path => $argv[0], args => [@argv[1 .. $#argv]]);
	is($r->{stdout}, $n->{stdout}, 'SigIgn/SigBlk/SigCgt, environment and SIGPIPE behaviour identical');
	is($r->{status}, $n->{status}, 'exit status identical');
};

# ---------------------------------------------------------------------------------------
# Bad input: one line on stderr and a non-zero exit, and usage errors.

subtest 'bad input' => sub {
	my $dir = tempdir('jt-bad-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my $leak = JT::prog_path('leak', 'pie');

	my $noexec = "$dir/not-executable";
	JT::spew($noexec, JT::slurp($leak));
	chmod 0644, $noexec;

	my $text = "$dir/text-file";
	JT::spew($text, "this is not a program\n");
	chmod 0755, $text;

	# An AArch64 ELF: a copy of an x86-64 one with e_machine (offset 18) set to 183.
	my $arm = "$dir/aarch64-elf";
	my $elf = JT::slurp(JT::prog_path('leak', 'static'));
	substr($elf, 18, 2) = pack('v', 183);
	JT::spew($arm, $elf);
	chmod 0755, $arm;

	my @cases = (
		['a program that does not exist', "$dir/no-such-program"],
		['a file without execute permission', $noexec],
		['a text file with the execute bit and no #!', $text],
		['an AArch64 ELF', $arm],
		['a stripped static binary (no malloc symbol)', JT::prog_path('leak-static-stripped')],
	);
	for my $c (@cases) {
		my ($what, $path) = @$c;
		# leak with STATUS 0: a non-zero exit cannot come from the program.
		my $r = JT::run_cmd(argv => [$JT, '--json', "$dir/out.json", '--', $path, 5, 0]);
		ok(!$r->{timed_out}, "$what: finishes");
		ok(defined $r->{exit} && $r->{exit} != 0, "$what: non-zero exit")
			or diag('exit ' . ($r->{exit} // 'none') . ', signal ' . ($r->{signal} // 'none'));
		my @lines = split /\n/, $r->{stderr};
		ok(@lines == 1 && $r->{stderr} =~ /\n\z/, "$what: exactly one line on stderr")
			or diag("stderr:\n$r->{stderr}");
	}

	# Usage errors: where to read the usage, or for a bad value one line that names the option.
	for my $c (['an unknown option', ['--no-such-option', '--', $leak], qr/^Try 'jmptrace --help'/m],
		   ['no program', [], qr/^Try 'jmptrace --help'/m],
		   ['-- and no program', ['--'], qr/^Try 'jmptrace --help'/m],
		   ['--top without a number', ['--top', 'many', '--', $leak], qr/--top\b/],
		   ['--depth without a number', ['--depth', 'x', '--', $leak], qr/--depth\b/],
		   ['--depth above its maximum of 256', ['--depth', '1000', '--', $leak], qr/--depth\b/]) {
		my ($what, $args, $want) = @$c;
		my $r = JT::run_cmd(argv => [$JT, @$args]);
		ok(!$r->{timed_out}, "$what: finishes");
		ok(defined $r->{exit} && $r->{exit} != 0, "$what: non-zero exit");
		like($r->{stderr}, $want, "$what: stderr matches $want");
		is($r->{stdout}, '', "$what: the program does not run");
	}

	# An output file that cannot be created: one line, non-zero, and the program not run.
	for my $opt ('-o', '--json') {
		my $r = JT::run_cmd(argv => [$JT, $opt, "$dir/no-such-dir/out", '--', $leak, 5, 0]);
		ok(defined $r->{exit} && $r->{exit} != 0, "$opt into a missing directory: non-zero exit");
		my @lines = split /\n/, $r->{stderr};
		is(scalar(@lines), 1, "$opt into a missing directory: one line on stderr");
		is($r->{stdout}, '', "$opt into a missing directory: the program does not run");
	}
};

done_testing();
