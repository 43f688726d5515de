#!/usr/bin/perl
# arch.t - programs jmptrace cannot trace because of their architecture: launching one, or a
# script whose interpreter is one, says what it is in one line; -p on one does too and
# leaves it alone; a traced program that execs one runs on untraced, and the report says
# how it ended; an exec the kernel refuses (ENOEXEC) gives one line and a non-zero exit.
# The 32-bit program is built here with `cc -m32` (gcc-multilib) and run once: without it
# only the faked ELF headers are tried, and on a host that cannot run it (ia32 emulation
# off) only what needs no 32-bit process. JT_NO_32BIT=1 acts out such a host (JT.pm).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Cwd ();
use File::Basename qw(basename);
use File::Temp qw(tempdir);
use POSIX qw(WIFEXITED WEXITSTATUS WIFSIGNALED WTERMSIG);
use Test::More;
use JT;
use JTCheck;

my $JT = JT::jmptrace();
-x $JT or plan skip_all => "no jmptrace at $JT";
system('make', '-s', '-C', root() . '/tests/progs') == 0
	or BAIL_OUT('cannot build the test programs (make -C tests/progs)');

my $dir = tempdir('jt-arch-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $ONLY = 'jmptrace traces x86-64 programs only';

# Runs jmptrace on a program it must refuse: exit 1, one line on stderr matching $want,
# nothing run.
sub refused {
	my ($what, $want, @argv) = @_;
	my $r = JT::run_cmd(argv => [$JT, '-o', "$dir/r.txt", '--', @argv], timeout => 60, dir => $dir);
	is($r->{exit}, 1, "$what: exit 1");
	my @lines = split /\n/, $r->{stderr}, -1;
	ok(@lines == 2 && $lines[1] eq '', "$what: one line on stderr") or diag("stderr:\n$r->{stderr}");
	like($lines[0] // '', $want, "$what: says what it is");
	is($r->{stdout}, '', "$what: nothing ran");
}

# A copy of an x86-64 program with its ELF header patched: class, byte order, machine.
sub fake_elf {
	my ($name, $class, $data, $machine) = @_;
	my $elf = JT::slurp(JT::prog_path('leak', 'static'));
	substr($elf, 4, 1) = chr($class);
	substr($elf, 5, 1) = chr($data);
	substr($elf, 18, 2) = pack($data == 2 ? 'n' : 'v', $machine);
	JT::spew("$dir/$name", $elf);
	chmod 0755, "$dir/$name";
	return "$dir/$name";
}

subtest 'launching a program for another architecture' => sub {
	for my $c (['i386', 1, 1, 3, 'a 32-bit \(i386\) program'],
		   ['x32', 1, 1, 62, 'a 32-bit \(x32\) program'],
		   ['aarch64', 2, 1, 183, 'a 64-bit \(AArch64\) program'],
		   ['ppc64', 2, 2, 21, 'a 64-bit \(PowerPC64\) program']) {
		my ($name, $class, $data, $machine, $what) = @$c;
		my $path = fake_elf($name, $class, $data, $machine);
		refused("a faked $name ELF", qr/^jmptrace: cannot trace '\Q$path\E': it is $what; \Q$ONLY\E$/, $path);
	}
	my $text = "$dir/text";
	JT::spew($text, "not a program at all\n");
	chmod 0755, $text;
	refused('a text file', qr/^jmptrace: cannot trace '\Q$text\E': not an ELF executable$/, $text);
};

# Makes $script a #! script run by $interp, a program in $dir, which is where the scripts
# run: named relative to it, a $TMPDIR with a space or a long name cannot cut the #! line.
sub interpreted_by {
	my ($script, $interp) = @_;
	JT::spew($script, '#!./' . basename($interp) . " 0\n");
	chmod 0755, $script;
}

my $a32 = JT::arch32_program($dir);
my $p32 = $a32->{path};
diag($a32->{why}) if $a32->{why};

SKIP: {
	skip $a32->{why}, 7 unless $p32;

	# Refused from its ELF header, before any exec: the same whether this host runs it or not.
	subtest 'launching a 32-bit program' => sub {
		refused('a 32-bit program', qr/^jmptrace: cannot trace '\Q$p32\E': it is a 32-bit \(i386\) program; \Q$ONLY\E$/,
			$p32, 0);
	};

	# What a host without ia32 emulation does with every 32-bit program: execve fails with
	# ENOEXEC. A copy with the ELF type ET_REL gets the same here, whatever the host.
	subtest 'a 32-bit program the kernel will not run' => sub {
		my $bad = $a32->{runs} ? JT::unrunnable_copy($p32, "$dir/arch32-norun") : $p32;
		refused('launching it', qr/^jmptrace: cannot trace '\Q$bad\E': it is a 32-bit \(i386\) program; \Q$ONLY\E$/,
			$bad, 0);
		my $script = "$dir/script-norun";
		interpreted_by($script, $bad);
		# launch_check lets a #! script through: the exec itself fails.
		my $r = JT::run_cmd(argv => [$JT, '-o', "$dir/r.txt", '--', $script], timeout => 60, dir => $dir);
		ok(defined $r->{exit} && $r->{exit} != 0, 'a script it would interpret: a non-zero exit')
			or diag('exit ' . ($r->{exit} // 'none') . ', signal ' . ($r->{signal} // 'none'));
		is($r->{stderr}, "jmptrace: cannot execute '$script': Exec format error\n",
		   'a script it would interpret: one line says the exec failed');
		is($r->{stdout}, '', 'a script it would interpret: nothing ran');
		for my $mode (@MODES) {
			my $name = "forker-$mode exec of it";
			my $n = run_native('forker', $mode, ['exec', $bad, 7]);
			my $t = run_jt('forker', $mode, args => ['exec', $bad, 7]);
			same_as_native($t, $n, $name);
			is($t->{stderr}, "forker: exec failed\n", "$name: on stderr only the program's own line");
			my $s = snapshot_of($t, $name) or next;
			ok($s->{reason} eq 'exit' && $s->{exit_status} == 127, "$name: the report says it exited with status 127");
		}
	};

	SKIP: {
		skip $a32->{why}, 5 unless $a32->{runs};

		subtest 'a script run by a 32-bit interpreter' => sub {
			my $script = "$dir/script";
			interpreted_by($script, $p32);
			# launch_check lets a #! script through; its interpreter is seen at the exec.
			refused('a script run by a 32-bit interpreter',
				qr/^jmptrace: cannot trace '\Q$script\E': it is a 32-bit \(i386\) program; \Q$ONLY\E$/, $script);
		};

		subtest '-p on a 32-bit process: says so and leaves it alone' => sub {
			# It waits for its stdin to close (at reap): no time is assumed long enough.
			my $p = JT::spawn(argv => [$p32, 7, '-'], dir => $dir, name => 'p32', stdin_pipe => 1);
			ok(JT::wait_until(sub { (JT::slurp($p->{out}) // '') eq "arch32: ok\n" }, 30), 'it runs');
			my $r = JT::run_cmd(argv => [$JT, '-o', "$dir/p.txt", '-p', $p->{pid}], timeout => 60);
			is($r->{exit}, 1, 'jmptrace exits 1');
			is($r->{stderr}, "jmptrace: cannot attach to process $p->{pid}: it is a 32-bit (i386) program; $ONLY\n",
			   'one line that names the architecture');
			my $st = JT::slurp("/proc/$p->{pid}/status") // '';
			like($st, qr/^TracerPid:\s*0$/m, 'it is not traced');
			my $s = JT::reap($p, 30);
			ok(defined $s && WIFEXITED($s) && WEXITSTATUS($s) == 7, 'it ends as it would have (exit 7)');
		};

		subtest 'a traced program that execs a 32-bit one' => sub {
			for my $mode (@MODES) {
				for my $c (['7', 7, undef], ['TERM', undef, 'SIGTERM']) {
					my ($arg, $status, $sig) = @$c;
					my $name = "forker-$mode exec arch32 $arg";
					my $n = run_native('forker', $mode, ['exec', $p32, $arg]);
					my $r = run_jt('forker', $mode, args => ['exec', $p32, $arg]);
					same_as_native($r, $n, $name);
					like($r->{stderr}, qr/^jmptrace: process \d+: \Q$p32\E is a 32-bit \(i386\) program; \Q$ONLY\E: it runs on untraced\n\z/,
					     "$name: one line says it runs on untraced") or diag("stderr:\n$r->{stderr}");
					my $s = snapshot_of($r, $name) or next;
					is($s->{reason}, 'exit', "$name: the snapshot is taken at its exit");
					ok(is_true($s->{exited}), "$name: the report says it exited");
					is($s->{exit_status}, $status, "$name: exit_status");
					is($s->{killed_by}, $sig, "$name: killed_by");
					my $how = $sig ? "killed by $sig" : "exited with status $status";
					like($r->{report}, qr/^process:  \Q$how\E$/m, "$name: the text report says '$how'");
				}
			}
		};

		subtest 'a followed child (-f) that execs a 32-bit one' => sub {
			my @argv = ('/bin/sh', '-c', '"$0" 7; echo "status $?"', $p32);
			my $n = run_cmd(argv => [@argv]);
			is($n->{stdout}, "arch32: ok\nstatus 7\n", 'native: stdout');
			my $r = run_jt(undef, undef, path => $argv[0], args => [@argv[1 .. $#argv]], jt_args => ['-f']);
			same_as_native($r, $n, 'sh -c, -f');
			like($r->{stderr}, qr/^jmptrace: process \d+: \Q$p32\E is a 32-bit \(i386\) program; \Q$ONLY\E: it runs on untraced\n\z/,
			     'one line says the child runs on untraced') or diag("stderr:\n$r->{stderr}");
			my $s = snapshot_of($r, 'sh -c, -f') or return;
			ok(is_true($s->{exited}) && $s->{exit_status} == 0, 'the shell\'s report says it exited with status 0');
		};

		subtest 'an attached program that execs a 32-bit one' => sub {
			# The shell waits for a line on stdin, then becomes the 32-bit program.
			my $p = JT::spawn(argv => ['/bin/sh', '-c', 'read x; exec "$0" 7 1', $p32], dir => $dir,
					  name => "sh", stdin_pipe => 1);
			my $j = JT::spawn(argv => [$JT, '--json', "$dir/a.json", '-o', "$dir/a.txt", '-p', $p->{pid}],
					  dir => $dir, name => "jt");
			ok(JT::wait_until(sub { JT::attach_done($j) }, 30), "attached");
			print { $p->{stdin} } "go\n";
			my $js = JT::reap($j, 60);
			ok(defined $js && WIFEXITED($js) && WEXITSTATUS($js) == 0, "jmptrace ends by itself, exit 0");
			like(JT::slurp($j->{err}) // '', qr/\Ajmptrace: attached to process $p->{pid} [^\n]*\njmptrace: process $p->{pid}: \Q$p32\E is a 32-bit \(i386\) program; \Q$ONLY\E: it runs on untraced\n\z/,
			     "after the attach line, one line says it runs on untraced");
			my $json = JT::read_json("$dir/a.json");
			my $s = $json && $json->{snapshots}[-1];
			is($s && $s->{reason}, 'exec', "the snapshot is taken at the exec");
			ok($s && is_false($s->{exited}), "the report says it still runs");
			# The image that ended is what was traced: the shell's, the run's last report, in -o's FILE itself.
			is($s && $s->{exe}, Cwd::abs_path('/bin/sh'), "the report is the shell's, the image traced");
			cmp_ok($s ? $s->{totals}{alloc_calls} : 0, '>', 0, "with the shell's allocations");
			like(JT::slurp("$dir/a.txt") // '', qr/^snapshot: exec\n/m, "in -o's FILE itself");
			my $ps = JT::reap($p, 30);
			ok(defined $ps && WIFEXITED($ps) && WEXITSTATUS($ps) == 7, "it ends as it would have (exit 7)");
			is(JT::slurp($p->{out}), "arch32: ok\n", "its output");
		};
	}
}

done_testing();
