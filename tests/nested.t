#!/usr/bin/perl
# nested.t - --alloc over an allocator that itself calls malloc and free (sqlite3's shape:
# my_malloc(n) is malloc(n + 8) returning p + 8, my_free(p) is free(p - 8); tests/progs/nested):
# the calls it makes to the standard ones are its own business, counted once at its level and
# never invalid frees, in main and in a thread; the block my_malloc keeps for itself is not
# listed; a block made by malloc in an unnamed function (sqlite3's sqlite3Malloc) and released
# by my_free is a malloc and a free, no invalid free (Debian's sqlite3); a longjmp out of my_malloc leaves no call in flight that would swallow a later
# malloc; a free of a pointer inside a live block is reported as such. Exact calls, bytes,
# live blocks and file:line in every link mode, with both event sources (uprobe as root).
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

my @NAMED = ('--alloc', 'my_malloc=malloc', '--alloc', 'my_free=free');

# Every stack (live or not) whose frame 0 is function $func at nx_do.c's line of $mark.
sub stacks_at {
	my ($s, $func, $mark) = @_;
	my $line = site_line('nested/nx_do.c', $mark);
	return grep {
		my $f = $_->{frames}[0];
		$f && frame_func_is($f, $func) && frame_file_is($f, 'nx_do.c') && ($f->{line} // -1) == $line
	} @{ $s->{stacks} // [] };
}

# "live BLOCKS/BYTES, calls N of BYTES, frees N" of the stacks at a site.
sub figures {
	my (@st) = @_;
	return sprintf('live %d/%d, calls %d of %d, frees %d', sum_field('live_blocks', @st),
		       sum_field('live_bytes', @st), sum_field('alloc_calls', @st), sum_field('alloc_bytes', @st),
		       sum_field('frees', @st));
}

for my $source (@sources) {
	for my $mode (@modes) {
		subtest "nested-$mode, $source: an allocator over malloc with a header" => sub {
			my $r = run_jt('nested', $mode, jt_args => [@NAMED, '--source', $source]);
			is($r->{exit}, 0, 'exit 0') or diag($r->{stderr});
			is($r->{stdout}, "nested: 1 free refused\n", 'the program refused the free inside a block');
			my $s = last_snapshot($r);
			ok($s, 'a last snapshot') or return diag($r->{json_error} // $r->{stderr});
			is($s->{totals}{lost_events} // 0, 0, 'no event lost');
			is(calls_of($s, 'my_malloc'), 203, 'my_malloc: 203 calls (200 churned, 300, 64, the longjmp)');
			is(calls_of($s, 'my_free'), 204, 'my_free: 204 calls (200 churned, inside, 64, NULL, nx_raw\'s)');
			is(calls_of($s, 'free'), 0, 'free: no call of its own, every one was my_free\'s');
			is(figures(stacks_at($s, 'nx_churn', 'SITE:nx_churn')), 'live 0/0, calls 200 of 8000, frees 200',
			   'nx_churn: 200 blocks of 40 bytes from main and the thread, all freed');
			is(figures(stacks_at($s, 'nx_leak', 'SITE:nx_leak')), 'live 1/300, calls 1 of 300, frees 0',
			   'nx_leak (nx_do.c:' . site_line('nested/nx_do.c', 'SITE:nx_leak') . '): 300 bytes live');
			is(figures(grep { frame_func_is($_->{frames}[0], 'nx_inside') } @{ $s->{stacks} // [] }),
			   'live 0/0, calls 1 of 64, frees 1', 'nx_inside: its block freed once, by its start');
			is(figures(stacks_at($s, 'nx_deep', 'SITE:nx_deep')), 'live 1/16, calls 1 of 16, frees 0',
			   'nx_deep: the malloc made after the longjmp out of my_malloc is the program\'s');
			# my_malloc's own malloc (its spare block, each block's header) is its business.
			my @raw = grep { frame_func_is($_->{frames}[0], 'my_raw_malloc') } @{ $s->{stacks} // [] };
			is(figures(@raw), 'live 0/0, calls 1 of 32, frees 1',
			   'my_raw_malloc: only nx_raw\'s malloc, released by my_free\'s free');
			ok(@raw == 1 && frame_func_is($raw[0]{frames}[1], 'nx_raw'), 'called by nx_raw')
				or diag(describe_frame($raw[0]{frames}[1]));
			my @inv = @{ $s->{invalid_frees} // [] };
			is(scalar(@inv), 1, 'one invalid-free stack') or diag(explain(\@inv));
			is($inv[0]{count}, 1, 'one invalid free');
			is($inv[0]{inside}, 1, 'of a pointer inside a live block');
			my $line = site_line('nested/nx_do.c', 'SITE:nx_inside');
			my $f0 = $inv[0]{frames}[0];
			ok(frame_func_is($f0, 'nx_inside') && frame_file_is($f0, 'nx_do.c') && ($f0->{line} // -1) == $line,
			   "made by nx_inside at nx_do.c:$line") or diag(describe_frame($f0));
			is($s->{totals}{unknown_frees}, 1, 'unknown frees 1: that one');
			my $text = $r->{report} // '';
			like($text, qr/^1 invalid free \(of pointers inside a live block, past its start\) from 1 stack:\n\nInvalid free #1: 1 call from this stack, of a pointer inside a live block\n    at 0x[0-9a-f]+: nx_inside \(nx_do\.c:$line\)\n/m,
			     'text: the free inside a live block, told as such');
			unlike($text, qr/double free/, 'text: no double free');
		};
	}
}

done_testing();
