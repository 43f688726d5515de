/* test_wake.c - unit tests of wake.h: a wake noted before the wait, or while the thread stands between its check and the system call, is never lost. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <sys/wait.h>
#include <unistd.h>

#include "procfs.h"
#include "tap.h"
#include "syscallcp.h"
#include "tthread.h"
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
	const uint8_t *fn = (const uint8_t *)(uintptr_t)arch_syscallcp, *sc = NULL;
	uintptr_t first = 0, last = 0, to = 0;
	int moved = 0, gaps = 0, other_to = 0;
	ucontext_t uc;

	for (int i = 0; i + 1 < 64 && !sc; i++)
		if (fn[i] == 0x0f && fn[i + 1] == 0x05)
			sc = fn + i;
	ok(sc != NULL, "arch_syscallcp has a syscall instruction");
	if (!sc)
		return;
	for (const uint8_t *pc = fn; pc < sc + 16; pc++) {
		memset(&uc, 0, sizeof(uc));
		uc.uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)pc;
		arch_syscallcp_cancel(&uc);
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
	arch_syscallcp_cancel(&uc);
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

/*
 * The deadlock of handover.c's seize, made on purpose: a process of two
 * threads, the second traced by us; the main thread execs. The exec kills
 * the second, which stays a zombie until we reap it, and holds the lock
 * that PTRACE_SEIZE takes until then. A seize of the main thread now waits
 * for ever in the kernel (a signal restarts it), unless wake_ptrace's
 * window lets tthread_alarm end it. Then we reap, and the exec finishes.
 */
static void *
exec_second(void *arg)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);

	if (write(*(int *)arg, &tid, sizeof(tid)) != sizeof(tid))
		_exit(126);
	for (;;)
		pause();
	return NULL;
}

/* Line key of /proc/TID/status (procfs.h; a thread's too), or "" when it is gone. */
static const char *
status_of(pid_t tid, const char *key, char buf[64])
{
	if (procfs_status_field(tid, key, buf, 64) < 0)
		buf[0] = '\0';
	return buf;
}

static void *
seizer(void *arg)
{
	struct jt_tthread tt;
	long *res = arg;
	sigset_t set;

	memset(&tt, 0, sizeof(tt));
	sigemptyset(&set);
	sigaddset(&set, WAKE_SIG);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	wake_arm();
	tthread_alarm(&tt, 10);
	res[0] = wake_ptrace(PTRACE_SEIZE, (pid_t)res[2], NULL, NULL);
	res[1] = errno;
	tthread_alarm(&tt, 0);
	if (tt.has_alarm)
		timer_delete(tt.alarm);
	return NULL;
}

static void
test_seize_exec(void)
{
	int up[2], go[2], status = -1, tries = 0;
	long res[3] = { 0, 0, 0 };
	pid_t pid, second = 0, r;
	pthread_t t;
	char st = 0, buf[64];

	if (pipe(up) < 0 || pipe(go) < 0)
		return;
	pid = fork();
	if (pid == 0) {
		pthread_t b;
		char c;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		pthread_create(&b, NULL, exec_second, &up[1]);
		if (read(go[0], &c, 1) == 1)
			execl("/bin/sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	if (read(up[0], &second, sizeof(second)) != sizeof(second) ||
	    ptrace(PTRACE_SEIZE, second, 0L, 0L) < 0) {
		ok(0, "a traced second thread (%s)", strerror(errno));
		kill(pid, SIGKILL);
		return;
	}
	if (write(go[1], "x", 1) != 1)
		return;
	/* The exec killed it: a zombie that waits for us, its tracer. */
	for (int i = 0; i < 5000 && (st = status_of(second, "State", buf)[0]) != 'Z'; i++)
		usleep(1000);
	ok(st == 'Z', "the exec left the traced thread a zombie (state %c)", st ? st : '-');
	res[2] = pid;
	pthread_create(&t, NULL, seizer, res);
	pthread_join(t, NULL);
	ok(res[0] == 0 || res[1] == EINTR,
	   "PTRACE_SEIZE during the exec ends: %s", res[0] == 0 ? "taken (this kernel does not wait)" :
	   res[1] == EINTR ? "EINTR at the alarm" : strerror((int)res[1]));
	r = waitpid(second, &status, __WALL);
	ok(r == second && (WIFSIGNALED(status) || WIFEXITED(status)), "the zombie reaped (%d)", (int)r);
	/* Now the exec goes on, and the seize is taken (the new image sleeps: no zombie to refuse it). */
	while (res[0] != 0 && res[1] == EINTR && tries++ < 500) {
		pthread_create(&t, NULL, seizer, res);
		pthread_join(t, NULL);
	}
	ok(res[0] == 0, "after the reap the seize is taken, %d tries (%s)", tries,
	   res[0] == 0 ? "ok" : strerror((int)res[1]));
	/* At once where the seize waited for the exec's end; a kernel whose seize does not wait: soon. */
	for (int i = 0; i < 5000 && strcmp(status_of(pid, "Name", buf), "sleep") != 0; i++)
		usleep(1000);
	ok(strcmp(status_of(pid, "Name", buf), "sleep") == 0, "the exec finished: the process runs sleep");
	kill(pid, SIGKILL);
	while ((r = waitpid(pid, &status, __WALL)) == pid && WIFSTOPPED(status))
		ptrace(PTRACE_CONT, pid, 0L, 0L);
	close(up[0]), close(up[1]), close(go[0]), close(go[1]);
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
		/* A test ended by SIGALRM must not leave it behind, holding prove's pipe. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	/* A lost wake hangs: end the test with SIGALRM's default action, a failure prove reports. */
	alarm(60);
	test_flag();
	test_window();
	test_race();
	test_seize_exec();
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	return tap_done();
}
