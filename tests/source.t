#!/usr/bin/perl
# source.t - --source auto, the default: as root it takes the uprobe source where that runs its
# BPF path, with the same exact figures as ptrace; --pin, --tracer-threads and --no-emulate take
# ptrace, --stack-copy takes uprobe. A plain user (nobody) gets the ptrace source without a word:
# the program's output and exit status, nothing on stderr, and its report written with the
# same figures (a plain user's tracer thread once went SCHED_IDLE for good, and the report
# writer it then started was refused: no report at all).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use File::Copy qw(copy);
use File::Temp qw(tempdir);
use Test::More;
use JT;

my $BIN = JT::jmptrace_bin();
-x $BIN or plan skip_all => "no jmptrace at $BIN";
$> == 0 or plan skip_all => 'needs root: it compares root\'s default source with a plain user\'s';
plan skip_all => 'JT_SOURCE set: this suite is about the default source' if $ENV{JT_SOURCE};

my $MODE = (split /[\s,]+/, $ENV{JT_MODES} // 'pie')[0];

# The figures every source must give the same: totals and non-zero call counts.
sub figures {
	my ($r) = @_;
	my $s = last_snapshot($r) or return 'no snapshot: ' . ($r->{json_error} // '') . ($r->{stderr} // '');
	my $f = JT::source_figures($s);
	return join(' ', (map { "$_=$f->{$_}" } sort grep { $_ ne 'calls' } keys %$f),
		    map { "$_:$f->{calls}{$_}" } sort keys %{ $f->{calls} });
}

sub source_of { my $s = last_snapshot($_[0]); $s ? $s->{totals}{source} // '?' : '?' }

my $native = run_native('leak', $MODE);
my $ptrace = run_jt('leak', $MODE, jt_args => ['--source', 'ptrace']);
is(source_of($ptrace), 'ptrace', '--source ptrace: "source": "ptrace"');

# Root's default: uprobe where its BPF path runs (-v of an explicit uprobe run says the path).
my $probe = run_jt('leak', $MODE, jt_args => ['--source', 'uprobe', '-v']);
my $bpf = ($probe->{stderr} // '') =~ /uprobe source: the BPF path/ ? 1 : 0;
my $want = $bpf ? 'uprobe' : 'ptrace';
diag('no BPF path here: auto takes ptrace') unless $bpf;

subtest "root, no --source: $want" => sub {
	my $r = run_jt('leak', $MODE, auto => 1, jt_args => ['-v']);
	is($r->{exit}, $native->{exit}, "exit status the program's ($native->{exit})");
	is($r->{stdout}, $native->{stdout}, 'stdout the program\'s');
	is(source_of($r), $want, "\"source\": \"$want\"");
	like($r->{report} // '', qr/^pid:      \d+\nsource:   \Q$want\E\n/m, "the text report's header: source:   $want");
	like($r->{stderr} // '', $bpf ? qr/^jmptrace: source: uprobe \(--source auto/m : qr/^jmptrace: source: ptrace/m,
	     '-v says which source and why');
	is(figures($r), figures($ptrace), 'the same figures as --source ptrace');
	my $q = run_jt('leak', $MODE, auto => 1);
	is($q->{stderr}, '', 'without -v, nothing on stderr');
};

subtest 'root: the options of one source take it' => sub {
	for my $opt (['--pin'], ['--tracer-threads', '2'], ['--no-emulate']) {
		my $r = run_jt('leak', $MODE, auto => 1, jt_args => $opt);
		is(source_of($r), 'ptrace', "@$opt: ptrace");
	}
	SKIP: {
		skip 'no BPF path', 1 unless $bpf;
		my $r = run_jt('leak', $MODE, auto => 1, jt_args => ['--stack-copy', '8k']);
		is(source_of($r), 'uprobe', '--stack-copy 8k: uprobe');
	}
};

SKIP: {
	my $nobody = getpwnam('nobody');
	skip 'no user nobody or no setpriv', 1 unless defined $nobody && -x '/usr/bin/setpriv';
	subtest 'a plain user (nobody), no --source: ptrace, its report written' => sub {
		# Copies nobody can run, in a directory nobody owns (the checkout may be private).
		my $dir = tempdir('jt-nobody-XXXXXX', TMPDIR => 1, CLEANUP => 1);
		chmod 0755, $dir;
		copy($BIN, "$dir/jmptrace") && copy(prog_path('leak', $MODE), "$dir/leak") or die "copy: $!\n";
		chmod 0755, "$dir/jmptrace", "$dir/leak";
		chown $nobody, $nobody, $dir;
		my @as = ('/usr/bin/setpriv', "--reuid=$nobody", "--regid=$nobody", '--clear-groups', '--inh-caps=-all');
		my $r = run_cmd(dir => $dir, argv => [@as, "$dir/jmptrace", '--json', "$dir/r.json", '-o', "$dir/r.txt",
						       '--', "$dir/leak"]);
		is($r->{exit}, $native->{exit}, "exit status the program's ($native->{exit})") or diag($r->{stderr});
		is($r->{stdout}, $native->{stdout}, 'stdout the program\'s');
		is($r->{stderr}, '', 'nothing on stderr');
		my $text = JT::slurp("$dir/r.json");
		my $s = $text && eval { JT::decode_report($text)->{snapshots}[-1] };
		ok($s, 'the JSON report written') or return;
		is($s->{totals}{source}, 'ptrace', '"source": "ptrace"');
		like(JT::slurp("$dir/r.txt") // '', qr/^source:   ptrace$/m, 'the text report\'s header: source:   ptrace');
		is(figures({ json => { snapshots => [$s] } }), figures($ptrace), 'the same figures as root\'s --source ptrace');
		like(JT::slurp("$dir/r.txt") // '', qr/^==== jmptrace heap report ====$/m, 'the text report written');
		my $v = run_cmd(dir => $dir, argv => [@as, "$dir/jmptrace", '-v', '-o', "$dir/v.txt", '--', "$dir/leak"]);
		like($v->{stderr} // '', qr/^jmptrace: source: ptrace, the uprobe source cannot be had: it needs root/m,
		     '-v says why not uprobe');
	};
}

done_testing();
