#!/usr/bin/perl
# uprobe_clash.t - an allocator function whose entry already holds a kernel uprobe's trap
# byte (bpftrace, perf probe, bcc memleak...). bpftrace probes only PRIVATE copies (a copy
# of libc loaded through LD_LIBRARY_PATH given to the program alone, programs built here),
# so nothing else on the machine is touched. jmptrace must count exactly what it counts
# without the uprobe (its breakpoint moved past the first instruction), or, where that
# cannot be proven, say so: one line and exit 1 before the program runs or at the attach,
# a warning and NOT TRACED in the reports for a library loaded once the program runs.
# Root only; skipped when bpftrace or uprobes are unavailable.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Cwd ();
use File::Copy qw(copy);
use File::Temp qw(tempdir);
use POSIX qw(WIFEXITED WEXITSTATUS);
use Test::More;
use JT;

my $JT = JT::jmptrace();
BAIL_OUT("no executable jmptrace at $JT (make jmptrace, or set JMPTRACE)") unless -x $JT;
plan skip_all => 'needs root: bpftrace attaches kernel uprobes' unless $> == 0;
my ($BPFTRACE) = grep { -x } map { "$_/bpftrace" } split(/:/, $ENV{PATH} // '');
plan skip_all => 'bpftrace is not installed' unless $BPFTRACE;
system('make', '-s', '-C', root() . '/tests/progs') == 0
	or BAIL_OUT('cannot build the test programs (make -C tests/progs)');

my $LIBC = '/lib/x86_64-linux-gnu/libc.so.6';
my $dir = tempdir('jt-uprobe-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $lib = "$dir/libc.so.6";
copy($LIBC, $lib) or BAIL_OUT("copy $LIBC: $!");

# Starts bpftrace on script (its probes plus a BEGIN that says "ready" once every probe is
# attached). Returns its handle, or undef and why it did not get ready.
my $nprobe = 0;
sub probe_start {
	my ($script) = @_;
	my $name = 'bpftrace' . ++$nprobe;
	my $h = spawn(argv => [$BPFTRACE, '-B', 'line', '-e', qq{BEGIN { printf("ready\\n"); } $script}],
		      dir => $dir, name => $name);
	my $ready = wait_until(sub { (JT::slurp($h->{out}) // '') =~ /^ready$/m || !kill(0, $h->{pid}) }, 120);
	return $h if (JT::slurp($h->{out}) // '') =~ /^ready$/m;
	my $why = JT::slurp($h->{err}) // '';
	kill 'INT', $h->{pid};
	reap($h, 10);
	$why =~ s/\s+/ /g;
	return (undef, $why);
}

# Waits until the probes have reported a hit, unless told none can come (each hit prints a
# line: a map printed at exit was lost now and then), stops bpftrace (its uprobes go with
# it) and returns how many hits it printed.
sub probe_stop {
	my ($h, $none) = @_;
	my $hits = sub { scalar(() = (JT::slurp($h->{out}) // '') =~ /^hit$/mg) };
	wait_until($hits, 30) unless $none;
	kill 'INT', $h->{pid};
	reap($h, 30);
	return $hits->();
}

# Uprobes must work here at all, or the whole test is skipped with bpftrace's words.
{
	my ($h, $why) = probe_start("uprobe:$lib:malloc { printf(\"hit\\n\"); }");
	plan skip_all => "bpftrace cannot attach a uprobe: $why" unless $h;
	probe_stop($h, 'none');
}

my @LEAK = (JT::prog_path('leak', 'pie'), 10, 3);
# The private libc for the program alone: env execs it with LD_LIBRARY_PATH set.
sub run_leak { run_jt(undef, undef, path => '/usr/bin/env', args => ["LD_LIBRARY_PATH=$dir", @LEAK], @_) }

# What must not change with a uprobe: every call count and the heap's totals.
sub figures {
	my ($s) = @_;
	my $t = $s->{totals};
	return join(' ', (map { "$_=" . calls_of($s, $_) } @CALL_NAMES),
		    map { "$_=$t->{$_}" } qw(alloc_calls bytes_allocated frees unknown_frees live_bytes live_blocks));
}

my $base = run_leak();
my $bs = last_snapshot($base);
ok($bs && ($base->{exit} // -1) == 3, 'without a uprobe: a report, exit status 3')
	or BAIL_OUT("the run without a uprobe failed: $base->{stderr}");
my $leak_line = site_line('leak/leak_here.c', 'LEAK-SITE');
my $leak_bytes = 0;
$leak_bytes += 1024 + 16 * $_ for 0 .. 9;

# Each: the bpftrace probes, the functions whose breakpoint must move, and whether the
# stacks stay whole (a uretprobe replaces the return address the stack goes on from).
my @variants = (
	{ name => 'uprobe on malloc', probes => "uprobe:$lib:malloc { printf(\"hit\\n\"); }",
	  moved => ['malloc'], stacks => 1 },
	{ name => 'uretprobe on malloc', probes => "uretprobe:$lib:malloc { printf(\"hit\\n\"); }",
	  moved => ['malloc'], stacks => 0 },
	{ name => 'uprobe on free', probes => "uprobe:$lib:free { printf(\"hit\\n\"); }",
	  moved => ['free'], stacks => 1 },
	{ name => 'uprobes on every allocator function of libc',
	  probes => join(' ', map { "uprobe:$lib:$_ { printf(\"hit\\n\"); }" }
			 qw(malloc calloc realloc reallocarray posix_memalign aligned_alloc valloc pvalloc free)),
	  moved => [qw(malloc calloc realloc reallocarray posix_memalign aligned_alloc valloc pvalloc free)],
	  stacks => 1 },
);

for my $v (@variants) {
	subtest $v->{name} => sub {
		my ($h, $why) = probe_start($v->{probes});
		ok($h, 'bpftrace attached its probes') or return diag($why);
		my $r = run_leak(jt_args => ['-v']);
		my $hits = probe_stop($h);
		ok($hits > 0, "the uprobe fired ($hits hits) while jmptrace traced the program");
		is($r->{exit}, 3, 'jmptrace exits with the program\'s status 3');
		is($r->{stdout}, "leak: leaked 10 blocks\n", 'the program printed what it prints');
		for my $fn (@{ $v->{moved} }) {
			like($r->{stderr}, qr/^jmptrace: breakpoint on $fn in \Q$lib\E moved past its first instruction \(/m,
			     "-v: the breakpoint on $fn moved past its first instruction");
		}
		unlike($r->{stderr}, qr/cannot trace/, 'no function left untraced');
		my $s = last_snapshot($r);
		ok($s, 'a JSON report') or return diag($r->{json_error} // '');
		is_deeply($s->{untraced}, [], 'JSON: untraced is empty');
		is(figures($s), figures($bs), 'every call count and total equals the run without a uprobe');
		is(scalar @{ $s->{invalid_frees} }, 0, 'no invalid frees');
		unlike($r->{report} // '', qr/NOT TRACED/, 'the text report has no NOT TRACED line');
		return unless $v->{stacks};
		my @st = stacks_at_site($s, 'leak_here.c', $leak_line);
		is(sum_field('live_blocks', @st), 10, "leak_here.c:$leak_line holds its 10 live blocks");
		is(sum_field('live_bytes', @st), $leak_bytes, "leak_here.c:$leak_line holds $leak_bytes bytes");
	};
}

subtest 'attach and detach with a moved breakpoint: the process runs on unharmed' => sub {
	my ($h, $why) = probe_start("uprobe:$lib:malloc { printf(\"hit\\n\"); }");
	ok($h, 'bpftrace attached its probe') or return diag($why);
	my $p = do {
		local $ENV{LD_LIBRARY_PATH} = $dir;
		spawn(argv => [JT::prog_path('attach', 'pie')], dir => $dir, name => 'attached', stdin_pipe => 1);
	};
	my $ready = wait_until(sub { (JT::slurp($p->{out}) // '') eq "ready\n" }, 30);
	ok($ready, 'the program is ready') or return reap($p, 1);
	my $j = spawn(argv => [$JT, '-v', '-p', $p->{pid}, '--json', "$dir/att.json", '-o', "$dir/att.txt"],
		      dir => $dir, name => 'jt-attach');
	ok(wait_until(sub { attach_done($j) }, 30), 'jmptrace attached');
	kill 'USR1', $j->{pid};
	ok(wait_until(sub { my $x = read_json("$dir/att.json"); $x && @{ $x->{snapshots} // [] } }, 30),
	   'a snapshot while attached');
	kill 'INT', $j->{pid};
	my $js = reap($j, 60);
	ok(defined $js && WIFEXITED($js) && WEXITSTATUS($js) == 0, 'jmptrace detached and exits 0');
	like(JT::slurp($j->{err}) // '', qr/^jmptrace: breakpoint on malloc in \Q$lib\E moved past its first instruction/m,
	     '-v: the breakpoint on malloc moved');
	is(join(' ', traced_threads($p->{pid})), '', 'no thread of the process is traced any more');
	# Its malloc (the moved breakpoint's site too) runs again now, untraced.
	print { $p->{stdin} } "g";
	my $st = reap($p, 60);
	ok(defined $st && WIFEXITED($st) && WEXITSTATUS($st) == 0, 'the process runs on and exits 0');
	ok(probe_stop($h) > 0, 'the uprobe fired');
};

# A function whose first instruction changes its argument: no breakpoint can prove itself
# after it. vprog defines valloc itself, libva.so another valloc for vlib, which needs it.
sub cc {
	my @argv = ('cc', '-O1', '-g', @_);
	my $out = `@argv 2>&1`;
	return $? == 0 ? '' : "@argv: $out";
}
my $VALLOC = <<'EOF';
/* valloc(n) = malloc(n), its first instruction rewriting rdi, the size. */
__asm__(".text\n.globl valloc\n.type valloc,@function\nvalloc:\n\tlea 0(%rdi),%rdi\n"
	"\tjmp malloc@PLT\n.size valloc,.-valloc\n");
EOF
my $MAIN = <<'EOF';
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
void *sink;
int
main(int argc, char **argv)
{
	char c;
	if (argc > 1 && read(0, &c, 1) < 0)	/* "wait": until stdin says go (or ends) */
		return 2;
	sink = valloc(100);
	printf("valloc: %s\n", sink ? "ok" : "NULL");
	return 0;
}
EOF
# vdl dlopens libnew.so, whose operator new (_Znwm) is the same code, once main runs.
my $DLMAIN = <<'EOF';
#include <dlfcn.h>
#include <stdio.h>
void *sink;
int
main(int argc, char **argv)
{
	void *lib = dlopen(argv[1], RTLD_NOW);
	void *(*op_new)(unsigned long) = lib ? (void *(*)(unsigned long))dlsym(lib, "_Znwm") : NULL;
	if (!op_new)
		return 2;
	sink = op_new(100);
	printf("new: %s\n", sink ? "ok" : "NULL");
	return 0;
}
EOF
JT::spew("$dir/valloc.c", $VALLOC);
(my $NEW = $VALLOC) =~ s/valloc/_Znwm/g;
JT::spew("$dir/new.c", $NEW);
JT::spew("$dir/main.c", $MAIN);
JT::spew("$dir/dlmain.c", $DLMAIN);
my $err = cc('-o', "$dir/vprog", "$dir/main.c", "$dir/valloc.c")
	. cc('-shared', '-fPIC', '-o', "$dir/libva.so", "$dir/valloc.c")
	. cc('-o', "$dir/vlib", "$dir/main.c", "-L$dir", '-lva', "-Wl,-rpath,$dir")
	. cc('-shared', '-fPIC', '-o', "$dir/libnew.so", "$dir/new.c")
	. cc('-o', "$dir/vdl", "$dir/dlmain.c", '-ldl');
BAIL_OUT("cannot build the valloc programs: $err") if $err;
my $refusal = qr/its entry already holds a breakpoint \(a kernel uprobe from bpftrace, perf probe or another tracer\?\), and its first instruction changes an argument register/;

# A launch of prog, whose valloc in file (prog itself or a library it needs) holds a uprobe:
# refused before the program runs, in exactly one line.
sub refused_at_launch {
	my ($prog, $file) = @_;
	my ($h, $why) = probe_start("uprobe:$file:valloc { printf(\"hit\\n\"); }");
	ok($h, 'bpftrace attached its probe') or return diag($why);
	my $r = run_jt(undef, undef, path => $prog);
	probe_stop($h, 'none');
	is($r->{exit}, 1, 'jmptrace exits 1');
	is($r->{stdout}, '', 'the program never ran');
	like($r->{stderr}, qr/\Ajmptrace: cannot trace valloc in \Q$file\E: $refusal\n\z/,
	     'exactly one line on stderr names the function, its file and the likely cause')
		or diag($r->{stderr});
}

subtest 'launch: a function that cannot be traced is refused before the program runs' => sub {
	refused_at_launch("$dir/vprog", "$dir/vprog");
};

subtest 'attach: refused, the process left running untouched' => sub {
	my ($h, $why) = probe_start("uprobe:$dir/vprog:valloc { printf(\"hit\\n\"); }");
	ok($h, 'bpftrace attached its probe') or return diag($why);
	my $p = spawn(argv => ["$dir/vprog", 'wait'], dir => $dir, name => 'vprog', stdin_pipe => 1);
	# It waits in read(2) once its stdin is empty; its valloc is not reached yet.
	wait_until(sub { (JT::slurp("/proc/$p->{pid}/wchan") // '') =~ /read|wait|pipe/ }, 30);
	my $r = run_cmd(argv => [$JT, '-p', $p->{pid}]);
	is($r->{exit}, 1, 'jmptrace exits 1');
	like($r->{stderr}, qr/\Ajmptrace: cannot trace valloc in \Q$dir\E\/vprog: $refusal\n\z/,
	     'exactly one line on stderr') or diag($r->{stderr});
	is(join(' ', traced_threads($p->{pid})), '', 'no thread of the process is traced any more');
	print { $p->{stdin} } "g";
	my $st = reap($p, 60);
	my $hits = probe_stop($h);
	ok(defined $st && WIFEXITED($st) && WEXITSTATUS($st) == 0, 'the process goes on and exits 0');
	is(JT::slurp($p->{out}), "valloc: ok\n", 'it printed what it prints');
	is($hits, 1, 'its valloc ran once, through the uprobe');
};

subtest 'launch: a library the program needs, refused before the program runs' => sub {
	refused_at_launch("$dir/vlib", "$dir/libva.so");
};

subtest 'dlopen once the program runs: a warning, NOT TRACED in the reports' => sub {
	my ($h, $why) = probe_start("uprobe:$dir/libnew.so:_Znwm { printf(\"hit\\n\"); }");
	ok($h, 'bpftrace attached its probe') or return diag($why);
	my $r = run_jt(undef, undef, path => "$dir/vdl", args => ["$dir/libnew.so"]);
	my $hits = probe_stop($h);
	is($hits, 1, 'the uprobe fired');
	is($r->{exit}, 0, 'jmptrace exits with the program\'s status 0');
	is($r->{stdout}, "new: ok\n", 'the program printed what it prints');
	like($r->{stderr}, qr/\Ajmptrace: cannot trace operator new in \Q$dir\E\/libnew\.so: $refusal; its calls are not counted \(see NOT TRACED in the report\)\n\z/,
	     'one warning line on stderr') or diag($r->{stderr});
	like($r->{report} // '', qr/^NOT TRACED: operator new \(libnew\.so\): $refusal; its calls are not counted$/m,
	     'the text report says operator new is NOT TRACED');
	my $s = last_snapshot($r);
	ok($s, 'a JSON report') or return diag($r->{json_error} // '');
	is(scalar @{ $s->{untraced} // [] }, 1, 'JSON: one untraced function');
	my $u = $s->{untraced}[0] // {};
	is($u->{function}, 'operator new', 'JSON: untraced function operator new');
	is($u->{module}, "$dir/libnew.so", 'JSON: in libnew.so');
	like($u->{reason} // '', qr/^$refusal\z/, 'JSON: and why');
	is(calls_of($s, 'operator new'), 0, 'no operator new call counted');
};

# The dynamic linker's rendezvous (_dl_debug_state, where jmptrace learns of every library
# loaded) under a uprobe of another tool's, for every process. Our breakpoint cannot go there
# at the launch: the libraries loaded at the start are read at the program's entry instead.
# Before, none was read and the program ran untraced: every count 0, the program's own
# exit status, one cryptic line ("File exists").
my ($LDSO) = grep { -e } map { Cwd::abs_path($_) } '/lib64/ld-linux-x86-64.so.2';
subtest "launch under a uprobe on the dynamic linker's rendezvous: the libraries read at the program's entry" => sub {
	plan skip_all => 'no /lib64/ld-linux-x86-64.so.2' unless $LDSO;
	my $plain = run_jt('leak', 'pie', args => [10, 3]);
	my $ps = last_snapshot($plain);
	ok($ps, 'without the uprobe: a report') or return diag($plain->{stderr});
	my ($h, $why) = probe_start("uprobe:$LDSO:_dl_debug_state { printf(\"hit\\n\"); }");
	ok($h, 'bpftrace attached its probe') or return diag($why);
	my $r = run_jt('leak', 'pie', args => [10, 3]);
	my $hits = probe_stop($h);
	ok($hits > 0, "the uprobe fired ($hits hits)");
	is($r->{exit}, 3, 'jmptrace exits with the program\'s status 3');
	like($r->{stderr}, qr/\Ajmptrace: cannot put a breakpoint on the dynamic linker's rendezvous in \Q$LDSO\E: its entry already holds a breakpoint \(a kernel uprobe from bpftrace, perf probe or another tracer\?\); the libraries it loads at the start are read at the program's entry, one it loads later is not traced\n\z/,
	     'one line on stderr says what is not traced') or diag($r->{stderr});
	my $s = last_snapshot($r);
	ok($s, 'a JSON report') or return diag($r->{json_error} // '');
	is(figures($s), figures($ps), 'every call count and total equals the run without the uprobe');
};

# The same uprobe registered and unregistered while a traced program runs: the kernel takes
# the original instruction back, over our trap byte, in every process that ever had a
# uprobe (this one too: the probe's registration marks it). The next dlopen went unseen, its
# library untraced (a flake of this file's other cases: a jmptrace --source uprobe of an
# earlier test closing its rendezvous probe at that moment). Now the check every 200 ms puts
# it back and reads the link map. dlbusy with one churning thread dlopens libstdc++ once the
# gate exists and calls its operator new 100 times (7 kept).
subtest "a uprobe on the dynamic linker's rendezvous ends while the program runs: the breakpoint put back" => sub {
	plan skip_all => 'no /lib64/ld-linux-x86-64.so.2' unless $LDSO;
	my $gate = "$dir/gate";
	unlink $gate;
	my $j = spawn(argv => [$JT, '--source', 'ptrace', '-v', '--json', "$dir/dl.json", '-o', "$dir/dl.txt", '--',
			       JT::prog_path('dlbusy', 'pie'), 0, 1, $gate], dir => $dir, name => 'jtdl');
	# Its churning thread is there: the program waits for the gate, its libraries read.
	my $prog = sub { (split ' ', JT::slurp("/proc/$j->{pid}/task/$j->{pid}/children") // '')[0] };
	ok(wait_until(sub { my $c = $prog->(); $c && (() = glob("/proc/$c/task/*")) >= 2 }, 60),
	   'the program runs, waiting for the gate') or diag(JT::slurp($j->{err}) // '');
	my ($h, $why) = probe_start("uprobe:$LDSO:_dl_debug_state { printf(\"hit\\n\"); }");
	ok($h, 'bpftrace attached its probe') or return diag($why);
	probe_stop($h, 'none');
	ok(wait_until(sub { (JT::slurp($j->{err}) // '') =~ /took the dynamic linker's breakpoint back .*: put back, and its link map read now$/m }, 30),
	   '-v: the breakpoint taken back is put back') or diag(JT::slurp($j->{err}) // '');
	JT::spew($gate, '');
	my $st = reap($j, 120);
	is($st, 0, 'jmptrace exits with the program\'s status 0');
	unlike(JT::slurp($j->{err}) // '', qr/not counted|not traced/, 'nothing said not counted');
	my $x = JT::read_json("$dir/dl.json");
	my $s = $x && $x->{snapshots}[-1];
	ok($s, 'a JSON report') or return;
	is(calls_of($s, 'operator new'), 100, 'operator new, in the library dlopen\'ed after, 100 calls');
	is(calls_of($s, 'operator delete'), 93, 'operator delete, 93 calls');
};

done_testing();
