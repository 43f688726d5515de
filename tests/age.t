#!/usr/bin/perl
# age.t - block ages and --older-than, on tests/progs/slowleak (a ring of 25 young churn blocks,
# one 1000-byte leak every 100 ms): with --older-than 0.5 every output of a snapshot counts only
# the leak's old blocks, the churn's are out; without it the churn's 25 blocks are live, and
# both stacks show their oldest and newest block age in the text report and the JSON.
# GROWTH counts the blocks the rest of each snapshot counts (--older-than applied): its series
# equal the snapshots' live bytes. --older-than's bad values are refused with one line and exit 2.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use JSON::PP ();
use Test::More;
use JT;

my $JT = JT::jmptrace();
-x $JT or plan skip_all => "no jmptrace at $JT";
system('make', '-s', '-C', root() . '/tests/progs') == 0
	or BAIL_OUT('cannot build the test programs (make -C tests/progs)');

my $SRC = 'slowleak/main.c';
my %LINE = map { $_ => site_line($SRC, "SITE:$_") } qw(sl_churn sl_leak);
my $RING = 25;		# slowleak's SL_RING: churn blocks live at once
my $CHURN = 512;	# SL_CHURN_SIZE
my $LEAK = 1000;	# SL_LEAK_SIZE
my $MS = 2500;		# slowleak's run: --interval 0.4 takes 6 snapshots inside it
my $IV = '0.4';

# The stacks (of all, live or not) whose frame 0 is $func's allocation site.
sub stacks_of {
	my ($snap, $func) = @_;
	return grep {
		my $f = $_->{frames}[0];
		$f && frame_func_is($f, $func) && frame_file_is($f, 'main.c') && ($f->{line} // -1) == $LINE{$func}
	} @{ $snap->{stacks} // [] };
}

# The one such stack: checked to be one.
sub stack_of {
	my ($snap, $func) = @_;
	my @st = stacks_of($snap, $func);
	is(scalar(@st), 1, "#$snap->{seq}: one $func stack") or diag(describe_stacks($snap, 10));
	return $st[0] // {};
}

# The stack, or an empty one before $func first allocated (the first snapshot may come first).
sub stack_or_none { return (stacks_of(@_))[0] // { alloc_calls => 0, live_blocks => 0 } }

# The live stacks but the C runtime's start-up blocks (a static program's), which the
# built-in suppressions name: the program's own.
sub program_live { return grep { !exists $_->{suppressed} } JT::live_stacks($_[0]) }

# 12345 -> 12,345, as the text report writes figures.
sub fmt { my $n = reverse $_[0]; $n =~ s/(\d{3})(?=\d)/$1,/g; return scalar reverse $n }

# The text report's snapshots (on stderr: -o's rule with --interval is not this test's), each from its "==== jmptrace heap report ====" line.
sub text_snapshots { return grep { /\S/ } split /^(?=={4} jmptrace heap report ={4}$)/m, $_[0] // '' }

# The ages ending the live-list entry whose frame 0 is $func, as [oldest, newest].
sub text_ages {
	my ($text, $func) = @_;
	my ($live) = $text =~ /^(top \d+ of .*?)^PEAK: /ms;
	my ($o, $n) = ($live // '') =~ /^#\d+: [^\n]* live;[^\n]*; oldest block ([\d,]+) ms old, newest ([\d,]+) ms\n    at 0x[0-9a-f]+: \Q$func\E /m;
	s/,//g for grep { defined } $o, $n;
	return [$o, $n];
}

for my $mode ($ENV{JT_MODES} ? split(/[\s,]+/, $ENV{JT_MODES}) : qw(pie static)) {

	subtest "--older-than 0.5 on slowleak-$mode: only the leak's old blocks are live, in every output" => sub {
		my $r = JT::run_jt('slowleak', $mode, args => [$MS], no_o => 1,
				   jt_args => ['--interval', $IV, '--older-than', '0.5', '--folded', 'live.folded', '--csv', 'live.csv']);
		is($r->{exit}, 0, 'exit 0') or diag($r->{stderr});
		my ($n) = ($r->{stdout} // '') =~ /^leaked (\d+)$/m;
		ok(defined $n && $n >= 2, 'slowleak printed its leaks') or diag($r->{stdout});
		my @snaps = @{ $r->{json}{snapshots} // [] };
		ok(@snaps >= 2 && $snaps[-1]{reason} eq 'exit', 'interval snapshots, then the exit one')
			or diag($r->{json_error} // '');
		my @texts = text_snapshots($r->{stderr});
		is(scalar(@texts), scalar(@snaps), 'as many text snapshots');
		is(JT::slurp("$r->{dir}/report.json") =~ /^  \{"id": \d+, "live_bytes": /m ? 1 : 0, 1,
		   'JSON: "id" is the first key of a stack');

		# Whatever the timing: every snapshot says the option, and what it counts is old enough.
		for my $s (@snaps) {
			is($s->{older_than_ms}, 500, "#$s->{seq} ($s->{reason}): older_than_ms 500");
			my @live = program_live($s);
			is(scalar(grep { $_->{newest_age_ms} < 500 || $_->{oldest_age_ms} < $_->{newest_age_ms}
				   || $_->{oldest_age_ms} > $s->{time_ms} } @live), 0,
			   "#$s->{seq}: every live stack's blocks are 500 ms to time_ms old, oldest before newest");
			is($s->{totals}{live_blocks} - $s->{totals}{suppressed}{live_blocks}, sum_field('live_blocks', @live),
			   "#$s->{seq}: the totals count the same blocks");
		}
		like($texts[0] // '', qr/^age:      only the blocks allocated at least 500 ms before this snapshot$/m,
		     'text: the header says which blocks count');

		# GROWTH counts the same blocks as the rest of each snapshot: a stack's live bytes at
		# snapshot k in the growth series of the last one are its live bytes in snapshot k.
		# (Before, GROWTH counted every block: the churn ring's young ones too.)
		my $last = $snaps[-1];
		my @grew = @{ $last->{growth}{stacks} // [] };
		ok(@grew >= 1, 'the last snapshot has a growth series') or diag(JSON::PP->new->encode($last->{growth} // {}));
		my $wrong = 0;
		for my $g (@grew) {
			for my $k (0 .. $#snaps) {
				my ($st) = grep { $_->{id} == $g->{id} } @{ $snaps[$k]{stacks} // [] };
				my $want = $st ? $st->{live_bytes} : 0;
				next if ($g->{live_bytes}[$k] // -1) == $want;
				$wrong++;
				diag("stack $g->{id}: growth says $g->{live_bytes}[$k] at #$snaps[$k]{seq}, the snapshot $want");
			}
		}
		is($wrong, 0, 'every growth figure equals the stack\'s live bytes in its snapshot, --older-than applied');
		my ($grew_text) = ($texts[-1] // '') =~ /^GROWTH over .*?^#1: grew ([\d,]+) bytes /ms;
		my $top = (sort { ($b->{live_bytes}[-1] - $b->{live_bytes}[0]) <=> ($a->{live_bytes}[-1] - $a->{live_bytes}[0])
				  || $a->{id} <=> $b->{id} } @grew)[0] // { live_bytes => [0] };
		is($grew_text, fmt($top->{live_bytes}[-1] - $top->{live_bytes}[0]), 'text: GROWTH\'s first stack grew as the JSON says');

		# Snapshots k-1, k, k+1 with k+1 less than 480 ms after k but 500 ms or more after k-1
		# (the host took them in time): at k+1, no block made after k is old enough (less
		# than 480 ms, and 20 ms for --source uprobe's events made just before k but applied
		# after), every block made before k-1 is. So sl_leak counts at least its calls at k-1
		# and at most those at k; when sl_churn made its ring's 25 calls since k, no churn
		# block counts. Exact whatever the host; a slow one only leaves fewer such triples.
		my ($checked, $churn_checked) = (0, 0);
		for my $k (1 .. $#snaps - 1) {
			my ($s0, $s1, $s2) = @snaps[$k - 1, $k, $k + 1];
			next unless $s2->{reason} eq 'interval' && $s2->{time_ms} - $s1->{time_ms} <= 480
				&& $s2->{time_ms} - $s0->{time_ms} >= 500;
			my ($a0, $a1) = map { stack_or_none($_, 'sl_leak')->{alloc_calls} } $s0, $s1;
			next unless $a0;	# (the program had not begun yet)
			$checked++;
			my $leak = stack_of($s2, 'sl_leak');
			my $l = $leak->{live_blocks};
			ok($l >= $a0 && $l <= $a1 && $l >= 1,
			   "#$s2->{seq}: sl_leak counts $l blocks, from its $a0 calls at #$s0->{seq} to its $a1 at #$s1->{seq}");
			is($leak->{live_bytes}, $LEAK * $l, "#$s2->{seq}: sl_leak's live bytes, $LEAK per block");
			my $churn = stack_of($s2, 'sl_churn');
			my $made = $churn->{alloc_calls} - stack_or_none($s1, 'sl_churn')->{alloc_calls};
			next unless $made >= $RING;
			$churn_checked++;
			is($churn->{live_blocks}, 0, "#$s2->{seq}: no sl_churn block counts ($made calls since #$s1->{seq})");
			ok(!exists $churn->{oldest_age_ms}, "#$s2->{seq}: sl_churn has no ages");
			my @live = program_live($s2);
			ok(@live == 1 && $live[0]{id} == $leak->{id}, "#$s2->{seq}: sl_leak's is the one live stack")
				or diag(describe_stacks($s2, 10));

			# The same snapshot in the text report and the file formats (numbered by seq).
			my $text = $texts[$k + 1] // '';
			like($text, qr/^top 1 of 1 stack by live bytes:$/m, "#$s2->{seq} text: one live stack");
			is_deeply(text_ages($text, 'sl_leak'), [$leak->{oldest_age_ms}, $leak->{newest_age_ms}],
				  "#$s2->{seq} text: sl_leak's line ends with the JSON's ages");
			like($text, qr/^SUMMARY: \Q@{[fmt($LEAK * $l)]}\E bytes in $l blocks? still live from 1 stack$/m,
			     "#$s2->{seq} text: the summary counts the old blocks only");
			my $folded = JT::slurp("$r->{dir}/live.$s2->{seq}.folded") // '';
			my @lines = grep { /;sl_\w+ \d+$/ } split /\n/, $folded;
			ok(@lines == 1 && $lines[0] =~ /;sl_leak \Q@{[$LEAK * $l]}\E$/,
			   "#$s2->{seq} folded: sl_leak's line alone, @{[$LEAK * $l]} bytes") or diag($folded);
			my $csv = JT::slurp("$r->{dir}/live.$s2->{seq}.csv") // '';
			my %row = map { my @f = split /,/; ($f[0] => \@f) } grep { /^\d/ } split /\n/, $csv;
			is_deeply([ @{ $row{$churn->{id}} // [] }[5, 6], @{ $row{$leak->{id}} // [] }[5, 6] ],
				  [0, 0, $l, $LEAK * $l], "#$s2->{seq} CSV: live blocks and bytes of sl_churn and sl_leak");
		}
		SKIP: {
			skip 'the host took no three snapshots in time (a busy host)', 1 if !$churn_checked;
			ok($churn_checked, "$churn_checked snapshots checked exactly ($checked for sl_leak)");
		}

		# The exit snapshot: the churn ring was freed; of the leak, at most the N blocks made.
		my $xleak = stack_of($snaps[-1], 'sl_leak');
		is($xleak->{alloc_calls}, $n, "exit: sl_leak made $n calls, as slowleak says");
		ok($xleak->{live_blocks} <= $n, "exit: $xleak->{live_blocks} of the $n leaked blocks are 0.5 s old");
	};

	subtest "without --older-than on slowleak-$mode: the churn ring is live, every live stack has ages" => sub {
		my $r = JT::run_jt('slowleak', $mode, args => [$MS], no_o => 1, jt_args => ['--interval', $IV]);
		is($r->{exit}, 0, 'exit 0') or diag($r->{stderr});
		my ($n) = ($r->{stdout} // '') =~ /^leaked (\d+)$/m;
		my @snaps = @{ $r->{json}{snapshots} // [] };
		ok(@snaps >= 2 && $snaps[-1]{reason} eq 'exit', 'interval snapshots, then the exit one')
			or diag($r->{json_error} // '');
		my @texts = text_snapshots($r->{stderr});
		is(scalar(@texts), scalar(@snaps), 'as many text snapshots');
		unlike($texts[0] // '', qr/^age: /m, 'text: no --older-than line');
		ok(!exists $_->{older_than_ms}, "#$_->{seq}: no older_than_ms") for @snaps;
		my $first_leak;
		my $checked = 0;
		for my $k (0 .. $#snaps - 1) {
			my $s = $snaps[$k];
			my $churn = stack_or_none($s, 'sl_churn');
			my $leak = stack_or_none($s, 'sl_leak');
			$first_leak //= $s->{time_ms} if $leak->{alloc_calls};
			next unless $k > 0 && $churn->{alloc_calls} >= $RING && $leak->{alloc_calls} >= 2;
			$checked++;
			# (24 when the snapshot came between sl_churn's free and its malloc.)
			my $c = $churn->{live_blocks};
			ok($c == $RING || $c == $RING - 1, "#$s->{seq}: sl_churn's ring of $RING blocks is live ($c)");
			is($churn->{live_bytes}, $c * $CHURN, "#$s->{seq}: of $CHURN bytes each");
			is($leak->{live_blocks}, $leak->{alloc_calls}, "#$s->{seq}: every sl_leak block is live");
			is(scalar(program_live($s)), 2, "#$s->{seq}: two live stacks (of the program's own)");
			# sl_leak's first block was made before the first snapshot that counts it; its
			# second at least 100 ms after the first.
			ok($leak->{oldest_age_ms} >= $s->{time_ms} - $first_leak && $leak->{oldest_age_ms} <= $s->{time_ms}
			   && $leak->{oldest_age_ms} > $leak->{newest_age_ms},
			   "#$s->{seq}: sl_leak's oldest block ($leak->{oldest_age_ms} ms) is as old as the snapshots say, older than its newest ($leak->{newest_age_ms} ms)");
			# When sl_churn made its ring's calls since the snapshot before, the ring is younger
			# than that snapshot (20 ms for --source uprobe's events applied late).
			my $made = $churn->{alloc_calls} - stack_or_none($snaps[$k - 1], 'sl_churn')->{alloc_calls};
			my $since = $s->{time_ms} - $snaps[$k - 1]{time_ms};
			ok($churn->{newest_age_ms} <= $churn->{oldest_age_ms}
			   && ($made < $RING || $churn->{oldest_age_ms} <= $since + 20),
			   "#$s->{seq}: sl_churn's ages are small (oldest $churn->{oldest_age_ms} ms, newest $churn->{newest_age_ms} ms; $made calls in the $since ms since #$snaps[$k - 1]{seq})");
			is_deeply(text_ages($texts[$k], $_->[0]), [$_->[1]{oldest_age_ms}, $_->[1]{newest_age_ms}],
				  "#$s->{seq} text: $_->[0]'s line ends with the JSON's ages") for ['sl_churn', $churn], ['sl_leak', $leak];
		}
		SKIP: {
			skip 'the host took no snapshot in time (a busy host)', 1 if !$checked;
			ok($checked, "$checked snapshots checked");
		}

		# At exit the ring was freed: what is live is the leak, every block of it.
		my $xleak = stack_of($snaps[-1], 'sl_leak');
		is($xleak->{live_blocks}, $n, "exit: the $n leaked blocks are live");
		is(scalar(program_live($snaps[-1])), 1, 'exit: sl_leak\'s is the one live stack (of the program\'s own)');
	};
}

subtest '--older-than: bad values are refused with one line and exit 2' => sub {
	my $leak = prog_path('leak', 'pie');
	for my $v ('0', '0.0001', '-1', '+1', 'abc', '', 'inf', 'nan', '1x', ' 1', '4000001', '1e9') {
		my $r = JT::run_cmd(argv => [$JT, '--older-than', $v, '--', $leak, 1, 0], timeout => 20);
		is($r->{exit}, 2, "--older-than '$v': exit 2");
		my @lines = split /\n/, $r->{stderr} // '', -1;
		ok(@lines == 2 && $lines[1] eq '' && $lines[0] =~ /^jmptrace: .*--older-than/,
		   "--older-than '$v': one line naming the option") or diag($r->{stderr});
		is($r->{stdout}, '', "--older-than '$v': the program does not run");
	}
	for my $v ('0.001', '2.5', '4000000') {
		my $r = JT::run_jt('leak', 'pie', args => [1, 0], jt_args => ['--older-than', $v]);
		is($r->{exit}, 0, "--older-than $v is taken") or diag($r->{stderr});
	}
};

done_testing();
