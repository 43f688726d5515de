#!/usr/bin/perl
# analyses.t - the text report's sections (peak, calls, bytes, temporary), --sort, --min-size,
# the JSON counters (peak, temporary, histogram, timeline) and suppressions, with exact figures
# from tests/progs/profile, whose every allocation is known.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempdir);
use Test::More;
use JT;
use JTCheck;

my $JT = JT::jmptrace();
-x $JT or plan skip_all => "no jmptrace at $JT";
my @modes = $ENV{JT_MODES} ? split(/[\s,]+/, $ENV{JT_MODES}) : qw(pie static);

my $SRC = 'profile/profile.c';
my %LINE = map { $_ => site_line($SRC, "profile: $_") } qw(big small temp hist);
my $MIB = 1048576;
my %HIST = map { $_ => 1 } qw(1 8 16 32 128 1024 2048 65536);

# The one stack (of all, live or not) whose frame 0 is $func at profile.c:$LINE{$key}.
sub profile_stack {
	my ($s, $func, $key) = @_;
	my @st = grep {
		my $f = $_->{frames}[0];
		$f && frame_func_is($f, $func) && frame_file_is($f, 'profile.c') && ($f->{line} // -1) == $LINE{$key}
	} @{ $s->{stacks} // [] };
	is(scalar(@st), 1, "one $func stack at profile.c:$LINE{$key}") or diag(describe_stacks($s, 20));
	return $st[0] // {};
}

# The text report cut into its lists: {main} (the --sort list, up to the first section),
# and each section by its header's first word(s): PEAK, LIVE, CALLS, BYTES, TEMPORARY.
sub lists_of {
	my ($text) = @_;
	my %l;
	($l{main}) = $text =~ /^(top \d+ of .*?|no stack [^\n]*\n.*?)^[A-Z]/ms;
	for my $b (split /^(?=PEAK: |LIVE\n|MOST |SUMMARY: )/m, $text) {
		$l{PEAK} = $b if $b =~ /^PEAK: /;
		$l{LIVE} = $b if $b =~ /^LIVE\n/;
		$l{uc $1} = $b if $b =~ /^MOST (?:ALLOCATION )?(\w+)/;
	}
	return \%l;
}

# The frames' function names of each "#N:" entry of a list, in order: [[line, func], ...].
sub entries {
	my ($list) = @_;
	my @m = ($list // '') =~ /^(#\d+: [^\n]*)\n    at 0x[0-9a-f]+: (\S+)/mg;
	my @out;
	push @out, [splice(@m, 0, 2)] while @m;
	return \@out;
}

sub fmt { my $n = reverse $_[0]; $n =~ s/(\d{3})(?=\d)/$1,/g; return scalar reverse $n }

for my $mode (@modes) {
	subtest "profile-$mode: the sections and the counters" => sub {
		my $r = run_jt('profile', $mode, jt_args => ['--top', '10']);	# every section whole: 4 stacks each
		is($r->{exit}, 0, 'exit 0');
		is($r->{stderr}, '', 'nothing on stderr');
		my $s = snapshot_of($r, "profile-$mode") or return;
		my $t = $s->{totals};

		my $big = profile_stack($s, 'big_phase', 'big');
		is($big->{peak_bytes}, $MIB, 'big_phase: peak_bytes exactly 1 MiB (the peak is exact)');
		is($big->{peak_bytes}, 4096 * $big->{peak_blocks}, 'big_phase: peak_blocks of 4096 bytes');
		is_deeply([@$big{qw(live_bytes live_blocks alloc_calls alloc_bytes frees temporary)}],
			  [0, 0, 256, $MIB, 256, 0], 'big_phase: nothing live, 256 calls of 4096 bytes, all freed');
		is_deeply($big->{histogram}, { 4096 => 256 }, 'big_phase: histogram {"4096": 256}');
		my $small = profile_stack($s, 'small_phase', 'small');
		is_deeply([@$small{qw(live_bytes live_blocks alloc_calls alloc_bytes frees temporary peak_bytes)}],
			  [10000, 10, 10, 10000, 0, 0, 0], 'small_phase: 10,000 bytes in 10 blocks live, none at the peak');
		is_deeply($small->{histogram}, { 1024 => 10 }, 'small_phase: histogram {"1024": 10}');
		ok(!exists $small->{suppressed}, 'small_phase: not suppressed');
		my $temp = profile_stack($s, 'temp_loop', 'temp');
		is_deeply([@$temp{qw(temporary alloc_calls alloc_bytes frees live_blocks)}], [100, 100, 6400, 100, 0],
			  'temp_loop: exactly 100 temporary of 100 calls');
		is_deeply($temp->{histogram}, { 64 => 100 }, 'temp_loop: histogram {"64": 100}');
		my $hist = profile_stack($s, 'hist_sizes', 'hist');
		is_deeply($hist->{histogram}, \%HIST, 'hist_sizes: one block in each of 1, 8, 16, 32, 128, 1024, 2048, 65536');
		is_deeply([@$hist{qw(alloc_calls alloc_bytes frees temporary)}], [8, 67727, 8, 0],
			  'hist_sizes: 8 calls of 67,727 bytes, none temporary');
		is($t->{temporary}, 100, 'totals.temporary 100');
		ok(!exists $t->{filtered}, 'no totals.filtered without a size filter');

		my $pk = $s->{peak};
		is($pk->{live_bytes}, $t->{peak_live_bytes}, 'peak.live_bytes is totals.peak_live_bytes');
		is($pk->{live_bytes}, sum_field('peak_bytes', @{ $s->{stacks} }), 'peak.live_bytes is the sum of peak_bytes');
		cmp_ok($pk->{time_ms}, '<=', $s->{time_ms}, 'peak.time_ms before the snapshot');
		is($s->{seq}, 1, 'seq 1');
		my @tl = @{ $s->{timeline} // [] };
		my @back = grep { $tl[$_]{time_ms} < $tl[$_ - 1]{time_ms} } 1 .. $#tl;
		ok(@tl >= 3 && !@back, scalar(@tl) . ' timeline samples, in time order');
		is_deeply([@{ $tl[-1] }{qw(time_ms live_bytes live_blocks)}], [$s->{time_ms}, $t->{live_bytes}, $t->{live_blocks}],
			  'the last sample is the snapshot');
		# The hold's samples between its events are the tick's (every 100 ms), which needs tracer
		# thread 0 on a CPU: in SCHED_IDLE on a loaded host (CI's parallel suites) a 300 ms hold
		# passed with one sample (the first free's, which is certain): the test asserts that one.
		my @held = grep { $_->{live_bytes} >= 0.99 * $MIB } @tl;
		cmp_ok(scalar(@held), '>=', 1, 'the 300 ms holding 1 MiB is in the timeline');

		my $l = lists_of($r->{report});
		like($l->{main}, qr/^top 1 of 1 stack by live bytes:\n\n#1: 10,000 bytes in 10 blocks live; 10 allocation calls of 10,000 bytes in all from this stack; peak 0 bytes in 0 blocks, 0 frees, 0 temporary; oldest block [\d,]+ ms old, newest [\d,]+ ms\n    at 0x[0-9a-f]+: small_phase \(profile.c:$LINE{small}\)\n/,
		     'live list: only small_phase, 10,000 bytes in 10 blocks');
		like($l->{PEAK}, qr/^PEAK: ${\ fmt($pk->{live_bytes})} bytes in ${\ fmt($pk->{live_blocks})} blocks at ${\ fmt($pk->{time_ms})} ms\n/,
		     'peak header: the JSON peak');
		my $e = entries($l->{PEAK});
		like($e->[0][0] // '', qr/^#1: ${\ fmt($big->{peak_bytes})} bytes in $big->{peak_blocks} blocks at the peak; live 0 bytes in 0 blocks, 256 allocation calls of 1,048,576 bytes, 256 frees, 0 temporary$/,
		     'peak section: #1 is big_phase\'s figures');
		like($l->{PEAK}, qr/^#1: [^\n]*\n    at 0x[0-9a-f]+: big_phase \(profile.c:$LINE{big}\)\n/m,
		     "peak section: #1 at big_phase (profile.c:$LINE{big})");
		$e = entries($l->{CALLS});
		is_deeply([map { $_->[1] } @$e[0 .. 3]], [qw(big_phase temp_loop small_phase hist_sizes)],
			  'calls section: big_phase, temp_loop, small_phase, hist_sizes');
		like($e->[0][0], qr/^#1: 256 allocation calls of 1,048,576 bytes;/, 'calls section: 256 calls');
		like($e->[1][0], qr/^#2: 100 allocation calls of 6,400 bytes;/, 'calls section: 100 calls');
		like($e->[2][0], qr/^#3: 10 allocation calls of 10,000 bytes;/, 'calls section: 10 calls');
		like($e->[3][0], qr/^#4: 8 allocation calls of 67,727 bytes;/, 'calls section: 8 calls');
		$e = entries($l->{BYTES});
		is_deeply([map { $_->[1] } @$e[0 .. 3]], [qw(big_phase hist_sizes small_phase temp_loop)],
			  'bytes section: big_phase, hist_sizes, small_phase, temp_loop');
		$e = entries($l->{TEMPORARY});
		is(scalar(@$e), 1, 'temporary section: one stack');
		is($e->[0][0] // '', '#1: 100 temporary allocations (100% of 100 calls); live 0 bytes in 0 blocks, peak 0 bytes in 0 blocks, 6,400 bytes allocated, 100 frees',
		   'temporary section: temp_loop, 100 of 100');
		is($e->[0][1], 'temp_loop', 'temporary section: temp_loop');
		ok(!$l->{LIVE}, 'no live section: the main list is it');
		like($r->{report}, qr/^  temporary allocations\s+100\n/m, 'totals: temporary allocations 100');
		unlike($r->{report}, qr/not broken down/, 'no size filter line');
		like($r->{report}, qr/\nSUMMARY: 10,000 bytes in 10 blocks still live from 1 stack\n\z/, 'the summary ends it');
		# A static program's start-up blocks are suppressed by default, and counted.
		my $sup = $t->{suppressed};
		if (is_static($mode)) {
			my @gl = grep { ($_->{suppressed} // '') eq '^_dl_non_dynamic_init$' } @{ $s->{stacks} };
			cmp_ok(scalar(@gl), '>=', 1, 'static: glibc\'s start-up stacks suppressed by ^_dl_non_dynamic_init$');
			is_deeply([@$sup{qw(live_bytes live_blocks stacks)}],
				  [$t->{live_bytes} - 10000, $t->{live_blocks} - 10, scalar(@gl)],
				  'static: totals.suppressed is everything live but small_phase');
			like($l->{main}, qr/\nsuppressed: ${\ fmt($sup->{live_bytes})} bytes in $sup->{live_blocks} blocks from $sup->{stacks} stacks\n/,
			     'static: the live list says what was suppressed');
		} else {
			is_deeply($sup, { live_bytes => 0, live_blocks => 0, stacks => 0 }, 'pie: nothing suppressed');
			unlike($r->{report}, qr/^suppressed:/m, 'pie: no suppressed line');
		}
	};

	subtest "profile-$mode: --sort calls" => sub {
		my $r = run_jt('profile', $mode, jt_args => ['--sort', 'calls']);
		is($r->{exit}, 0, 'exit 0');
		my $l = lists_of($r->{report});
		like($l->{main}, qr/^top \d+ of \d+ stacks by allocation calls:\n\n#1: 256 allocation calls/, 'the main list is by calls');
		is_deeply([map { $_->[1] } @{ entries($l->{main}) }[0 .. 3]], [qw(big_phase temp_loop small_phase hist_sizes)],
			  'in the order of calls');
		ok(!$l->{CALLS}, 'no calls section');
		like($l->{LIVE}, qr/^LIVE\ntop 1 of 1 stack by live bytes:\n\n#1: 10,000 bytes in 10 blocks live;[^\n]*\n    at 0x[0-9a-f]+: small_phase /,
		     'a live section with small_phase');
		ok($l->{PEAK} && $l->{BYTES} && $l->{TEMPORARY}, 'the other sections');
		ok(index($r->{report}, 'top 1 of 1 stack by live bytes') > index($r->{report}, 'by allocation calls:'),
		   'the live section after the main list');
	};

	subtest "profile-$mode: --min-size 2000" => sub {
		my $all = run_jt('profile', $mode);
		my $r = run_jt('profile', $mode, jt_args => ['--min-size', '2000']);
		is($r->{exit}, 0, 'exit 0');
		my $s0 = snapshot_of($all, 'no filter') or return;
		my $s = snapshot_of($r, '--min-size 2000') or return;
		my ($t0, $t) = ($s0->{totals}, $s->{totals});
		is_deeply([@$t{qw(alloc_calls bytes_allocated frees live_bytes live_blocks temporary)}],
			  [@$t0{qw(alloc_calls bytes_allocated frees live_bytes live_blocks temporary)}], 'totals unchanged');
		# Only the 4096-byte blocks and the 65536-byte one are 2000 bytes or more.
		is_deeply($t->{filtered}, { alloc_calls => $t0->{alloc_calls} - 257,
					    alloc_bytes => $t0->{bytes_allocated} - $MIB - 65536,
					    live_bytes => $t0->{live_bytes}, live_blocks => $t0->{live_blocks} },
			  'totals.filtered: every allocation under 2000 bytes');
		my $big = profile_stack($s, 'big_phase', 'big');
		is_deeply([@$big{qw(alloc_calls alloc_bytes frees)}], [256, $MIB, 256], 'big_phase (4096 bytes) stays');
		my $hist = profile_stack($s, 'hist_sizes', 'hist');
		is_deeply($hist->{histogram}, { 65536 => 1 }, 'hist_sizes: only its 65536-byte block');
		ok(!grep({ frame_func_is($_->{frames}[0] // {}, 'small_phase') || frame_func_is($_->{frames}[0] // {}, 'temp_loop') }
			 @{ $s->{stacks} }), 'no small_phase or temp_loop stack');
		is(scalar(grep { !@{ $_->{frames} } } @{ $s->{stacks} }), 0, 'the filtered pseudo stack is not listed');
		my $f = $t->{filtered};
		like($r->{report}, qr/^  sizes under 2,000 bytes: ${\ fmt($f->{alloc_calls})} allocation calls of ${\ fmt($f->{alloc_bytes})} bytes, ${\ fmt($f->{live_bytes})} bytes in $f->{live_blocks} blocks live, not broken down by stack\n/m,
		     'the totals say what was not broken down');
		like($r->{report}, qr/^no stack holds live blocks\n/m, 'the live list is empty');
	};

	subtest "profile-$mode: a suppressions file" => sub {
		my $dir = tempdir('jt-XXXXXX', TMPDIR => 1, CLEANUP => 1);
		JT::spew("$dir/supp", "# the kept blocks\n\nleak:small_phase\n");
		my $r = run_jt('profile', $mode, jt_args => ['--suppressions', "$dir/supp"]);
		is($r->{exit}, 0, 'exit 0');
		my $s = snapshot_of($r, 'leak:small_phase') or return;
		my $small = profile_stack($s, 'small_phase', 'small');
		is($small->{suppressed}, 'small_phase', 'JSON: small_phase is "suppressed": "small_phase"');
		my $t = $s->{totals};
		is_deeply($t->{suppressed}, { live_bytes => $t->{live_bytes}, live_blocks => $t->{live_blocks},
					      stacks => scalar(grep { $_->{live_blocks} } @{ $s->{stacks} }) },
			  'JSON: everything live is suppressed');
		my $l = lists_of($r->{report});
		like($l->{main}, qr/^no stack holds live blocks\n/, 'the live list is empty');
		if (is_static($mode)) {
			like($l->{main}, qr/\nsuppressed: ${\ fmt($t->{live_bytes})} bytes in $t->{live_blocks} blocks from \d+ stacks\n/,
			     'the report says what was suppressed');
		} else {
			like($l->{main}, qr/\nsuppressed: 10,000 bytes in 10 blocks from 1 stack\n/,
			     'the report says: suppressed: 10,000 bytes in 10 blocks');
		}
		like($r->{report}, qr/\nSUMMARY: 0 bytes in 0 blocks still live from 0 stacks\n/, 'the summary');
	};
}

subtest 'a bad suppressions file: one line on stderr, exit 1, the program not run' => sub {
	my $dir = tempdir('jt-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	JT::spew("$dir/bad", "leak:small_phase\n# fine so far\nrace:big_phase\n");
	for my $c (["$dir/bad", qr{^jmptrace: \Q$dir\E/bad:3: [^\n]*race:big_phase\n\z}],
		   ["$dir/missing", qr{^jmptrace: \Q$dir\E/missing: No such file or directory\n\z}]) {
		my ($file, $want) = @$c;
		# With an argument the program prints its pid first: stdout stays empty if it never ran.
		my $r = run_cmd(argv => [$JT, '--suppressions', $file, '--', prog_path('profile', 'pie'), 0]);
		is($r->{exit}, 1, "$file: exit 1");
		like($r->{stderr}, $want, "$file: one line naming it");
		is($r->{stdout}, '', "$file: the program did not run");
	}
};

# libstdc++'s emergency exception pool: one block from its initializer, live to the end.
for my $mode (@modes) {
	subtest "cxx-$mode: the emergency pool is suppressed by default" => sub {
		my $pool = sub {
			my ($s) = @_;
			return grep {
				my $f = $_->{frames}[0] // {};
				$_->{live_blocks} && ((($f->{module} // '') =~ /^libstdc\+\+\.so/ && !defined $f->{function}
						       && grep { frame_func_is($_, '_dl_init') } @{ $_->{frames} })
						      || frame_func_is($f, '_GLOBAL__sub_I_eh_alloc.cc'))
			} @{ $s->{stacks} // [] };
		};
		my $r = run_jt('cxx', $mode, args => [1, 1]);
		my $s = snapshot_of($r, 'default') or return;
		my @p = $pool->($s);
		is(scalar(@p), 1, 'one pool stack') or return diag(describe_stacks($s, 5));
		is_deeply([@{ $p[0] }{qw(live_blocks alloc_calls)}], [1, 1], 'one block from one call');
		my $bytes = $p[0]{live_bytes};
		ok(defined $p[0]{suppressed}, "suppressed by default (\"$p[0]{suppressed}\")");
		my $l = lists_of($r->{report});
		unlike($l->{main}, qr/^#\d+: ${\ fmt($bytes)} bytes in 1 block live/m, 'not in the live list');
		like($l->{main}, qr/\nsuppressed: [\d,]+ bytes in \d+ blocks? from \d+ stacks?\n/, 'counted as suppressed');

		$r = run_jt('cxx', $mode, args => [1, 1], jt_args => ['--no-default-suppressions']);
		$s = snapshot_of($r, '--no-default-suppressions') or return;
		@p = $pool->($s);
		is(scalar(@p), 1, '--no-default-suppressions: one pool stack');
		ok(@p && !exists $p[0]{suppressed}, '--no-default-suppressions: not suppressed');
		is($s->{totals}{suppressed}{stacks}, 0, '--no-default-suppressions: nothing suppressed');
		$l = lists_of($r->{report});
		like($l->{main}, qr/^#1: ${\ fmt($bytes)} bytes in 1 block live;[^\n]*\n    at 0x[0-9a-f]+: (?:_GLOBAL__sub_I_eh_alloc\.cc|libstdc\+\+\.so[.\d]*\+0x[0-9a-f]+)(?: \(in [^)]+\))?\n/m,
		     "--no-default-suppressions: #1 in the live list, ${\ fmt($bytes)} bytes");
		unlike($r->{report}, qr/^suppressed:/m, '--no-default-suppressions: no suppressed line');
	};
}

done_testing();
