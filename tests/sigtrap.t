#!/usr/bin/perl
# sigtrap.t - a program that handles SIGTRAP itself, and allocates in its handler, is unharmed
# under jmptrace, launched and attached: our breakpoints hit inside its SIGTRAP handler (where
# SIGTRAP is blocked) make the kernel reset that handler, and jmptrace must put it back.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempdir);
use POSIX qw(WIFEXITED WEXITSTATUS WIFSIGNALED WTERMSIG);
use Test::More;
use JT;
use JTCheck;

my $JT = JT::jmptrace();
-x $JT or plan skip_all => "no jmptrace at $JT";
my @modes = $ENV{JT_MODES} ? split(/[ ,]+/, $ENV{JT_MODES}) : qw(pie nopie static static-pie);
my @attach_modes = $ENV{JT_MODES} ? @modes : qw(pie static);
my $N = 5;	# raise(SIGTRAP) and int3 each; the handler mallocs and frees once per trap
my $want_out = "sigtrap: handler " . (2 * $N) . "\n";

# Launched: same stdout and exit status as untraced, every handler call and allocation seen.
for my $mode (@modes) {
	subtest "sigtrap-$mode launched" => sub {
		my $nat = run_native('sigtrap', $mode, [$N]);
		is($nat->{stdout}, $want_out, 'native: stdout');
		is($nat->{exit}, 0, 'native: exits 0');
		my (%s);
		for my $n (0, $N) {
			my $r = run_jt('sigtrap', $mode, args => [$n]);
			my $native = $n ? $nat : run_native('sigtrap', $mode, [$n]);
			same_as_native($r, $native, "sigtrap $n");
			is($r->{signal}, undef, "sigtrap $n: jmptrace is not killed");
			$s{$n} = snapshot_of($r, "sigtrap $n");
		}
		return unless both($s{0}, $s{$N});
		check_shape($s{$N}, "sigtrap $N", reason => 'exit', exit_status => 0, killed_by => undef,
			    prog => "sigtrap-$mode");
		check_call_deltas($s{0}, $s{$N}, "0 -> $N traps", is_static($mode),
				  malloc => 2 * $N, free => 2 * $N);
		check_total_deltas($s{0}, $s{$N}, "0 -> $N traps", alloc_calls => 2 * $N, frees => 2 * $N,
				   bytes_allocated => 24 * 2 * $N, live_blocks => 0);
	};
}

# Four threads at once in their SIGTRAP handlers, which allocate: one thread's breakpoint hit
# in its handler must not leave the others' SIGTRAPs to the default action.
for my $mode (@modes) {
	subtest "sigtrap-$mode threads" => sub {
		my %s;
		for my $n (10, 50) {
			my $nat = run_native('sigtrap', $mode, ['threads', $n]);
			is($nat->{stdout}, 'sigtrap: threads handler ' . (8 * $n) . "\n", "native $n: stdout");
			my $r = run_jt('sigtrap', $mode, args => ['threads', $n]);
			same_as_native($r, $nat, "threads $n");
			$s{$n} = snapshot_of($r, "threads $n");
		}
		return unless both($s{10}, $s{50});
		check_call_deltas($s{10}, $s{50}, 'threads 10 -> 50', is_static($mode),
				  malloc => 8 * 40, free => 8 * 40);
	};
}

# SIGTRAPs sent to a thread that allocates without end: many arrive while it is stopped at
# our breakpoints, some just after we ran a one-byte instruction (push) for it, where its pc
# is one past our trap byte. They are the program's, and every block it keeps is counted.
my $S = 200;
for my $mode (@modes) {
	subtest "sigtrap-$mode race" => sub {
		my $r = run_jt('sigtrap', $mode, args => ['race', $S]);
		is($r->{exit}, 0, 'exits 0') or diag("signal " . ($r->{signal} // '-') . "\n$r->{stderr}");
		is($r->{stdout}, "sigtrap: race handler $S\n", 'every SIGTRAP reached the handler');
		my ($kept, $again) = ($r->{stderr} // '') =~ /^kept (\d+) again (\d+)$/m;
		ok(defined $kept, 'the program says how many blocks it kept') or return;
		note("the program sent $again SIGTRAPs again (lost: merged with the one our int3 had pending)");
		my $s = snapshot_of($r, 'race') or return;
		my @st = JT::stacks_with_frame0($s, 'race_alloc');
		is(JT::sum_field('live_blocks', @st), $kept, "every block kept is live at race_alloc ($kept)");
	};
}

# Attached (-p) while the program waits at its gate; it allocates and traps only after the
# attach. With "block", SIGTRAP is blocked (no handler running) when our breakpoints are hit:
# the handler must be the one learned at the attach, and SIGTRAP blocked again afterwards.
sub attached {
	my ($mode, $block) = @_;
	my $dir = tempdir('jt-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my @args = ($N, "$dir/gate", $block ? ('block') : ());
	my $allocs = 2 * $N + ($block ? 1 : 0);
	my $out = ($block ? "sigtrap: blocked 1\n" : '') . $want_out;
	my $ndir = tempdir('jt-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	JT::spew("$ndir/gate", '');
	my $nat = run_native('sigtrap', $mode, [$N, "$ndir/gate", $block ? ('block') : ()]);
	is($nat->{stdout}, $out, 'native: stdout');
	is($nat->{exit}, 0, 'native: exits 0');
	my $p = JT::spawn(argv => [prog_path('sigtrap', $mode), @args], dir => $dir, name => 'prog');
	ok(JT::wait_until(sub { JT::catches_signal($p->{pid}, 5) }, 30), 'the program handles SIGTRAP');
	my $j = JT::spawn(argv => [$JT, '-p', $p->{pid}, '--json', "$dir/r.json", '-o', "$dir/r.txt"],
			  dir => $dir, name => 'jt');
	# jmptrace is set up once it catches SIGINT (its handlers are installed after attaching).
	ok(JT::wait_until(sub { JT::attach_done($j) }, 30), 'jmptrace attached');
	JT::spew("$dir/gate", '');
	my $ps = JT::reap($p, JT::timeout_secs());
	my $js = JT::reap($j, 30);
	ok(defined $ps && WIFEXITED($ps) && WEXITSTATUS($ps) == 0, 'the program exits 0')
		or diag('status ' . ($ps // 'timeout') .
			(defined $ps && WIFSIGNALED($ps) ? ', killed by signal ' . WTERMSIG($ps) : ''));
	is(JT::slurp($p->{out}), $out, 'the program prints every handler call' . ($block ? ', SIGTRAP still blocked' : ''));
	ok(defined $js && WIFEXITED($js) && WEXITSTATUS($js) == 0, 'jmptrace exits 0')
		or diag(JT::slurp($j->{err}) // '');
	my $x = JT::read_json("$dir/r.json");
	my $s = $x && $x->{snapshots}[-1];
	ok($s, 'a snapshot') or return;
	ok(JT::is_true($s->{attached}) && JT::is_true($s->{exited}), 'attached, and saw the exit');
	is(calls_of($s, 'malloc'), $allocs, 'every malloc counted');
	is(calls_of($s, 'free'), $allocs, 'every free counted');
	is($s->{totals}{bytes_allocated}, 24 * $allocs, 'bytes allocated');
	is($s->{totals}{live_blocks}, 0, 'nothing live');
}

for my $mode (@attach_modes) {
	subtest "sigtrap-$mode attached" => sub { attached($mode, 0) };
	subtest "sigtrap-$mode attached, SIGTRAP blocked" => sub { attached($mode, 1) };
}

done_testing();
