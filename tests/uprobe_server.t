#!/usr/bin/perl
# uprobe_server.t - Debian's redis-server (jemalloc) on a free loopback port, traced with
# `jmptrace -p` while redis-benchmark sends it 20,000 SETs: first with the ptrace source,
# then with `--source uprobe`. Each time the benchmark reports no error, the server answers
# after the SIGINT detach with more keys than before (DBSIZE) and is traced by no one,
# jmptrace exits 0, the uprobe source lost no event, and the top 3 live stacks by bytes are
# the same functions with both sources, one of them through setKey (where SET stores a new
# key). Then a short soak with the default source, --interval, --json and --html: nothing
# lost, files that grow by what changed. The request rates, untraced just before and attached, are printed as diagnostics
# only: speed is bench/programs.sh's to show, never a test's to assert.
# Root only; skipped without redis-server and redis-tools or the kernel's uprobe PMU.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempdir);
use IO::Socket::INET;
use POSIX qw(WIFEXITED WEXITSTATUS);
use Test::More;
use JT;

# The sources are chosen here, so jmptrace itself, not the JT_SOURCE wrapper.
my $JT = JT::jmptrace_bin();
BAIL_OUT("no executable jmptrace at $JT (make jmptrace, or set JMPTRACE)") unless -x $JT;
plan skip_all => 'chooses its sources itself: run in the ptrace pass only' if JT::source() ne 'ptrace';
plan skip_all => 'needs root: the uprobe source opens uprobe perf events' unless $> == 0;
my %BIN = map { my $n = $_; ($n => (grep { -x } map { "$_/$n" } split(/:/, $ENV{PATH} // ''))[0]) }
	qw(redis-server redis-cli redis-benchmark);
for (sort keys %BIN) {
	plan skip_all => "$_ is not installed (apt-get install redis-server redis-tools)" unless $BIN{$_};
}
plan skip_all => 'the kernel has no uprobe PMU (/sys/bus/event_source/devices/uprobe)'
	unless -d '/sys/bus/event_source/devices/uprobe';
{
	my $r = run_cmd(argv => [$JT, '--source', 'uprobe', '-o', '/dev/null', '--', '/bin/true'], timeout => 60);
	plan skip_all => 'jmptrace has no --source uprobe' if $r->{stderr} =~ /Try '.*--help'/;
}

my $dir = tempdir('jt-redis-XXXXXX', TMPDIR => 1, CLEANUP => 1);

# A TCP port on 127.0.0.1 that nothing listens on now.
sub free_port {
	my $s = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0, Listen => 1, ReuseAddr => 1)
		or BAIL_OUT("cannot bind a loopback port: $!");
	my $port = $s->sockport;
	close $s;
	return $port;
}

my $PORT = free_port();

# redis-cli's answer to one command, without the trailing newline ('' when it cannot connect).
sub cli {
	my $r = run_cmd(argv => [$BIN{'redis-cli'}, '-p', $PORT, @_], timeout => 60);
	(my $out = $r->{stdout}) =~ s/\n\z//;
	return $out;
}

# One redis-benchmark run of 20,000 SETs; returns { rate (or undef), errors (text, '' when none) }.
sub benchmark {
	my $r = run_cmd(argv => [$BIN{'redis-benchmark'}, '-t', 'set', '-n', 20000, '-c', 10, '-r', 1000000,
				 '-d', 64, '-p', $PORT, '--csv'], timeout => 600);
	my ($rate) = $r->{stdout} =~ /^"SET","([\d.]+)"/m;
	my @err;
	push @err, "exit " . ($r->{exit} // 'none') unless ($r->{exit} // -1) == 0;
	push @err, 'no SET rate in its output' unless defined $rate;
	push @err, grep { /error/i } split /\n/, $r->{stdout} . $r->{stderr};
	return { rate => $rate, errors => join('; ', @err) };
}

# Every value of a key named $key anywhere in a decoded JSON document.
sub values_of {
	my ($node, $key) = @_;
	return () unless ref $node;
	return map { values_of($_, $key) } @$node if ref $node eq 'ARRAY';
	return () unless ref $node eq 'HASH';
	return ((exists $node->{$key} ? ($node->{$key}) : ()), map { values_of($node->{$_}, $key) } sort keys %$node);
}

# The function names of a stack, frame 0 first ('?' for a frame without one).
sub names_of { join(' < ', map { $_->{function} // '?' } @{ $_[0]{frames} // [] }) }

my $srv = spawn(argv => [$BIN{'redis-server'}, '--port', $PORT, '--bind', '127.0.0.1', '--save', '',
			 '--appendonly', 'no', '--dir', $dir, '--daemonize', 'no'], dir => $dir, name => 'redis');
ok(wait_until(sub { cli('ping') eq 'PONG' }, 60), "redis-server answers on 127.0.0.1:$PORT")
	or BAIL_OUT('redis-server did not start: ' . (JT::slurp($srv->{out}) // ''));

# One source: the untraced benchmark, the attach, the benchmark while attached, the detach.
# Returns the function names of the top 3 live stacks by bytes, or undef.
sub traced_run {
	my ($source) = @_;
	my @src = ('--source', $source);
	my $json = "$dir/$source.json";
	my $top;
	subtest "redis-server under jmptrace -p, $source source" => sub {
		is(cli('flushall'), 'OK', 'FLUSHALL empties the server');
		my $before = benchmark();
		is($before->{errors}, '', 'untraced: the benchmark reports no error');
		# Empty again: redis-benchmark's random keys can repeat from run to run, and the
		# attached run then stored no new key, so no stack went through setKey (ci20:
		# "19779 before, 19779 after").
		is(cli('flushall'), 'OK', 'FLUSHALL empties it again, so that the attached SETs store new keys');
		my $keys0 = cli('dbsize');
		my $j = spawn(argv => [$JT, @src, '-p', $srv->{pid}, '--json', $json, '-o', "$dir/$source.txt"],
			      dir => $dir, name => "jt-$source");
		# A snapshot on SIGUSR1 says that jmptrace has attached every thread.
		my $attached = wait_until(sub { attach_done($j) }, 60) && kill('USR1', $j->{pid})
			&& wait_until(sub { my $x = read_json($json); $x && @{ $x->{snapshots} // [] } }, 60);
		ok($attached, 'jmptrace attached (a SIGUSR1 snapshot)') or diag(JT::slurp($j->{err}) // '');
		my $during = benchmark();
		is($during->{errors}, '', 'attached: the benchmark reports no error');
		kill 'INT', $j->{pid};
		my $st = reap($j, 300);
		ok(defined $st && WIFEXITED($st) && WEXITSTATUS($st) == 0, 'jmptrace exits 0 after SIGINT')
			or diag(JT::slurp($j->{err}) // '');
		diag(sprintf('%s source: SET %s req/s untraced just before, %s attached', $source,
			     $before->{rate} // '?', $during->{rate} // '?'));
		ok(kill(0, $srv->{pid}), 'redis-server is alive after the detach');
		is(join(',', traced_threads($srv->{pid})), '', 'no thread of redis-server is traced');
		my $keys1 = cli('dbsize');
		ok($keys1 =~ /^\d+$/ && $keys0 =~ /^\d+$/ && $keys1 > $keys0,
		   "DBSIZE answers after the detach, with the keys SET while attached ($keys0 before, $keys1 after)");
		my $report = read_json($json);
		my $snap = $report && $report->{snapshots}[-1];
		ok($snap, 'the JSON report has a snapshot') or return;
		if ($source eq 'uprobe') {
			my @lost = values_of($report, 'lost_events');
			ok(@lost && !grep({ !defined || $_ != 0 } @lost), 'lost_events is 0')
				or diag('lost_events: ' . join(', ', map { $_ // 'null' } @lost));
		}
		my @live = sort { $b->{live_bytes} <=> $a->{live_bytes} } live_stacks($snap);
		my @top = map { names_of($_) } @live[0 .. ($#live < 2 ? $#live : 2)];
		is(scalar @top, 3, '3 live stacks at least') or diag(describe_stacks($snap, 10));
		ok((grep { /(^| < )setKey( < |$)/ } @top), 'one of the top 3 live stacks by bytes goes through setKey')
			or diag(describe_stacks($snap, 10));
		diag("$source source, top 3 live stacks by bytes:\n  " . join("\n  ", @top));
		$top = \@top;
	};
	return $top;
}

my $ptrace = traced_run('ptrace');
my $uprobe = traced_run('uprobe');
if ($ptrace && $uprobe) {
	is(join("\n", sort @$uprobe), join("\n", sort @$ptrace),
	   'the top 3 live stacks by bytes are the same functions with both sources')
		or diag("ptrace:\n  " . join("\n  ", @$ptrace) . "\nuprobe:\n  " . join("\n  ", @$uprobe));
} else {
	fail('the top 3 live stacks of both sources (a run above failed)');
}

# A soak in short (bench/soak.sh is the long one): the default source, attached with
# --interval 0.5 --json --html while three benchmarks run. No event lost; the JSON grows by
# at most 30 KB a snapshot after the first (it names frames once per file and lists only what
# changed); the page is the JSON and at most 2 MB of its own; the server keeps its keys.
subtest 'redis-server under jmptrace -p, default source, --interval 0.5 --json --html' => sub {
	is(cli('flushall'), 'OK', 'FLUSHALL empties the server');
	my ($json, $html) = ("$dir/soak.json", "$dir/soak.html");
	my $j = spawn(argv => [$JT, '-p', $srv->{pid}, '--interval', '0.5', '--json', $json, '--html', $html,
			       '-o', "$dir/soak.txt"], dir => $dir, name => 'jt-soak');
	ok(wait_until(sub { attach_done($j) }, 60), 'jmptrace attached') or diag(JT::slurp($j->{err}) // '');
	# The JSON's size once it holds its first snapshot(s): what later ones add is measured from there.
	my $first = wait_until(sub { my $x = read_json($json); my $k = $x ? @{ $x->{snapshots} // [] } : 0;
				     $k ? [$k, -s $json] : 0 }, 60) || [0, 0];
	my @errors = map { benchmark()->{errors} } 1 .. 3;
	is(join('', @errors), '', 'three benchmarks attached: no error');
	kill 'INT', $j->{pid};
	my $st = reap($j, 300);
	ok(defined $st && WIFEXITED($st) && WEXITSTATUS($st) == 0, 'jmptrace exits 0 after SIGINT')
		or diag(JT::slurp($j->{err}) // '');
	my $report = read_json($json);
	my $n = scalar @{ ($report // {})->{snapshots} // [] };
	ok($n >= 4, "$n snapshots");
	my @lost = values_of($report, 'lost_events');
	ok(@lost && !grep({ !defined || $_ != 0 } @lost), "lost_events is 0 in every snapshot ($n)")
		or diag('lost_events: ' . join(', ', map { $_ // 'null' } @lost));
	my ($js, $hs) = (-s $json // 0, -s $html // 0);
	my ($k, $size) = @$first;
	my $per = $k && $n > $k ? int(($js - $size) / ($n - $k)) : -1;
	ok($per >= 0 && $per <= 30_000, "the JSON grew by $per bytes a snapshot after the first $k ($size bytes, then $js in all)");
	ok($hs > 0 && $hs <= $js + 2_000_000, "the page: $hs bytes, the JSON's $js and at most 2 MB more");
	ok(cli('dbsize') =~ /^[1-9]\d*$/, 'DBSIZE answers after the detach, with the keys SET while attached');
	is(join(',', traced_threads($srv->{pid})), '', 'no thread of redis-server is traced');
};

cli('shutdown', 'nosave');
reap($srv, 60);
done_testing();
