# JTLeak.pm - helpers of leakcheck.t: run valgrind's memcheck and parse the loss records of
# its XML, read jmptrace's JSON loss records, and sum both per allocation site and kind.
package JTLeak;

use strict;
use warnings;
use Exporter 'import';
use File::Basename qw(basename);
use File::Temp qw(tempdir);
use JT;

our @EXPORT = qw(
	have_valgrind valgrind_run parse_valgrind_xml jt_records site_tally tally_line
	site_function prog_files vg_pool_records
);

# memcheck's XML kinds and jmptrace's JSON names for them.
my %VG_KIND = (
	Leak_DefinitelyLost => 'definitely_lost',
	Leak_IndirectlyLost => 'indirectly_lost',
	Leak_PossiblyLost   => 'possibly_lost',
	Leak_StillReachable => 'still_reachable',
);

# The order tally_line lists kinds in (memcheck's LEAK SUMMARY order).
my @KIND_ORDER = qw(definitely_lost indirectly_lost possibly_lost still_reachable);

sub have_valgrind { system('valgrind --version >/dev/null 2>&1') == 0 }

sub unxml {
	my ($s) = @_;
	return undef unless defined $s;
	$s =~ s/&lt;/</g;
	$s =~ s/&gt;/>/g;
	$s =~ s/&quot;/"/g;
	$s =~ s/&apos;/'/g;
	$s =~ s/&amp;/&/g;
	return $s;
}

sub num { my ($s) = @_; $s =~ s/,//g; return $s + 0 }

# The loss records of a memcheck XML file's text: a list of { kind (jmptrace's name), bytes,
# blocks, ind_bytes, frames => [{ fn, file, line, obj }] }. "bytes" are the blocks' own bytes:
# memcheck's leakedbytes of a definitely or possibly lost record also counts what it loses
# indirectly, "N (D direct, I indirect) bytes" in its text. Dies on a record it cannot read,
# so that a change of format fails the test instead of passing it empty.
sub parse_valgrind_xml {
	my ($xml) = @_;
	my @recs;
	while ($xml =~ m{<error>(.*?)</error>}gs) {
		my $e = $1;
		my ($kind) = $e =~ m{<kind>(\w+)</kind>} or die "valgrind XML: an error without a kind\n";
		next unless $VG_KIND{$kind};
		my ($text) = $e =~ m{<xwhat>\s*<text>(.*?)</text>}s or die "valgrind XML: $kind without text\n";
		my ($lbytes) = $e =~ m{<leakedbytes>(\d+)</leakedbytes>} or die "valgrind XML: no leakedbytes\n";
		my ($lblocks) = $e =~ m{<leakedblocks>(\d+)</leakedblocks>} or die "valgrind XML: no leakedblocks\n";
		my %r = (kind => $VG_KIND{$kind}, blocks => $lblocks + 0, bytes => $lbytes + 0, ind_bytes => 0,
			 text => unxml($text));
		if ($text =~ /^([\d,]+) \(([\d,]+) direct, ([\d,]+) indirect\) bytes in ([\d,]+) blocks/) {
			@r{qw(bytes ind_bytes)} = (num($2), num($3));
			die "valgrind XML: '$text' does not add up to leakedbytes $lbytes\n"
				unless num($1) == $lbytes && $r{bytes} + $r{ind_bytes} == $lbytes && num($4) == $lblocks;
		} elsif ($text !~ /^([\d,]+) bytes in ([\d,]+) blocks/ || num($1) != $lbytes || num($2) != $lblocks) {
			die "valgrind XML: cannot read '$text'\n";
		}
		my ($stack) = $e =~ m{<stack>(.*?)</stack>}s or die "valgrind XML: '$text' without a stack\n";
		while ($stack =~ m{<frame>(.*?)</frame>}gs) {
			my $f = $1;
			my %fr;
			for my $k (qw(fn file line obj)) {
				$fr{$k} = unxml($1) if $f =~ m{<$k>(.*?)</$k>}s;
			}
			push @{ $r{frames} }, \%fr;
		}
		push @recs, \%r;
	}
	return @recs;
}

# Runs test program NAME-MODE under memcheck (--leak-check=full --show-leak-kinds=all, XML to
# a file, opts{vg_args} added). Without the libc and libstdc++ freeres that valgrind runs at
# exit by default: they free glibc's stack cache, the dead threads' TLS and libstdc++'s
# emergency pool before the leak check, while jmptrace checks the process as it is at _exit.
# Returns the run_cmd result with records (parse_valgrind_xml) or error set.
sub valgrind_run {
	my ($name, $mode, %o) = @_;
	my $dir = tempdir('jt-vg-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my @vg = ('valgrind', '--leak-check=full', '--show-leak-kinds=all', '--run-libc-freeres=no',
		  '--run-cxx-freeres=no', '--xml=yes', "--xml-file=$dir/vg.xml", @{ $o{vg_args} // [] });
	my $r = run_cmd(dir => $dir, argv => [@vg, prog_path($name, $mode), @{ $o{args} // [] }]);
	my $xml = JT::slurp("$dir/vg.xml");
	if (!defined $xml || $xml !~ m{</valgrindoutput>}) {
		$r->{error} = 'no complete XML file';
		return $r;
	}
	$r->{records} = [ eval { parse_valgrind_xml($xml) } ];
	$r->{error} = $@ if $@;
	return $r;
}

# jmptrace's loss records of a snapshot, in parse_valgrind_xml's shape (plus ind_blocks,
# suppressed and stack, the index of the record's entry in "stacks"), or undef when the
# snapshot has no leak_check.
sub jt_records {
	my ($snap) = @_;
	my $lc = $snap && $snap->{leak_check};
	return undef unless ref $lc eq 'HASH' && ref $lc->{records} eq 'ARRAY';
	return [ map {
		{ kind => $_->{leak_kind}, bytes => $_->{bytes}, blocks => $_->{blocks},
		  ind_bytes => $_->{indirect_bytes}, ind_blocks => $_->{indirect_blocks},
		  suppressed => $_->{suppressed}, stack => $_->{stack},
		  frames => [ map { { fn => $_->{function}, file => $_->{file}, line => $_->{line},
				      obj => $_->{module} } } @{ $_->{frames} // [] } ] }
	} @{ $lc->{records} } ];
}

# valgrind's records of libstdc++'s emergency pool: made by an initializer of libstdc++.so
# (no symbol: "???") that ld.so's call_init runs.
sub vg_pool_records {
	my ($recs) = @_;
	return grep {
		my @f = @{ $_->{frames} // [] };
		@f >= 3 && ($f[1]{obj} // '') =~ /libstdc\+\+/ && ($f[2]{fn} // '') eq 'call_init'
	} @$recs;
}

# The source files (basenames) of test program NAME.
sub prog_files {
	my ($name) = @_;
	my $d = JT::src_path($name);
	opendir(my $dh, $d) or die "$d: $!\n";
	my %f = map { $_ => 1 } grep { /\.(?:c|cpp|h)$/ } readdir $dh;
	return \%f;
}

# The site of a record: the first frame in one of the program's own files, as "file:line"
# (basename), and that frame's function without its C++ parameter list; () when none is.
sub site_of {
	my ($frames, $files) = @_;
	for my $f (@$frames) {
		next unless defined $f->{file} && $files->{ basename($f->{file}) };
		(my $fn = $f->{fn} // '??') =~ s/\(.*\)$//;
		return (basename($f->{file}) . ':' . ($f->{line} // 0), $fn);
	}
	return ();
}

# Sums records per site and kind: { "file:line" => { kind => { bytes, blocks, ind_bytes,
# ind_blocks (undef for valgrind's), records, suppressed (how many), fn } } }. Records with no frame in the
# program's files are left out.
sub site_tally {
	my ($recs, $files) = @_;
	my %t;
	for my $r (@$recs) {
		my ($site, $fn) = site_of($r->{frames}, $files) or next;
		my $e = $t{$site}{ $r->{kind} } //= { bytes => 0, blocks => 0, ind_bytes => 0, records => 0, fn => $fn };
		$e->{$_} += $r->{$_} // 0 for qw(bytes blocks ind_bytes);
		$e->{ind_blocks} += $r->{ind_blocks} if defined $r->{ind_blocks};
		$e->{records}++;
		$e->{suppressed}++ if $r->{suppressed};
		$e->{fn} = $fn;
	}
	return \%t;
}

# One site's verdicts as one line, "kind BYTES/BLOCKS" (with "+IND_BYTES" when it loses
# blocks indirectly), kinds in the LEAK SUMMARY order; "none" for a site with no record.
sub tally_line {
	my ($site) = @_;
	return 'none' unless $site && %$site;
	return join(', ', map {
		my $e = $site->{$_};
		"$_ $e->{bytes}/$e->{blocks}" . ($e->{ind_bytes} ? "+$e->{ind_bytes}" : '')
	} grep { $site->{$_} } @KIND_ORDER);
}

# The function of a site's records (the same for every kind: one frame).
sub site_function {
	my ($site) = @_;
	my ($k) = grep { $site->{$_} } @KIND_ORDER;
	return defined $k ? $site->{$k}{fn} : undef;
}

1;
