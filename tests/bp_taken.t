#!/usr/bin/perl
# bp_taken.t - a breakpoint of the ptrace source that the kernel takes back. While a kernel
# uprobe is registered on the same instruction for another process (bcc memleak -p, a perf
# probe on one task), the kernel takes a trap there for its own at the next hit and, finding
# that it does not probe this process, writes the original instruction back
# (unapply_uprobe): the breakpoint is gone and its calls went uncounted without a word.
# Which kernels do it for which registrations varies, so this test does exactly what
# unapply_uprobe does, from outside: it writes the file's first byte of malloc back into the
# traced program's memory (/proc/PID/mem, as root). jmptrace must notice (it checks the byte
# every tick and before each snapshot), say it on stderr and in the reports (PARTLY TRACED,
# JSON "missed_until_ms"), and move its breakpoint past malloc's first instruction, so that
# later calls are counted. Root only; ptrace pass only.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Temp qw(tempdir);
use JSON::PP ();
use Test::More;
use JT;

my $JT = JT::jmptrace();
BAIL_OUT("no executable jmptrace at $JT (make jmptrace, or set JMPTRACE)") unless -x $JT;
plan skip_all => 'a breakpoint of the ptrace source: run in the ptrace pass only' if JT::source() ne 'ptrace';
plan skip_all => "needs root: writes into a traced process's memory" unless $> == 0;

my $LIBC = '/lib/x86_64-linux-gnu/libc.so.6';
my $dir = tempdir('jt-taken-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $PROG = JT::prog_path('slowleak', 'pie');

# malloc's file offset in libc (its dynamic symbol, through the PT_LOADs) and its first byte.
sub malloc_in_file {
	no warnings 'portable';
	my @loads = map { /^\s*LOAD\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+\S+\s+0x([0-9a-f]+)/ ? [hex $1, hex $2, hex $3] : () }
		split /\n/, `readelf -lW '$LIBC'`;
	my ($v) = map { /^([0-9a-f]+) [TtWi] malloc(?:@\S+)?$/ ? hex($1) : () } split /\n/, `nm -D --defined-only '$LIBC'`;
	my ($l) = grep { defined $v && $v >= $_->[1] && $v < $_->[1] + $_->[2] } @loads;
	return unless $l;
	my $off = $v - $l->[1] + $l->[0];
	open(my $fh, '<:raw', $LIBC) or return;
	sysseek($fh, $off, 0) or return;
	sysread($fh, my $byte, 1) == 1 or return;
	return ($off, $byte);
}

# The address of file offset $off of libc in $pid, from its executable mapping.
sub address_in {
	my ($pid, $off) = @_;
	no warnings 'portable';
	for (split /\n/, JT::slurp("/proc/$pid/maps") // '') {
		my ($s, $e, $mo) = /^([0-9a-f]+)-([0-9a-f]+) r-xp ([0-9a-f]+) \S+ \d+\s+\S*libc\.so\.6$/ or next;
		return hex($s) + $off - hex($mo) if $off >= hex($mo) && $off < hex($mo) + hex($e) - hex($s);
	}
	return;
}

# slowleak's pid, once it runs (a child of jmptrace that maps libc), or 0.
sub program_pid {
	my ($parent) = @_;
	for my $pid (map { m{/proc/(\d+)$} ? $1 : () } glob('/proc/[0-9]*')) {
		my $stat = JT::slurp("/proc/$pid/stat") // '';
		return $pid if $stat =~ /^\d+ \(slowleak[^)]*\) \S+ (\d+)/ && $1 == $parent &&
			       defined address_in($pid, 0x30000);
	}
	return 0;
}

my ($off, $orig) = malloc_in_file();
BAIL_OUT("cannot find malloc in $LIBC") unless defined $off;

# The byte at $addr in $pid, or ''.
sub byte_at {
	my ($pid, $addr) = @_;
	my $b = '';
	if (open(my $mem, '<:raw', "/proc/$pid/mem")) {
		sysseek($mem, $addr, 0) && sysread($mem, $b, 1);
		close($mem);
	}
	return $b;
}

# slowleak for 4 s (a malloc every 2 ms in sl_churn, a leak of 1000 bytes every 100 ms),
# traced; 1 s in, malloc's first byte goes back as the kernel would put it. A call in flight
# returns through that breakpoint (call.c), so the byte is written while the program sleeps
# between two calls, in nanosleep (/proc/PID/syscall: 35, or clock_nanosleep's 230).
my $jt = spawn(argv => [$JT, '--json', "$dir/r.json", '-o', "$dir/r.txt", '--', $PROG, 4000], dir => $dir, name => 'jt');
my $pid;
wait_until(sub { $pid = program_pid($jt->{pid}) }, 30);
my $addr = $pid ? address_in($pid, $off) : undef;
my $held = defined $addr && wait_until(sub { byte_at($pid, $addr) eq "\xcc" }, 120);
ok($held, "malloc's entry holds jmptrace's breakpoint");
select(undef, undef, undef, 1.0);
my $wrote = 0;
if ($held && open(my $mem, '+<:raw', "/proc/$pid/mem")) {
	wait_until(sub { (JT::slurp("/proc/$pid/syscall") // '') =~ /^(35|230) / }, 30);
	$wrote = sysseek($mem, $addr, 0) && syswrite($mem, $orig, 1);
	close($mem);
}
ok($wrote, "malloc's first byte written back, as the kernel's unapply_uprobe does");
my $st = reap($jt, 120);
my $r = { exit => defined $st ? $st >> 8 : -1, stdout => JT::slurp($jt->{out}) // '', stderr => JT::slurp($jt->{err}) // '',
	  report => JT::slurp("$dir/r.txt") // '', json => eval { JT::decode_report(JT::slurp("$dir/r.json") // '') } };

my ($leaked) = $r->{stdout} =~ /^leaked (\d+)$/m;
is($r->{exit}, 0, 'the program exits 0') or diag($r->{stderr});
ok($leaked && $leaked >= 30, 'it leaked its blocks (leaked ' . ($leaked // 'none') . ')');
like($r->{stderr}, qr/^jmptrace: malloc in \S*libc\.so\.6: the kernel took its breakpoint back: a kernel uprobe on the same instruction, for another process .*; its calls until [\d,]+ ms may be missing, later ones are counted \(its breakpoint moved past its first instruction\)$/m,
     'stderr: one line says the kernel took the breakpoint, and that it was moved') or diag($r->{stderr});
like($r->{report}, qr/^PARTLY TRACED: malloc \(libc\.so\.6\): the kernel took its breakpoint back: .*; its calls until [\d,]+ ms may be missing, later ones are counted$/m,
     'the text report says malloc is partly traced');
my $s = last_snapshot($r);
my ($u) = grep { $_->{function} eq 'malloc' } @{ $s ? $s->{untraced} : [] };
ok($u && $u->{missed_until_ms} >= 1000, 'JSON: malloc in "untraced", with missed_until_ms after the write');
# The leaks after the move are counted: all but those of a tick or two (one every 100 ms).
my ($leak) = grep { ($_->{frames}[0]{function} // '') eq 'sl_leak' } @{ $s ? $s->{stacks} : [] };
my $blocks = $leak ? $leak->{live_blocks} : 0;
ok($leaked && $blocks >= $leaked - 5 && $blocks <= $leaked, "sl_leak's blocks counted, but a tick's: $blocks of " . ($leaked // 0));
is($leak && $leak->{live_bytes}, 1000 * $blocks, '... of 1000 bytes each');
is($leak && $leak->{alloc_calls}, $blocks, '... one call each');

# Untouched, nothing is said and every leak is counted.
$r = run_jt('slowleak', 'pie', args => [500]);
($leaked) = ($r->{stdout} // '') =~ /^leaked (\d+)$/m;
unlike($r->{stderr} . ($r->{report} // ''), qr/took its breakpoint back|PARTLY TRACED/, 'untouched: nothing said');
$s = last_snapshot($r);
($leak) = grep { ($_->{frames}[0]{function} // '') eq 'sl_leak' } @{ $s ? $s->{stacks} : [] };
is($leak && $leak->{live_blocks}, $leaked, 'untouched: every leaked block counted (' . ($leaked // 'none') . ')');
done_testing();
