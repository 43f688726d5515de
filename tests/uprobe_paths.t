#!/usr/bin/perl
# uprobe_paths.t - the uprobe source's two event paths. The BPF path (one program in links per
# process, one ring for every thread; Linux 6.6) is taken wherever the kernel makes the links;
# the perf path (a perf event per thread and probe, a ring per thread) where it does not
# (Debian 12's 6.1), and on newer kernels with the test-only JMPTRACE_TEST_UPROBE_PATH=perf;
# -v says which and why. Both count exactly what the ptrace source counts, and on the BPF path a stack copy that
# reaches the end of the stack ends there instead of failing whole. (Its start and exit cost,
# 0.11-0.19 s against the perf path's 1.5 s, is make bench's.)
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp;
use Test::More;
use Time::HiRes qw(time);
use JT;

my $JT = JT::jmptrace_bin();
-x $JT or plan skip_all => "no jmptrace at $JT";
plan skip_all => 'chooses its sources itself: run in the ptrace pass only' if JT::source() ne 'ptrace';
$> == 0 or plan skip_all => 'the uprobe source needs root';
-e '/sys/bus/event_source/devices/uprobe/type' or plan skip_all => 'this kernel has no uprobes';

# The -v line that names the path a run took, or ''.
sub path_line {
	my ($r) = @_;
	return ($r->{stderr} // '') =~ /^jmptrace: uprobe source: (the (?:BPF|perf) path.*)$/m ? $1 : '';
}


# The perf path on demand, and -v says why it was taken.
{
	local $ENV{JMPTRACE_TEST_UPROBE_PATH} = 'perf';
	my $r = run_cmd(argv => [$JT, '--source', 'uprobe', '-v', '-o', '/dev/null', '--', '/bin/true']);
	is($r->{exit}, 0, 'perf path: exit 0') or diag($r->{stderr});
	is(path_line($r), 'the perf path, a ring per thread (JMPTRACE_TEST_UPROBE_PATH=perf)', '-v: the perf path, and why');
}

# The default: the BPF path, or the perf path and why the BPF one could not be taken.
my $v = run_cmd(argv => [$JT, '--source', 'uprobe', '-v', '-o', '/dev/null', '--', '/bin/true']);
is($v->{exit}, 0, 'the default path: exit 0') or diag($v->{stderr});
my $line = path_line($v);
my ($no_bpf) = $line =~ /^the perf path, a ring per thread: (.*)$/;

SKIP: {
	skip "this kernel takes the perf path: $no_bpf", 1 if defined $no_bpf;
	is($line, 'the BPF path, uprobe_multi links per process and one ring of 32,768 KiB for all threads',
	   '-v: the default is the BPF path, its one ring of --buffer-size');
}

# The same figures on both paths as under ptrace: every allocator kind (memalign and
# aligned_alloc at one address), C++ exceptions through operator new (the unwinders' hooks:
# a SIGTRAP from the BPF program), 8 threads made after the links (the pid filter covers them).
for my $case (['allocators', 'pie', [3]], ['allocators', 'static', [3]], ['cxx', 'pie', [2, 2]],
	      ['threads', 'pie', [2000, 5, 40]]) {
	my ($prog, $mode, $args) = @$case;
	my $p = last_snapshot(run_jt($prog, $mode, args => $args, jt_args => ['--source', 'ptrace']));
	for my $path ('bpf', 'perf') {
		SKIP: {
			skip "this kernel takes the perf path: $no_bpf", 3 if $path eq 'bpf' && defined $no_bpf;
			local $ENV{JMPTRACE_TEST_UPROBE_PATH};
			$ENV{JMPTRACE_TEST_UPROBE_PATH} = 'perf' if $path eq 'perf';
			my $r = run_jt($prog, $mode, args => $args, jt_args => ['--source', 'uprobe']);
			is($r->{exit}, 0, "$prog-$mode, $path path: exit 0") or diag($r->{stderr});
			my $u = last_snapshot($r);
			is($u && $u->{totals}{lost_events}, 0, "$prog-$mode, $path path: no event lost");
			is_deeply($u && JT::source_figures($u), $p && JT::source_figures($p), "$prog-$mode, $path path: the ptrace source's figures")
				or diag(explain($u && JT::source_figures($u)), explain($p && JT::source_figures($p)));
		}
	}
}

# The C library's malloc makes one record a call on the BPF path, not an entry's and a
# return's (up_bpf_abi.h): -v counts the joined ones. Every malloc of threads (8 threads
# made after the links, each with its own stack top) is one; a static program's malloc is
# not the C library's shared one, and --pages probes mmap and sbrk, which malloc calls:
# neither joins. The figures are the ptrace source's either way (above, and here).
sub joined_of {
	my ($r) = @_;
	return ($r->{stderr} // '') =~ /^jmptrace: uprobe source: \d+ samples read.*\n^jmptrace: uprobe source: (\d+) of them joined calls/m
		? $1 : undef;
}
SKIP: {
	skip "this kernel takes the perf path: $no_bpf", 7 if defined $no_bpf;
	my $r = JT::run_unlost('threads-pie joined', 3,
			   sub { run_jt('threads', 'pie', args => [2000, 5, 40], jt_args => ['--source', 'uprobe', '-v']) });
	my $s = last_snapshot($r);
	is($r->{exit}, 0, 'joined: threads-pie exit 0') or diag($r->{stderr});
	is(joined_of($r), $s && JT::calls_of($s, 'malloc'), 'joined: every malloc of threads-pie in one record (16,040)');
	is($s && JT::calls_of($s, 'malloc'), 16040, 'joined: threads-pie\'s malloc calls');
	$r = run_jt('allocators', 'static', args => [3], jt_args => ['--source', 'uprobe', '-v']);
	is(joined_of($r), 0, 'joined: none in a static program') or diag($r->{stderr});
	my $p = last_snapshot(run_jt('pages', 'pie', jt_args => ['--source', 'ptrace', '--pages']));
	$r = run_jt('pages', 'pie', jt_args => ['--source', 'uprobe', '--pages', '-v']);
	is(joined_of($r), 0, 'joined: none with --pages') or diag($r->{stderr});
	$s = last_snapshot($r);
	ok($p && $p->{totals}{alloc_calls} > 0, 'joined: pages-pie allocates under ptrace');
	is_deeply($s && JT::source_figures($s), $p && JT::source_figures($p), 'joined: pages-pie with --pages, the ptrace source\'s figures')
		or diag(explain($s && JT::source_figures($s)), explain($p && JT::source_figures($p)));
}

# The C library's free waits for its thread's next record on the BPF path and comes at its
# end (up_bpf_abi.h's struct up_bpf_pf): one reservation of the ring a malloc and free pair.
# Another thread's malloc may then come before the free, of the very block the free released:
# handoff's main frees a block and waits while its worker mallocs, and with one arena and no
# tcache the worker's block is main's, and main's next one the worker's. The reader tells the
# two apart by the records' times (uevent.c): the ptrace source's figures, every block at its
# site, in each of 10 runs (a free taken for the other block's shows in the first run).
sub carried_of {
	my ($r) = @_;
	return ($r->{stderr} // '') =~ /^jmptrace: uprobe source: \d+ of them joined calls.*; (\d+) frees carried by their thread's next record$/m
		? $1 : undef;
}

# handoff's stack whose frame 0 is the site $site (live or not), or undef.
sub site_stack {
	my ($s, $site) = @_;
	my $line = JT::site_line("handoff/ho_sites.c", "SITE:$site");
	my @st = grep { my $f = $_->{frames}[0]; $f && ($f->{line} // -1) == $line && JT::frame_file_is($f, 'ho_sites.c') }
		 @{ $s ? $s->{stacks} : [] };
	return @st == 1 ? $st[0] : undef;
}

SKIP: {
	skip "this kernel takes the perf path: $no_bpf", 61 if defined $no_bpf;
	local $ENV{MALLOC_ARENA_MAX} = 1;
	local $ENV{GLIBC_TUNABLES} = 'glibc.malloc.tcache_count=0';
	my $p = last_snapshot(run_jt('handoff', 'pie', args => [200], jt_args => ['--source', 'ptrace']));
	my %want = (give => [0, 0, 200, 200], take => [50, 2000, 200, 150]);
	for my $site (sort keys %want) {
		my $st = site_stack($p, "ho_$site");
		is_deeply($st && [@$st{qw(live_blocks live_bytes alloc_calls frees)}], $want{$site},
			  "handoff under ptrace: ho_$site\'s live blocks, bytes, calls and frees");
	}
	for my $run (1 .. 10) {
		my $r = JT::run_unlost("handoff run $run", 3,
				      sub { run_jt('handoff', 'pie', args => [200], jt_args => ['--source', 'uprobe', '-v']) });
		my $s = last_snapshot($r);
		is($r->{exit}, 0, "handoff run $run: exit 0") or diag($r->{stderr});
		my ($reused) = ($r->{stdout} // '') =~ /^reused (\d+) of 200$/m;
		ok(($reused // 0) >= 100, "handoff run $run: the worker's block was main's freed one in " . ($reused // '?') . ' of 200 rounds');
		cmp_ok(carried_of($r) // 0, '>=', 300, "handoff run $run: frees carried by their thread's next record (" .
		       (carried_of($r) // '?') . ')');
		is_deeply($s && JT::source_figures($s), $p && JT::source_figures($p), "handoff run $run: the ptrace source's figures")
			or diag(explain($s && JT::source_figures($s)), explain($p && JT::source_figures($p)));
		my @got = map { my $st = site_stack($s, "ho_$_"); $st ? [@$st{qw(live_blocks live_bytes alloc_calls frees)}] : undef }
			  sort keys %want;
		is_deeply(\@got, [map { $want{$_} } sort keys %want], "handoff run $run: each site's live blocks, bytes, calls and frees")
			or diag(explain(\@got));
		last if !Test::More->builder->is_passing;
	}
}

# A thread that frees and then makes no allocator call keeps its free in its entry: a
# snapshot reads it there (every record of the thread's before it applied first). handoff
# idle frees its 1 MiB block after 1 s and sleeps 1 s more: the snapshots of --interval 0.25
# see it live at first and freed in the second sleep, not only at the exit.
SKIP: {
	skip "this kernel takes the perf path: $no_bpf", 4 if defined $no_bpf;
	my $r = run_jt('handoff', 'pie', args => ['idle', 1000], jt_args => ['--source', 'uprobe', '--interval', '0.25']);
	is($r->{exit}, 0, 'handoff idle: exit 0') or diag($r->{stderr});
	my @iv = grep { ($_->{reason} // '') eq 'interval' } @{ $r->{json} ? $r->{json}{snapshots} : [] };
	my @big = map { my $st = site_stack($_, 'ho_big'); $st ? [@$st{qw(live_bytes frees)}] : [0, 0] } @iv;
	cmp_ok(scalar @iv, '>=', 6, 'handoff idle: ' . scalar(@iv) . ' interval snapshots');
	is_deeply($big[0], [1048576, 0], 'handoff idle: the first sees the 1 MiB block live') or diag(explain(\@big));
	is_deeply($big[-1], [0, 1], 'handoff idle: the last, in the second sleep, sees it freed') or diag(explain(\@big));
}

# The bytes of process $pid's executable file mappings that differ from their files, or -1.
sub code_diffs {
	my ($pid) = @_;
	no warnings 'portable';	# hex() of 64-bit addresses
	open(my $maps, '<', "/proc/$pid/maps") or return -1;
	open(my $mem, '<:raw', "/proc/$pid/mem") or return -1;
	my $n = 0;
	while (my $l = <$maps>) {
		my ($lo, $hi, $perm, $off, $path) = $l =~ /^(\w+)-(\w+) (\S+) (\w+) \S+ \d+\s+(\/\S+)\n/ or next;
		next unless $perm =~ /x/;
		open(my $f, '<:raw', $path) or return -1;
		my $len = hex($hi) - hex($lo);
		sysseek($f, hex($off), 0) or return -1;
		my $got = sysread($f, my $file, $len) // return -1;
		sysseek($mem, hex($lo), 0) or return -1;
		(sysread($mem, my $code, $got) // -1) == $got or return -1;
		$n += ($code ^ $file) =~ tr/\0//c;
	}
	return $n;
}

# The pid of a child of process $pid that runs the program $exe (and is not traced, when
# $untraced: jmptrace let it go), once there is one; undef after 60 s.
sub child_running {
	my ($pid, $exe, $untraced) = @_;
	return JT::wait_until(sub {
		for my $c (split ' ', JT::slurp("/proc/$pid/task/$pid/children") // '') {
			return $c if (readlink("/proc/$c/exe") // '') eq $exe
				&& (!$untraced || (JT::slurp("/proc/$c/status") // '') =~ /^TracerPid:\s+0$/m);
		}
		return undef;
	}, 60);
}

# A child forked without -f copies the parent's pages with the kernel's trap bytes; on the BPF
# path the kernel leaves them there, and it trapped at every allocator call for its whole life
# (the perf path's filter takes each out at its first hit). jmptrace puts the file's bytes
# back into the child's copy when it lets the child go: its code is its files', while the
# traced parent's has the trap bytes. Both paths, both link kinds.
for my $case (['pie', 'bpf'], ['static', 'bpf'], ['pie', 'perf'], ['static', 'perf']) {
	my ($mode, $path) = @$case;
	SKIP: {
		skip "this kernel takes the perf path: $no_bpf", 4 if $path eq 'bpf' && defined $no_bpf;
		local $ENV{JMPTRACE_TEST_UPROBE_PATH};
		$ENV{JMPTRACE_TEST_UPROBE_PATH} = 'perf' if $path eq 'perf';
		my $dir = File::Temp::tempdir('jt-XXXXXX', TMPDIR => 1, CLEANUP => 1);
		my $j = JT::spawn(argv => [$JT, '--source', 'uprobe', '-o', "$dir/r.txt", '--', prog_path('forker', $mode),
					   'wait', "$dir/gate"], dir => $dir, name => 'jt');
		# The program (the perf path's keeper is jmptrace's child too), and its child once let go.
		my $prog = child_running($j->{pid}, prog_path('forker', $mode), 0);
		my $child = $prog && child_running($prog, prog_path('forker', $mode), 1);
		my ($in_parent, $in_child) = ($prog ? code_diffs($prog) : -1, $child ? code_diffs($child) : -1);
		JT::spew("$dir/gate", '');
		my $st = JT::reap($j, 60);
		ok($in_parent > 0, "forker-$mode, $path path: the traced parent's code holds trap bytes ($in_parent)");
		is($in_child, 0, "forker-$mode, $path path: the child let go has its files' code, no trap byte");
		is($st, 0, "forker-$mode, $path path: exit 0") or diag(JT::slurp($j->{err}) // '');
		is(JT::slurp($j->{out}), "forker: child done\nforker: child exit 7\n", "forker-$mode, $path path: the program's output");
	}
}

SKIP: {
	skip "this kernel takes the perf path: $no_bpf", 3 if defined $no_bpf;
	# main's allocations sit a few KiB below the top of the stack: a 64 KiB copy runs past
	# its end, and a read of a fixed size would fail whole and leave no stack at all. The
	# copy ends at the stack's end instead: every stack whole, down to _start.
	my $r = run_jt('allocators', 'pie', args => [3], jt_args => ['--source', 'uprobe', '--stack-copy', '65528']);
	is($r->{exit}, 0, 'a 64 KiB copy: exit 0') or diag($r->{stderr});
	my $s = last_snapshot($r);
	my @live = grep { $_->{live_blocks} } @{ $s ? $s->{stacks} : [] };
	my @cut = grep { $_->{truncated} || ($_->{frames}[-1]{function} // '') ne '_start' } @live;
	ok(@live >= 10 && !@cut, 'a 64 KiB copy: ' . scalar(@live) . ' live stacks, each whole down to _start')
		or diag(explain([map { [map { $_->{function} // '?' } @{ $_->{frames} }] } @cut]));
	unlike($r->{report} // '', qr/copied stack ended/, 'a 64 KiB copy: no stack said cut');
}

done_testing();
