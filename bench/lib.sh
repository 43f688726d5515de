# lib.sh - what bench/run.sh, programs.sh and soak.sh share: installing packages, the uprobe source's availability and its lost events, a redis-server's port.
# Sourced, not run. The caller defines die() and sets JT (the jmptrace) and TMP (a scratch directory).

# Installs the Debian packages named, as root or with sudo; apt-get update only runs when
# something is missing (it is slow and needs the network).
apt_install() {
	local sudo=""
	[ $# -eq 0 ] && return 0
	[ "$(id -u)" = 0 ] || sudo=sudo
	echo "installing: $*"
	$sudo apt-get update -qq </dev/null || die "apt-get update failed"
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" </dev/null ||
		die "apt-get install $* failed"
}

# Sets UPROBE=1 when this jmptrace has `--source uprobe` and it runs here, else UPROBE=0 and
# UPROBE_WHY (a jmptrace without the option says "Try 'jmptrace --help'" after its usage error);
# UPROBE_PATH says which of its event paths it takes here (BPF or perf, as -v says).
probe_uprobe() {
	UPROBE=0
	UPROBE_PATH=perf
	if "$JT" --source uprobe -v -o /dev/null -- /bin/true >/dev/null 2>"$TMP/err"; then
		UPROBE=1
		! grep -q "uprobe source: the BPF path" "$TMP/err" || UPROBE_PATH=BPF
	elif grep -q "Try '.*--help'" "$TMP/err"; then
		UPROBE_WHY="skipped: jmptrace has no --source uprobe"
	else
		UPROBE_WHY="skipped: jmptrace --source uprobe cannot run here: $(head -1 "$TMP/err")"
	fi
}

# Events the uprobe source lost according to a text report's totals ("lost events N"); prints
# nothing when the report has no such line.
lost_in() {
	[ -s "$1" ] || return 0
	awk '/lost events/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9][0-9,]*$/) {
		gsub(",", "", $i); print $i; exit } }' "$1"
}

# A TCP port on 127.0.0.1 that nothing listens on now.
free_port() {
	perl -MIO::Socket::INET -e 'my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1",
		LocalPort => 0, Listen => 1, ReuseAddr => 1) or die "$!\n"; print $s->sockport, "\n"'
}

# Polls a shell condition every 50 ms for at most S seconds.
wait_for() {
	local s=$1 i
	shift
	for ((i = 0; i < s * 20; i++)); do
		"$@" && return 0
		sleep 0.05
	done
	return 1
}

redis_up() { [ "$(redis-cli -p "$PORT" ping 2>/dev/null)" = PONG ]; }

# Starts redis-server on a free loopback port, its files in TMP/redis, no persistence: sets
# PORT and RPID, and returns once it answers (dies after 30 s).
redis_start() {
	PORT=$(free_port) || die "no free port"
	mkdir -p "$TMP/redis"
	redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$TMP/redis" \
		--daemonize no >"$TMP/redis/log" 2>&1 &
	RPID=$!
	wait_for 30 redis_up || die "redis-server did not answer on port $PORT: $(tail -3 "$TMP/redis/log")"
}
