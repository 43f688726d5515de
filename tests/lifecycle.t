#!/usr/bin/perl
# lifecycle.t - attach to a busy program again and again and leave it unharmed; -p errors;
# fork, vfork, exec and system() with and without -f.
use strict;
use warnings;
no warnings qw(portable);	# 64-bit addresses from /proc/PID/maps
use Cwd qw(abs_path);
use File::Basename qw(basename);
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempdir);
use POSIX qw(WIFEXITED WEXITSTATUS);
use Test::More;
use JT;
use JTCheck;

my $JT = JT::jmptrace();
-x $JT or plan skip_all => "no jmptrace at $JT";
my @modes = $ENV{JT_MODES} ? split(/[\s,]+/, $ENV{JT_MODES}) : qw(pie static);

sub tracer_pid {
	my $st = JT::slurp("/proc/$_[0]/status") // '';
	return $st =~ /^TracerPid:\s*(\d+)/m ? $1 : -1;
}

# The first process that matches $want(pid, uid, flags, state from /proc/PID/stat), or undef.
sub find_process {
	my ($want) = @_;
	for my $d (sort { $a <=> $b } map { m{/(\d+)$} ? $1 : () } glob '/proc/[0-9]*') {
		my $stat = JT::slurp("/proc/$d/stat") // next;
		my $uid = (stat "/proc/$d")[4] // next;
		# Field 9, the flags, is the 7th after the ')' that ends the command name.
		my @f = split ' ', substr($stat, rindex($stat, ')') + 2);
		return $d if $d != $$ && defined $f[6] && $want->($d, $uid, $f[6], $f[0]);
	}
	return undef;
}

sub thread_count {
	opendir(my $d, "/proc/$_[0]/task") or return -1;
	return scalar grep { /^\d+$/ } readdir $d;
}

# Every executable file mapping must hold exactly the file's bytes: no int3 left behind.
# Returns the list of mappings that differ.
sub code_differs {
	my ($pid) = @_;
	my @bad;
	open(my $maps, '<', "/proc/$pid/maps") or return ("no maps");
	open(my $mem, '<:raw', "/proc/$pid/mem") or return ("no mem");
	while (my $l = <$maps>) {
		my ($range, $perm, $off, undef, undef, $path) = split ' ', $l;
		next unless $perm =~ /x/ && defined $path && $path =~ m{^/} && -f $path;
		my ($lo, $hi) = map { hex } split /-/, $range;
		open(my $f, '<:raw', $path) or next;
		my $len = $hi - $lo;
		sysseek($f, hex($off), 0);
		my $want = '';
		sysread($f, $want, $len);
		sysseek($mem, $lo, 0) or do { push @bad, "$path (seek)"; next };
		my $got = '';
		sysread($mem, $got, length $want);
		push @bad, $path if $got ne $want;
	}
	return @bad;
}

# Alive, and not a zombie: a program this test spawned stays one, and answers kill 0, until
# it is reaped. (Killed by a trap byte left behind, it did, and the 20 cycles below went on
# attaching to it: 20 minutes for a heartbeat that could not come.)
sub alive {
	my ($pid) = @_;
	return kill(0, $pid) && (JT::slurp("/proc/$pid/stat") // '') !~ /^\d+ \(.*\) [ZX] /s;
}

# Attaches, lets the program run, detaches with SIGINT; checks the program is unharmed.
# Returns the last snapshot (or undef).
sub attach_cycle {
	my ($p, $dir, $hb, $name, $secs, %o) = @_;
	my $before = heartbeat($hb);
	my $j = JT::spawn(argv => [$JT, '-p', $p->{pid}, '--json', "$dir/r.json", '-o', "$dir/r.txt"],
			  dir => $dir, name => 'jt');
	# jmptrace is set up once it says it attached (it catches SIGINT before it attaches).
	JT::wait_until(sub { JT::attach_done($j) }, 60);
	select(undef, undef, undef, $secs);
	kill 'INT', $j->{pid};
	my $t0 = time;
	my $js = JT::reap($j, 30);
	my $s;
	if (!$o{quiet}) {
		ok(defined $js && WIFEXITED($js) && WEXITSTATUS($js) == 0, "$name: jmptrace exits 0 after SIGINT")
			or diag(JT::slurp($j->{err}) // '');
		my $x = JT::read_json("$dir/r.json");
		$s = $x && $x->{snapshots}[-1];
	}
	my @bad = code_differs($p->{pid});
	my $tracer = tracer_pid($p->{pid});
	my $alive = alive($p->{pid});
	my $ok = defined $js && $alive && $tracer == 0 && !@bad;
	if (!$o{quiet} || !$ok) {
		ok($alive, "$name: the program is alive");
		is($tracer, 0, "$name: TracerPid is 0");
		ok(!@bad, "$name: every executable mapping equals its file") or diag("differ: @bad");
		is(thread_count($p->{pid}), 9, "$name: all 9 threads still there");
		my $later = $alive && JT::wait_until(sub { heartbeat($hb) > $before + 100 ? heartbeat($hb) : 0 }, 60);
		ok($later, "$name: the heartbeat advances after the detach ($before -> " . heartbeat($hb) . ")");
	}
	return $ok ? ($s // 1) : undef;
}

for my $mode (@modes) {
	subtest "busy program, attach and detach, heartbeat-$mode" => sub {
		my $dir = tempdir('jt-life-XXXXXX', TMPDIR => 1, CLEANUP => 1);
		my $hb = "$dir/heartbeat";
		my $p = JT::spawn(argv => [JT::prog_path('heartbeat', $mode), $hb], dir => $dir, name => 'prog');
		ok(JT::wait_until(sub { heartbeat($hb) > 1000 }, 30), 'the program runs') or return JT::reap($p, 1);
		for my $round (1, 2) {
			my $s = attach_cycle($p, $dir, $hb, "attach $round", 1.0);
			next unless ref $s;
			is($s->{reason}, 'signal', "attach $round: snapshot reason signal");
			ok(JT::is_true($s->{attached}) && !JT::is_true($s->{exited}),
			   "attach $round: attached, not exited");
			my @st = JT::stacks_with_frame0($s, 'hb_keep');
			my $blocks = JT::sum_field('live_blocks', @st);
			ok($blocks > 0, "attach $round: live blocks from hb_keep ($blocks)");
			is(JT::sum_field('live_bytes', @st), 72 * $blocks, "attach $round: each of them 72 bytes");
			my $l = JT::site_line('heartbeat/grow.c', 'SITE:hb_keep');
			my @at = grep { ($_->{frames}[0]{line} // 0) == $l } @st;
			is(scalar(@at), scalar(@st), "attach $round: hb_keep stacks point at grow.c:$l");
			ok((grep { ($_->{frames}[1]{function} // '') eq 'worker' } @st), "attach $round: called from worker");
		}
		# Stress: 20 short attach/detach cycles; report only what goes wrong.
		my $fails = 0;
		for my $i (1 .. 20) {
			$fails++ unless attach_cycle($p, $dir, $hb, "cycle $i", 0.05 + 0.02 * ($i % 5), quiet => 1);
			last if !alive($p->{pid});
		}
		is($fails, 0, '20 attach/detach cycles, all clean');
		my $before = heartbeat($hb);
		ok(alive($p->{pid}) && JT::wait_until(sub { heartbeat($hb) > $before + 100 }, 60), 'still running after the cycles');
		unlike(JT::slurp($p->{out}) // '', qr/BROKEN/, 'the program never saw corruption or a stray signal');
		kill 'TERM', $p->{pid};
		JT::reap($p, 10);
	};
}

subtest 'duration and SIGUSR1 while attached' => sub {
	my $dir = tempdir('jt-life-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my $hb = "$dir/heartbeat";
	my $p = JT::spawn(argv => [JT::prog_path('heartbeat', 'pie'), $hb], dir => $dir, name => 'prog');
	ok(JT::wait_until(sub { heartbeat($hb) > 1000 }, 30), 'the program runs') or return JT::reap($p, 1);
	my $j = JT::spawn(argv => [$JT, '-p', $p->{pid}, '--duration', '1.5', '--json', "$dir/d.json", '-o', "$dir/d.txt"],
			  dir => $dir, name => 'jt');
	JT::wait_until(sub { JT::attach_done($j) }, 30);
	kill 'USR1', $j->{pid};
	my $js = JT::reap($j, 30);
	ok(defined $js && WIFEXITED($js) && WEXITSTATUS($js) == 0, '--duration: jmptrace detaches and exits 0 by itself');
	my $x = JT::read_json("$dir/d.json");
	is(scalar(@{ $x->{snapshots} // [] }), 2, 'two snapshots: SIGUSR1, then the one at detach');
	is(join(',', map { $_->{reason} } @{ $x->{snapshots} // [] }), 'sigusr1,duration', 'their reasons');
	is(tracer_pid($p->{pid}), 0, 'TracerPid is 0');
	ok(!code_differs($p->{pid}), 'code bytes intact');
	kill 'TERM', $p->{pid};
	JT::reap($p, 10);
};

subtest '-p errors: one line on stderr, non-zero exit' => sub {
	my $dir = tempdir('jt-life-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my $check = sub {
		my ($name, $args, $re) = @_;
		my $r = JT::run_cmd(argv => [$JT, @$args], timeout => 30);
		my @lines = split /\n/, $r->{stderr} // '';
		ok(defined $r->{exit} && $r->{exit} != 0, "$name: non-zero exit");
		is(scalar(@lines), 1, "$name: exactly one line on stderr");
		like($lines[0] // '', $re, "$name: says why");
	};
	my $nopid = 4194304 + 7;	# above pid_max: never a process
	$check->('no such process', ['-p', $nopid], qr/no such process/);
	# pid 2 is kthreadd only outside a pid namespace: look for a kernel thread (PF_KTHREAD).
	my $kthread = find_process(sub { $_[2] & 0x00200000 });
	SKIP: {
		skip('no kernel thread visible here (a pid namespace)', 3) unless $kthread;
		$check->('kernel thread', ['-p', $kthread], qr/kernel thread/);
	}

	my $hb = "$dir/heartbeat";
	my $p = JT::spawn(argv => [JT::prog_path('heartbeat', 'pie'), $hb], dir => $dir, name => 'prog');
	JT::wait_until(sub { heartbeat($hb) > 100 }, 30);
	my $j = JT::spawn(argv => [$JT, '-p', $p->{pid}, '-o', "$dir/r.txt"], dir => $dir, name => 'jt');
	JT::wait_until(sub { tracer_pid($p->{pid}) > 0 }, 30);
	$check->('already traced', ['-p', $p->{pid}], qr/already traced by process $j->{pid} \(jmptrace\)/);
	kill 'INT', $j->{pid};
	JT::reap($j, 30);
	# Root becomes nobody to meet a process of another user; anyone else looks for one.
	my @other;
	if ($> == 0) {
		@other = ('/usr/bin/setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', $JT, '-p', $p->{pid})
			if getpwnam('nobody') && -x '/usr/bin/setpriv';
	} else {
		my $pid = find_process(sub { $_[1] != $> && !($_[2] & 0x00200000) && $_[3] ne 'Z' });
		@other = ($JT, '-p', $pid) if $pid;
	}
	SKIP: {
		skip('no way to meet a process of another user', 2) unless @other;
		# A plain user is refused the uprobe source before any attach (tests/uprobe.t).
		skip('--source uprobe refuses a plain user first', 2) if JT::source() eq 'uprobe';
		my $r = JT::run_cmd(argv => \@other, timeout => 30);
		like($r->{stderr} // '', qr/belongs to another user/, 'another user: says so');
		ok(defined $r->{exit} && $r->{exit} != 0, 'another user: non-zero exit');
	}
	kill 'TERM', $p->{pid};
	JT::reap($p, 10);

	# A zombie: a child that exited and whose parent does not reap it.
	my $zp = JT::spawn(argv => ['/bin/sh', '-c', '/bin/true & exec sleep 30'], dir => $dir, name => 'zparent');
	my $zombie;
	JT::wait_until(sub {
		for my $t (glob '/proc/[0-9]*/status') {
			my $st = JT::slurp($t) // '';
			next unless $st =~ /^PPid:\s*$zp->{pid}$/m && $st =~ /^State:\s*Z/m;
			($zombie) = $t =~ m{/proc/(\d+)/};
			return 1;
		}
		return 0;
	}, 60);
	if ($zombie) {
		$check->('zombie', ['-p', $zombie], qr/zombie/);
	} else {
		fail('could not make a zombie');
	}
	kill 'KILL', -$zp->{pid};
	JT::reap($zp, 10);
};

# fork, vfork+exec, system() and exec of a static program from a dynamic one: the same
# output with and without jmptrace, with and without -f.
subtest 'fork, vfork, exec and system()' => sub {
	my $dir = tempdir('jt-life-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my $static = JT::prog_path('leak', 'static');
	my $script = 'for i in 1 2 3; do echo "line $i"; done; '
		   . "(echo child; exit 7); echo \"child status \$?\"; "
		   . "x=\$(echo from-subshell); echo \$x; "
		   . "$static 5 0 >/dev/null; echo \"static status \$?\"; "
		   . 'exec /bin/echo exec-done';
	my $n = JT::run_cmd(argv => ['/bin/sh', '-c', $script]);
	for my $f (0, 1) {
		my $r = JT::run_cmd(argv => [$JT, ($f ? ('-f') : ()), '--json', "$dir/f$f.json", '-o', "$dir/f$f.txt",
					     '--', '/bin/sh', '-c', $script]);
		my $name = $f ? 'with -f' : 'without -f';
		is($r->{stdout}, $n->{stdout}, "$name: stdout identical");
		is($r->{status}, $n->{status}, "$name: exit status identical");
		my $x = JT::read_json("$dir/f$f.json");
		my @snaps = @{ $x->{snapshots} // [] };
		if ($f) {
			my %pids = map { $_->{pid} => 1 } @snaps;
			ok(keys(%pids) >= 3, '-f: a snapshot per followed process, labelled by pid (' . scalar(keys %pids) . ')');
			my @st = grep { ($_->{exe} // '') =~ /leak-static$/ } @snaps;
			is(scalar(@st), 1, '-f: the static program exec\'d by a child has its own snapshot');
			if (@st) {
				is($st[0]{command}, "$static 5 0", '-f: it is named by its command line');
				my @leak = JT::stacks_with_frame0($st[0], 'leak_here');
				is(JT::sum_field('live_blocks', @leak), 5, '-f: its 5 leaked blocks from leak_here')
					or diag(join("\n", map { "$_->{pid} $_->{command}: $_->{totals}{alloc_calls} calls" } @snaps));
			}
		} else {
			# The shell's image ends at its exec: a report of its own, then echo's, from zero.
			is(join(' ', map { $_->{reason} } @snaps), 'exec exit',
			   'without -f: two snapshots, the shell\'s at its exec, then echo\'s at its exit');
			is($snaps[0] && $snaps[0]{exe}, abs_path('/bin/sh'), 'without -f: the first is the shell\'s');
			like($snaps[-1] && $snaps[-1]{command}, qr{^/bin/echo exec-done$}, 'without -f: the last is echo\'s');
			my $sh = basename(abs_path('/bin/sh'));
			my @shf = grep { ($_->{module} // '') eq $sh } map { @{ $_->{frames} // [] } } @{ ($snaps[-1] // {})->{stacks} // [] };
			ok(!@shf, "without -f: no frame of the shell ($sh) in echo's report");
		}
	}
};

done_testing();
