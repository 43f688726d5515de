#!/usr/bin/perl
# bigframe.t - allocations under frames with big locals (4, 20 and 60 KiB; tests/progs/bigframe)
# have whole stacks with either source: each of the six blocks, three in main's thread and three
# in another, has its own stack from bf_leaf through its frame to main or bf_thread, file:line
# exact, and no stack of the run is cut (a static program's start-up blocks among them). The
# uprobe source's BPF path copies each thread's stack up to its outermost frame, the untouched
# pages of a big local left out; --stack-copy 4096 asks for 4 KiB, and each of the six is cut there.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Test::More;
use JT;

my $JT = JT::jmptrace();
-x $JT or plan skip_all => "no jmptrace at $JT";
my @modes = $ENV{JT_MODES} ? split(/[\s,]+/, $ENV{JT_MODES}) : @JT::MODES;
my @sources = JT::sources();

my %SIZE = (bf_4k => 4096, bf_20k => 20480, bf_60k => 61440);
my $SRC = 'bigframe/main.c';
my $LEAF = site_line($SRC, 'SITE:bf_leaf');

# The live stacks bf_leaf <- $fn <- bf_all <- $top, each frame at its line of main.c.
sub stacks_of {
	my ($s, $fn, $top) = @_;
	my $line = site_line($SRC, "SITE:$fn");
	return grep {
		my @f = @{ $_->{frames} // [] };
		@f >= 4 && frame_func_is($f[0], 'bf_leaf') && frame_file_is($f[0], 'main.c') && ($f[0]{line} // -1) == $LEAF
		    && frame_func_is($f[1], $fn) && ($f[1]{line} // -1) == $line
		    && frame_func_is($f[2], 'bf_all') && frame_func_is($f[3], $top)
	} live_stacks($s);
}

sub run_bigframe {
	my ($mode, $source, @extra) = @_;
	my $r = run_jt('bigframe', $mode, jt_args => ['--source', $source, @extra]);
	is($r->{exit}, 0, 'exit 0') or diag($r->{stderr});
	is($r->{stdout}, "bigframe: leaked 6 blocks\n", 'stdout');
	my $s = last_snapshot($r);
	ok($s, 'a last snapshot') or diag($r->{json_error} // $r->{stderr});
	is(($s // {})->{totals}{lost_events} // 0, 0, 'no event lost') if $s;
	return $s;
}

for my $source (@sources) {
	for my $mode (@modes) {
		subtest "bigframe-$mode, $source: every stack whole" => sub {
			my $s = run_bigframe($mode, $source) or return;
			for my $fn (sort { $SIZE{$a} <=> $SIZE{$b} } keys %SIZE) {
				for my $top ('main', 'bf_thread') {
					my @st = stacks_of($s, $fn, $top);
					is(join(' ', scalar(@st), sum_field('live_blocks', @st), sum_field('live_bytes', @st)),
					   "1 1 $SIZE{$fn}", "bf_leaf (main.c:$LEAF) <- $fn (main.c:" . site_line($SRC, "SITE:$fn")
					   . ") <- bf_all <- $top: one stack, one block of $SIZE{$fn} bytes")
					    or diag(describe_stacks($s));
				}
			}
			my @cut = grep { $_->{cut_by} } @{ $s->{stacks} // [] };
			is(scalar(@cut), 0, 'no stack of the run is cut (the C library\'s start-up blocks too)')
			    or diag(join("\n", map { "cut by $_->{cut_by}: " . describe_frame($_->{frames}[-1]) } @cut));
		};
	}
}

SKIP: {
	skip 'the uprobe source is not run here', 1 unless grep { $_ eq 'uprobe' } @sources;
	subtest "bigframe-$modes[0], uprobe, --stack-copy 4096: cut where asked" => sub {
		my $s = run_bigframe($modes[0], 'uprobe', '--stack-copy', '4096') or return;
		for my $fn (qw(bf_4k bf_20k bf_60k)) {
			my @st = grep {
				my @f = @{ $_->{frames} // [] };
				@f >= 2 && frame_func_is($f[1], $fn)
			} live_stacks($s);
			is(join(' ', sum_field('live_blocks', @st), scalar(grep { ($_->{cut_by} // '') eq 'stack-copy' } @st)),
			   '2 ' . scalar(@st), "$fn: both blocks, on stacks cut by the stack copy") or diag(describe_stacks($s));
		}
	};
}

done_testing();
