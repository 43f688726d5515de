#!/usr/bin/perl
# uprobe.t - what is particular to --source uprobe: the same figures as the ptrace source on
# the same program in every link mode, no event lost, the probes where the kernel emulates
# the instruction (said by -v), the option checks, a plain user refused in one line, and the
# program's own SIGTRAP untouched by the hooks' SIGTRAPs. (The whole integration suite runs
# again with JT_SOURCE=uprobe in make check; the SIGKILL and server cases are uprobe_kill.t
# and uprobe_server.t.)
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JT;
use JTCheck;

my $JT = JT::jmptrace_bin();
-x $JT or plan skip_all => "no jmptrace at $JT";
$> == 0 or plan skip_all => 'the uprobe source needs root';
-e '/sys/bus/event_source/devices/uprobe/type' or plan skip_all => 'this kernel has no uprobes';
my @modes = $ENV{JT_MODES} ? split(/[\s,]+/, $ENV{JT_MODES}) : @JT::MODES;

# Runs prog under one source; returns the last snapshot and the run.
sub run_source {
	my ($source, $prog, $mode, $args, @extra) = @_;
	my $run = sub { run_jt($prog, $mode, args => $args, jt_args => ['--source', $source, @extra]) };
	my $r = $source eq 'uprobe' ? JT::run_unlost("$prog-$mode", 3, $run) : $run->();
	is($r->{exit}, 0, "$prog-$mode under $source: exit 0") or diag($r->{stderr});
	return (last_snapshot($r), $r);
}


# The same program, the same figures: allocators of every kind (realloc(NULL) nested in
# realloc, reallocarray, posix_memalign's out pointer, memalign and aligned_alloc at one
# address), C++ operators with exceptions thrown through operator new, 8 threads.
for my $mode (@modes) {
	for my $case (['allocators', [3]], ['cxx', [2, 2]], ['threads', [2000, 5, 40]]) {
		my ($prog, $args) = @$case;
		my ($p) = run_source('ptrace', $prog, $mode, $args);
		my ($u, $r) = run_source('uprobe', $prog, $mode, $args);
		next unless $p && $u;
		is($u->{totals}{source}, 'uprobe', "$prog-$mode: the JSON names the source");
		is($u->{totals}{lost_events}, 0, "$prog-$mode: no event lost");
		is_deeply(JT::source_figures($u), JT::source_figures($p), "$prog-$mode: the uprobe source counts what the ptrace source counts")
			or diag(explain(JT::source_figures($u)), explain(JT::source_figures($p)));
		like($r->{report}, qr/^\s+lost events\s+0$/m, "$prog-$mode: the text totals say no event was lost");
	}
}

# -v says where each probe went: malloc on its entry, free past its NULL test's first
# instruction (glibc 2.36), both emulated; the rendezvous is a hook.
{
	my $r = run_cmd(argv => [$JT, '--source', 'uprobe', '-v', '-o', '/dev/null', '--', prog_path('allocators', 'pie'), 1]);
	is($r->{exit}, 0, '-v run: exit 0');
	like($r->{stderr}, qr/uprobe on malloc at 0x\w+ in \S+libc\S*: entry: push \w+, emulated/, '-v: malloc on its entry, emulated');
	like($r->{stderr}, qr/uprobe on free at 0x\w+ in \S+libc\S*: (entry|past \w+ .*): .*, (emulated|stepped)/, '-v: where free went, and how');
	like($r->{stderr}, qr/after a uprobe hook \(its SIGTRAP dropped\)/, '-v: the dynamic linker\'s rendezvous reached through a hook');
}

# jemalloc (Debian's libjemalloc2, redis-server's allocator): malloc's probe, which its
# uretprobe shares, goes past `cmp rdi, 0x1000` to its emulated `ja` (nothing pushed yet, so
# the return address is still at the stack pointer); free's past nine loads to its first
# branch. The figures stay those of the ptrace source.
SKIP: {
	my $je = '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2';
	skip "$je is not installed (apt-get install libjemalloc2)", 7 unless -e $je;
	my @run = (path => '/usr/bin/env', args => ["LD_PRELOAD=$je", prog_path('allocators', 'pie'), 3]);
	my $r = run_jt('allocators', 'pie', @run, jt_args => ['--source', 'uprobe', '-v']);
	is($r->{exit}, 0, 'jemalloc: exit 0') or diag($r->{stderr});
	like($r->{stderr}, qr/uprobe on malloc at 0x\w+ in \S+libjemalloc\S*: past its first instruction \(cmp rdi, 0x1000\): ja \w+, emulated/,
	     '-v: jemalloc\'s malloc probed at its ja, emulated');
	like($r->{stderr}, qr/uprobe on free at 0x\w+ in \S+libjemalloc\S*: past 9 instructions \(mov .*\): jne \w+, emulated/,
	     '-v: jemalloc\'s free probed at its first branch, emulated');
	my $u = last_snapshot($r);
	my $p = last_snapshot(run_jt('allocators', 'pie', @run, jt_args => ['--source', 'ptrace']));
	ok($u && $p, 'jemalloc: both sources wrote a snapshot');
	is($u && $u->{totals}{lost_events}, 0, 'jemalloc: no event lost');
	ok($u && $u->{totals}{calls}{malloc} > 0, 'jemalloc: malloc calls counted');
	is_deeply($u && JT::source_figures($u), $p && JT::source_figures($p), 'jemalloc: the uprobe source counts what the ptrace source counts')
		or diag(explain($u && JT::source_figures($u)), explain($p && JT::source_figures($p)));
}

# env(1): setlocale's free(NULL)s come from deep in the C library; a free's short stack copy
# ends before main, and must not be taken for the C library's own teardown (which would drop
# the call: 65 frees counted of 66 made).
{
	my @run = (path => '/usr/bin/env', args => []);
	my $u = last_snapshot(run_jt('env', 'pie', @run, jt_args => ['--source', 'uprobe']));
	my $p = last_snapshot(run_jt('env', 'pie', @run, jt_args => ['--source', 'ptrace']));
	is_deeply($u && JT::source_figures($u), $p && JT::source_figures($p), 'env: the uprobe source counts every free the ptrace source counts')
		or diag(explain($u && JT::source_figures($u)), explain($p && JT::source_figures($p)));
}

# A stack deeper than the copy (--stack-copy) is marked as cut there, in the text and the
# JSON; with the default copy no stack of these programs is.
{
	my $r = run_jt('slowleak', 'pie', args => [250], jt_args => ['--source', 'uprobe', '--stack-copy', '256']);
	is($r->{exit}, 0, 'slowleak, a 256-byte copy: exit 0') or diag($r->{stderr});
	my $s = last_snapshot($r);
	my ($leak) = grep { ($_->{frames}[0]{function} // '') eq 'sl_leak' } @{ $s ? $s->{stacks} : [] };
	ok($leak && $leak->{truncated} && ($leak->{cut_by} // '') eq 'stack-copy', 'JSON: sl_leak\'s stack is cut by the copy');
	like($r->{report}, qr/sl_leak \(main\.c:\d+\)\n(?:    by .*\n)*    \.\.\. \(stack cut where the copied stack ended: raise --stack-copy\)/,
	     'text: the cut is said under the stack');
	$r = run_jt('slowleak', 'pie', args => [250], jt_args => ['--source', 'uprobe']);
	$s = last_snapshot($r);
	($leak) = grep { ($_->{frames}[0]{function} // '') eq 'sl_leak' } @{ $s ? $s->{stacks} : [] };
	ok($leak && !$leak->{truncated} && ($leak->{frames}[-1]{function} // '') eq '_start',
	   'the default copy: sl_leak\'s stack whole, down to _start');
	unlike($r->{report}, qr/copied stack ended/, 'the default copy: no stack cut');
}

# Lost events are said where a user looks: a line on stderr when they happen (and at the end),
# and a LOST line on the report's first screen, with the totals' figure. A 64 KiB ring (the
# BPF path's one, the perf path's per thread) cannot hold 8 threads' 20,000 pairs each with
# 32 KiB of stack copied per malloc: two records fill it. (With the default 4 KiB copy the
# BPF path's reader, woken at every 8 KiB, kept up in some runs: 0, 52 and 1,638 lost.)
{
	my $r = run_jt('threads', 'pie', args => [20000],
		       jt_args => ['--source', 'uprobe', '--buffer-size', '64k', '--stack-copy', '32k']);
	is($r->{exit}, 0, 'threads, 64 KiB rings: exit 0') or diag($r->{stderr});
	my $s = last_snapshot($r);
	my $lost = $s ? $s->{totals}{lost_events} // 0 : 0;
	ok($lost > 0, "64 KiB rings: events were lost ($lost)");
	(my $n = reverse $lost) =~ s/(\d{3})(?=\d)/$1,/g;
	$n = reverse $n;
	my @head = (split /\n/, $r->{report} // '')[0 .. 11];
	ok((grep { /^LOST:     \Q$n\E events: the kernel's ring buffers overflowed/ } grep { defined } @head) == 1,
	   "text: the first screen says LOST: $n events") or diag(join("\n", grep { defined } @head));
	my @said = ($r->{stderr} // '') =~ /^jmptrace: ([\d,]+) events lost so far: the kernel's ring buffers overflowed/mg;
	s/,//g for @said;
	ok(@said >= 1 && $said[-1] > 0 && $said[-1] <= $lost, "stderr said it ($said[-1] of $lost at its last line)")
		or diag($r->{stderr});
}

# Snapshots that take longer to write than --interval (a test hook makes each take 300 ms,
# the lock held, as a big program's do; 8 threads allocate meanwhile): the BPF ring is read
# throughout (its records kept aside, applied after: 0 lost), and the next snapshot comes after
# the program ran as long again. Before, the ring filled under each snapshot (the default
# 32 MiB ring lost 790,106 events of this run), and each snapshot was due at once after the
# last: the loop never waited again, and the program's exit, and SIGINT, waited for ever.
SKIP: {
	my $probe = run_jt('leak', 'pie', args => [3, 0], jt_args => ['--source', 'uprobe', '-v']);
	skip 'no BPF path here: only its ring is read while a snapshot is written', 8
		unless ($probe->{stderr} // '') =~ /uprobe source: the BPF path/;
	my @args = (60000, 5, 40);
	my ($want) = run_source('ptrace', 'threads', 'pie', \@args);
	local $ENV{JMPTRACE_TEST_SLOW} = 'snapshot:300';
	my $r = run_jt('threads', 'pie', args => \@args, timeout => 120,
		       jt_args => ['--source', 'uprobe', '--interval', '0.1', '-v']);
	is($r->{exit}, 0, 'slow snapshots: exit 0') or diag($r->{stderr});
	my $s = last_snapshot($r) // {};
	is($s->{totals}{lost_events}, 0, 'slow snapshots: 0 events lost');
	is(JT::source_figures($s)->{calls}{malloc}, JT::source_figures($want // {})->{calls}{malloc},
	   'slow snapshots: every malloc counted, as the ptrace source counts them');
	my $err = $r->{stderr} // '';
	my @once = $err =~ /^jmptrace: writing a snapshot took [\d,]+ ms, more than --interval allows: the next ones come after the program has run as long again/mg;
	is(scalar(@once), 1, 'stderr says once that snapshots are spaced out') or diag($err);
	my ($passed) = $err =~ /^jmptrace: ([\d,]+) --interval snapshots? passed over in all: writing one took up to [\d,]+ ms$/m;
	ok(($passed // 0) > 0, 'and at the end how many were passed over (' . ($passed // 'none') . ')');
	my @snaps = @{ ($r->{json} // {})->{snapshots} // [] };
	ok(@snaps >= 2 && @snaps <= 40, scalar(@snaps) . ' snapshots: as many as the spacing lets happen, not one after another');
	my $last = @snaps ? JT::slurp("$r->{dir}/report." . scalar(@snaps) . '.txt') : undef;
	like($last // '', qr/^interval: \Q$passed\E snapshots? passed over until now: writing one took up to [\d,]+ ms, longer than$/m,
	     'the text report says it under its header') if defined $passed;
	my ($kept) = $err =~ /uprobe source: ([\d,]+) bytes of records kept aside/;
	$kept =~ s/,//g if defined $kept;
	ok(($kept // 0) > 0, 'the ring was read while the snapshots held the lock (' . ($kept // 'not said') . ' bytes kept aside)');
}

# A program that raises SIGTRAP for itself and catches it: the hooks' SIGTRAPs are dropped,
# the program's own is delivered, exactly as untraced.
{
	my $n = run_native('sigtrap', 'pie', [200]);
	my $r = run_jt('sigtrap', 'pie', args => [200], jt_args => ['--source', 'uprobe']);
	is($r->{exit}, $n->{exit}, 'sigtrap: the exit status untraced');
	is($r->{stdout}, $n->{stdout}, 'sigtrap: the output untraced');
}

# A library with allocators dlopen'ed while threads allocate (dlbusy: 4 threads, libstdc++):
# its probes are opened with the tracer lock released, so that the reader goes on emptying
# the busy threads' rings. With the lock held through the opens (130 ms) the kernel dropped
# events in 2 runs of 3 on a 2-vCPU VM. Five runs; each loses nothing and counts what the
# ptrace source counts.
{
	my ($k, $t) = (60000, 4);
	my $p = last_snapshot(run_jt('dlbusy', 'pie', args => [$k, $t], jt_args => ['--source', 'ptrace']));
	ok($p && calls_of($p, 'malloc') >= $k * $t, "dlbusy under ptrace: the threads' $k x $t mallocs counted");
	for my $run (1 .. 5) {
		my $r = JT::run_unlost("dlbusy run $run", 3,
				       sub { run_jt('dlbusy', 'pie', args => [$k, $t], jt_args => ['--source', 'uprobe']) });
		is($r->{exit}, 0, "dlbusy run $run: exit 0") or diag($r->{stderr});
		my $s = last_snapshot($r) or next;
		is($s->{totals}{lost_events}, 0, "dlbusy run $run: no event lost");
		is($s->{totals}{calls}{'operator new'}, 100, "dlbusy run $run: operator new, probed at the dlopen, 100 calls");
		is_deeply(JT::source_figures($s), JT::source_figures($p), "dlbusy run $run: the figures of the ptrace source")
			or diag(explain(JT::source_figures($s)), explain(JT::source_figures($p)));
		check_site($s, "dlbusy run $run: operator new's kept blocks", func => 'make_new', file => 'dlbusy/main.c',
			   marker => 'SITE:make_new', live_bytes => 7 * 48, live_blocks => 7, alloc_calls => 100);
	}
}

# The same, attached with -p: the attached process's rendezvous is a plain probe, so the
# tracer thread re-reads the link map a moment later (dlbusy waits 300 ms before its first
# operator new), and opens libstdc++'s probes with the lock released. With the probes opened
# by the reader itself, in the middle of its merge, it held the lock 120-430 ms and every
# run of 3 lost events. Three runs.
for my $run (1 .. 3) {
	my $dir = File::Temp::tempdir('jt-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my $gate = "$dir/gate";
	my $p = JT::spawn(argv => [prog_path('dlbusy', 'pie'), 0, 4, $gate], dir => $dir, name => 'prog');
	my $j = JT::spawn(argv => [$JT, '--source', 'uprobe', '-p', $p->{pid}, '--json', "$dir/r.json",
				   '-o', "$dir/r.txt"], dir => $dir, name => 'jt');
	ok(JT::wait_until(sub { JT::attach_done($j) }, 60), "dlbusy -p run $run: attached")
		or diag(JT::slurp($j->{err}) // '');
	JT::spew($gate, '');
	my $ps = JT::reap($p, 60);
	my $js = JT::reap($j, 60);
	is($ps, 0, "dlbusy -p run $run: the program exits 0");
	is($js, 0, "dlbusy -p run $run: jmptrace exits 0") or diag(JT::slurp($j->{err}) // '');
	my $x = JT::read_json("$dir/r.json");
	my $s = $x && $x->{snapshots}[-1] or next;
	is($s->{totals}{lost_events}, 0, "dlbusy -p run $run: no event lost");
	is($s->{totals}{calls}{'operator new'}, 100, "dlbusy -p run $run: operator new, probed after the dlopen, 100 calls");
	is($s->{totals}{calls}{'operator delete'}, 93, "dlbusy -p run $run: operator delete, 93 calls");
	check_site($s, "dlbusy -p run $run: operator new's kept blocks", func => 'make_new', file => 'dlbusy/main.c',
		   marker => 'SITE:make_new', live_bytes => 7 * 48, live_blocks => 7, alloc_calls => 100);
}

# The options: checked, and refused without the uprobe source.
{
	my $r = run_cmd(argv => [$JT, '--stack-copy', '4k', '--', '/bin/true']);
	is($r->{exit}, 2, '--stack-copy without --source uprobe: exit 2');
	like($r->{stderr}, qr/^jmptrace: --stack-copy, --buffer-size and --buffer-total need --source uprobe$/m, '... one line says why');
	$r = run_cmd(argv => [$JT, '--buffer-total', '1g', '--', '/bin/true']);
	is($r->{exit}, 2, '--buffer-total without --source uprobe: exit 2');
	$r = run_cmd(argv => [$JT, '--source', 'bpf', '--', '/bin/true']);
	is($r->{exit}, 2, '--source bpf: exit 2');
	like($r->{stderr}, qr/invalid value 'bpf' for option --source: give auto, ptrace or uprobe/, '... said');
	$r = run_cmd(argv => [$JT, '--source', 'uprobe', '--stack-copy', '100k', '--', '/bin/true']);
	is($r->{exit}, 2, '--stack-copy 100k: exit 2');
	$r = run_cmd(argv => [$JT, '--source', 'uprobe', '--buffer-size', '1k', '--', '/bin/true']);
	is($r->{exit}, 2, '--buffer-size 1k: exit 2');
	$r = run_cmd(argv => [$JT, '--source', 'uprobe', '--buffer-total', '256k', '--', '/bin/true']);
	is($r->{exit}, 2, '--buffer-total 256k: exit 2');
	like($r->{stderr}, qr/invalid value '256k' for option --buffer-total: give bytes from 512k to 1t/, '... said');
}

# The rings' budget of the perf path (a ring per thread; the BPF path has one ring, see
# uprobe_paths.t): the kernel keeps a ring's pages from its mmap on, 32 MiB a thread by
# default, so that a server of hundreds of threads took gigabytes. With rings of 1 MiB
# within 4 MiB, main and the first three of threads' 8 workers (all alive together) get
# 1 MiB and the other five 512 KiB, and -v says so for each; the figures are exact.
# 50 pairs a thread, so that every record of a thread fits its ring even unread (55
# samples of 4 KiB of stack, 105 without, about 250 KiB): with 2,000 a thread filled a
# ring of 512 KiB in 0.3 ms, and a reader held up 1 ms once in five runs lost events.
{
	local $ENV{JMPTRACE_TEST_UPROBE_PATH} = 'perf';
	my ($p) = run_source('ptrace', 'threads', 'pie', [50, 5, 40]);
	my ($u, $r) = run_source('uprobe', 'threads', 'pie', [50, 5, 40], '-v', '--buffer-size', '1m', '--buffer-total', '4m');
	my @small = $r->{stderr} =~ /^jmptrace: thread \d+: a ring of 512 KiB, not 1,024: the rings' budget of 4,096 KiB is spent \(--buffer-total\)$/mg;
	is(scalar(@small), 5, 'budget: five threads got a ring of 512 KiB, and -v said so') or diag($r->{stderr});
	unlike($r->{stderr}, qr/a ring of (?!512 KiB)/, '... and no thread a ring of another size');
	if ($p && $u) {
		is($u->{totals}{lost_events}, 0, 'budget: no event lost');
		is_deeply(JT::source_figures($u), JT::source_figures($p), 'budget: the figures of the ptrace source')
			or diag(explain(JT::source_figures($u)), explain(JT::source_figures($p)));
	}
}

# A plain user: one line, exit 2, the program not run.
SKIP: {
	my $nobody = getpwnam('nobody');
	skip 'no user nobody', 3 unless defined $nobody;
	my $dir = File::Temp::tempdir('jt-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	chmod 0777, $dir;
	my $r = run_cmd(dir => $dir, argv => ['setpriv', "--reuid=$nobody", "--regid=$nobody", '--clear-groups', '--inh-caps=-all',
					       $JT, '--source', 'uprobe', '--', '/bin/touch', "$dir/ran"]);
	is($r->{exit}, 2, 'a plain user: exit 2');
	like($r->{stderr}, qr/^jmptrace: --source uprobe: it needs root/, '... and one line says why')
		or diag($r->{stderr});
	ok(!-e "$dir/ran", '... and the program did not run');
}

done_testing();
