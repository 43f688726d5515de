#!/usr/bin/perl
# leakcheck.t - --leak-check's verdicts are valgrind's: for each leak test program, the kind,
# bytes and blocks of every allocation site equal what memcheck reports for the same program
# (run here on the dynamic builds; the static builds are held to the pie build's figures),
# and the figures each program promises (also when the lost blocks are the last ones made:
# glibc's own bookkeeping is no root); libstdc++'s emergency pool is still reachable; and
# `-p --leak-check --duration 2` finds what a running program loses, which then runs on.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempdir);
use POSIX qw(WIFEXITED WEXITSTATUS);
use Test::More;
use JT;
use JTCheck;
use JTLeak;

my $JT = JT::jmptrace();
-x $JT or plan skip_all => "no jmptrace at $JT";
my @modes = $ENV{JT_MODES} ? split(/[\s,]+/, $ENV{JT_MODES}) : @JT::MODES;
my $VALGRIND = have_valgrind();
diag('valgrind not found: only the figures the programs promise are checked') unless $VALGRIND;

# Each program (or a run of one, prog and args): its stdout, and per site (file, marker,
# function) the verdicts it must get, as tally_line writes them. Sizes are in the programs'
# headers.
my %PROGS = (
	leakcases => {
		stdout => "leakcases: done\n",
		sites => [
			['lc_global.c', 'SITE:lc_global', 'lc_global', 'still_reachable 24/1'],
			['lc_stack.c', 'SITE:lc_stack', 'lc_stack', 'still_reachable 40/1'],
			['lc_heap_parent.c', 'SITE:lc_heap_parent', 'lc_heap_parent', 'still_reachable 56/1'],
			['lc_heap_child.c', 'SITE:lc_heap_child', 'lc_heap_child', 'still_reachable 72/1'],
			['lc_interior.c', 'SITE:lc_interior', 'lc_interior', 'possibly_lost 64/1'],
			['lc_posparent.c', 'SITE:lc_posparent', 'lc_posparent', 'possibly_lost 96/1'],
			['lc_poschild.c', 'SITE:lc_poschild', 'lc_poschild', 'possibly_lost 104/1'],
			['lc_definite.c', 'SITE:lc_definite', 'lc_definite', 'definitely_lost 88/1'],
			# The lost tree: the root loses its 2 children of 32 bytes.
			['lc_tree.c', 'SITE:lc_tree_root', 'lc_tree', 'definitely_lost 32/1+64', ind_blocks => 2],
			['lc_tree_child.c', 'SITE:lc_tree_child', 'lc_tree_child', 'indirectly_lost 64/2'],
			['lc_mmap.c', 'SITE:lc_mmap', 'lc_mmap', 'still_reachable 120/1'],
			['lc_zero.c', 'SITE:lc_zero', 'lc_zero', 'still_reachable 0/1'],
			['lc_pastend.c', 'SITE:lc_pastend', 'lc_pastend', 'definitely_lost 112/1'],
			['lc_unaligned.c', 'SITE:lc_unaligned', 'lc_unaligned', 'definitely_lost 128/1'],
			['lc_freed.c', 'SITE:lc_freed', 'lc_freed', 'definitely_lost 144/1'],
		],
	},
	leakcycle => {
		stdout => "leakcycle: done\n",
		sites => [
			# A ring of 3 nothing references: one leader, which loses the other two.
			['cy_lost_node.c', 'SITE:cy_lost_node', 'cy_lost_node',
			 'definitely_lost 48/1+96, indirectly_lost 96/2', ind_blocks => 2],
			['cy_kept_node.c', 'SITE:cy_kept_node', 'cy_kept_node', 'still_reachable 360/3'],
		],
	},
	# The lost ring made last: glibc's arena points at its top chunk, whose first word lies
	# inside the last block of the ring. The arena is no root: memcheck has none.
	'leakcycle last-cycle' => {
		prog => 'leakcycle',
		args => ['last-cycle'],
		stdout => "leakcycle: done\n",
		sites => [
			['cy_last_node.c', 'SITE:cy_last_node', 'cy_last_node',
			 'definitely_lost 40/1+80, indirectly_lost 80/2', ind_blocks => 2],
			['cy_kept_node.c', 'SITE:cy_kept_node', 'cy_kept_node', 'still_reachable 360/3'],
		],
	},
	# The same with one lost block made last.
	'leakcycle last-single' => {
		prog => 'leakcycle',
		args => ['last-single'],
		stdout => "leakcycle: done\n",
		sites => [
			['cy_last_single.c', 'SITE:cy_last_single', 'cy_last_single', 'definitely_lost 24/1'],
			['cy_kept_node.c', 'SITE:cy_kept_node', 'cy_kept_node', 'still_reachable 360/3'],
		],
	},
	leaktls => {
		stdout => "leaktls: done\n",
		sites => [
			['lt_tls.c', 'SITE:lt_tls', 'lt_tls', 'still_reachable 136/1'],
			['lt_register.c', 'SITE:lt_register', 'lt_register', 'still_reachable 152/1'],
			['lt_main_tls.c', 'SITE:lt_main_tls', 'lt_main_tls', 'still_reachable 168/1'],
			['lt_dead.c', 'SITE:lt_dead', 'lt_dead', 'definitely_lost 184/1'],
		],
	},
	leakcxx => {
		stdout => "leakcxx: done\n",
		sites => [
			['lx_string.cpp', 'SITE:lx_string', 'lx_string', 'still_reachable 65/1'],
			['lx_newarray.cpp', 'SITE:lx_newarray', 'lx_newarray', 'still_reachable 56/1'],
			['lx_multi.cpp', 'SITE:lx_multi', 'lx_multi', 'still_reachable 40/1'],
			['lx_length64.cpp', 'SITE:lx_length64', 'lx_length64', 'still_reachable 96/1'],
		],
		# valgrind's "of which reachable via heuristic" (in its text only, not its XML).
		heur => { stdstring => '65/1', length64 => '96/1', newarray => '56/1', multipleinheritance => '40/1' },
	},
);
# leakcxx with no heuristic: the four blocks have only interior pointers.
my %NOHEUR = (
	'lx_string.cpp' => 'possibly_lost 65/1',
	'lx_newarray.cpp' => 'possibly_lost 56/1',
	'lx_multi.cpp' => 'possibly_lost 40/1',
	'lx_length64.cpp' => 'possibly_lost 96/1',
);

# Known differences from valgrind, "prog:file" => reason: checked as TODO, never hidden.
my %TODO = (
);

my %VG;	# "key:mode:variant" => valgrind's site tally (pie and nopie)
my %VGPOOL;	# the same => tally_line of valgrind's emergency pool record

# The program of a %PROGS key, and its arguments.
sub prog_of { $PROGS{ $_[0] }{prog} // $_[0] }
sub args_of { $PROGS{ $_[0] }{args} // [] }

# valgrind's tally of %PROGS key $pk in mode (the pie build's for a static mode), or undef.
sub vg_tally {
	my ($pk, $mode, $variant, $vg_args) = @_;
	return undef unless $VALGRIND;
	my ($prog, $vmode) = (prog_of($pk), $mode =~ /static/ ? 'pie' : $mode);
	my $key = "$pk:$vmode:$variant";
	return $VG{$key} if exists $VG{$key};
	my $r = valgrind_run($prog, $vmode, vg_args => $vg_args, args => args_of($pk));
	my $ok = !$r->{error} && defined $r->{exit} && $r->{exit} == 0 && $r->{stdout} eq $PROGS{$pk}{stdout};
	ok($ok, "valgrind $pk-$vmode ($variant): runs, exit 0, XML read")
		or diag(($r->{error} // '') . "\n" . ($r->{stderr} // ''));
	return $VG{$key} = undef unless $ok;
	my @pool = vg_pool_records($r->{records});
	$VGPOOL{$key} = @pool == 1 ? "$pool[0]{kind} $pool[0]{bytes}/$pool[0]{blocks}" : scalar(@pool) . ' records';
	return $VG{$key} = site_tally($r->{records}, prog_files($prog));
}

# Runs %PROGS key $pk in mode under jmptrace --leak-check (jt_args added); returns (snapshot, tally).
sub jt_tally {
	my ($pk, $mode, @jt_args) = @_;
	my $prog = prog_of($pk);
	my $r = run_jt($prog, $mode, jt_args => ['--leak-check', @jt_args], args => args_of($pk));
	is($r->{exit}, 0, join(" ", "jmptrace --leak-check", @jt_args) . ": exit 0") or diag($r->{stderr});
	is($r->{stdout}, $PROGS{$pk}{stdout}, 'the program\'s stdout');
	my $s = snapshot_of($r, $prog) or return;
	my $recs = jt_records($s);
	ok($recs, 'the last snapshot has leak_check.records') or return;
	is($s->{reason}, 'exit', 'the last snapshot is the exit\'s');
	return ($s, site_tally($recs, prog_files($prog)));
}

# Holds one site of jmptrace's tally to the expected line and to valgrind's.
sub check_site_verdict {
	my ($pk, $mode, $jt, $vg, $site, $want, %o) = @_;
	my $prog = prog_of($pk);
	my ($file, $marker, $func) = @$site;
	my $key = "$file:" . site_line("$prog/$file", $marker);
	my $name = "$key ($func)";
	my $todo = $TODO{"$prog:$file"};
	TODO: {
		local $TODO = $todo if $todo;
		is(tally_line($jt->{$key}), $want, "$name: jmptrace: $want");
		is(tally_line($jt->{$key}), tally_line($vg->{$key}), "$name: jmptrace's verdicts equal valgrind's")
			if $vg;
	}
	is(tally_line($vg->{$key}), $want, "$name: valgrind: $want") if $vg && !$o{vg_checked};
	return unless $jt->{$key};
	is(site_function($jt->{$key}), $func, "$name: jmptrace names the function");
	is(join(' ', map { $_->{suppressed} // 0 } values %{ $jt->{$key} }), join(' ', map { 0 } values %{ $jt->{$key} }),
	   "$name: no record suppressed");
	if (defined $o{ind_blocks}) {
		my ($lead) = grep { $_->{ind_bytes} } values %{ $jt->{$key} };
		is($lead && $lead->{ind_blocks}, $o{ind_blocks}, "$name: the leader loses $o{ind_blocks} blocks indirectly");
	}
}

# Every site of the program's files that either tool reports: the same verdicts (dynamic
# builds only: a static build's libc allocates on its own terms).
sub check_all_sites {
	my ($pk, $jt, $vg) = @_;
	my $prog = prog_of($pk);
	my %keys = map { $_ => 1 } keys %$jt, keys %$vg;
	for my $key (sort keys %keys) {
		my ($file) = $key =~ /^(.*):\d+$/;
		TODO: {
			local $TODO = $TODO{"$prog:$file"} if $TODO{"$prog:$file"};
			is(tally_line($jt->{$key}), tally_line($vg->{$key}), "every site: $key: jmptrace's verdicts equal valgrind's");
		}
	}
}

# The record of libstdc++'s emergency exception pool: still reachable, one block, never lost,
# as valgrind says without its --run-cxx-freeres (vg: its line, or undef).
sub check_pool {
	my ($s, $vg) = @_;
	my $stacks = $s->{stacks};
	my @pool = grep {
		my $st = defined $_->{stack} ? $stacks->[ $_->{stack} ] : undef;
		($st && ($st->{suppressed} // '') =~ /emergency exception pool|eh_alloc/)
			|| grep { ($_->{fn} // '') =~ /eh_alloc|pool::pool/ || ($_->{file} // '') =~ /eh_alloc\.cc$/ } @{ $_->{frames} }
	} @{ jt_records($s) };
	is(scalar(@pool), 1, 'one loss record for libstdc++\'s emergency pool') or return;
	my $p = $pool[0];
	is($p->{kind}, 'still_reachable', "the emergency pool ($p->{bytes} bytes) is still reachable");
	is($p->{blocks}, 1, 'the emergency pool is 1 block');
	my $st = $stacks->[ $p->{stack} ];
	is($p->{bytes}, $st->{live_bytes}, 'its bytes are its stack\'s live bytes');
	is("$p->{kind} $p->{bytes}/$p->{blocks}", $vg, 'the emergency pool: jmptrace\'s verdict equals valgrind\'s') if defined $vg;
}

# valgrind's emergency pool line for the run of %PROGS key $pk in mode (see vg_tally).
sub vg_pool {
	my ($pk, $mode, $variant) = @_;
	return $VGPOOL{ $pk . ':' . ($mode =~ /static/ ? 'pie' : $mode) . ":$variant" };
}

for my $pk (sort keys %PROGS) {
	my $P = $PROGS{$pk};
	for my $mode (@modes) {
		subtest "$pk-$mode" => sub {
			my $vg = vg_tally($pk, $mode, 'default');
			my ($s, $jt) = jt_tally($pk, $mode) or return;
			for my $site (@{ $P->{sites} }) {
				my ($file, $marker, $func, $want, %o) = @$site;
				check_site_verdict($pk, $mode, $jt, $vg, $site, $want, %o, vg_checked => ($mode =~ /static/ ? 1 : 0));
			}
			check_all_sites($pk, $jt, $vg) if $vg && $mode !~ /static/;
			if ($P->{heur}) {
				my $h = $s->{leak_check}{summary}{reachable_via_heuristic} // {};
				is(join(', ', map { "$_ " . ($h->{$_} ? "$h->{$_}{bytes}/$h->{$_}{blocks}" : 'none') } sort keys %{ $P->{heur} }),
				   join(', ', map { "$_ $P->{heur}{$_}" } sort keys %{ $P->{heur} }),
				   'summary: reachable via each heuristic');
				check_pool($s, vg_pool($pk, $mode, 'default'));
			}
		};
	}
}

# leakcxx with no heuristic: the same blocks are possibly lost, in both tools.
for my $mode (@modes) {
	subtest "leakcxx-$mode, no heuristic" => sub {
		my $vg = vg_tally('leakcxx', $mode, 'none', ['--leak-check-heuristics=none']);
		my ($s, $jt) = jt_tally('leakcxx', $mode, '--leak-heuristics', 'none') or return;
		for my $site (@{ $PROGS{leakcxx}{sites} }) {
			check_site_verdict('leakcxx', $mode, $jt, $vg, $site, $NOHEUR{ $site->[0] },
					   vg_checked => ($mode =~ /static/ ? 1 : 0));
		}
		is_deeply($s->{leak_check}{summary}{reachable_via_heuristic}, {}, 'summary: nothing reachable via a heuristic');
		check_pool($s, vg_pool('leakcxx', $mode, 'none'));
	};
}

# ---------------------------------------------------------------------------------------
# -p: leakgrow loses a 200-byte block every 5 ms. jmptrace attaches for 2 s with
# --leak-check; the check at the detach finds the blocks lost since the attach (and only
# those), and the program then answers and exits as it would have. While attached, the
# program makes one block whose only pointer is in a block older than the attach: unknown
# to jmptrace, that memory must count as a root, and the block as still reachable.

my $GR_SIZE = 200;
my $GR_KEEP_SIZE = 232;

# Writes a line to leakgrow and returns the N of the "pong N" it answers (after the $nth
# line of its stdout), or undef.
sub gr_ping {
	my ($p, $nth) = @_;
	print { $p->{stdin} } "ping\n";
	return wait_until(sub {
		my @l = split /\n/, JT::slurp($p->{out}) // '';
		@l > $nth && $l[$nth] =~ /^pong (\d+)$/ ? $1 : undef
	}, 60);
}

# Attaches jmptrace to $p with @opts; returns its process once it handles SIGUSR1 (attached).
sub gr_attach {
	my ($p, $dir, @opts) = @_;
	my $j = spawn(argv => [$JT, '-p', $p->{pid}, '--leak-check', @opts], dir => $dir, name => 'jt');
	return $j if wait_until(sub { attach_done($j) }, 30);
	reap($j, 1);
	return undef;
}

for my $mode (@modes) {
	subtest "attach with --leak-check, leakgrow-$mode" => sub {
		my $dir = tempdir('jt-leakgrow-XXXXXX', TMPDIR => 1, CLEANUP => 1);
		my $p = spawn(argv => [JT::prog_path('leakgrow', $mode)], dir => $dir, name => 'prog', stdin_pipe => 1);
		ok(wait_until(sub { (JT::slurp($p->{out}) // '') eq "ready\n" }, 30), 'the program is ready')
			or do { reap($p, 1); return };
		my $before = gr_ping($p, 1);
		ok(defined $before, "before the attach it has lost " . ($before // '?') . ' blocks')
			or do { reap($p, 1); return };

		# 1. --duration 2: the check at the detach finds what it lost meanwhile.
		my $j = gr_attach($p, $dir, '--duration', '2', '--json', "$dir/r.json", '-o', "$dir/r.txt");
		ok($j, 'jmptrace -p --leak-check --duration 2 attaches') or do { reap($p, 1); return };
		my $js = reap($j, 120);
		ok(defined $js && WIFEXITED($js) && WEXITSTATUS($js) == 0, 'jmptrace exits 0 after --duration 2')
			or diag('status ' . ($js // 'timeout') . "\n" . (JT::slurp($j->{err}) // ''));
		my $after = gr_ping($p, 2);
		ok(defined $after && $after > $before, 'the program answers after the detach and still loses blocks')
			or diag(JT::slurp($p->{out}));

		# 2. Attached until SIGINT: a check at SIGUSR1 of the running process, and a block
		# made while attached whose only pointer is in a block older than the attach.
		my $k = gr_attach($p, $dir, '--json', "$dir/k.json", '-o', "$dir/k.txt");
		ok($k, 'jmptrace -p --leak-check attaches again') or do { reap($p, 1); return };
		print { $p->{stdin} } "keep\n";
		ok(wait_until(sub { (JT::slurp($p->{out}) // '') =~ /\nkept\n/ }, 30), 'the program keeps a block while attached');
		kill 'USR1', $k->{pid};
		my $first = wait_until(sub { my $x = read_json("$dir/k.json"); $x && @{ $x->{snapshots} // [] } ? $x->{snapshots}[0] : undef }, 60);
		ok($first && ref $first->{leak_check} eq 'HASH', 'SIGUSR1: a snapshot with a leak check of the running process')
			or diag(JT::slurp($k->{err}) // '');
		kill 'INT', $k->{pid};
		my $ks = reap($k, 120);
		ok(defined $ks && WIFEXITED($ks) && WEXITSTATUS($ks) == 0, 'jmptrace exits 0 after SIGINT')
			or diag('status ' . ($ks // 'timeout') . "\n" . (JT::slurp($k->{err}) // ''));
		my $last = gr_ping($p, 4);
		ok(defined $last && $last > $after, 'the program answers after the second detach');
		close $p->{stdin};
		my $ps = reap($p, 30);
		ok(defined $ps && WIFEXITED($ps) && WEXITSTATUS($ps) == 0, 'the program exits 0 at the end of its stdin')
			or diag('status ' . ($ps // 'timeout'));
		like(JT::slurp($p->{out}), qr/^ready\npong \d+\npong \d+\nkept\npong \d+\nbye \d+\n\z/, 'the program\'s stdout');

		my $x = read_json("$dir/r.json");
		my $s = $x && $x->{snapshots}[-1];
		ok($s, 'a snapshot at the end of --duration') or return;
		is($s->{reason}, 'duration', 'its reason is duration');
		ok(is_true($s->{attached}), 'attached is true');
		my $recs = jt_records($s);
		ok($recs, 'the snapshot has leak_check.records') or return;
		ok(is_true($s->{leak_check}{attached}), 'leak_check.attached is true (older heap memory counted as roots)');
		my $line = site_line('leakgrow/gr_lose.c', 'SITE:gr_lose');
		my @st = stacks_at_site($s, 'gr_lose.c', $line);
		my $calls = sum_field('alloc_calls', @st);
		# How many depends on the host's speed and load (one every 5 ms while running).
		ok($calls > 0, "gr_lose.c:$line: $calls blocks made in the 2 s attached");
		is(sum_field('live_blocks', @st), $calls, 'all of them live (never freed)');
		my $t = site_tally($recs, prog_files('leakgrow'))->{"gr_lose.c:$line"} // {};
		my $d = $t->{definitely_lost} // { bytes => 0, blocks => 0 };
		ok($d->{blocks} > 0, "gr_lose.c:$line: $d->{blocks} blocks definitely lost");
		is($d->{bytes}, $d->{blocks} * $GR_SIZE, "bytes = blocks * $GR_SIZE");
		# The newest block may still be pointed to when the process is stopped: from a
		# register or stack slot (still reachable), or at its middle by memset's registers
		# (possibly lost). Nothing made by gr_lose is ever indirectly lost.
		is(join(',', grep { $_ ne 'definitely_lost' && $_ ne 'still_reachable' && $_ ne 'possibly_lost' } sort keys %$t), '',
		   'no other verdict than definitely lost (or still reachable or possibly lost for the newest)');
		my $rest = 0;
		$rest += $t->{$_}{blocks} for grep { $_ ne 'definitely_lost' } keys %$t;
		is($d->{blocks} + $rest, $calls, 'every block made since the attach has a verdict, none older');
		ok($d->{blocks} <= $after - $before, "no more than the program lost while attached ($after - $before)");
		ok($rest <= 1, "at most the newest block not definitely lost ($rest)")
			or diag(tally_line($t));

		my $kx = read_json("$dir/k.json");
		my $ksnap = $kx && $kx->{snapshots}[-1];
		ok($ksnap && ($ksnap->{reason} // '') eq 'signal', 'a snapshot at SIGINT') or return;
		is($first->{leak_check}{threads}, 1, 'SIGUSR1: the one thread\'s registers and stack were roots');
		is($ksnap->{leak_check}{threads}, 1, 'SIGINT: the one thread\'s registers and stack were roots');
		my $krecs = jt_records($ksnap) or return fail('the SIGINT snapshot has leak_check.records');
		$line = site_line('leakgrow/gr_keep.c', 'SITE:gr_keep');
		is(tally_line(site_tally($krecs, prog_files('leakgrow'))->{"gr_keep.c:$line"}), "still_reachable $GR_KEEP_SIZE/1",
		   "gr_keep.c:$line: the block held only by a block older than the attach is still reachable");
	};
}

done_testing();
