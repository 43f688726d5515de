/* test_wake.c - unit tests of wake.h: a wake noted before the wait, or while the thread stands between its check and the system call, is never lost. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "waitcp.h"
#include "wake.h"

#define WAKE_SIG (SIGRTMIN + 1)
#define ROUNDS 3000

/* A child that never changes state: a wait for it ends only by a wake. */
static pid_t child;

static void
on_wake(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	wake_note(uc);
}

static void
test_flag(void)
{
	int status;
	pid_t r;

	wake_arm();
	r = wake_wait(child, &status, WNOHANG);
	ok(r == 0, "armed, nothing noted: wait4 runs (WNOHANG, a running child: 0, got %d)", (int)r);
	wake_note(NULL);
	errno = 0;
	r = wake_wait(child, &status, 0);
	ok(r == -1 && errno == EINTR, "noted since the arm: no wait, -1 EINTR at once (got %d, errno %d)", (int)r,
	   errno);
	wake_arm();
	r = wake_wait(child, &status, WNOHANG);
	ok(r == 0, "armed again: the note is gone (got %d)", (int)r);
}

/*
 * A handler that runs with the thread anywhere in the window (from the flag's
 * check to the system call instruction) moves it to the way out; before the
 * window the check sees the flag, after it the kernel ended the wait.
 */
static void
test_window(void)
{
#if defined(__x86_64__)
	const uint8_t *fn = (const uint8_t *)(uintptr_t)arch_waitcp, *sc = NULL;
	uintptr_t first = 0, last = 0, to = 0;
	int moved = 0, gaps = 0, other_to = 0;
	ucontext_t uc;

	for (int i = 0; i + 1 < 64 && !sc; i++)
		if (fn[i] == 0x0f && fn[i + 1] == 0x05)
			sc = fn + i;
	ok(sc != NULL, "arch_waitcp has a syscall instruction");
	if (!sc)
		return;
	for (const uint8_t *pc = fn; pc < sc + 16; pc++) {
		memset(&uc, 0, sizeof(uc));
		uc.uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)pc;
		arch_waitcp_cancel(&uc);
		if ((uintptr_t)uc.uc_mcontext.gregs[REG_RIP] == (uintptr_t)pc)
			continue;
		if (moved && (uintptr_t)pc != last + 1)
			gaps++;
		if (!moved)
			first = (uintptr_t)pc, to = (uintptr_t)uc.uc_mcontext.gregs[REG_RIP];
		else if ((uintptr_t)uc.uc_mcontext.gregs[REG_RIP] != to)
			other_to++;
		last = (uintptr_t)pc;
		moved++;
	}
	ok(moved > 0 && gaps == 0 && other_to == 0, "one window, one way out (%d addresses moved)", moved);
	ok(first < (uintptr_t)sc && last >= (uintptr_t)sc && last < (uintptr_t)sc + 2,
	   "it ends with the syscall instruction (window %#lx..%#lx, syscall at %#lx)", (unsigned long)(first - (uintptr_t)fn),
	   (unsigned long)(last - (uintptr_t)fn), (unsigned long)(sc - fn));
	ok(to > (uintptr_t)sc + 1, "the way out is past the system call (at +%#lx)", (unsigned long)(to - (uintptr_t)fn));
	memset(&uc, 0, sizeof(uc));
	uc.uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)(sc + 2);
	arch_waitcp_cancel(&uc);
	ok((uintptr_t)uc.uc_mcontext.gregs[REG_RIP] == (uintptr_t)(sc + 2),
	   "a pc after the system call stays: the wait's own result stands");
#else
	ok(1, "# SKIP the window's addresses are checked on x86-64 only");
#endif
}

/* The waiter's side of test_race: ROUNDS waits, each ended by one signal sent at a random moment. */
static volatile int armed_round, woken_round;
static volatile pid_t waiter_tid;
static int race_eintr, race_other;

static void *
waiter(void *arg)
{
	sigset_t set;
	unsigned seed = 54321;
	int status;

	(void)arg;
	sigemptyset(&set);
	sigaddset(&set, WAKE_SIG);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	waiter_tid = (pid_t)syscall(SYS_gettid);
	for (int i = 1; i <= ROUNDS; i++) {
		pid_t r;

		wake_arm();
		__atomic_store_n(&armed_round, i, __ATOMIC_SEQ_CST);
		/* The loop's look at its work, of random length: the signal lands before, in or after it. */
		seed = seed * 1103515245u + 12345u;
		for (volatile unsigned k = 0, spin = (seed >> 16) % 4000; k < spin; k++)
			;
		r = wake_wait(child, &status, 0);
		if (r == -1 && errno == EINTR)
			race_eintr++;
		else
			race_other++;
		/* The next round only once this one's signal was sent: one signal a round. */
		while (__atomic_load_n(&woken_round, __ATOMIC_SEQ_CST) < i)
			;
	}
	return NULL;
}

/*
 * One signal per round, sent 0 to a few microseconds after the waiter armed,
 * which looks at its work for 0 to a few microseconds before it waits: the
 * signals land before the wait, in the window, or in the system call.
 * A wake lost anywhere leaves the waiter in wait4 for ever (alarm ends the test).
 */
static void
test_race(void)
{
	unsigned seed = 12345;
	pthread_t t;

	pthread_create(&t, NULL, waiter, NULL);
	for (int i = 1; i <= ROUNDS; i++) {
		unsigned spin;

		while (__atomic_load_n(&armed_round, __ATOMIC_SEQ_CST) < i)
			;
		seed = seed * 1103515245u + 12345u;
		spin = (seed >> 16) % 4000;
		for (volatile unsigned k = 0; k < spin; k++)
			;
		syscall(SYS_tgkill, getpid(), waiter_tid, WAKE_SIG);
		__atomic_store_n(&woken_round, i, __ATOMIC_SEQ_CST);
	}
	pthread_join(t, NULL);
	ok(race_eintr == ROUNDS && race_other == 0, "%d waits, each woken by its one signal (EINTR %d, other %d)",
	   ROUNDS, race_eintr, race_other);
}

int
main(void)
{
	struct sigaction sa;
	sigset_t set;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_wake;
	sa.sa_flags = SA_SIGINFO;	/* no SA_RESTART, as tthread.c */
	sigemptyset(&sa.sa_mask);
	sigaction(WAKE_SIG, &sa, NULL);
	/* Only the waiter takes it. */
	sigemptyset(&set);
	sigaddset(&set, WAKE_SIG);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	child = fork();
	if (child == 0) {
		for (;;)
			pause();
	}
	/* A lost wake hangs: end the test with SIGALRM's default action, a failure prove reports. */
	alarm(60);
	test_flag();
	test_window();
	test_race();
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	return tap_done();
}
