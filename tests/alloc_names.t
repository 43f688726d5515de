#!/usr/bin/perl
# alloc_names.t - allocators under other names, by option: --alloc NAME=KIND[:ARG] on a
# program's own arena (arena_alloc(arena, size), arena_free(arena, ptr): the size and the
# pointer in the second argument) and --alloc-preset jemalloc-je on a je_-prefixed stand-in
# (tests/progs/jestub), neither ever calling malloc: exact calls, bytes, live blocks and
# stacks in every link mode, with both event sources (uprobe as root), launched and with -p;
# the leak check and the invalid-free check on the pool's blocks, and the leak check's
# figures equal to valgrind memcheck's on the same pool built to call malloc (arena-malloc);
# the preset offered in one line when a program defines je_malloc; a name that neither the
# program nor the libraries it is linked with define refused in one line, exit 2, before
# its code runs (launched, dynamic or static) or at the attach (-p, the process let go as
# it was); the same pool in a library it is linked with (arena-solib) traced with exact
# figures; --alloc-dlopen for a dlopen'ed library's function (plugin), said at the end only
# when defined nowhere; a #! script's names checked at the end; a kind that does not exist
# or an argument out of range refused in one line, exit 2.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Cwd qw(abs_path);
use File::Basename qw(basename);
use File::Temp qw(tempdir);
use POSIX qw(WIFEXITED WEXITSTATUS);
use Test::More;
use JT;
use JTLeak;

my $JT = JT::jmptrace();
-x $JT or plan skip_all => "no jmptrace at $JT";
my @modes = $ENV{JT_MODES} ? split(/[\s,]+/, $ENV{JT_MODES}) : @JT::MODES;
my @sources = JT::sources();

my @ARENA = ('--alloc', 'arena_alloc=malloc:2', '--alloc', 'arena_free=free:2');
my $CHURN = 200;

# tests/progs/arena (arena.h): per site, the function that allocates there, its live blocks
# and bytes at the end, its calls, and its leak check verdict (tally_line's form).
my @AR_SITES = (
	['ar_keep.c', 'SITE:ar_keep', 'ar_keep', 5, 500, 5, 'still_reachable 500/5'],
	['ar_lose.c', 'SITE:ar_lose', 'ar_lose', 3, 144, 3, 'definitely_lost 144/3'],
	['ar_tree.c', 'SITE:ar_tree_root', 'ar_tree_root', 1, 32, 1, 'definitely_lost 32/1+128'],
	['ar_tree.c', 'SITE:ar_tree_child', 'ar_tree_child', 2, 128, 2, 'indirectly_lost 128/2'],
	['ar_interior.c', 'SITE:ar_interior', 'ar_interior', 1, 80, 1, 'possibly_lost 80/1'],
	['ar_churn.c', 'SITE:ar_churn', 'ar_churn', 0, 0, $CHURN, 'none'],
);
my %AR_LOST = (definitely_lost => '176/4', indirectly_lost => '128/2', possibly_lost => '80/1');

# Every stack (live or not) whose frame 0 is file:line.
sub stacks_from {
	my ($s, $file, $line) = @_;
	return grep {
		my $f = $_->{frames}[0];
		$f && frame_file_is($f, $file) && ($f->{line} // -1) == $line
	} @{ $s->{stacks} // [] };
}

# The site figures of a snapshot: "live BLOCKS/BYTES, calls N" and the function at frame 0.
sub site_figures {
	my ($s, $dir, $file, $marker) = @_;
	my $line = site_line("$dir/$file", $marker);
	my @st = stacks_from($s, $file, $line);
	my %fn = map { ($_->{frames}[0]{function} // '?') => 1 } @st;
	return (sprintf('live %d/%d, calls %d', sum_field('live_blocks', @st), sum_field('live_bytes', @st),
			sum_field('alloc_calls', @st)), join(',', sort keys %fn), "$file:$line");
}

# The leak summary of a snapshot for the kinds of %AR_LOST, as "BYTES/BLOCKS".
sub lost_figures {
	my ($s) = @_;
	my $sum = $s->{leak_check} && $s->{leak_check}{summary} or return {};
	return { map { $_ => ($sum->{$_}{bytes} // '?') . '/' . ($sum->{$_}{blocks} // '?') } keys %AR_LOST };
}

# valgrind's figures for the same pool calling malloc, summed over its loss records.
my $VG_LOST;
if (have_valgrind()) {
	my $vg = valgrind_run('arena', 'malloc', args => [$CHURN]);
	if ($vg->{error}) {
		fail("valgrind on arena-malloc: $vg->{error}");
	} else {
		my %t;
		for my $r (@{ $vg->{records} }) {
			$t{ $r->{kind} }{bytes} += $r->{bytes};
			$t{ $r->{kind} }{blocks} += $r->{blocks};
		}
		$VG_LOST = { map { $_ => ($t{$_}{bytes} // 0) . '/' . ($t{$_}{blocks} // 0) } keys %AR_LOST };
		is_deeply($VG_LOST, \%AR_LOST, 'valgrind on arena-malloc: the figures arena.h promises');
	}
} else {
	diag('valgrind not found: the leak figures are held to arena.h only');
}

# The checks of one arena snapshot (launched or attached).
sub check_arena {
	my ($s, $name, $attached) = @_;
	is(calls_of($s, 'arena_alloc'), 5 + 3 + 3 + 1 + $CHURN, "$name: arena_alloc calls");
	is(calls_of($s, 'arena_free'), $CHURN + 1, "$name: arena_free calls (the invalid one too)");
	is(calls_of($s, 'malloc') + calls_of($s, 'free') == 0 || $name =~ /static/ ? 1 : 0, 1,
	   "$name: no malloc or free in a dynamic build (the pool never calls them)");
	for my $site (@AR_SITES) {
		my ($file, $marker, $func, $blocks, $bytes, $calls) = @$site;
		my ($fig, $fns, $where) = site_figures($s, 'arena', $file, $marker);
		is($fig, "live $blocks/$bytes, calls $calls", "$name: $where");
		is($fns, $func, "$name: $where is in $func");
	}
	my ($churn) = stacks_from($s, 'ar_churn.c', site_line('arena/ar_churn.c', 'SITE:ar_churn'));
	is($churn && $churn->{frees}, $CHURN, "$name: ar_churn's blocks all freed by arena_free");
	my $inv = $s->{invalid_frees} // [];
	my $bad = site_line('arena/ar_bad.c', 'SITE:ar_bad');
	is($s->{totals}{unknown_frees}, 1, "$name: one free of no live block");
	if ($attached) {
		# After an attach, a free of no block seen may be of one made before: unknown, not invalid.
		is(scalar(@$inv), 0, "$name: attached, so it is no invalid free");
	} else {
		is(scalar(@$inv), 1, "$name: one invalid free stack");
		my $f = $inv->[0] && $inv->[0]{frames}[0];
		is($f ? sprintf('%d from %s %s:%s', $inv->[0]{count}, $f->{function}, basename($f->{file}), $f->{line}) : 'none',
		   "1 from ar_bad ar_bad.c:$bad", "$name: the invalid arena_free, from ar_bad.c:$bad");
	}
	my $recs = jt_records($s);
	ok($recs, "$name: leak check records") or return;
	my $tally = site_tally($recs, prog_files('arena'));
	for my $site (@AR_SITES) {
		my ($file, $marker, $func, undef, undef, undef, $want) = @$site;
		my $line = site_line("arena/$file", $marker);
		is(tally_line($tally->{"$file:$line"}), $want, "$name: leak check at $file:$line");
	}
	is_deeply(lost_figures($s), \%AR_LOST, "$name: lost figures arena.h promises");
	is_deeply(lost_figures($s), $VG_LOST, "$name: lost figures equal valgrind's on arena-malloc") if $VG_LOST;
}

for my $src (@sources) {
	for my $mode (@modes) {
		subtest "arena-$mode, --source $src" => sub {
			my $r = run_jt('arena', $mode, args => [$CHURN],
				       jt_args => ['--source', $src, '--leak-check', @ARENA]);
			is($r->{exit}, 0, 'exit 0');
			is($r->{stdout}, "arena: done\n", 'stdout');
			unlike($r->{stderr}, qr/--alloc|preset/, 'nothing said about names');
			my $s = last_snapshot($r) or return fail("a snapshot: $r->{json_error}\n$r->{stderr}");
			if ($mode !~ /static/) {
				is("$s->{totals}{live_blocks}/$s->{totals}{live_bytes}", '12/884', 'live in all: the pool\'s 12 blocks');
			}
			check_arena($s, "arena-$mode $src");
		};
	}
}

# -p: attached before the pool is made, in a dynamic and a static build.
for my $src (@sources) {
	for my $mode (grep { $_ eq 'pie' || $_ eq 'static' } @modes) {
		subtest "arena-$mode -p, --source $src" => sub {
			my $dir = tempdir('jt-XXXXXX', TMPDIR => 1, CLEANUP => 1);
			my $p = spawn(dir => $dir, name => 'prog', stdin_pipe => 1,
				      argv => [prog_path('arena', $mode), $CHURN, 'wait']);
			ok(wait_until(sub { (JT::slurp($p->{out}) // '') =~ /ready/ }, 30), 'the program is ready')
				or return reap($p, 5);
			my $j = spawn(dir => $dir, name => 'jt', argv => [$JT, '--source', $src, '--leak-check', @ARENA,
				      '--json', "$dir/r.json", '-o', "$dir/r.txt", '-p', $p->{pid}]);
			ok(wait_until(sub { (JT::slurp($j->{err}) // '') =~ /attached to process/ }, 30), 'attached')
				or diag(JT::slurp($j->{err}));
			my $ps = reap($p, 60);
			ok(defined $ps && WIFEXITED($ps) && WEXITSTATUS($ps) == 0, 'the program exits 0');
			is(JT::slurp($p->{out}), "ready\narena: done\n", 'its stdout');
			my $js = reap($j, 60);
			ok(defined $js && WIFEXITED($js) && WEXITSTATUS($js) == 0, 'jmptrace exits 0')
				or diag(JT::slurp($j->{err}));
			my $x = read_json("$dir/r.json");
			my $s = $x && $x->{snapshots}[-1] or return fail('a snapshot');
			check_arena($s, "arena-$mode -p $src", 1);
		};
	}
}

# jestub with the preset: every je_ function counted as its kind.
my %JS_CALLS = (je_malloc => 104, je_calloc => 1, je_realloc => 1, je_free => 100,
		je_mallocx => 60, je_sdallocx => 50, je_dallocx => 10);
my @JS_SITES = (
	['js_keep.c', 'SITE:js_keep_malloc', 'js_keep', 'live 2/400, calls 2', 'still_reachable 400/2'],
	['js_keep.c', 'SITE:js_keep_calloc', 'js_keep', 'live 1/300, calls 1', 'still_reachable 300/1'],
	['js_grow.c', 'SITE:js_grow_malloc', 'js_grow', 'live 0/0, calls 1', 'none'],
	['js_grow.c', 'SITE:js_grow_realloc', 'js_grow', 'live 1/500, calls 1', 'still_reachable 500/1'],
	['js_lose.c', 'SITE:js_lose', 'js_lose', 'live 1/64, calls 1', 'definitely_lost 64/1'],
	['js_churn.c', 'SITE:js_churn_malloc', 'js_churn', 'live 0/0, calls 100', 'none'],
	['js_churn.c', 'SITE:js_churn_x', 'js_churn', 'live 0/0, calls 50', 'none'],
);
my $OFFER = qr/^jmptrace: \S+jestub-\S+ defines je_malloc, and the standard allocator functions were called only by the C runtime: to trace its allocator, run again with --alloc-preset jemalloc-je$/m;

for my $src (@sources) {
	for my $mode (@modes) {
		subtest "jestub-$mode, --source $src" => sub {
			my $r = run_jt('jestub', $mode, jt_args => ['--source', $src, '--leak-check', '--alloc-preset', 'jemalloc-je']);
			is($r->{exit}, 0, 'exit 0');
			is($r->{stdout}, "jestub: done\n", 'stdout');
			unlike($r->{stderr}, qr/preset|--alloc/, 'no offer: the preset is on');
			my $s = last_snapshot($r) or return fail("a snapshot: $r->{json_error}\n$r->{stderr}");
			is_deeply({ map { $_ => calls_of($s, $_) } keys %JS_CALLS }, \%JS_CALLS, 'calls of every je_ function');
			is($s->{totals}{calls}{je_free_sized}, 0, 'je_free_sized, not defined, is listed with 0 calls');
			my $tally = site_tally(jt_records($s) // [], prog_files('jestub'));
			for my $site (@JS_SITES) {
				my ($file, $marker, $func, $want, $leak) = @$site;
				my ($fig, $fns, $where) = site_figures($s, 'jestub', $file, $marker);
				is($fig, $want, "$where");
				is($fns, $func, "$where is in $func");
				is(tally_line($tally->{$where}), $leak, "leak check at $where");
			}
			my ($g) = stacks_from($s, 'js_grow.c', site_line('jestub/js_grow.c', 'SITE:js_grow_malloc'));
			is($g && $g->{frees}, 1, 'the block je_realloc moved is freed');
			my $sum = $s->{leak_check}{summary};
			is("$sum->{definitely_lost}{bytes}/$sum->{definitely_lost}{blocks}", '64/1', 'definitely lost: js_lose\'s block');
		};
	}
}

# Without the preset: its functions are not traced, and the preset is offered in one line.
for my $mode (@modes) {
	my $r = run_jt('jestub', $mode);
	is($r->{exit}, 0, "jestub-$mode without the preset: exit 0");
	my @lines = $r->{stderr} =~ /(.*preset.*)/g;
	is(scalar(@lines), 1, "jestub-$mode: one line about the preset");
	like($r->{stderr}, $OFFER, "jestub-$mode: the preset is offered");
	my $s = last_snapshot($r);
	ok($s && !exists $s->{totals}{calls}{je_malloc}, "jestub-$mode: je_malloc is not traced");
}
for my $prog (['arena', 'pie'], ['leak', 'pie']) {
	my $r = run_jt(@$prog);
	unlike($r->{stderr}, qr/preset/, "$prog->[0]-$prog->[1] (no je_malloc): nothing offered");
}

# A name that neither the program nor a library it is linked with defines: refused before
# the program runs, dynamic or static. With 'wait', arena's main writes "ready" first: an
# empty stdout says its main never began. The line names the option and the program, and
# says how to name a function of a library loaded later.
my $DLOPEN_HINT = 'a function of a library it loads later with dlopen is given with --alloc-dlopen';
for my $src (@sources) {
	for my $mode (@modes) {
		my $r = run_jt('arena', $mode, args => [$CHURN, 'wait'],
			       jt_args => ['--source', $src, @ARENA, '--alloc', 'no_such_fn=free']);
		my $prog = abs_path(prog_path('arena', $mode));
		is($r->{exit}, 2, "a name defined nowhere (arena-$mode, $src): exit 2");
		is($r->{stdout}, '', "arena-$mode $src: the program never ran");
		is($r->{stderr}, "jmptrace: --alloc no_such_fn: $prog defines no function of that name" .
		   ($mode =~ /static/ ? '' : ", nor does any library it is linked with; $DLOPEN_HINT") . "\n",
		   "arena-$mode $src: one line names the option and the program");
	}
}

# The pool in a library the program is linked with (DT_NEEDED libjtarena.so): its names
# are found before the program runs, and every call is counted.
for my $src (@sources) {
	my $r = run_jt('arena', 'solib', args => [$CHURN], jt_args => ['--source', $src, @ARENA]);
	is($r->{exit}, 0, "arena-solib $src: exit 0");
	is($r->{stdout}, "arena: done\n", "arena-solib $src: the program ran to its end");
	unlike($r->{stderr}, qr/--alloc/, "arena-solib $src: nothing said about names");
	my $s = last_snapshot($r) or fail("arena-solib $src: a snapshot: $r->{stderr}"), next;
	is(calls_of($s, 'arena_alloc'), 5 + 3 + 3 + 1 + $CHURN, "arena-solib $src: arena_alloc calls");
	is(calls_of($s, 'arena_free'), $CHURN + 1, "arena-solib $src: arena_free calls (the invalid one too)");
	is("$s->{totals}{live_blocks}/$s->{totals}{live_bytes}", '12/884', "arena-solib $src: the pool's 12 blocks live");
	for my $site (@AR_SITES) {
		my ($file, $marker, $func, $blocks, $bytes, $calls) = @$site;
		my ($fig, $fns, $where) = site_figures($s, 'arena', $file, $marker);
		is($fig, "live $blocks/$bytes, calls $calls", "arena-solib $src: $where");
	}
}

# A function of a library the program loads with dlopen (plugin_leak, libjtplugin.so):
# --alloc refuses it before the program runs; --alloc-dlopen waits, and counts its call.
{
	my $prog = abs_path(prog_path('plugin', 'pie'));
	my $r = run_jt('plugin', 'pie', jt_args => ['--alloc', 'plugin_leak=free']);
	is($r->{exit}, 2, 'plugin: --alloc of a dlopen\'ed function: exit 2');
	is($r->{stdout}, '', 'plugin: the program never ran');
	is($r->{stderr}, "jmptrace: --alloc plugin_leak: $prog defines no function of that name, nor does any " .
	   "library it is linked with; $DLOPEN_HINT\n", 'plugin: one line says to give --alloc-dlopen');
	$r = run_jt('plugin', 'pie', jt_args => ['--alloc-dlopen', 'plugin_leak=free']);
	is($r->{exit}, 0, 'plugin: --alloc-dlopen plugin_leak: exit 0');
	is($r->{stdout}, "plugin: done\n", 'plugin: the program ran to its end');
	unlike($r->{stderr}, qr/--alloc/, 'plugin: nothing said about names');
	my $s = last_snapshot($r);
	is($s && calls_of($s, 'plugin_leak'), 1, 'plugin: plugin_leak, in the dlopen\'ed library, called once');
	# Defined nowhere: said at the end, after a whole run and its report.
	$r = run_jt('arena', 'pie', args => [$CHURN], jt_args => [@ARENA, '--alloc-dlopen', 'no_such_fn=free']);
	is($r->{exit}, 2, '--alloc-dlopen of a name defined nowhere: exit 2');
	is($r->{stdout}, "arena: done\n", '--alloc-dlopen: the program ran to its end');
	is($r->{stderr}, "jmptrace: --alloc-dlopen no_such_fn: " . abs_path(prog_path('arena', 'pie')) .
	   " defines no function of that name, nor does any library it loaded\n", '--alloc-dlopen: one line at the end');
	$s = last_snapshot($r);
	is($s && calls_of($s, 'arena_alloc'), 5 + 3 + 3 + 1 + $CHURN, '--alloc-dlopen: the report is written all the same');
}

# A #! script's first image is its interpreter: the names of the program it execs are
# checked at the end, and traced.
{
	my $dir = tempdir('jt-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	JT::spew("$dir/run.sh", "#!/bin/sh\nexec " . prog_path('arena', 'pie') . ' "$@"' . "\n");
	chmod(0755, "$dir/run.sh");
	my $r = run_jt('arena', 'pie', path => "$dir/run.sh", args => [$CHURN], jt_args => [@ARENA]);
	is($r->{exit}, 0, 'a script that execs arena-pie: exit 0');
	is($r->{stdout}, "arena: done\n", 'the script: the program ran');
	my $s = last_snapshot($r);
	is($s && calls_of($s, 'arena_alloc'), 5 + 3 + 3 + 1 + $CHURN, 'the script: arena_alloc calls');
}

# -p: held to the modules loaded at the attach, dynamic or static, and the process is let
# go as it was: untraced at once, it runs on to its own end.
for my $mode (grep { $_ eq 'pie' || $_ eq 'static' } @modes) {
	my $dir = tempdir('jt-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my $p = spawn(dir => $dir, name => 'prog', stdin_pipe => 1, argv => [prog_path('arena', $mode), $CHURN, 'wait']);
	ok(wait_until(sub { (JT::slurp($p->{out}) // '') =~ /ready/ }, 30), "-p arena-$mode: the program is ready")
		or do { reap($p, 5); next };
	my $r = run_cmd(argv => [$JT, '-o', '/dev/null', @ARENA, '--alloc', 'no_such_fn=malloc', '-p', $p->{pid}]);
	is($r->{exit}, 2, "-p arena-$mode with a name defined nowhere: exit 2");
	is($r->{stderr}, "jmptrace: --alloc no_such_fn: " . abs_path(prog_path('arena', $mode)) .
	   " defines no function of that name" . ($mode =~ /static/ ? '' : ", nor does any library it has loaded; $DLOPEN_HINT") .
	   "\n", "-p arena-$mode: one line names it, nothing else");
	my ($tracer) = (JT::slurp("/proc/$p->{pid}/status") // '') =~ /^TracerPid:\s*(\d+)/m;
	is($tracer, 0, "-p arena-$mode: no longer traced");
	my $ps = reap($p, 30);
	ok(defined $ps && WIFEXITED($ps) && WEXITSTATUS($ps) == 0, "-p arena-$mode: the program runs on and exits 0");
	is(JT::slurp($p->{out}), "ready\narena: done\n", "-p arena-$mode: its stdout");
}

# Bad values: one line each, exit 2, the program never runs.
my @BAD = (
	['--alloc', 'arena_alloc', qr/give NAME=KIND\[:ARG\]/],
	['--alloc', '=malloc', qr/give NAME=KIND\[:ARG\]/],
	['--alloc', 'x=mallocc', qr/KIND is one of malloc, calloc, realloc, free, free_sized, memalign, aligned_alloc or posix_memalign/],
	['--alloc', 'x=malloc:0', qr/ARG, the argument that is malloc's, is 1 to 6 \(the arguments in registers\)/],
	['--alloc', 'x=malloc:7', qr/ARG, the argument that is malloc's, is 1 to 6 \(the arguments in registers\)/],
	['--alloc', 'x=malloc:2x', qr/is 1 to 6/],
	['--alloc', 'x=realloc:6', qr/ARG, the first of realloc's 2 arguments, is 1 to 5 \(the last must be one of the 6 in registers\)/],
	['--alloc', 'x=posix_memalign:5', qr/ARG, the first of posix_memalign's 3 arguments, is 1 to 4/],
	['--alloc', 'malloc=free', qr/malloc is traced already/],
	['--alloc-preset', 'jemalloc', qr/give jemalloc-je, mimalloc or tcmalloc/],
);
for my $b (@BAD) {
	my ($opt, $val, $why) = @$b;
	my $r = run_cmd(argv => [$JT, '-o', '/dev/null', $opt, $val, '--', prog_path('arena', 'pie')]);
	is($r->{exit}, 2, "$opt $val: exit 2");
	is($r->{stdout}, '', "$opt $val: the program never ran");
	like($r->{stderr}, qr/\Ajmptrace: invalid value '\Q$val\E' for option \Q$opt\E: .*\n\z/, "$opt $val: one line");
	like($r->{stderr}, $why, "$opt $val: says why");
}
{
	my $r = run_cmd(argv => [$JT, '-o', '/dev/null', '--alloc', 'x=malloc', '--alloc', 'x=free', '--', prog_path('arena', 'pie')]);
	is($r->{exit}, 2, 'a name given twice: exit 2');
	like($r->{stderr}, qr/\Ajmptrace: invalid value 'x=free' for option --alloc: x is traced already\n\z/, 'a name given twice: one line');
}

done_testing();
