# JTCheck.pm - Test::More checks shared by the integration tests: a run against its native
# twin, the shape of a snapshot, the stacks of one call site, and call-count differences.
package JTCheck;

use strict;
use warnings;
use Exporter 'import';
use File::Basename qw(basename);
use JSON::PP ();
use POSIX qw(WIFEXITED WEXITSTATUS);
use Test::More;
use JT;

our @EXPORT = qw(
	snapshot_of same_as_native check_shape check_site check_gone check_through
	check_call_deltas check_total_deltas is_static both attach_released leak_bytes
);

# A run finished, wrote JSON with a snapshot; returns the last snapshot or undef.
sub snapshot_of {
	my ($r, $name) = @_;
	ok(!$r->{timed_out}, "$name: finished before the timeout");
	my $snap = last_snapshot($r);
	ok($snap, "$name: the JSON report has a snapshot")
		or diag("json: " . ($r->{json_error} // 'no snapshots') . "\njmptrace stderr:\n$r->{stderr}");
	return $snap;
}

# stdout and the exit status are the same as in the native run (128+sig for a signal).
sub same_as_native {
	my ($r, $n, $name) = @_;
	is($r->{stdout}, $n->{stdout}, "$name: stdout is byte-identical to the native run");
	if (defined $n->{signal}) {
		is($r->{exit}, 128 + $n->{signal}, "$name: exits 128+$n->{signal} like the killed program");
	} else {
		is($r->{exit}, $n->{exit}, "$name: exit status is the program's ($n->{exit})");
	}
}

# Fields that hold for every snapshot taken when the program is gone, plus consistency of
# totals and stacks. %e: exit_status (or undef), killed_by (or undef), reason, prog.
sub check_shape {
	my ($snap, $name, %e) = @_;
	subtest "$name: snapshot fields and consistency" => sub {
		is($snap->{reason}, $e{reason}, 'reason') if defined $e{reason};
		ok(defined $snap->{pid} && $snap->{pid} =~ /^\d+$/ && $snap->{pid} > 0, 'pid is a positive number');
		ok(defined $snap->{command} && index($snap->{command}, $e{prog}) >= 0,
		   "command names $e{prog}") or diag("command: " . ($snap->{command} // 'null'));
		ok(is_true($snap->{exited}), 'exited is true');
		ok(is_false($snap->{attached}), 'attached is false');
		is($snap->{exit_status}, $e{exit_status}, 'exit_status');
		is($snap->{killed_by}, $e{killed_by}, 'killed_by');
		my $t = $snap->{totals} // {};
		my @missing = grep { !exists $t->{calls}{$_} } @CALL_NAMES;
		is("@missing", '', 'totals.calls has every allocator name');
		for my $k (qw(alloc_calls bytes_allocated frees unknown_frees live_bytes live_blocks
			      peak_live_bytes)) {
			ok(defined $t->{$k} && $t->{$k} =~ /^\d+$/, "totals.$k is a number");
		}
		my @st = live_stacks($snap);
		is($t->{live_bytes}, sum_field('live_bytes', @st), 'totals.live_bytes is the sum over stacks');
		is($t->{live_blocks}, sum_field('live_blocks', @st), 'totals.live_blocks is the sum over stacks');
		cmp_ok($t->{alloc_calls}, '>=', sum_field('alloc_calls', @st), 'totals.alloc_calls >= sum over stacks');
		cmp_ok($t->{peak_live_bytes}, '>=', $t->{live_bytes}, 'peak_live_bytes >= live_bytes');
		cmp_ok($t->{bytes_allocated}, '>=', $t->{live_bytes}, 'bytes_allocated >= live_bytes');
		my @unsorted = grep { $st[$_ - 1]{live_bytes} < $st[$_]{live_bytes} } 1 .. $#st;
		ok(!@unsorted, 'stacks are sorted by live_bytes, largest first');
		my @empty = grep { !$_->{live_blocks} || !@{ $_->{frames} // [] } } @st;
		ok(!@empty, 'every stack has live blocks and frames');
		my @badfr = grep { ($_->{address} // '') !~ /^0x[0-9a-f]+$/ || !defined $_->{module}
				   || !JSON::PP::is_bool($_->{inlined}) } map { @{ $_->{frames} // [] } } @st;
		ok(!@badfr, 'every frame has a hex address, a module and an inlined flag')
			or diag(describe_frame($badfr[0]));
	};
}

# Checks the stacks whose frame 0 is in function $e{func}: all at the marker's line,
# with the given live bytes, live blocks, alloc calls and (when given) alloc bytes,
# module and caller (frame 1: [function, file, marker]).
sub check_site {
	my ($snap, $name, %e) = @_;
	my $line = site_line($e{file}, $e{marker});
	my $base = basename($e{file});
	subtest "$name: frame 0 $e{func} at $base:$line" => sub {
		my @st = stacks_with_frame0($snap, $e{func});
		ok(@st >= 1, "some stack has frame 0 in $e{func}")
			or return diag("stacks:\n" . describe_stacks($snap, 40));
		my @off = grep { !frame_file_is($_->{frames}[0], $base) || ($_->{frames}[0]{line} // -1) != $line } @st;
		ok(!@off, "all of them start at $base:$line")
			or diag(join("\n", map { describe_frame($_->{frames}[0]) } @off));
		is(sum_field('live_bytes', @st), $e{live_bytes}, 'live bytes');
		is(sum_field('live_blocks', @st), $e{live_blocks}, 'live blocks');
		is(sum_field('alloc_calls', @st), $e{alloc_calls}, 'alloc calls');
		is(sum_field('alloc_bytes', @st), $e{alloc_bytes}, 'alloc bytes') if defined $e{alloc_bytes};
		is(scalar(@st), $e{nstacks}, 'number of distinct stacks') if defined $e{nstacks};
		if (defined $e{module}) {
			my @bad = grep { ($_->{frames}[0]{module} // '') ne $e{module} } @st;
			ok(!@bad, "frame 0 module is $e{module}")
				or diag(describe_frame($bad[0]{frames}[0]));
		}
		ok(!grep({ $_->{frames}[0]{inlined} } @st), 'frame 0 is not marked inlined');
		if ($e{caller}) {
			my ($cf, $cfile, $cmark) = @{ $e{caller} };
			my $cl = site_line($cfile, $cmark);
			my @bad = grep {
				my $f = $_->{frames}[1];
				!$f || !frame_func_is($f, $cf) || !frame_file_is($f, basename($cfile))
				    || ($f->{line} // -1) != $cl
			} @st;
			ok(!@bad, "frame 1 is $cf at " . basename($cfile) . ":$cl")
				or diag(describe_frame($bad[0]{frames}[1]));
		}
	};
}

# No stack has frame 0 in $func (its blocks were all freed or moved by realloc).
sub check_gone {
	my ($snap, $name, $func, $line) = @_;
	my @st = stacks_with_frame0($snap, $func, $line);
	ok(!@st, "$name: no live stack starts in $func" . (defined $line ? " at line $line" : ''))
		or diag(describe_stacks({ stacks => \@st }));
}

# Stacks that pass through $func at $file:marker (any frame): summed live bytes and blocks.
sub check_through {
	my ($snap, $name, %e) = @_;
	my $line = site_line($e{file}, $e{marker});
	my $base = basename($e{file});
	subtest "$name: stacks through $e{func} at $base:$line" => sub {
		my @st = stacks_through($snap, $e{func}, $base, $line);
		ok(@st >= 1, 'found') or return diag("stacks:\n" . describe_stacks($snap, 40));
		is(sum_field('live_bytes', @st), $e{live_bytes}, 'live bytes');
		is(sum_field('live_blocks', @st), $e{live_blocks}, 'live blocks');
		is(sum_field('alloc_calls', @st), $e{alloc_calls}, 'alloc calls');
	};
}

# totals.calls of run $b minus run $a equals %want for every name (missing names: 0).
# Static programs cannot tell aligned_alloc from memalign (one function in glibc 2.36), so
# there only their sum is checked.
sub check_call_deltas {
	my ($sa, $sb, $name, $static, %want) = @_;
	my @bad;
	for my $c (@CALL_NAMES) {
		next if $static && ($c eq 'aligned_alloc' || $c eq 'memalign');
		my $got = calls_of($sb, $c) - calls_of($sa, $c);
		push @bad, "$c: got $got, want " . ($want{$c} // 0) if $got != ($want{$c} // 0);
	}
	if ($static) {
		my $got = 0;
		$got += calls_of($sb, $_) - calls_of($sa, $_) for qw(aligned_alloc memalign);
		my $w = ($want{aligned_alloc} // 0) + ($want{memalign} // 0);
		push @bad, "aligned_alloc+memalign: got $got, want $w" if $got != $w;
	}
	ok(!@bad, "$name: per-function call counts differ by exactly the expected amounts")
		or diag(join("\n", @bad));
}

# totals of run $b minus run $a, for the keys given.
sub check_total_deltas {
	my ($sa, $sb, $name, %want) = @_;
	for my $k (sort keys %want) {
		is($sb->{totals}{$k} - $sa->{totals}{$k}, $want{$k}, "$name: totals.$k grows by $want{$k}");
	}
}

# Runs an attach program (tests/progs/attach: "ready", then one byte of stdin lets it go on
# and exit 0) from argv @$prog in $dir, attaches jmptrace to it with @jt_args once it is
# ready, makes sure jmptrace has attached (a SIGUSR1 snapshot in $dir/r.json, which
# @jt_args must name with --json), lets the program go on and waits for both to exit 0.
# Returns jmptrace's spawn handle (its {err} file; {target_pid} the program's pid), or undef
# after a failed check.
sub attach_released {
	my ($prog, $dir, @jt_args) = @_;
	my $p = spawn(argv => $prog, dir => $dir, name => 'prog', stdin_pipe => 1);
	ok(wait_until(sub { (JT::slurp($p->{out}) // '') eq "ready\n" }, 30), 'the program is ready')
		or do { reap($p, 1); return undef };
	my $j = spawn(argv => [JT::jmptrace(), '-p', $p->{pid}, @jt_args], dir => $dir, name => 'jt');
	# A snapshot on SIGUSR1 says that jmptrace has attached every thread.
	ok(wait_until(sub { attach_done($j) }, 30), 'jmptrace attached')
		or do { diag(JT::slurp($j->{err}) // ''); reap($j, 1); reap($p, 1); return undef };
	kill 'USR1', $j->{pid};
	ok(wait_until(sub { my $x = read_json("$dir/r.json"); $x && @{ $x->{snapshots} // [] } }, 30),
	   'SIGUSR1 wrote a snapshot') or do { diag(JT::slurp($j->{err}) // ''); reap($j, 1); reap($p, 1); return undef };
	print { $p->{stdin} } "g";
	my $ps = reap($p, 60);
	my $js = reap($j, 60);
	$j->{target_pid} = $p->{pid};
	ok(defined $ps && WIFEXITED($ps) && WEXITSTATUS($ps) == 0, 'the program exits 0');
	ok(defined $js && WIFEXITED($js) && WEXITSTATUS($js) == 0, 'jmptrace exits 0')
		or diag(JT::slurp($j->{err}) // '');
	return $j;
}

sub is_static { $_[0] =~ /static/ ? 1 : 0 }

# Both runs must exist before deltas are taken.
sub both { defined $_[0] && defined $_[1] }

# The bytes tests/progs/leak's leak_here() leaks from its block from to its block to (1024 + 16 i each).
sub leak_bytes { my ($from, $to) = @_; my $s = 0; $s += 1024 + 16 * $_ for $from .. $to - 1; $s }

1;
