#!/usr/bin/perl
# uprobe_kill.t - SIGKILL of `jmptrace --source uprobe -p PID` (the OOM killer, an admin)
# must leave the program running with its code whole: the kernel removes a uprobe when the
# descriptor that made it closes, for any reason. 10 rounds, each on a fresh program whose
# threads malloc, calloc, realloc, free, new[] and delete[] all the time while main dlopens
# and dlcloses a library every 2 ms (the dynamic linker's _dl_debug_state is hit each time):
# attach, see a snapshot with events in it, SIGKILL jmptrace; then the program's heartbeat
# goes on (allocations and dlopens both), it took no trap or fault, every executable file
# mapping holds the file's bytes (read through /proc/PID/mem) and so do the first 32 bytes
# of malloc, free, calloc, realloc, _dl_debug_state, operator new[]/new/delete[]/delete, and
# told to stop, it exits 0. A trap or fault parks the thread instead of ending the program,
# so that its code can still be read: the same rounds with the ptrace source
# (JT_KILL_SOURCE=ptrace, a harness-only variable, run by hand) fail on the int3s it leaves.
# Root only; skipped without the kernel's uprobe PMU or a jmptrace without --source uprobe.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Basename qw(basename);
use File::Temp qw(tempdir);
use POSIX qw(WIFEXITED WEXITSTATUS);
use Test::More;
use JT;

# The sources are chosen here, so jmptrace itself, not the JT_SOURCE wrapper.
my $JT = JT::jmptrace_bin();
BAIL_OUT("no executable jmptrace at $JT (make jmptrace, or set JMPTRACE)") unless -x $JT;
plan skip_all => 'chooses its sources itself: run in the ptrace pass only' if JT::source() ne 'ptrace';
my $SOURCE = $ENV{JT_KILL_SOURCE} // 'uprobe';
my @SRC = ('--source', $SOURCE);
# JT_KILL_ROUNDS (harness only) shortens a run by hand, where each harmed round waits 60 s.
my $ROUNDS = $ENV{JT_KILL_ROUNDS} // 10;
if ($SOURCE ne 'ptrace') {
	plan skip_all => 'needs root: the uprobe source opens uprobe perf events' unless $> == 0;
	plan skip_all => 'the kernel has no uprobe PMU (/sys/bus/event_source/devices/uprobe)'
		unless -d '/sys/bus/event_source/devices/uprobe';
	my $r = run_cmd(argv => [$JT, @SRC, '-o', '/dev/null', '--', '/bin/true'], timeout => 60);
	plan skip_all => "jmptrace has no --source $SOURCE" if $r->{stderr} =~ /Try '.*--help'/;
}

my $dir = tempdir('jt-ukill-XXXXXX', TMPDIR => 1, CLEANUP => 1);

# The program: built here, in C++ so that libstdc++'s operators are mapped and called.
my $CHURN = <<'EOF';
// churn.cc - allocates in 2 threads while main dlopens a library; usage: churn HEARTBEAT STOP LIB
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile unsigned long work[2];
static volatile int stop;

// A trap or fault says so and parks the thread: the program stays, its code can be read.
static void broken(int sig)
{
	char msg[] = "BROKEN signal 00\n";

	msg[14] = (char)('0' + sig / 10);
	msg[15] = (char)('0' + sig % 10);
	write(1, msg, sizeof(msg) - 1);
	for (;;)
		pause();
}

static void *worker(void *arg)
{
	long id = (long)arg;

	for (unsigned long r = 0; !stop; r++) {
		size_t n = 16 + (r * 7 + (unsigned long)id) % 300;
		char *p = (char *)malloc(n);
		char *q = (char *)calloc(4, n);
		int *o = new int[n];

		memset(p, 1, n);
		p = (char *)realloc(p, 2 * n);
		o[0] = p[0] + q[0];
		delete[] o;
		delete new long(r);
		free(q);
		free(p);
		work[id]++;
		if (r % 100 == 99)
			usleep(1000);
	}
	return NULL;
}

static void beat(const char *path, unsigned long d)
{
	char line[64];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		return;
	snprintf(line, sizeof(line), "%lu %lu\n", d, work[0] + work[1]);
	write(fd, line, strlen(line));
	close(fd);
}

int main(int argc, char **argv)
{
	static const int bad[] = { SIGTRAP, SIGSEGV, SIGBUS, SIGILL, SIGFPE };
	pthread_t t[2];

	if (argc != 4)
		return 2;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		signal(bad[i], broken);
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (unsigned long d = 1; access(argv[2], F_OK) != 0; d++) {
		void *h = dlopen(argv[3], RTLD_NOW);

		if (!h) {
			fprintf(stderr, "%s\n", dlerror());
			return 1;
		}
		dlclose(h);
		beat(argv[1], d);
		usleep(2000);
	}
	stop = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("done\n");
	return 0;
}
EOF

# Builds the program and its library in $dir; returns (program, library).
sub build {
	JT::spew("$dir/churn.cc", $CHURN);
	JT::spew("$dir/lib.c", "int churn_lib_value = 42;\nint churn_lib(void) { return churn_lib_value; }\n");
	my $cxx = $ENV{CXX} // 'g++';
	my $cc = $ENV{CC} // 'cc';
	system("$cc -shared -fPIC -o '$dir/libchurn.so' '$dir/lib.c'") == 0 or BAIL_OUT('cannot build libchurn.so');
	system("$cxx -O1 -pthread -o '$dir/churn' '$dir/churn.cc' -ldl") == 0 or BAIL_OUT("cannot build churn with $cxx");
	return ("$dir/churn", "$dir/libchurn.so");
}

# The heartbeat as (dlopen rounds, allocation rounds), (-1, -1) before the first.
sub beats {
	my $s = JT::slurp($_[0]) // '';
	return $s =~ /^(\d+) (\d+)$/m ? ($1, $2) : (-1, -1);
}

# $len bytes at $off of a file (or of /proc/PID/mem); undef when they cannot be read.
sub read_at {
	my ($path, $off, $len) = @_;
	open(my $fh, '<:raw', $path) or return undef;
	sysseek($fh, $off, 0) or return undef;
	my $buf = '';
	while (length($buf) < $len) {
		my $n = sysread($fh, $buf, $len - length($buf), length($buf));
		return undef unless defined $n;
		last if $n == 0;
	}
	return $buf;
}

# The executable file mappings of $pid: { start, len, off, path }.
sub exec_maps {
	my ($pid) = @_;
	no warnings 'portable';	# hex() of 64-bit addresses, on a 64-bit perl
	my @m;
	for (split /\n/, JT::slurp("/proc/$pid/maps") // '') {
		my ($s, $e, $perm, $off, $path) = /^([0-9a-f]+)-([0-9a-f]+) (\S+) ([0-9a-f]+) \S+ \d+\s+(\/.*)$/ or next;
		next unless $perm =~ /x/ && -f $path;
		push @m, { start => hex($s), len => hex($e) - hex($s), off => hex($off), path => $path };
	}
	return @m;
}

# Where each mapping's bytes differ from its file's: "lib+0xOFF: mem cc, file f3" lines.
sub text_differences {
	my ($pid) = @_;
	my @diff;
	for my $m (exec_maps($pid)) {
		my $file = read_at($m->{path}, $m->{off}, $m->{len});
		my $mem = defined $file ? read_at("/proc/$pid/mem", $m->{start}, length $file) : undef;
		# The library dlopened and dlclosed all the time may be gone since the maps were read.
		next if !defined $mem && !grep { $_->{start} == $m->{start} } exec_maps($pid);
		if (!defined $file || !defined $mem) {
			push @diff, "$m->{path}: cannot read " . (defined $file ? "/proc/$pid/mem" : 'the file');
			next;
		}
		next if $mem eq $file;
		my $shown = 0;
		for my $i (0 .. length($file) - 1) {
			next if substr($mem, $i, 1) eq substr($file, $i, 1);
			push @diff, sprintf('%s+0x%x: mem %02x, file %02x', basename($m->{path}), $m->{off} + $i,
					    ord(substr($mem, $i, 1)), ord(substr($file, $i, 1)));
			last if ++$shown == 5;
		}
	}
	return @diff;
}

# The allocator entries and the modules that define them (by soname: libstdc++.so.6 is a
# link to libstdc++.so.6.0.30).
my %ENTRIES = (
	'libc.so.6' => [qw(malloc free calloc realloc)],
	'ld-linux-x86-64.so.2' => ['_dl_debug_state'],
	'libstdc++.so.6' => [qw(_Znwm _Znam _ZdlPv _ZdaPv _ZdlPvm)],
);

sub soname { (my $b = basename($_[0])) =~ s/(\.so\.\d+)\..*/$1/; $b }

# File offsets of the entries a module defines (its dynamic symbols, through its PT_LOADs).
my %ENTRY_OFF;
sub entry_offsets {
	my ($path) = @_;
	return $ENTRY_OFF{$path} if $ENTRY_OFF{$path};
	my @loads = map { /^\s*LOAD\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+\S+\s+0x([0-9a-f]+)/ ? [hex $1, hex $2, hex $3] : () }
		split /\n/, `readelf -lW '$path'`;
	my %off;
	for (split /\n/, `nm -D --defined-only '$path'`) {
		my ($v, $name) = /^([0-9a-f]+) [TtWi] ([^@\s]+)/ or next;
		next unless grep { $_ eq $name } @{ $ENTRIES{ soname($path) } };
		my ($l) = grep { hex($v) >= $_->[1] && hex($v) < $_->[1] + $_->[2] } @loads or next;
		$off{$name} = hex($v) - $l->[1] + $l->[0];
	}
	return $ENTRY_OFF{$path} = \%off;
}

# The allocator entries whose first 32 bytes differ from the file's, and those not found.
sub entry_differences {
	my ($pid) = @_;
	my (@diff, %seen);
	for my $m (exec_maps($pid)) {
		my $mod = soname($m->{path});
		next unless $ENTRIES{$mod};
		my $offs = entry_offsets($m->{path});
		for my $name (sort keys %$offs) {
			my $o = $offs->{$name};
			next unless $o >= $m->{off} && $o + 32 <= $m->{off} + $m->{len};
			$seen{$name} = 1;
			my $file = read_at($m->{path}, $o, 32) // '';
			my $mem = read_at("/proc/$pid/mem", $m->{start} + $o - $m->{off}, 32) // '';
			push @diff, "$name: mem " . unpack('H*', $mem) . ", file " . unpack('H*', $file) if $mem ne $file;
		}
	}
	push @diff, map { "$_: not found in the mappings" } grep { !$seen{$_} } map { @$_ } values %ENTRIES;
	return @diff;
}

my ($PROG, $LIB) = build();

# One round; returns the list of what went wrong (empty when the program was unharmed).
sub round {
	my ($i) = @_;
	my $rd = tempdir('round-XXXXXX', DIR => $dir, CLEANUP => 1);
	my ($hb, $stopf, $json) = ("$rd/heartbeat", "$rd/stop", "$rd/r.json");
	my $p = spawn(argv => [$PROG, $hb, $stopf, $LIB], dir => $rd, name => 'churn');
	my @bad;
	if (!wait_until(sub { (beats($hb))[0] > 10 }, 60)) {
		reap($p, 1);
		return ('the program did not start: ' . (JT::slurp($p->{err}) // ''));
	}
	my $j = spawn(argv => [$JT, @SRC, '-p', $p->{pid}, '--json', $json, '-o', "$rd/report.txt"], dir => $rd, name => 'jt');
	# A snapshot with allocations in it: jmptrace has attached and its probes fire. The
	# first SIGUSR1 may come before the first event (an empty snapshot is right then): one
	# more every second until one has them.
	my $asked = 0;
	my $seen = wait_until(sub { attach_done($j) }, 60) && wait_until(sub {
		my $x = read_json($json);
		my @s = $x ? @{ $x->{snapshots} // [] } : ();
		return 1 if @s && ($s[-1]{totals}{alloc_calls} // 0) > 0;
		kill('USR1', $j->{pid}) if time() - $asked >= 1 && ($asked = time());
		return 0 }, 60);
	push @bad, 'no snapshot with allocations from jmptrace: ' . (JT::slurp($j->{err}) // '') unless $seen;
	select(undef, undef, undef, 0.01 * $i);	# a different moment of the tracing in each round
	kill 'KILL', $j->{pid};
	reap($j, 60);
	my ($d0, $w0) = beats($hb);
	my $on = wait_until(sub { my ($d, $w) = beats($hb); $d > $d0 + 50 && $w > $w0 + 1000 }, 30);
	my $out = JT::slurp($p->{out}) // '';
	push @bad, "it stopped beating (dlopen rounds, allocation rounds: $d0 $w0, then " . join(' ', beats($hb)) . ')'
		unless $on;
	push @bad, "it took a signal: $out" if $out =~ /BROKEN/;
	push @bad, map { "code: $_" } text_differences($p->{pid}), entry_differences($p->{pid});
	my @traced = traced_threads($p->{pid});
	push @bad, "still traced: @traced" if @traced;
	JT::spew($stopf, '');
	my $st = reap($p, 30);
	$out = JT::slurp($p->{out}) // '';
	push @bad, 'it did not exit 0 with "done" when told: ' .
		(defined $st ? "status $st" : 'killed after 30 s') . ", stdout '$out'"
		unless defined $st && WIFEXITED($st) && WEXITSTATUS($st) == 0 && $out eq "done\n";
	return map { "round $i: $_" } @bad;
}

my @harmed;
my $unharmed = 0;
for my $i (1 .. $ROUNDS) {
	my @bad = round($i);
	$unharmed++ unless @bad;
	push @harmed, @bad;
}
is($unharmed, $ROUNDS, "SIGKILL of jmptrace $SOURCE source: the program runs on, code whole, in $ROUNDS of $ROUNDS rounds")
	or diag(join("\n", @harmed));
done_testing();
