#!/usr/bin/perl
# names.t - what the reports call the program.
# A program run through a symlink of another name (redis-server, a symlink to
# redis-check-rdb) is named by its command line, as ps shows it, in the attach line, the text
# report, JSON "command", jmptrace diff and pprof's "File:"; the executable's real path is
# the text report's "exe:" and JSON "exe".
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Cwd qw(realpath);
use File::Temp qw(tempdir);
use POSIX qw(WIFEXITED WEXITSTATUS);
use Test::More;
use JT;

my $JT = JT::jmptrace();
BAIL_OUT("no executable jmptrace at $JT (make jmptrace, or set JMPTRACE)") unless -x $JT;
system('make', '-s', '-C', root() . '/tests/progs') == 0
	or BAIL_OUT('cannot build the test programs (make -C tests/progs)');
my @modes = $ENV{JT_MODES} ? split(/[\s,]+/, $ENV{JT_MODES}) : @MODES;

# The consumers are installed by .ci/run: a missing one is a failure, never a skip.
sub have { my ($cmd) = @_; system("command -v $cmd >/dev/null 2>&1") == 0 }
ok(have('go'), 'go is installed (Debian golang-go)');
# pprof keeps state under $HOME/pprof and PPROF_TMPDIR; keep both out of the real home.
my $HOME = tempdir('jt-names-home-XXXXXX', TMPDIR => 1, CLEANUP => 1);
@ENV{qw(HOME PPROF_TMPDIR GOCACHE)} = ($HOME, $HOME, "$HOME/gocache");

# go tool pprof as a user runs it (it may symbolize what the profile leaves unnamed).
sub pprof_out {
	my ($file, @args) = @_;
	my $r = run_cmd(argv => ['go', 'tool', 'pprof', @args, $file], timeout => 120);
	is($r->{exit}, 0, "go tool pprof @args: exit 0") or diag($r->{stderr});
	return $r->{stdout} // '';
}

sub diff_out {
	my (@files) = @_;
	my $r = run_cmd(argv => [$JT, 'diff', @files]);
	is($r->{exit}, 0, 'jmptrace diff: exit 0') or diag($r->{stderr});
	return $r->{stdout} // '';
}

# The names of one report's program: text header, JSON, pprof's File:, the diff's header.
sub check_names {
	my ($what, $dir, $cmdline, $link, $real) = @_;
	my $text = JT::slurp("$dir/r.txt") // '';
	like($text, qr/^command:  \Q$cmdline\E\n/m, "$what: text report: command:  $cmdline");
	like($text, qr/^exe:      \Q$real\E\n/m, "$what: text report: exe:      $real");
	my $s = (read_json("$dir/r.json") // {})->{snapshots}[-1] // {};
	is($s->{command}, $cmdline, "$what: JSON command");
	is($s->{exe}, $real, "$what: JSON exe");
	(my $base = $link) =~ s{.*/}{};
	like(pprof_out("$dir/r.pb.gz", '-top'), qr/^File: \Q$base\E$/m, "$what: pprof: File: $base");
	like(diff_out("$dir/r.json", "$dir/r.json"), qr/^old:  .*, command \Q$cmdline\E$/m,
	     "$what: jmptrace diff: command $cmdline");
}

for my $mode (@modes) {
	subtest "leak-$mode launched through a symlink" => sub {
		my $dir = tempdir('jt-names-XXXXXX', TMPDIR => 1, CLEANUP => 1);
		my $link = "$dir/jt-named-$mode";
		symlink(JT::prog_path('leak', $mode), $link) or return fail("symlink: $!");
		my $r = run_cmd(argv => [$JT, '-o', "$dir/r.txt", '--json', "$dir/r.json", '--pprof', "$dir/r.pb.gz",
					 '--', $link, 3, 0]);
		is($r->{exit}, 0, 'exit 0') or diag($r->{stderr});
		check_names('launched', $dir, "$link 3 0", $link, realpath(JT::prog_path('leak', $mode)));
	};

	subtest "attach-$mode attached through a symlink" => sub {
		my $dir = tempdir('jt-names-XXXXXX', TMPDIR => 1, CLEANUP => 1);
		my $link = "$dir/jt-attached-$mode";
		symlink(JT::prog_path('attach', $mode), $link) or return fail("symlink: $!");
		my $p = spawn(argv => [$link, 'an-argument'], dir => $dir, name => 'prog', stdin_pipe => 1);
		my $ready = wait_until(sub { (JT::slurp($p->{out}) // '') eq "ready\n" }, 30);
		ok($ready, 'the program is ready') or return reap($p, 1);
		my $j = spawn(argv => [$JT, '-p', $p->{pid}, '--json', "$dir/r.json", '-o', "$dir/r.txt",
				       '--pprof', "$dir/r.pb.gz"], dir => $dir, name => 'jt');
		my $caught = wait_until(sub { catches_signal($j->{pid}, 10) }, 30);
		ok($caught, 'jmptrace handles SIGUSR1')
			or do { diag(JT::slurp($j->{err}) // ''); reap($j, 1); reap($p, 1); return };
		# A snapshot asked for with SIGUSR1 is written once jmptrace has attached.
		kill 'USR1', $j->{pid};
		my $first = wait_until(sub { my $x = read_json("$dir/r.json"); $x && @{ $x->{snapshots} // [] } }, 30);
		ok($first, 'jmptrace attached') or do { diag(JT::slurp($j->{err}) // ''); reap($j, 1); reap($p, 1); return };
		print { $p->{stdin} } "g";
		my $ps = reap($p, 60);
		my $js = reap($j, 60);
		ok(defined $ps && WIFEXITED($ps) && WEXITSTATUS($ps) == 0, 'the program exits 0');
		ok(defined $js && WIFEXITED($js) && WEXITSTATUS($js) == 0, 'jmptrace exits 0')
			or diag(JT::slurp($j->{err}) // '');
		like(JT::slurp($j->{err}) // '', qr/^jmptrace: attached to process $p->{pid} \(\Q$link an-argument\E\), /m,
		     'the attach line names the command line');
		check_names('attached', $dir, "$link an-argument", $link, realpath(JT::prog_path('attach', $mode)));
	};
}

done_testing();
