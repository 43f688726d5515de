#!/usr/bin/perl
# fatal.t - jmptrace's death never takes the target with it. Every signal whose default action
# would end jmptrace, sent to it while it traces a busy 8-thread program with the ptrace source
# (attached with -p, and launched), lets the program go: alive, untraced, the code of every
# module it maps equal to its file (no trap byte left), its heartbeat going on and its checks
# of its own memory unbroken; jmptrace then ends by that signal. The same after a real SIGSEGV
# inside jmptrace (JMPTRACE_TEST_FAULT: mid-stop, the lock held, mid-snapshot, mid-write), after
# jmptrace runs out of memory (its address-space limit lowered with prlimit while attached to
# a program that allocates and keeps blocks: one line, exit 1), and SIGTSTP, SIGTTIN and
# SIGTTOU never stop jmptrace while the program would wait at its breakpoints. Before this,
# SIGQUIT and SIGUSR2 killed the program 5 of 5 (SIGTRAP at a breakpoint), and so did abort()
# on an allocation failure. Each signal runs once attached and once launched (one way out for
# all: 16 runs a mode); each fault 10 times a mode, the other cases 5 times.
use strict;
use warnings;
no warnings "portable";	# 64-bit addresses through hex()
use FindBin;
use lib "$FindBin::Bin/lib";
use Config;
use File::Temp qw(tempdir);
use POSIX qw(WIFEXITED WEXITSTATUS WIFSIGNALED WTERMSIG);
use Test::More;
use JT;

# The ptrace source is what leaves trap bytes behind; the uprobe source is tested in uprobe_kill.t.
# Set before $JT is made: under JT_SOURCE=uprobe, JT::jmptrace() gives a wrapper that adds
# --source uprobe, whose runs never reach the stop:N faults below.
local $ENV{JT_SOURCE} = 'ptrace';
my $JT = JT::jmptrace();
BAIL_OUT("no executable jmptrace at $JT (make jmptrace, or set JMPTRACE)") unless -x $JT;
my $RUNS = 5;
my $SIG_RUNS = 1;
my $FAULT_RUNS = 10;
my $PROG = JT::prog_path('heartbeat', 'pie');

my %SIGNUM;
{
	my @names = split ' ', $Config{sig_name};
	my @nums = split ' ', $Config{sig_num};
	@SIGNUM{@names} = @nums;
}
# Every signal the issue lists, and a real-time one: each would end jmptrace by default.
my @FATAL = qw(QUIT USR2 ALRM PIPE XCPU XFSZ VTALRM PROF SYS TRAP SEGV BUS FPE ILL ABRT);
push @FATAL, 'NUM40' if $SIGNUM{NUM40};
# A background job of a non-interactive shell starts with SIGQUIT ignored, and jmptrace keeps a
# signal its parent ignored: the test gives each its default action, as a terminal would.
$SIG{$_} = 'DEFAULT' for grep { $_ ne 'NUM40' } @FATAL, qw(TSTP TTIN TTOU);

# The executable mappings of $pid whose bytes differ from their file: "path@offset" each.
sub code_changed {
	my ($pid) = @_;
	my @bad;
	open(my $maps, '<', "/proc/$pid/maps") or return ("no maps: $!");
	open(my $mem, '<:raw', "/proc/$pid/mem") or return ("no mem: $!");
	while (my $l = <$maps>) {
		my ($lo, $hi, $perm, $off, $path) = $l =~ /^([0-9a-f]+)-([0-9a-f]+) (\S+) ([0-9a-f]+) \S+ \d+\s+(\/\S+)$/ or next;
		next unless $perm =~ /x/;
		my $len = hex($hi) - hex($lo);
		open(my $f, '<:raw', $path) or next;
		sysseek($f, hex($off), 0);
		my $want = '';
		sysread($f, $want, $len);
		sysseek($mem, hex($lo), 0) or next;
		my $got = '';
		sysread($mem, $got, length $want);
		next if $got eq $want;
		my $i = 0;
		$i++ while $i < length($want) && substr($got, $i, 1) eq substr($want, $i, 1);
		push @bad, sprintf('%s@0x%x', $path, hex($off) + $i);
	}
	return @bad;
}

# What is wrong with program $p (heartbeat file $hb) after jmptrace let it go, or ''.
sub harmed {
	my ($p, $hb) = @_;
	my $before = heartbeat($hb);
	my $alive = JT::wait_until(sub { heartbeat($hb) > $before + 1000 }, 10);
	my $out = JT::slurp($p->{out}) // '';
	my @traced = JT::traced_threads($p->{pid});
	my @code = code_changed($p->{pid});
	return 'BROKEN (a signal or a corruption it should not see)' if $out =~ /BROKEN/;
	return 'stopped beating' unless $alive;
	return "still traced: @traced" if @traced;
	return "code differs from its file at @code" if @code;
	return '';
}

sub status_text {
	my ($st) = @_;
	return 'hung' unless defined $st;
	return WIFSIGNALED($st) ? 'killed by ' . WTERMSIG($st) : 'exit ' . WEXITSTATUS($st);
}

sub start_prog {
	my ($dir, $prog) = @_;
	my $p = JT::spawn(argv => [$prog // $PROG, "$dir/hb"], dir => $dir, name => 'prog');
	JT::wait_until(sub { heartbeat("$dir/hb") > 1000 }, 30) or return;
	return $p;
}

# Attaches to $p, waits until jmptrace said so and the program hit its breakpoints a while.
sub attach {
	my ($dir, $p, %o) = @_;
	my $j = JT::spawn(argv => [$JT, @{ $o{args} // [] }, '-p', $p->{pid}, '-o', "$dir/report.txt"],
			  dir => $dir, name => 'jt');
	JT::wait_until(sub { JT::attach_done($j) }, 30);
	select(undef, undef, undef, 0.2);
	return $j;
}

# The temporary files of a report (.report.2.txt.XXXXXX) left in $dir.
sub temps {
	my ($dir) = @_;
	opendir(my $d, $dir) or return;
	return grep { /^\.report\./ } readdir $d;
}

# The pid of the heartbeat program writing to $hb (a launched one, whose jmptrace may be gone).
sub prog_of {
	my ($hb) = @_;
	opendir(my $d, '/proc') or return;
	for my $pid (grep { /^\d+$/ } readdir $d) {
		my $cmd = JT::slurp("/proc/$pid/cmdline") // next;
		return $pid if $cmd eq "$PROG\0$hb\0";
	}
	return;
}

# 1. Each signal, sent to jmptrace attached and launched.
{
	my $dir = tempdir('jt-fatal-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my $p = start_prog($dir) or BAIL_OUT('the heartbeat program did not start');
	my (@wrong, $n);
	for my $run (1 .. $SIG_RUNS) {
		for my $sig (@FATAL) {
			my $j = attach($dir, $p);
			kill $sig, $j->{pid};
			my $st = JT::reap($j, 30);
			$n++;
			push @wrong, "-p, SIG$sig, run $run: jmptrace " . status_text($st) . '; ' . (JT::slurp($j->{err}) // '')
				unless defined $st && WIFSIGNALED($st) && WTERMSIG($st) == $SIGNUM{$sig};
			if (my $h = harmed($p, "$dir/hb")) {
				push @wrong, "-p, SIG$sig, run $run: the program: $h; jmptrace said: " . (JT::slurp($j->{err}) // '');
				last;
			}
		}
		last if @wrong;
	}
	kill 'KILL', $p->{pid};
	JT::reap($p, 10);
	is(join("\n", @wrong), '', "attached: each of the " . scalar(@FATAL) . " signals, $SIG_RUNS times ($n runs), ends jmptrace by it and leaves the program as it was");
}
{
	my @wrong;
	my $n = 0;
	for my $run (1 .. $SIG_RUNS) {
		for my $sig (@FATAL) {
			my $dir = tempdir('jt-fatal-XXXXXX', TMPDIR => 1, CLEANUP => 1);
			my $j = JT::spawn(argv => [$JT, '-o', "$dir/report.txt", '--', $PROG, "$dir/hb"], dir => $dir, name => 'jt');
			my $started = JT::wait_until(sub { heartbeat("$dir/hb") > 1000 }, 30);
			my $pid = prog_of("$dir/hb");
			kill $sig, $j->{pid};
			my $st = JT::reap($j, 30);
			$n++;
			my $p = { pid => $pid, out => $j->{out} };
			push @wrong, "launched, SIG$sig, run $run: jmptrace " . status_text($st) . '; ' . (JT::slurp($j->{err}) // '')
				unless defined $st && WIFSIGNALED($st) && WTERMSIG($st) == $SIGNUM{$sig};
			my $h = !$started || !$pid ? 'did not start' : harmed($p, "$dir/hb");
			push @wrong, "launched, SIG$sig, run $run: the program: $h; jmptrace said: " . (JT::slurp($j->{err}) // '') if $h;
			kill 'KILL', $pid if $pid;
			last if @wrong;
		}
		last if @wrong;
	}
	is(join("\n", @wrong), '', "launched: each signal, $SIG_RUNS times ($n runs), ends jmptrace by it and lets the program run on untraced");
}

# 2. A real SIGSEGV inside jmptrace: while it handles a breakpoint stop (the lock held, the
# tracee stopped at the trap, possibly with return addresses replaced), and while it writes a
# snapshot (--interval's: on the worker thread, the program running on), and on the writer thread with a report's temporary file
# open (which must not outlive jmptrace); attached and launched. One line says what happened.
for my $where ('stop:3000', 'stop:20000', 'snapshot:2', 'write:2') {
	my @wrong;
	my $dir = tempdir('jt-fatal-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my $p = start_prog($dir) or BAIL_OUT('the heartbeat program did not start');
	for my $run (1 .. $FAULT_RUNS) {
		local $ENV{JMPTRACE_TEST_FAULT} = $where;
		my $j = JT::spawn(argv => [$JT, '--interval', '0.2', '-p', $p->{pid}, '-o', "$dir/report.txt"], dir => $dir, name => 'jt');
		my $st = JT::reap($j, 60);
		my $err = JT::slurp($j->{err}) // '';
		push @wrong, "-p, run $run: jmptrace " . status_text($st) . "; $err"
			unless defined $st && WIFSIGNALED($st) && WTERMSIG($st) == $SIGNUM{SEGV};
		push @wrong, "-p, run $run: not the one line: $err"
			unless $err =~ /^jmptrace: SIGSEGV in jmptrace itself, a bug in jmptrace; every traced process was let go untraced, as it was; no report written \(jmptrace pid \d+\)$/m;
		push @wrong, "-p, run $run: temporary files left: @{[ temps($dir) ]}" if temps($dir);
		if (my $h = harmed($p, "$dir/hb")) {
			push @wrong, "-p, run $run: the program: $h; jmptrace said: $err";
			last;
		}
	}
	kill 'KILL', $p->{pid};
	JT::reap($p, 10);
	for my $run (1 .. $FAULT_RUNS) {
		local $ENV{JMPTRACE_TEST_FAULT} = $where;
		my $d = tempdir('jt-fatal-XXXXXX', TMPDIR => 1, CLEANUP => 1);
		my $j = JT::spawn(argv => [$JT, '--interval', '0.2', '-o', "$d/report.txt", '--', $PROG, "$d/hb"], dir => $d, name => 'jt');
		my $st = JT::reap($j, 60);
		my $pid = prog_of("$d/hb");
		push @wrong, "launched, run $run: jmptrace " . status_text($st) . '; ' . (JT::slurp($j->{err}) // '')
			unless defined $st && WIFSIGNALED($st) && WTERMSIG($st) == $SIGNUM{SEGV};
		my $h = $pid ? harmed({ pid => $pid, out => $j->{out} }, "$d/hb") : 'did not start';
		push @wrong, "launched, run $run: the program: $h" if $h;
		push @wrong, "launched, run $run: temporary files left: @{[ temps($d) ]}" if temps($d);
		kill 'KILL', $pid if $pid;
		last if @wrong;
	}
	is(join("\n", @wrong), '', "a SIGSEGV in jmptrace ($where), $FAULT_RUNS times attached and launched: the program runs on as it was");
}

# 3. Out of memory: attached to a program that allocates and keeps blocks as fast as it can
# (tests/progs/fastleak), jmptrace's address-space limit is lowered to a little above what it
# uses; its live-block table soon cannot grow.
SKIP: {
	skip 'no prlimit (util-linux)', 1 unless system('prlimit --version >/dev/null 2>&1') == 0;
	skip 'an AddressSanitizer build reserves terabytes: an address-space limit is its own death', 1
		if (`ldd $JT 2>/dev/null` // '') =~ /libasan/;
	my @wrong;
	my $dir = tempdir('jt-fatal-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my $p = start_prog($dir, JT::prog_path('fastleak', 'pie')) or BAIL_OUT('the fastleak program did not start');
	for my $run (1 .. $RUNS) {
		my $j = attach($dir, $p);
		my ($vm) = (JT::slurp("/proc/$j->{pid}/status") // '') =~ /^VmSize:\s*(\d+) kB/m;
		system('prlimit', "--pid=$j->{pid}", '--as=' . (($vm + 2048) * 1024)) == 0 or push @wrong, "run $run: prlimit failed";
		my $st = JT::reap($j, 60);
		my $err = JT::slurp($j->{err}) // '';
		my @lines = grep { !/^jmptrace: attached to process/ } split /\n/, $err;
		push @wrong, "run $run: jmptrace " . status_text($st) . "; $err" unless defined $st && WIFEXITED($st) && WEXITSTATUS($st) == 1;
		push @wrong, "run $run: not one line naming the limit: $err"
			unless @lines == 1 && $lines[0] =~ /^jmptrace: out of memory allocating [\d,]+ bytes: jmptrace's own address-space limit \(ulimit -v\) is [\d,]+ KiB; every traced process was let go untraced, as it was; no report written/;
		if (my $h = harmed($p, "$dir/hb")) {
			push @wrong, "run $run: the program: $h; jmptrace said: $err";
			last;
		}
	}
	kill 'KILL', $p->{pid};
	JT::reap($p, 10);
	is(join("\n", @wrong), '', "out of memory, $RUNS times: one line naming jmptrace's limit, exit 1, the program as it was");
}

# 4. SIGTSTP, SIGTTIN, SIGTTOU sent to jmptrace alone: it does not stop (the program would wait
# at its breakpoints); SIGTSTP is refused with a line. Then SIGINT detaches as ever (exit 0).
{
	my @wrong;
	my $dir = tempdir('jt-fatal-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my $p = start_prog($dir) or BAIL_OUT('the heartbeat program did not start');
	for my $run (1 .. $RUNS) {
		my $j = attach($dir, $p);
		for my $sig (qw(TSTP TTIN TTOU)) {
			kill $sig, $j->{pid};
			select(undef, undef, undef, 0.4);
			my ($state) = (JT::slurp("/proc/$j->{pid}/stat") // '') =~ /^\d+ \(.*\) (\S)/;
			# (Whether the program beats meanwhile is the tracer's speed: the sanitizer build's
			# is slow enough to hold heartbeat's main thread for seconds. harmed() checks it below.)
			push @wrong, "run $run: SIG$sig stopped jmptrace (state $state)" if ($state // 'T') eq 'T';
		}
		my $err = JT::slurp($j->{err}) // '';
		push @wrong, "run $run: no line refusing SIGTSTP: $err"
			unless $err =~ /^jmptrace: SIGTSTP refused: process $p->{pid} would wait at jmptrace's breakpoints while jmptrace is stopped; Ctrl-C or SIGTERM detaches$/m;
		kill 'CONT', $j->{pid};
		kill 'INT', $j->{pid};
		my $st = JT::reap($j, 30);
		push @wrong, "run $run: after SIGINT jmptrace " . status_text($st) unless defined $st && WIFEXITED($st) && WEXITSTATUS($st) == 0;
		if (my $h = harmed($p, "$dir/hb")) {
			push @wrong, "run $run: the program: $h";
			last;
		}
	}
	kill 'KILL', $p->{pid};
	JT::reap($p, 10);
	is(join("\n", @wrong), '', "SIGTSTP, SIGTTIN and SIGTTOU, $RUNS times: jmptrace runs on, the program too; SIGINT detaches");
}

done_testing();
