#!/usr/bin/perl
# pages.t - --pages: the program's own anonymous mappings and brk growth, by stack, beside the
# heap. tests/progs/pages maps 10 regions of 1 MiB from two functions, unmaps 4 whole, half of
# a fifth and the middle of a sixth, mremaps one to 3 MiB, maps a shared page range over the
# end of another and grows brk by sbrk: exact live bytes and regions by stack, and the peak,
# in every link mode, with either event source; malloc's own mmap of a large block stays the heap's. Then python3
# building a large dict: pymalloc's arenas appear under the interpreter's stacks, and heap
# plus pages follow the process's anonymous RSS within 10%.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempdir);
use JSON::PP ();
use POSIX qw(WIFEXITED WEXITSTATUS);
use Test::More;
use JT;

my $JT = JT::jmptrace();
-x $JT or plan skip_all => "no jmptrace at $JT";
my @modes = $ENV{JT_MODES} ? split(/[\s,]+/, $ENV{JT_MODES}) : @JT::MODES;
# Both event sources, the uprobe one where it can run (root, a kernel with uprobes); under
# JT_SOURCE=uprobe every run already has it.
my @sources = ([]);
push @sources, ['--source', 'uprobe']
	if JT::source() eq 'ptrace' && $> == 0 && -e '/sys/bus/event_source/devices/uprobe/type';
my $MIB = 1024 * 1024;

# The pages stacks with a frame in function $func at main.c:$line.
sub pages_through {
	my ($pg, $func, $line) = @_;
	return grep {
		grep { frame_func_is($_, $func) && frame_file_is($_, 'main.c') && ($_->{line} // -1) == $line }
		    @{ $_->{frames} }
	} @{ $pg->{stacks} // [] };
}

sub pages_stack_is {
	my ($pg, $what, $func, $marker, $bytes, $regions) = @_;
	my @st = pages_through($pg, $func, site_line('pages/main.c', $marker));
	is(scalar @st, 1, "$what: one stack through $func") or return;
	is($st[0]{bytes}, $bytes, "$what: $bytes bytes live");
	is($st[0]{regions}, $regions, "$what: $regions regions");
}

for my $run (map { my $src = $_; map { [$src, $_] } @modes } @sources) {
	my ($src, $mode) = @$run;
	my $name = join(' ', "pages-$mode", @$src);
	subtest $name => sub {
		my $r = run_jt('pages', $mode, jt_args => ['--pages', @$src]);
		is($r->{exit}, 0, 'exit 0');
		is($r->{stdout}, "pages: done\n", 'stdout');
		my $s = last_snapshot($r) or return fail("no snapshot: " . ($r->{json_error} // '') . $r->{stderr});
		my $pg = $s->{pages} or return fail('no "pages" object');
		is($pg->{view}, 'pages', 'the object says its view');
		is($s->{totals}{view}, 'heap', 'and the totals theirs');
		# map_a: 512 KiB + 3 MiB (mremap'ed) + 1 MiB + 2 x 384 KiB; map_b: 1 MiB + 1 MiB - 64 KiB.
		pages_stack_is($pg, 'map_a', 'map_a', 'PAGES_MAP_A', $MIB / 2 + 3 * $MIB + $MIB + 768 * 1024, 5);
		pages_stack_is($pg, 'map_b', 'map_b', 'PAGES_MAP_B', 2 * $MIB - 65536, 2);
		pages_stack_is($pg, 'sbrk', 'grow_brk', 'PAGES_SBRK', 65536, 1);
		is(scalar @{ $pg->{stacks} }, 3, 'three stacks with live pages')
			or diag(join("\n", map { "$_->{bytes} B: " . describe_frame($_->{frames}[0]) } @{ $pg->{stacks} }));
		is($pg->{live_bytes}, 7_602_176, 'live pages in all');
		is($pg->{live_regions}, 8, 'live regions in all');
		is($pg->{peak_bytes}, 10 * $MIB, 'peak: the ten regions');
		is($pg->{peak}{live_regions}, 10, 'peak: ten regions');
		is($pg->{calls}{mmap}, 12, 'mmap calls: ten, the shared one and the fixed one (not malloc\'s)');
		is($pg->{calls}{sbrk}, 1, 'one sbrk');
		is($pg->{calls}{mremap}, 1, 'one mremap');
		# The heap's view: malloc's 4 MiB block, which glibc mapped itself, and nothing of the pages.
		my @big = stacks_at_site($s, 'main.c', site_line('pages/main.c', 'PAGES_MALLOC'));
		is(sum_field('live_bytes', @big), 4 * $MIB, 'the heap holds malloc\'s 4 MiB block');
		ok($s->{totals}{live_bytes} < 4 * $MIB + 65536, 'and none of the pages (static: the runtime\'s few blocks)');
		like($r->{report}, qr/^  pages live  7,602,176 bytes in 8 regions$/m, 'text: pages live');
		like($r->{report}, qr/^  pages peak  10,485,760 bytes in 10 regions at /m, 'text: pages peak');
		like($r->{report}, qr/^#1: 5,505,024 bytes in 5 regions live; peak 6,291,456 bytes in 6 regions; 6 mappings/m,
		     'text: the largest stack first');
	};
}

subtest '--html embeds the pages' => sub {
	my $r = run_jt('pages', 'pie', jt_args => ['--pages', '--html', 'page.html']);
	is($r->{exit}, 0, 'exit 0');
	my $page = JT::slurp("$r->{dir}/page.html") // '';
	my ($data) = $page =~ m{<script type="application/json" id="jt-data">(.*?)</script>}s;
	my $j = eval { JT::decode_report($data // '') };
	ok($j, 'the page holds the JSON') or return;
	is_deeply($j->{snapshots}[-1]{pages}, last_snapshot($r)->{pages}, 'its pages are --json\'s');
	like($page, qr/function drawPages\(/, 'and the page draws them');
};

subtest 'without --pages nothing changes' => sub {
	my $r = run_jt('pages', 'pie');
	is($r->{exit}, 0, 'exit 0');
	my $s = last_snapshot($r) or return fail('no snapshot');
	ok(!exists $s->{pages}, 'no "pages" object');
	unlike($r->{report}, qr/pages live/, 'no pages in the text');
};

# python3 building a dict of 2,000,000 entries: pymalloc puts the small ints and strs in
# arenas it maps itself, which only --pages sees. The script prints its anonymous RSS, then
# waits (allocating nothing) while SIGUSR1 takes a snapshot.
subtest 'python3: pymalloc arenas' => sub {
	my $py = '/usr/bin/python3';
	-x $py or return plan skip_all => "no $py";
	my $dir = tempdir('jt-pages-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my $j = spawn(argv => [$JT, '--pages', '--json', "$dir/r.json", '-o', "$dir/r.txt", '--', $py,
			       "$FindBin::Bin/fixtures/pages_dict.py"], dir => $dir, name => 'jt', stdin_pipe => 1);
	my $anon_kb = wait_until(sub { (JT::slurp($j->{out}) // '') =~ /^(\d+)\n/ ? $1 : undef }, 60);
	ok($anon_kb, 'the script measured its anonymous RSS') or do { diag(JT::slurp($j->{err}) // ''); reap($j, 1); return };
	kill 'USR1', $j->{pid};
	my $snap = wait_until(sub { my $x = read_json("$dir/r.json"); $x && $x->{snapshots} && $x->{snapshots}[0] }, 60);
	print { $j->{stdin} } "g";
	my $st = reap($j, 60);
	ok(defined $st && WIFEXITED($st) && WEXITSTATUS($st) == 0, 'jmptrace exits 0 like python3');
	ok($snap && $snap->{pages}, 'SIGUSR1 wrote a snapshot with pages') or return;
	my $pg = $snap->{pages};
	my $anon = $anon_kb * 1024;
	my $both = $pg->{live_bytes} + $snap->{totals}{live_bytes};
	diag(sprintf('anonymous RSS %d, heap live %d + pages live %d = %d (%.1f%%)', $anon,
		     $snap->{totals}{live_bytes}, $pg->{live_bytes}, $both, 100 * $both / $anon));
	ok(abs($both - $anon) <= $anon / 10, 'heap and pages follow the anonymous RSS within 10%');
	ok($pg->{live_bytes} >= 100 * $MIB, 'pages hold the arenas: at least 100 MiB');
	# Arenas are mapped from the interpreter: every frame of their stacks is python's, and
	# the stacks pass through its object allocators (named even in a stripped python3 by
	# their exported symbols; new_arena and _PyObject_Malloc with debug symbols).
	my $pyframe = qr/^(?:_?PyObject_Malloc|new_arena|_PyObject_ArenaMmap|pymalloc_alloc|PyUnicode_New|_PyLong_New|_PyObject_GC_New|PyObject_Str)$/;
	my @arenas = grep {
		my $f0 = $_->{frames}[0];
		$f0 && ($f0->{module} // '') =~ m{(?:^|/)(?:lib)?python3[^/]*$} && grep { ($_->{function} // '') =~ $pyframe } @{ $_->{frames} }
	} @{ $pg->{stacks} };
	my $arena_bytes = 0;
	$arena_bytes += $_->{bytes} for @arenas;
	ok($arena_bytes >= $pg->{live_bytes} * 0.9, "pymalloc's stacks hold at least 90% of the pages ($arena_bytes of $pg->{live_bytes})")
		or diag(join("\n", map { "$_->{bytes} B: " . join(' <- ', map { describe_frame($_) } @{ $_->{frames} }[0 .. 3]) } @{ $pg->{stacks} }));
	ok((grep { $_->{bytes} % $MIB == 0 } @arenas) == @arenas, 'arenas are whole MiB');
};

done_testing();
