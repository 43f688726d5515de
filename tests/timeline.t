#!/usr/bin/perl
# timeline.t - the JSON timeline: each snapshot holds only the samples since the previous
# one, each sample lists the stacks whose live bytes changed ([id, live_bytes]), and a
# reader carrying those forward gets every stack's exact live bytes at every snapshot;
# `jmptrace diff` still reads a file of the old format (the whole timeline in every snapshot).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempdir);
use Test::More;
use JT;

my $JT = JT::jmptrace();
-x $JT or plan skip_all => "no jmptrace at $JT";

# slowleak for 2 s with a snapshot every 100 ms: about 20 snapshots, 1 or 2 samples each (fewer
# on a slow host: the checks need 3).
my $r = run_jt('slowleak', 'pie', jt_args => ['--interval', '0.1'], args => ['2000']);
is($r->{exit}, 0, 'slowleak exits 0 under jmptrace');
my ($leaked) = ($r->{stdout} // '') =~ /^leaked (\d+)$/m;
ok(defined $leaked && $leaked >= 2, 'slowleak leaked ' . ($leaked // '?') . ' blocks');
my @snaps = @{ ($r->{json} // {})->{snapshots} // [] };
ok(@snaps >= 3, scalar(@snaps) . ' snapshots') or diag($r->{json_error} // $r->{stderr});

# Whether a snapshot's samples @tl follow on from the previous snapshot $prev of the process:
# they start after its last sample, or, taken in the same ms, they are that one sample again
# (updated: the heap keeps one sample per ms).
sub follows_on {
	my ($s, $prev, @tl) = @_;
	return 1 unless $prev && @tl;
	my $last = $prev->{timeline}[-1]{time_ms} // $prev->{time_ms};
	return $tl[0]{time_ms} > $last || (@tl == 1 && $tl[0]{time_ms} == $last && $s->{time_ms} == $prev->{time_ms});
}

subtest 'each snapshot has only the samples since the previous one' => sub {
	my $prev;
	for my $s (@snaps) {
		my @tl = @{ $s->{timeline} };
		ok(@tl >= 1, "snapshot $s->{seq}: " . scalar(@tl) . ' samples');
		next unless @tl;
		ok(follows_on($s, $prev, @tl), "snapshot $s->{seq}: its first sample at $tl[0]{time_ms} ms, after the previous snapshot's last at "
		   . "$prev->{timeline}[-1]{time_ms} ms") if $prev;
		my @back = grep { $tl[$_]{time_ms} <= $tl[$_ - 1]{time_ms} } 1 .. $#tl;
		ok(!@back, "snapshot $s->{seq}: samples in time order");
		is_deeply([@{ $tl[-1] }{qw(time_ms live_bytes live_blocks)}],
			  [$s->{time_ms}, @{ $s->{totals} }{qw(live_bytes live_blocks)}],
			  "snapshot $s->{seq}: its last sample is the snapshot's totals");
		$prev = $s;
	}
};

subtest 'carried forward, the samples give every stack\'s live bytes' => sub {
	my %cur;		# stack id -> live bytes so far
	my ($leak_id, @leak_series);
	for my $s (@snaps) {
		for my $smp (@{ $s->{timeline} }) {
			$cur{ $_->[0] } = $_->[1] for @{ $smp->{stacks} };
			my $sum = 0;
			$sum += $_ for values %cur;
			is($sum, $smp->{live_bytes}, "sample at $smp->{time_ms} ms: the stacks' live bytes sum to its $smp->{live_bytes}");
		}
		my %live = map { $_->{id} => $_->{live_bytes} } @{ $s->{stacks} };
		my @wrong = grep { ($live{$_} // 0) != ($cur{$_} // 0) } keys %live, keys %cur;
		ok(!@wrong, "snapshot $s->{seq}: every stack's rebuilt live bytes are its live_bytes")
		    or diag(join(', ', map { "stack $_: " . ($cur{$_} // 0) . ' vs ' . ($live{$_} // 0) } @wrong));
		my ($leak) = stacks_with_frame0($s, 'sl_leak');
		next unless $leak;
		ok(!defined $leak_id || $leak->{id} == $leak_id, "snapshot $s->{seq}: sl_leak keeps its id $leak->{id}");
		$leak_id = $leak->{id};
		push @leak_series, $cur{$leak_id};
	}
	my @down = grep { $leak_series[$_] < $leak_series[$_ - 1] } 1 .. $#leak_series;
	ok(@leak_series >= 2 && !@down, 'sl_leak\'s series never goes down: ' . join(' ', @leak_series));
	is($leak_series[-1], 1000 * ($leaked // 0), "sl_leak's last figure is the $leaked blocks of 1,000 bytes it leaked");
};

# With -f each process has its own timeline and ids: per pid, a snapshot's samples follow
# its previous snapshot's, and carried forward they give each stack's live bytes. An exec
# starts a new image, with ids and a timeline of its own: an image is a pid and its "execs".
# (The shell's background child is a forked shell that execs slowleak.)
subtest '-f: a timeline per process' => sub {
	my $prog = prog_path('slowleak', 'pie');
	my $f = run_jt(undef, undef, path => '/bin/sh', jt_args => ['-f', '--interval', '0.1'],
		       args => ['-c', "$prog 300 & $prog 500; wait"]);
	is($f->{exit}, 0, 'sh and its two slowleak children exit 0');
	my @fs = @{ ($f->{json} // {})->{snapshots} // [] };
	my %pids = map { $_->{pid} => 1 } @fs;
	ok(keys(%pids) >= 3, scalar(keys %pids) . ' processes have snapshots');
	my (%cur, %prev, @wrong);
	for my $s (@fs) {
		my $img = "$s->{pid}/" . ($s->{execs} // 0);
		my $c = $cur{$img} //= {};
		my @tl = @{ $s->{timeline} };
		push @wrong, "pid $s->{pid} seq $s->{seq}: starts at $tl[0]{time_ms}, not after the previous snapshot's samples"
		    unless follows_on($s, $prev{$img}, @tl);
		$prev{$img} = $s if @tl;
		for my $smp (@tl) {
			$c->{ $_->[0] } = $_->[1] for @{ $smp->{stacks} };
		}
		my %live = map { $_->{id} => $_->{live_bytes} } @{ $s->{stacks} };
		push @wrong, map { "pid $s->{pid} seq $s->{seq} stack $_: " . ($c->{$_} // 0) . ' vs ' . ($live{$_} // 0) }
		    grep { ($live{$_} // 0) != ($c->{$_} // 0) } keys %live, keys %$c;
	}
	ok(@fs >= 3 && !@wrong, scalar(@fs) . ' snapshots: each process\'s samples follow on and rebuild its stacks\' live bytes')
	    or diag(join("\n", @wrong));
};

subtest 'stack objects open with their id' => sub {
	my $text = JT::slurp("$r->{dir}/report.json") // '';
	my $nstacks = 0;
	# (the entries the file holds: a snapshot lists the stacks that changed, JT::expand_report)
	$nstacks += @{ $_->{stacks_changed} // $_->{stacks} } for @snaps;
	# (a growth entry has "id" and then an array of live bytes: not a stack object)
	my $with_id = () = $text =~ /\{"id": \d+, "live_bytes": \d/g;
	ok($nstacks > 0, "$nstacks stack objects");
	is($with_id, $nstacks, 'every one starts with "id"');
};

# An old file (jmptrace before the per-sample stacks: "timeline": [[time_ms, live_bytes,
# live_blocks], ...] repeated whole in every snapshot, stacks without "id"), and the same
# run's file rewritten that way: diff reads both, and the rewrite diffs as the original.
subtest 'jmptrace diff reads the old format' => sub {
	my $fixture = JT::root() . '/tests/fixtures/old-timeline.json';
	my $d = run_cmd(argv => [$JT, 'diff', "$fixture:1", "$fixture:2"], timeout => 60);
	is($d->{exit}, 0, 'diff of the old fixture exits 0') or diag($d->{stderr});
	like($d->{stdout} // '', qr/^live:  13,800 -> 62,800 bytes \(\+49,000\), 26 -> 75 blocks \(\+49\)$/m,
	     'its live totals');
	like($d->{stdout} // '', qr/^#1: \+49,000 bytes \(\+49 blocks\): 1,000 -> 50,000 live bytes\n    at sl_leak /m,
	     'its growth: sl_leak');

	my $dir = tempdir('jt-timeline-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my (@whole, @old);
	for my $s (@snaps) {
		my %o = %$s;
		push @whole, map { [@$_{qw(time_ms live_bytes live_blocks)}] } @{ $s->{timeline} };
		$o{timeline} = [@whole];
		$o{stacks} = [map { my %st = %$_; delete $st{id}; \%st } @{ $s->{stacks} }];
		push @old, \%o;
	}
	JT::spew("$dir/report.json", JSON::PP->new->canonical->encode({ snapshots => \@old }));
	JT::spew("$dir/new.json", JSON::PP->new->canonical->encode({ snapshots => \@snaps }));
	my $n = scalar @snaps;
	my $a = run_cmd(argv => [$JT, 'diff', "$dir/report.json:1", "$dir/report.json:$n"], timeout => 60);
	my $b = run_cmd(argv => [$JT, 'diff', "$dir/new.json:1", "$dir/new.json:$n"], timeout => 60);
	is($a->{exit}, 0, 'diff of the rewritten old-format file exits 0') or diag($a->{stderr});
	(my $want = $b->{stdout} // '') =~ s/new\.json/report.json/g;
	ok(length $want > 0, 'diff of the new file printed ' . length($want) . ' bytes');
	is($a->{stdout}, $want, 'the old-format file diffs as the new one');
};

done_testing();
