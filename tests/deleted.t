#!/usr/bin/perl
# deleted.t - a program whose executable was deleted (or replaced, as by an upgrade) while it
# runs: /proc/PID/maps names it "PATH (deleted)", and jmptrace reads it through
# /proc/PID/map_files. jmptrace -p attaches to a copy of attach-MODE whose file is gone; the
# leak it makes after the attach must still be named with function and file:line, in the
# JSON and in the text report, in every link mode (a static one finds malloc in that file).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Copy qw(copy);
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

for my $mode (@modes) {
	subtest "deleted attach-$mode" => sub {
		my $dir = tempdir('jt-deleted-XXXXXX', TMPDIR => 1, CLEANUP => 1);
		my $copy = "$dir/gone-$mode";
		copy(JT::prog_path('attach', $mode), $copy) or return fail("copy: $!");
		chmod(0755, $copy);
		my $p = spawn(argv => [$copy], dir => $dir, name => 'prog', stdin_pipe => 1);
		my $ready = wait_until(sub { (JT::slurp($p->{out}) // '') eq "ready\n" }, 30);
		ok($ready, 'the program is ready') or return reap($p, 1);
		ok(unlink($copy), 'its executable is deleted');
		is(readlink("/proc/$p->{pid}/exe"), "$copy (deleted)", 'the kernel names it deleted');
		my $j = spawn(argv => [$JT, '-p', $p->{pid}, '--json', "$dir/r.json", '-o', "$dir/r.txt"],
			      dir => $dir, name => 'jt');
		# A snapshot asked for with SIGUSR1 is written once jmptrace has attached.
		my $caught = wait_until(sub { attach_done($j) }, 30);
		ok($caught, 'jmptrace handles SIGUSR1')
			or do { diag(JT::slurp($j->{err}) // ''); reap($j, 1); reap($p, 1); return };
		kill 'USR1', $j->{pid};
		my $first = wait_until(sub { my $x = read_json("$dir/r.json"); $x && @{ $x->{snapshots} // [] } }, 30);
		ok($first, 'jmptrace attached (SIGUSR1 wrote a snapshot)')
			or do { diag(JT::slurp($j->{err}) // ''); reap($j, 1); reap($p, 1); return };
		print { $p->{stdin} } "g";
		my $ps = reap($p, 60);
		my $js = reap($j, 60);
		ok(defined $ps && WIFEXITED($ps) && WEXITSTATUS($ps) == 0, 'the program exits 0');
		ok(defined $js && WIFEXITED($js) && WEXITSTATUS($js) == 0, 'jmptrace exits 0 like the program')
			or diag('status ' . ($js // 'timeout') . "\n" . (JT::slurp($j->{err}) // ''));
		my $x = read_json("$dir/r.json");
		my $s = $x && $x->{snapshots}[-1];
		ok($s && $s->{reason} eq 'exit', 'a last snapshot at exit') or return;
		check_site($s, 'deleted', func => 'new_leak', file => 'attach/new_leak.c', marker => 'SITE:new_leak',
			   live_bytes => 12 * 64, live_blocks => 12, alloc_calls => 12,
			   module => "gone-$mode (deleted)");
		my $line = site_line('attach/new_leak.c', 'SITE:new_leak');
		like(JT::slurp("$dir/r.txt") // '', qr/: new_leak \(new_leak\.c:$line\)/,
		     "text report: new_leak (new_leak.c:$line)");
	};
}

done_testing();
