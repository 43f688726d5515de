#!/usr/bin/perl
# debuginfod.t - a stripped program's file:line from a debuginfod server: libdw asks the
# servers DEBUGINFOD_URLS names. A local `debuginfod -F` serves the debug file of
# leak-pie (objcopy --only-keep-debug); with it, leak-pie-stripped's leak shows
# leak_here.c:LINE; without, the report says once that the module had no debug information.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempdir);
use HTTP::Tiny;
use IO::Socket::INET;
use Test::More;
use JT;

my $JT = JT::jmptrace();
-x $JT or plan skip_all => "no jmptrace at $JT";
my ($DEBUGINFOD) = grep { -x } map { "$_/debuginfod" } split /:/, $ENV{PATH} // '';
$DEBUGINFOD or plan skip_all => 'no debuginfod program (Debian package debuginfod)';
my $OBJCOPY = 'objcopy';
my $STRIPPED = prog_path('leak', 'pie-stripped');
my $LINE = site_line('leak/leak_here.c', 'LEAK-SITE');

my $dir = tempdir('jt-debuginfod-XXXXXX', TMPDIR => 1, CLEANUP => 1);
mkdir "$dir/srv" or die "mkdir: $!\n";
system($OBJCOPY, '--only-keep-debug', prog_path('leak', 'pie'), "$dir/srv/leak-pie.debug") == 0
    or plan skip_all => 'objcopy --only-keep-debug failed';
my ($build_id) = (`readelf -n $STRIPPED` // '') =~ /Build ID: ([0-9a-f]+)/;
$build_id or plan skip_all => "$STRIPPED has no build id";

# A free loopback port: the kernel picks one, then it is let go for debuginfod.
my $probe = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0, Listen => 1)
    or plan skip_all => "no loopback socket: $!";
my $port = $probe->sockport;
close $probe;

my $srv = spawn(dir => $dir, name => 'debuginfod',
		argv => [$DEBUGINFOD, '-F', '-p', $port, '-d', "$dir/db.sqlite", '-t', '0', '-g', '0', "$dir/srv"]);
my $url = "http://127.0.0.1:$port";
my $http = HTTP::Tiny->new(timeout => 5);
my $served = wait_until(sub { $http->get("$url/buildid/$build_id/debuginfo")->{status} == 200 }, 60);
ok($served, "debuginfod on port $port serves the debug file of build id $build_id")
    or diag(JT::slurp($srv->{err}) // '');

# Runs leak-pie-stripped under jmptrace with DEBUGINFOD_URLS set to $urls (or unset),
# with a fresh client cache (a miss is cached too).
sub run_stripped {
	my ($urls, $name) = @_;
	mkdir "$dir/cache-$name";
	local $ENV{DEBUGINFOD_CACHE_PATH} = "$dir/cache-$name";
	local $ENV{DEBUGINFOD_URLS} = $urls;
	delete $ENV{DEBUGINFOD_URLS} unless defined $urls;
	return run_jt('leak', 'pie-stripped', path => $STRIPPED);
}

# Every stack whose first frame is in leak_here.c, with its line.
sub leak_here_lines {
	my ($snap) = @_;
	return map { $_->{frames}[0]{line} }
	    grep { ($_->{frames}[0]{file} // '') =~ m{/leak_here\.c$} } @{ $snap->{stacks} };
}

SKIP: {
	skip 'debuginfod did not serve', 4 unless $served;
	my $r = run_stripped($url, 'with');
	my $s = last_snapshot($r);
	is($r->{exit}, 3, 'with DEBUGINFOD_URLS: leak exits 3 as without jmptrace');
	is_deeply([leak_here_lines($s // {})], [$LINE], "with DEBUGINFOD_URLS: the leak is at leak_here.c:$LINE")
	    or diag(describe_stacks($s));
	ok(!grep({ $_ eq 'leak-pie-stripped' } @{ $s->{no_debug_info} // [] }),
	   'with DEBUGINFOD_URLS: no_debug_info does not name leak-pie-stripped');
	unlike($r->{report} // '', qr/^NO DEBUG INFO: leak-pie-stripped:/m, 'with DEBUGINFOD_URLS: no NO DEBUG INFO line for it');
}

{
	my $r = run_stripped(undef, 'without');
	my $s = last_snapshot($r) // {};
	is($r->{exit}, 3, 'without DEBUGINFOD_URLS: leak exits 3');
	is_deeply([leak_here_lines($s)], [], 'without DEBUGINFOD_URLS: no frame in leak_here.c');
	is(scalar(grep { $_ eq 'leak-pie-stripped' } @{ $s->{no_debug_info} // [] }), 1,
	   'without: no_debug_info names leak-pie-stripped once');
	my @lines = ($r->{report} // '') =~ /^(NO DEBUG INFO: leak-pie-stripped: .*)$/mg;
	is(scalar(@lines), 1, 'without: the text report says it once, not per frame')
	    or diag($r->{report});
	like($lines[0] // '', qr/: its frames have no file:line \(no debug file was found, on disk or from a debuginfod server: DEBUGINFOD_URLS\)$/,
	     'without: and why');
}

kill 'TERM', $srv->{pid};
reap($srv, 30);
done_testing();
