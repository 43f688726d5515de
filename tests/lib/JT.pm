# JT.pm - helpers for the jmptrace integration tests: run a program with and without
# jmptrace under a timeout, parse the JSON report, and select stacks by the functions on them.
package JT;

use strict;
use warnings;
use Exporter 'import';
use Cwd qw(abs_path);
use File::Basename qw(basename dirname);
use File::Temp qw(tempdir);
use JSON::PP ();
use POSIX qw(:sys_wait_h setpgid);

our @EXPORT = qw(
	@MODES @CALL_NAMES root prog_path src_path line_of site_line
	run_cmd run_native run_jt last_snapshot calls_of spawn reap wait_until read_json
	catches_signal attach_done heartbeat traced_threads
	frame_func_is frame_file_is live_stacks stacks_with_frame0 stacks_at_site stacks_through
	sum_field describe_stacks describe_frame is_true is_false
);

# The four link modes every test program is built in (tests/progs/Makefile).
our @MODES = qw(pie nopie static static-pie);

# Every key of totals.calls, in the order of the interface.
our @CALL_NAMES = (
	'malloc', 'calloc', 'realloc', 'reallocarray', 'posix_memalign', 'aligned_alloc',
	'memalign', 'valloc', 'pvalloc', 'operator new', 'operator new[]',
	'operator new(nothrow)', 'operator new[](nothrow)', 'operator new(align)',
	'operator new[](align)', 'operator new(align, nothrow)',
	'operator new[](align, nothrow)', 'free', 'operator delete', 'operator delete[]',
	'operator delete(sized)', 'operator delete[](sized)', 'operator delete(nothrow)',
	'operator delete[](nothrow)', 'operator delete(align)', 'operator delete[](align)',
	'operator delete(sized, align)', 'operator delete[](sized, align)',
	'operator delete(align, nothrow)', 'operator delete[](align, nothrow)',
);

my $ROOT = abs_path(dirname(__FILE__) . '/../..');
my %LIVE;	# pid => 1 for every child still running, killed in END

sub root { $ROOT }

# The jmptrace under test: $JMPTRACE (e.g. the ASan build), else the repo's ./jmptrace.
sub jmptrace_bin { $ENV{JMPTRACE} // "$ROOT/jmptrace" }
# JT_SOURCE=uprobe (the test harness's own switch, `make check` sets it for a second
# pass of the suites): every run gets --source uprobe, through a wrapper that puts it
# first (not for `jmptrace diff`, which traces nothing) and execs, so the pid is jmptrace's.
my $WRAPPER;
sub jmptrace {
	my $bin = jmptrace_bin();
	my $src = $ENV{JT_SOURCE} // '';
	return $bin if $src eq '' || $src eq 'ptrace';
	return $WRAPPER if $WRAPPER;
	my $dir = tempdir('jt-src-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	$WRAPPER = "$dir/jmptrace";
	spew($WRAPPER, "#!/bin/sh\ncase \"\$1\" in diff) exec '$bin' \"\$@\" ;; esac\n" .
		"exec '$bin' --source '$src' \"\$@\"\n");
	chmod 0755, $WRAPPER or die "chmod: $!\n";
	chmod 0755, $dir;	# a test may run it as another user
	return $WRAPPER;
}
# The source the suites run with: ptrace, or uprobe under JT_SOURCE=uprobe.
sub source { $ENV{JT_SOURCE} || 'ptrace' }

# The sources a suite that runs both runs: JT_SOURCE's alone when the harness sets it, else
# ptrace and, as root with uprobes, uprobe too (saying so when it is left out).
sub sources {
	my @s = $ENV{JT_SOURCE} ? (source()) : ('ptrace');
	push @s, 'uprobe' if !$ENV{JT_SOURCE} && $> == 0 && -e '/sys/bus/event_source/devices/uprobe/type';
	main::diag('not root or no uprobes: the uprobe source is not run') unless grep { $_ eq 'uprobe' } @s;
	return @s;
}

# Seconds a single run may take before it is killed; ASan builds are slower.
sub timeout_secs { $ENV{JT_TIMEOUT} // 120 }

sub prog_path {
	my ($name, $mode) = @_;
	return "$ROOT/tests/progs/bin/" . (defined $mode ? "$name-$mode" : $name);
}

sub src_path { "$ROOT/tests/progs/$_[0]" }

# Returns the number of the one line of file PATH that contains MARKER; dies unless there
# is exactly one, so a test never checks a stale line number.
sub line_of {
	my ($path, $marker) = @_;
	open(my $fh, '<', $path) or die "$path: $!\n";
	my @hits;
	while (my $l = <$fh>) {
		push @hits, $. if index($l, $marker) >= 0;
	}
	close $fh;
	die "$path: marker '$marker' found " . scalar(@hits) . " times\n" unless @hits == 1;
	return $hits[0];
}

# line_of for a file under tests/progs.
sub site_line { line_of(src_path($_[0]), $_[1]) }

sub slurp {
	my ($path) = @_;
	open(my $fh, '<:raw', $path) or return undef;
	local $/;
	my $s = <$fh>;
	close $fh;
	return $s // '';
}

sub spew {
	my ($path, $data) = @_;
	open(my $fh, '>:raw', $path) or die "$path: $!\n";
	print $fh $data;
	close $fh or die "$path: $!\n";
}

# Kills the whole process group of a child we started (jmptrace and its tracee).
sub kill_group {
	my ($pid) = @_;
	kill 'KILL', -$pid;
	kill 'KILL', $pid;
}

# Waits for $pid at most $secs seconds. Returns the wait status, or undef on timeout.
sub wait_timeout {
	my ($pid, $secs) = @_;
	my $status;
	eval {
		local $SIG{ALRM} = sub { die "timeout\n" };
		alarm $secs;
		my $r = waitpid($pid, 0);
		alarm 0;
		$status = $? if $r == $pid;
	};
	alarm 0;
	die $@ if $@ && $@ ne "timeout\n";
	return $status;
}

# Runs argv with stdin from the string opts{stdin} (default empty), stdout and stderr to
# files, in its own process group, without core dumps, in a scratch directory. Returns
# { status, exit (or undef), signal (or undef), stdout, stderr, timed_out, dir }.
# argv with the suites' source made explicit: jmptrace's default (--source auto) takes the
# uprobe source as root, and the suites are about the source they name (JT_SOURCE's, else
# ptrace). jmptrace may come after a wrapper (env, setpriv). An argv that names a source,
# `jmptrace diff`, or opts{auto} is left as it is.
sub with_source {
	my ($o, @argv) = @_;
	return @argv if $o->{auto};
	my ($bin, $wrapper) = (jmptrace_bin(), jmptrace());
	my ($i) = grep { $argv[$_] eq $bin || $argv[$_] eq $wrapper } 0 .. $#argv;
	return @argv if !defined $i || $i == $#argv || $argv[$i + 1] eq 'diff';
	for my $a (@argv[$i + 1 .. $#argv]) {
		last if $a eq '--';
		return @argv if $a eq '--source' || $a =~ /^--source=/;
	}
	return (@argv[0 .. $i], '--source', source(), @argv[$i + 1 .. $#argv]);
}

sub run_cmd {
	my (%o) = @_;
	my $dir = $o{dir} // tempdir('jt-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	spew("$dir/stdin", $o{stdin} // '');
	my $secs = $o{timeout} // timeout_secs();
	my $pid = fork();
	die "fork: $!\n" unless defined $pid;
	if ($pid == 0) {
		setpgid(0, 0);
		chdir $dir;
		open(STDIN, '<', "$dir/stdin") or POSIX::_exit(120);
		open(STDOUT, '>', "$dir/stdout") or POSIX::_exit(120);
		open(STDERR, '>', "$dir/stderr") or POSIX::_exit(120);
		# sh replaces itself with argv: only the core-size limit is left behind.
		no warnings q(exec);
		exec('/bin/sh', '-c', 'ulimit -c 0; exec "$@"', 'sh', with_source(\%o, @{ $o{argv} }));
		POSIX::_exit(127);
	}
	setpgid($pid, $pid);	# also in the parent, so a kill can never miss the group
	$LIVE{$pid} = 1;
	my $status = wait_timeout($pid, $secs);
	my $timed_out = !defined $status;
	if ($timed_out) {
		kill_group($pid);
		$status = wait_timeout($pid, 10) // -1;
	}
	kill 'KILL', -$pid;	# a tracee left behind by a crashed jmptrace
	delete $LIVE{$pid};
	my %r = (status => $status, timed_out => $timed_out, dir => $dir,
		 stdout => slurp("$dir/stdout"), stderr => slurp("$dir/stderr"));
	if ($status >= 0 && WIFEXITED($status)) {
		$r{exit} = WEXITSTATUS($status);
	} elsif ($status >= 0 && WIFSIGNALED($status)) {
		$r{signal} = WTERMSIG($status);
	}
	return \%r;
}

END {
	kill_group($_) for keys %LIVE;
}

# Starts argv in the background in its own process group, stdout and stderr to
# DIR/NAME.stdout and DIR/NAME.stderr, stdin from a pipe kept in {stdin} (or /dev/null
# unless opts{stdin_pipe}). Returns { pid, stdin, out, err }. reap() must be called.
sub spawn {
	my (%o) = @_;
	my ($dir, $name) = ($o{dir}, $o{name});
	my ($rd, $wr);
	if ($o{stdin_pipe}) {
		pipe($rd, $wr) or die "pipe: $!\n";
	}
	# A file left by an earlier spawn of the same name would answer for this one (attach_done).
	unlink("$dir/$name.stdout", "$dir/$name.stderr");
	my $pid = fork();
	die "fork: $!\n" unless defined $pid;
	if ($pid == 0) {
		setpgid(0, 0);
		if ($rd) {
			close $wr;
			open(STDIN, '<&', $rd) or POSIX::_exit(120);
		} else {
			open(STDIN, '<', '/dev/null') or POSIX::_exit(120);
		}
		open(STDOUT, '>', "$dir/$name.stdout") or POSIX::_exit(120);
		open(STDERR, '>', "$dir/$name.stderr") or POSIX::_exit(120);
		# Tests attach with jmptrace -p, our child too: not an ancestor of this one, which
		# Yama's ptrace_scope=1 asks of a tracer that is not root. prctl(PR_SET_PTRACER,
		# PR_SET_PTRACER_ANY) lifts that for this process, and fails harmlessly without Yama.
		syscall(157, 0x59616d61, -1);	# SYS_prctl on x86-64
		no warnings 'exec';
		# The block form: a one-element argv is never split at spaces (a $TMPDIR with one).
		my @argv = with_source(\%o, @{ $o{argv} });
		exec { $argv[0] } @argv;
		POSIX::_exit(127);
	}
	setpgid($pid, $pid);
	$LIVE{$pid} = 1;
	close $rd if $rd;
	if ($wr) {
		my $old = select($wr);
		$| = 1;
		select($old);
	}
	return { pid => $pid, stdin => $wr, out => "$dir/$name.stdout", err => "$dir/$name.stderr" };
}

# Waits at most $secs for a spawned process; kills its group on timeout. Returns the
# wait status, or undef when it had to be killed.
sub reap {
	my ($h, $secs) = @_;
	close $h->{stdin} if $h->{stdin};
	delete $h->{stdin};
	my $status = wait_timeout($h->{pid}, $secs // timeout_secs());
	if (!defined $status) {
		kill_group($h->{pid});
		wait_timeout($h->{pid}, 10);
	}
	delete $LIVE{ $h->{pid} };
	return $status;
}

# Polls $cond every 50 ms for at most $secs seconds; returns its last value.
sub wait_until {
	my ($cond, $secs) = @_;
	my $end = time() + $secs;
	while (1) {
		my $v = $cond->();
		return $v if $v || time() > $end;
		select(undef, undef, undef, 0.05);
	}
}

# The decoded JSON file, or undef while it is missing or incomplete.
sub read_json {
	my $text = slurp($_[0]);
	return undef unless defined $text && length $text;
	return eval { decode_report($text) };
}

# A JSON report decoded, format 2 expanded (expand_report): dies on bad JSON, as decode does.
sub decode_report { expand_report(JSON::PP->new->decode($_[0])) }

# A format-2 report ("format": 2: each snapshot lists the stacks that changed since the
# previous one of its "heap", a stack's frames (and "site", "truncated") only in its first entry, as numbers in the
# frame table that the snapshots' "new_frames" make; "oldest_ms"/"newest_ms"
# for the ages; "growth" without its stacks' series) rebuilt in place as format 1 has it, so that a
# test reads every snapshot whole; the entries as written stay in each snapshot's
# "stacks_changed". Format 1 is returned as it is. Returns $doc.
sub expand_report {
	my ($doc) = @_;
	return $doc unless ref $doc eq 'HASH' && ($doc->{format} // 1) >= 2;
	my (%cur, %frames, %site, %hist, @table);
	for my $s (@{ $doc->{snapshots} }) {
		my $h = $s->{heap} // 0;
		$s->{stacks_changed} = $s->{stacks};
		push @table, @{ $s->{new_frames} // [] };
		for my $st (@{ $s->{stacks} }) {
			if ($st->{frames}) {
				$frames{$h}{ $st->{id} } = [map { $table[$_] } @{ $st->{frames} }];
				$site{$h}{ $st->{id} } = { map { exists $st->{$_} ? ($_ => $st->{$_}) : () } qw(site truncated cut_by) };
			}
			$cur{$h}{ $st->{id} } = $st;
		}
		my @all;
		for my $st (values %{ $cur{$h} }) {
			my %e = %$st;
			$e{frames} = $frames{$h}{ $e{id} };
			%e = (%e, %{ $site{$h}{ $e{id} } // {} });
			if (defined $e{oldest_ms}) {
				$e{oldest_age_ms} = $s->{time_ms} - delete $e{oldest_ms};
				$e{newest_age_ms} = $s->{time_ms} - delete $e{newest_ms};
			}
			push @all, \%e;
		}
		@all = sort { (($b->{live_blocks} ? 1 : 0) <=> ($a->{live_blocks} ? 1 : 0))
			|| ($a->{live_blocks} ? $b->{live_bytes} <=> $a->{live_bytes}
			    || $b->{live_blocks} <=> $a->{live_blocks} : 0)
			|| $a->{id} <=> $b->{id} } @all;
		$s->{stacks} = \@all;
		my %lb = map { $_->{id} => $_->{live_bytes} } @all;
		push @{ $hist{$h} }, [$s->{time_ms}, \%lb];
		if (my $g = $s->{growth}) {
			# Growth keeps some of the snapshots (times_ms): each stack's live bytes at their times.
			my %at = map { $_->[0] => $_->[1] } @{ $hist{$h} };
			for my $row (@{ $g->{stacks} }) {
				$row->{live_bytes} = [map { ($at{$_} // {})->{ $row->{id} } // 0 } @{ $g->{times_ms} }];
			}
		}
	}
	return $doc;
}

# True once jmptrace -p, spawned as $j, has attached and set up its tracing: it says so on
# stderr. Not catches_signal: jmptrace catches SIGINT, SIGTERM, SIGHUP and SIGUSR1 before it
# attaches (a signal during the attach then detaches at the loop's first turn), so a test
# that signals it on seeing the handler can end a trace that never began (a slow attach:
# the uprobe source opens its events, a loaded host).
sub attach_done {
	my ($j) = @_;
	return (slurp($j->{err}) // '') =~ /^jmptrace: attached to process \d+/m;
}

# True once process $pid has a handler for signal number $sig (SigCgt in /proc).
sub catches_signal {
	my ($pid, $sig) = @_;
	my $st = slurp("/proc/$pid/status") // '';
	my ($mask) = $st =~ /^SigCgt:\s*([0-9a-f]+)/m or return 0;
	my $digit = hex(substr($mask, length($mask) - 1 - int(($sig - 1) / 4), 1));
	return ($digit >> (($sig - 1) % 4)) & 1;
}

# The number a heartbeat-style test program last wrote to file $path, or -1.
sub heartbeat { my $v = slurp($_[0]) // ''; $v =~ /^(\d+)/ ? $1 : -1 }

# Every thread of $pid whose TracerPid is not 0, as "tid:tracer" (empty when none is traced).
sub traced_threads {
	my ($pid) = @_;
	my @t;
	opendir(my $d, "/proc/$pid/task") or return ('no task dir');
	for my $tid (grep { /^\d+$/ } readdir $d) {
		my $st = slurp("/proc/$pid/task/$tid/status") // '';
		push @t, "$tid:$1" if $st =~ /^TracerPid:\s*(\d+)/m && $1 != 0;
	}
	return @t;
}

# tests/progs/arch32 built for i386 in $dir (cc -m32, gcc-multilib) and run once: a host
# that builds a 32-bit program may still refuse to run it with "Exec format error" (a
# kernel without ia32 emulation, or one booted with ia32_emulation=false). Returns
# { path (undef when it cannot be built), runs (true when it ran), why (unless it ran) }.
# JT_NO_32BIT=1 acts out such a host to test the tests (jmptrace never reads it): the
# program's ELF type is made ET_REL, which the kernel refuses with the same ENOEXEC.
sub arch32_program {
	my ($dir) = @_;
	my $path = "$dir/arch32";
	my $cc = $ENV{CC} // 'cc';
	if (system("$cc -m32 -O2 -o '$path' '" . src_path('arch32/main.c') . "' 2>'$dir/cc.err'") != 0) {
		my @err = split /\n/, slurp("$dir/cc.err") // '';
		my ($line) = (grep({ /error/ } @err), @err, "$cc failed");
		return { why => "cc -m32 does not work here (apt-get install gcc-multilib): $line" };
	}
	unrunnable_copy($path, $path) if $ENV{JT_NO_32BIT};
	# bash, not sh or execvp, which run a file the kernel refuses as a shell script; and
	# not its exec builtin, which then says "Success".
	my $r = run_cmd(argv => ['bash', '-c', '"$0" 0', $path], timeout => 60);
	return { path => $path, runs => 1 } if ($r->{exit} // -1) == 0 && $r->{stdout} eq "arch32: ok\n";
	# bash says "FILE: line 1: PATH: cannot execute binary file: Exec format error".
	my ($err) = ($r->{stderr} // '') =~ /\s*([^:\n]+(?:: [^:\n]+)?)\n?\z/;
	$err //= "exit " . ($r->{exit} // 'none') . ", stdout '$r->{stdout}'";
	return { path => $path, why => 'this host cannot run 32-bit programs'
		 . ($ENV{JT_NO_32BIT} ? ' (JT_NO_32BIT is set)' : '') . ": $err" };
}

# Copies program $from to $to with its ELF type (e_type) made ET_REL: the same header
# otherwise, but execve fails with ENOEXEC ("Exec format error").
sub unrunnable_copy {
	my ($from, $to) = @_;
	my $elf = slurp($from) // die "$from: $!\n";
	substr($elf, 16, 2) = pack('v', 1);
	spew($to, $elf);
	chmod 0755, $to;
	return $to;
}

# The CPUs this process may run on, from its Cpus_allowed_list ("0-3,8").
sub allowed_cpus {
	my ($list) = (slurp('/proc/self/status') // '') =~ /^Cpus_allowed_list:\s*(\S+)/m;
	return map { /^(\d+)-(\d+)$/ ? ($1 .. $2) : /^(\d+)$/ ? ($1) : () } split /,/, $list // '';
}

# Runs a test program without jmptrace.
sub run_native {
	my ($prog, $mode, $args, %o) = @_;
	return run_cmd(%o, argv => [prog_path($prog, $mode), @{ $args // [] }]);
}

# Runs a test program under jmptrace with --json and -o into the scratch directory.
# opts: args (program arguments), jt_args (options before --), stdin, no_o (report to
# stderr), path (run this program instead of prog/mode). Adds json (decoded or undef),
# json_error and report (the -o file) to the run_cmd result.
sub run_jt {
	my ($prog, $mode, %o) = @_;
	my $dir = tempdir('jt-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my @jt = (jmptrace(), '--json', "$dir/report.json");
	push @jt, '-o', "$dir/report.txt" unless $o{no_o};
	push @jt, @{ $o{jt_args} // [] };
	my $path = $o{path} // prog_path($prog, $mode);
	my $r = run_cmd(%o, dir => $dir, argv => [@jt, '--', $path, @{ $o{args} // [] }]);
	$r->{report} = slurp("$dir/report.txt");
	my $text = slurp("$dir/report.json");
	if (!defined $text) {
		$r->{json_error} = 'no JSON file written';
	} else {
		$r->{json} = eval { decode_report($text) };
		$r->{json_error} = "bad JSON: $@" if $@;
	}
	return $r;
}

# The last snapshot of a run (the one written at exit), or undef.
sub last_snapshot {
	my ($r) = @_;
	my $snaps = $r->{json} && $r->{json}{snapshots};
	return undef unless ref $snaps eq 'ARRAY' && @$snaps;
	return $snaps->[-1];
}

# Runs $run->(), which returns a run_jt result, again while its last snapshot says events
# were lost, $tries runs at most; returns the last result. The uprobe source loses events,
# and says so, when its reader is kept off the CPU for longer than its rings last: an idle
# 2-vCPU VM lost 10,064 of dlbusy's 480,000 and 86,741 of hold's 1,800,000 in one CI run
# (stolen time), and none in the runs before or after. A figure is asserted on a run that
# lost nothing, and a run that loses each time still fails.
sub run_unlost {
	my ($what, $tries, $run) = @_;
	my $r;
	for my $i (1 .. $tries) {
		$r = $run->();
		my $s = last_snapshot($r);
		my $lost = $s ? $s->{totals}{lost_events} // 0 : 0;
		return $r unless $lost;
		Test::More::diag("$what: $lost events lost (said), run " . ($i < $tries ? 'again' : "$i of $tries"));
	}
	return $r;
}

# totals.calls{$name}; dies when the key is missing, so a typo cannot pass as 0.
sub calls_of {
	my ($snap, $name) = @_;
	my $calls = $snap->{totals}{calls};
	die "totals.calls has no key '$name'\n" unless exists $calls->{$name};
	return $calls->{$name};
}

# True when the frame's function is $name, with or without a C++ parameter list.
sub frame_func_is {
	my ($frame, $name) = @_;
	my $f = $frame->{function};
	return defined $f && $f =~ /^\Q$name\E(?:\(.*\))?$/;
}

# True when the frame's file has basename $base ("file" may be a full path).
sub frame_file_is {
	my ($frame, $base) = @_;
	return defined $frame->{file} && basename($frame->{file}) eq $base;
}

# The stacks that hold live blocks: "stacks" lists every stack that allocated, and the
# helpers below select among the live ones, as they did when only those were listed.
sub live_stacks {
	my ($snap) = @_;
	return grep { $_->{live_blocks} } @{ $snap->{stacks} // [] };
}

# Live stacks whose frame 0 is function $func (and, when given, at line $line).
sub stacks_with_frame0 {
	my ($snap, $func, $line) = @_;
	return grep {
		my $f = $_->{frames}[0];
		$f && frame_func_is($f, $func) && (!defined $line || ($f->{line} // -1) == $line)
	} live_stacks($snap);
}

# Live stacks whose frame 0 is the call site $file:$line (basename of file).
sub stacks_at_site {
	my ($snap, $file, $line) = @_;
	return grep {
		my $f = $_->{frames}[0];
		$f && frame_file_is($f, $file) && ($f->{line} // -1) == $line
	} live_stacks($snap);
}

# Live stacks with any frame in function $func at $file:$line (for inlined callers such as
# std::vector::reserve, whose frame 0 is in a libstdc++ header).
sub stacks_through {
	my ($snap, $func, $file, $line) = @_;
	return grep {
		grep {
			frame_func_is($_, $func) && frame_file_is($_, $file) && ($_->{line} // -1) == $line
		} @{ $_->{frames} }
	} live_stacks($snap);
}

# A snapshot's figures that every event source must agree on exactly: its totals and its
# non-zero call counts (tests/uprobe.t, tests/uprobe_paths.t).
sub source_figures {
	my ($s) = @_;
	my $t = $s->{totals};
	my %calls = map { $_ => $t->{calls}{$_} } grep { $t->{calls}{$_} } keys %{ $t->{calls} };
	return { calls => \%calls, map { $_ => $t->{$_} }
		 qw(alloc_calls bytes_allocated frees unknown_frees live_bytes live_blocks temporary) };
}

sub sum_field {
	my ($field, @stacks) = @_;
	my $n = 0;
	$n += $_->{$field} // 0 for @stacks;
	return $n;
}

sub describe_frame {
	my ($f) = @_;
	return '(none)' unless $f;
	return sprintf('%s %s:%s [%s]%s', $f->{function} // '??',
		       defined $f->{file} ? basename($f->{file}) : '??', $f->{line} // '?',
		       $f->{module} // '??', $f->{inlined} ? ' (inlined)' : '');
}

# One line per live stack (live bytes/blocks, alloc calls, first frames), for diagnostics.
sub describe_stacks {
	my ($snap, $max) = @_;
	my @out;
	for my $s (live_stacks($snap)) {
		last if defined $max && @out >= $max;
		my @fr = @{ $s->{frames} // [] };
		my $n = @fr < 3 ? @fr : 3;
		push @out, sprintf('live %s B/%s blk, %s calls: %s', $s->{live_bytes} // '?',
				   $s->{live_blocks} // '?', $s->{alloc_calls} // '?',
				   join(' <- ', map { describe_frame($_) } @fr[0 .. $n - 1]));
	}
	return join("\n", @out);
}

sub is_true { JSON::PP::is_bool($_[0]) && $_[0] ? 1 : 0 }
sub is_false { JSON::PP::is_bool($_[0]) && !$_[0] ? 1 : 0 }

1;
