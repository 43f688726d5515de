/* selfsig.c - the signals jmptrace itself receives: which ask for a snapshot, which detach, which end it, which it refuses. */
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "emerg.h"
#include "selfsig.h"
#include "util.h"
#include "wake.h"

/* Set by the handler; signals are process-wide, so these are globals. */
static volatile sig_atomic_t got_snapshot, got_stop, got_fatal, got_tstp;
static volatile uint64_t tstp_ms;
/* The dispositions jmptrace started with were looked at (the first selfsig_catch). */
static int selfsig_seen;
/* Signals the parent left ignored: they stay so (a bit per signal number). */
static uint64_t selfsig_ignored;

/* The faults the CPU raises in the thread that ran the instruction. */
static int
selfsig_is_fault(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL;
}

const char *
selfsig_name(int sig)
{
	static const struct { int sig; const char *name; } names[] = {
		{ SIGHUP, "SIGHUP" }, { SIGINT, "SIGINT" }, { SIGQUIT, "SIGQUIT" }, { SIGILL, "SIGILL" },
		{ SIGTRAP, "SIGTRAP" }, { SIGABRT, "SIGABRT" }, { SIGBUS, "SIGBUS" }, { SIGFPE, "SIGFPE" },
		{ SIGUSR1, "SIGUSR1" }, { SIGSEGV, "SIGSEGV" }, { SIGUSR2, "SIGUSR2" }, { SIGPIPE, "SIGPIPE" },
		{ SIGALRM, "SIGALRM" }, { SIGTERM, "SIGTERM" }, { SIGSTKFLT, "SIGSTKFLT" }, { SIGTSTP, "SIGTSTP" },
		{ SIGTTIN, "SIGTTIN" }, { SIGTTOU, "SIGTTOU" }, { SIGXCPU, "SIGXCPU" }, { SIGXFSZ, "SIGXFSZ" },
		{ SIGVTALRM, "SIGVTALRM" }, { SIGPROF, "SIGPROF" }, { SIGIO, "SIGIO" }, { SIGPWR, "SIGPWR" },
		{ SIGSYS, "SIGSYS" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (names[i].sig == sig)
			return names[i].name;
	return sig >= SIGRTMIN && sig <= SIGRTMAX ? "a real-time signal" : "a signal";
}

/*
 * Sent by another process (kill, sigqueue, tgkill), not by the kernel for
 * something jmptrace did (a write to a closed pipe or past the file size
 * limit: SI_USER from our own pid).
 */
static int
selfsig_from_outside(const siginfo_t *si)
{
	return si->si_code <= 0 && si->si_pid != getpid();
}

/* A fault or an abort in jmptrace itself: the last way out, at once (strcat is async-signal-safe, snprintf need not be). */
static void
selfsig_fault(int sig)
{
	static char why[160];

	strcpy(why, selfsig_name(sig));
	strcat(why, " in jmptrace itself, a bug in jmptrace");
	emerg_exit(sig, why);
}

static void
selfsig_on_signal(int sig, siginfo_t *si, void *uc)
{
	/* Each of them is for the loop to look at: its wait must not start, or must end. */
	wake_note(uc);
	if (sig == SELFSIG_TICK)
		return;	/* only to interrupt wait4 */
	switch (sig) {
	case SIGUSR1:
		got_snapshot = 1;
		return;
	case SIGINT:
		got_snapshot = 1;
		got_stop = sig;
		return;
	case SIGTERM:
	case SIGHUP:
		got_stop = sig;
		return;
	case SIGTSTP:
		if (!got_tstp)
			tstp_ms = util_now_ms();
		got_tstp = 1;
		return;
	case SIGPIPE:
	case SIGXFSZ:
		/* A write to a reader that is gone, a write past the size limit: that write's error, not an end. */
		if (!selfsig_from_outside(si))
			return;
		break;
	case SIGABRT:
	case SIGTRAP:
		/* abort() or a trap in jmptrace's own code. */
		if (!selfsig_from_outside(si))
			selfsig_fault(sig);
		break;
	default:
		if (selfsig_is_fault(sig) && !selfsig_from_outside(si))
			selfsig_fault(sig);
		break;
	}
	/* One that ends jmptrace: the loop lets every process go first. */
	if (!got_fatal)
		got_fatal = sig;
	got_stop = sig;
}

/* Non-zero for a signal jmptrace leaves alone: its default action neither ends nor stops it, or it cannot be caught. */
static int
selfsig_left_alone(int sig)
{
	return sig == SIGKILL || sig == SIGSTOP || sig == SIGCHLD || sig == SIGCONT || sig == SIGURG ||
	       sig == SIGWINCH || sig == SIGTTIN || sig == SIGTTOU ||
	       /* tthread.c's wake and emerg.c's own, and glibc's (below SIGRTMIN) */
	       sig == SIGRTMIN + 1 || sig == SIGRTMIN + 2 || (sig > SIGSYS && sig < SIGRTMIN);
}

void
selfsig_catch(void)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = selfsig_on_signal;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;	/* no SA_RESTART: wait4 must return EINTR so the loop sees the flags */
	sigemptyset(&sa.sa_mask);
	for (int sig = 1; sig <= SIGRTMAX && sig < 64; sig++) {
		int always = sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGUSR1 || sig == SELFSIG_TICK ||
			     selfsig_is_fault(sig) || sig == SIGABRT || sig == SIGTRAP;

		if (selfsig_left_alone(sig))
			continue;
		if (!selfsig_seen && !always && sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			selfsig_ignored |= 1ull << sig;
		if (selfsig_ignored & (1ull << sig))
			continue;
		sigaction(sig, &sa, NULL);
	}
	selfsig_seen = 1;
	/* Never read the terminal; a background jmptrace's report still reaches it. */
	signal(SIGTTIN, SIG_IGN);
	signal(SIGTTOU, SIG_IGN);
}

int
selfsig_take_snapshot(void)
{
	int r = got_snapshot;

	got_snapshot = 0;
	return r;
}

int
selfsig_take_stop(void)
{
	int r = got_stop;

	got_stop = 0;
	return r;
}

int
selfsig_fatal(void)
{
	return got_fatal;
}

int
selfsig_tstp_pending(uint64_t *since_ms)
{
	if (!got_tstp)
		return 0;
	*since_ms = tstp_ms;
	return 1;
}

void
selfsig_tstp_done(void)
{
	got_tstp = 0;
}
