#!/usr/bin/perl
# exec.t - at an exec the old image's heap ends: its figures go into a report of its own
# (reason "exec", -o's FILE.PID.execN), symbolized with its own modules, and the program the
# process becomes starts from zero. tests/progs/execer keeps 4 blocks of 100 bytes and frees
# one of 300, then execs execer of another link mode, which keeps 6 blocks of 40: exact
# figures and file:line in both reports, none of either image's stacks in the other's; the
# new image's totals are those of the same program run directly. Then a shell that execs the
# program (sh -c 'exec PROG'), a #! script that does, and a followed child (-f) whose two
# images each get their file; --leak-check, which finds nothing left of the old image to check.
# Both event sources where they run (uprobe as root).
use strict;
use warnings;
use Cwd qw(abs_path);
use File::Basename qw(basename);
use File::Temp qw(tempdir);
use JSON::PP ();
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JT;
use JTCheck;

my $JT = JT::jmptrace();
-x $JT or plan skip_all => "no jmptrace at $JT";
my @modes = $ENV{JT_MODES} ? split(/[\s,]+/, $ENV{JT_MODES}) : @JT::MODES;
my @sources = JT::sources();

# The program each mode's execer execs: another link mode, so the two images share no module.
my %TARGET = (pie => 'static', nopie => 'static-pie', static => 'pie', 'static-pie' => 'nopie');
my $SH = abs_path('/bin/sh');
my @TOTALS = qw(alloc_calls bytes_allocated frees unknown_frees live_bytes live_blocks peak_live_bytes);

# A snapshot's totals as one line, the fields in @TOTALS' order.
sub totals_line {
	my ($s) = @_;
	my $t = ($s // {})->{totals} // {};
	return join(' ', map { "$_=" . ($t->{$_} // '?') } @TOTALS);
}

# Every stack (live or not) with a frame in function $func.
sub stacks_in {
	my ($s, $func) = @_;
	return grep { grep { frame_func_is($_, $func) } @{ $_->{frames} // [] } } @{ ($s // {})->{stacks} // [] };
}

# Every frame of the snapshot that lies in module $mod.
sub frames_in_module {
	my ($s, $mod) = @_;
	return grep { ($_->{module} // '') eq $mod } map { @{ $_->{frames} // [] } } @{ ($s // {})->{stacks} // [] };
}

# The snapshot of `execer-MODE leak` run directly under jmptrace: what the new image of a
# process that execs it must report, figure for figure (a static libc's start-up included).
my %direct;
sub direct_run {
	my ($mode, $source) = @_;
	return $direct{"$mode $source"} //= do {
		my $r = run_jt('execer', $mode, args => ['leak'], jt_args => ['--source', $source]);
		last_snapshot($r);
	};
}

# The new image's snapshot $s: execer-$mode leak, its figures those of the direct run.
sub check_new_image {
	my ($s, $name, $mode, $source) = @_;
	my $prog = JT::prog_path('execer', $mode);
	is($s->{reason}, 'exit', "$name: the new image's report is written at its exit");
	is($s->{exit_status}, 3, "$name: it says the program exited with status 3");
	is($s->{exe}, abs_path($prog), "$name: it is named by the program exec'd (exe)");
	is($s->{command}, "$prog leak", "$name: and by its command line");
	ok(!defined $s->{ended_at_exec}, "$name: no ended_at_exec: its image ran to the end");
	is($s->{execs}, 1, "$name: \"execs\": 1, the image after the process's first exec");
	check_site($s, "$name, the new image", func => 'after_leak', file => 'execer/after.c', marker => 'SITE:after_leak',
		   live_bytes => 240, live_blocks => 6, alloc_calls => 6, alloc_bytes => 240, module => "execer-$mode",
		   caller => ['main', 'execer/main.c', 'CALL:after_leak']);
	my @old = (stacks_in($s, 'before_leak'), stacks_in($s, 'before_temp'));
	ok(!@old, "$name: none of the old image's stacks in the new image's report") or diag(describe_stacks($s));
	my $d = direct_run($mode, $source);
	is(totals_line($s), totals_line($d), "$name: its totals are those of execer-$mode leak run directly");
	is(calls_of($s, 'malloc'), calls_of($d, 'malloc'), "$name: malloc calls as in the direct run");
}

for my $source (@sources) {
	for my $mode (@modes) {
		my $target = $TARGET{$mode};
		my $tpath = JT::prog_path('execer', $target);
		my $name = "execer-$mode exec execer-$target, $source";
		subtest $name => sub {
			my @args = ('exec', $tpath, 'leak');
			my $n = run_native('execer', $mode, \@args);
			is($n->{stdout}, "execer: leaked 6 blocks\n", 'native: stdout');
			my $r = run_jt('execer', $mode, args => \@args, jt_args => ['--source', $source]);
			same_as_native($r, $n, $name);
			is($r->{stderr}, '', 'nothing on stderr');
			my @snaps = @{ ($r->{json} // {})->{snapshots} // [] };
			is(scalar(@snaps), 2, 'two snapshots: the image the exec ended, then the program it became')
				or return diag($r->{json_error} // join("\n", map { "$_->{reason} $_->{exe}" } @snaps));
			my ($old, $new) = @snaps;
			my $prog = JT::prog_path('execer', $mode);

			# The image the exec ended: its own report, its own figures.
			is($old->{reason}, 'exec', 'the first is taken at the exec');
			is($old->{ended_at_exec}, 1, 'it is the image the first exec ended');
			ok(!defined $old->{execs}, 'no "execs": it is the image the process started with');
			is($old->{pid}, $new->{pid}, 'of the same process');
			ok(is_false($old->{exited}), 'which still runs');
			is($old->{exe}, abs_path($prog), 'named by its own program (exe)');
			is($old->{command}, join(' ', $prog, @args), 'and by the command line it was launched with');
			check_site($old, "$name, the old image", func => 'before_leak', file => 'execer/before.c',
				   marker => 'SITE:before_leak', live_bytes => 400, live_blocks => 4, alloc_calls => 4,
				   alloc_bytes => 400, module => "execer-$mode", caller => ['main', 'execer/main.c', 'CALL:before_leak']);
			my ($temp) = stacks_in($old, 'before_temp');
			is($temp && join(' ', map { $temp->{$_} // '?' } qw(alloc_calls alloc_bytes frees live_blocks)), '1 300 1 0',
			   'before_temp: 1 call of 300 bytes, freed');
			ok(!stacks_in($old, 'after_leak'), 'none of the new image\'s stacks in the old image\'s report');
			my $d = direct_run($mode, $source);
			# The old image is execer-MODE too: its C library's own figures are the direct run's, less after_leak.
			my %rt = map { $_ => ($d->{totals}{$_} // 0) } @TOTALS;
			my %want = (alloc_calls => $rt{alloc_calls} - 6 + 5, bytes_allocated => $rt{bytes_allocated} - 240 + 700,
				    frees => $rt{frees} + 1, unknown_frees => 0, live_bytes => $rt{live_bytes} - 240 + 400,
				    live_blocks => $rt{live_blocks} - 6 + 4, peak_live_bytes => $rt{peak_live_bytes} - 240 + 700);
			is(totals_line($old), join(' ', map { "$_=$want{$_}" } @TOTALS),
			   'its totals: 5 mallocs of 700 bytes, 1 free, 400 bytes in 4 blocks live, peak 700 (and its C library\'s)');
			is(calls_of($old, 'free'), 1, 'free: 1 call');

			check_new_image($new, $name, $target, $source);

			# -o FILE: the final image's report in FILE, the old image's in FILE.PID.exec1.
			my $dir = $r->{dir} // '';
			my $before = "before_leak (before.c:" . site_line('execer/before.c', 'SITE:before_leak') . ")";
			my $after = "after_leak (after.c:" . site_line('execer/after.c', 'SITE:after_leak') . ")";
			my $text = JT::slurp("$dir/report.$old->{pid}.exec1.txt") // '';
			like($text, qr/^snapshot: exec$/m, "report.$old->{pid}.exec1.txt: the old image's report");
			like($text, qr/^exe:      \Q${\ abs_path($prog)}\E$/m, 'it names its program');
			like($text, qr/^process:  still running, as another program: this image ended at its exec 1$/m,
			     'it says the image ended at an exec');
			like($text, qr/: \Q$before\E$/m, "it lists $before");
			unlike($text, qr/after_leak/, 'and nothing of the new image');
			like($r->{report} // '', qr/: \Q$after\E$/m, "report.txt, the final report: $after");
			unlike($r->{report} // '', qr/before_(leak|temp)/, 'and nothing of the old image');
			like($r->{report} // '', qr/^exe:      \Q${\ abs_path($tpath)}\E$/m, 'it names the program exec\'d');
		};
	}

	# --leak-check: the exec comes once the old image's memory is gone, so its report says no
	# check could run, and why; the new image is checked at its _exit as if run directly.
	subtest "--leak-check, execer-$modes[0] exec execer-$TARGET{$modes[0]}, $source" => sub {
		my ($mode, $target) = ($modes[0], $TARGET{$modes[0]});
		my @lc = ('--leak-check', '--source', $source);
		my $r = run_jt('execer', $mode, args => ['exec', JT::prog_path('execer', $target), 'leak'], jt_args => \@lc);
		is($r->{exit}, 3, 'exit status 3');
		my @snaps = @{ ($r->{json} // {})->{snapshots} // [] };
		is(join(' ', map { $_->{reason} } @snaps), 'exec exit', 'the old image\'s report, then the new one\'s') or return;
		ok(exists $snaps[0]{leak_check} && !defined $snaps[0]{leak_check}, 'the old image: "leak_check": null');
		my $text = JT::slurp("$r->{dir}/report.$snaps[0]{pid}.exec1.txt") // '';
		like($text, qr/^LEAK CHECK: no check could run \(an exec replaced the image, and its memory\nwith it, before it could be stopped\)$/m,
		     'its text says why no check could run');
		my $d = last_snapshot(run_jt('execer', $target, args => ['leak'], jt_args => \@lc));
		my $sum = sub { my $l = ($_[0] // {})->{leak_check}; JSON::PP->new->canonical->encode($l ? $l->{summary} : undef) };
		is($sum->($snaps[1]), $sum->($d), 'the new image\'s leak summary is that of execer-' . $target . ' leak run directly');
		like($sum->($snaps[1]), qr/"still_reachable":\{"blocks":\d+,"bytes":\d+\}/, 'and it has one');
	};

	# A shell that execs the program: the shell's heap in the shell's report, named as the
	# shell, and nothing of it in the program's.
	my $mode = $modes[0];
	my $prog = JT::prog_path('execer', $mode);
	my $script = "exec $prog leak";
	subtest "sh -c 'exec execer-$mode leak', $source" => sub {
		my $n = run_cmd(argv => ['/bin/sh', '-c', $script]);
		my $r = run_jt(undef, undef, path => '/bin/sh', args => ['-c', $script], jt_args => ['--source', $source]);
		same_as_native($r, $n, 'sh -c exec');
		my @snaps = @{ ($r->{json} // {})->{snapshots} // [] };
		is(scalar(@snaps), 2, 'two snapshots: the shell\'s at its exec, the program\'s at its exit') or return;
		my ($sh, $new) = @snaps;
		is($sh->{reason}, 'exec', 'the shell\'s report is taken at the exec');
		is($sh->{exe}, $SH, "it is named as the shell ($SH)");
		is($sh->{command}, "/bin/sh -c $script", 'with the command line it was launched with');
		cmp_ok($sh->{totals}{alloc_calls}, '>', 0, "the shell's own allocations are in it ($sh->{totals}{alloc_calls})");
		ok(!frames_in_module($sh, "execer-$mode"), 'no frame of the program in the shell\'s report');
		my $shmod = basename($SH);
		my @shf = frames_in_module($new, $shmod);
		ok(!@shf, "no frame of the shell ($shmod) in the program's report") or diag(describe_frame($shf[0]));
		my @bare = grep { !defined $_->{module} } map { @{ $_->{frames} } } @{ $new->{stacks} // [] };
		ok(!@bare, 'no frame without a module in the program\'s report') or diag(describe_frame($bare[0]));
		check_new_image($new, 'sh -c exec', $mode, $source);
		my $text = JT::slurp("$r->{dir}/report.$sh->{pid}.exec1.txt") // '';
		like($text, qr/^exe:      \Q$SH\E\n(?:.*\n)*?snapshot: exec$/m, "report.$sh->{pid}.exec1.txt: the shell's report");
	};

	# A #! script launched directly: the kernel runs its interpreter, which is the first image
	# (no report before it); the interpreter's exec of the program is like the shell's above.
	subtest "a #! script that execs execer-$mode, $source" => sub {
		my $dir = tempdir('jt-exec-XXXXXX', TMPDIR => 1, CLEANUP => 1);
		JT::spew("$dir/run.sh", "#!/bin/sh\n$script\n");
		chmod(0755, "$dir/run.sh");
		my $r = run_jt(undef, undef, path => "$dir/run.sh", jt_args => ['--source', $source]);
		is($r->{exit}, 3, 'exit status 3, the program\'s');
		is($r->{stdout}, "execer: leaked 6 blocks\n", 'its stdout');
		my @snaps = @{ ($r->{json} // {})->{snapshots} // [] };
		is(join(' ', map { $_->{reason} } @snaps), 'exec exit', 'the interpreter\'s report at its exec, then the program\'s')
			or return;
		is($snaps[0]{exe}, $SH, 'the first is the interpreter\'s');
		is($snaps[0]{command}, "$dir/run.sh", 'named by the script launched');
		check_new_image($snaps[1], 'script', $mode, $source);
	};

	# -f: a child the shell starts execs execer, which execs execer again: each of the child's
	# images gets its file, named by the child's pid; the shell's report has neither's heap.
	subtest "-f: a child that execs twice, $source" => sub {
		my $cmd = "$prog exec $prog leak; echo status \$?";
		my $n = run_cmd(argv => ['/bin/sh', '-c', $cmd]);
		is($n->{stdout}, "execer: leaked 6 blocks\nstatus 3\n", 'native: stdout');
		my $r = run_jt(undef, undef, path => '/bin/sh', args => ['-c', $cmd], jt_args => ['-f', '--source', $source]);
		same_as_native($r, $n, 'sh -c, -f');
		my @snaps = @{ ($r->{json} // {})->{snapshots} // [] };
		my ($old) = grep { ($_->{exe} // '') eq abs_path($prog) && $_->{reason} eq 'exec' } @snaps;
		my ($new) = grep { ($_->{exe} // '') eq abs_path($prog) && $_->{reason} eq 'exit' } @snaps;
		my ($sh) = grep { ($_->{exe} // '') eq $SH && $_->{reason} eq 'exit' } @snaps;
		ok($old && $new && $sh, 'the child\'s image before its exec, the program it became, and the shell, each reported')
			or return diag(join("\n", map { "$_->{pid} $_->{reason} $_->{exe}" } @snaps));
		is($old->{pid}, $new->{pid}, 'the child\'s two images have the same pid');
		isnt($old->{pid}, $sh->{pid}, 'another than the shell\'s');
		check_site($old, '-f, the child\'s first image', func => 'before_leak', file => 'execer/before.c',
			   marker => 'SITE:before_leak', live_bytes => 400, live_blocks => 4, alloc_calls => 4);
		check_new_image($new, '-f, the child\'s last image', $mode, $source);
		ok(!stacks_in($sh, 'before_leak') && !stacks_in($sh, 'after_leak'), 'the shell\'s report has neither');
		my $c = $old->{pid};
		my $one = JT::slurp("$r->{dir}/report.$c.exec$old->{ended_at_exec}.txt") // '';
		my $two = JT::slurp("$r->{dir}/report.$c.txt") // '';
		like($one, qr/before_leak \(before\.c:\d+\)/, "report.$c.exec$old->{ended_at_exec}.txt: the child's image before its exec");
		like($two, qr/after_leak \(after\.c:\d+\)/, "report.$c.txt: the program it became");
		unlike($two, qr/before_leak/, 'without the image before');
	};
}

done_testing();
