/*
 * main.c - sigs: usage `sigs [N]` (default 100).
 * The program's own signals must reach it while it is traced: N times it mallocs in
 * sig_churn(), raises SIGUSR1 and frees; it raises SIGTRAP 3 times and executes 2 int3
 * instructions of its own (traps that are not jmptrace's breakpoints), and recovers from 2
 * real SIGSEGVs with siglongjmp. Each signal has a counting handler. Then sig_leak() leaks
 * one block, and the counts are written to stdout; exits 0.
 */
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include "../common/sink.h"

void sig_churn(unsigned long i);
void sig_leak(void);

static volatile sig_atomic_t n_usr1, n_trap, n_segv;
static sigjmp_buf segv_env;

static void
on_usr1(int sig)
{
	(void)sig;
	n_usr1++;
}

static void
on_trap(int sig)
{
	(void)sig;
	n_trap++;
}

static void
on_segv(int sig)
{
	(void)sig;
	n_segv++;
	siglongjmp(segv_env, 1);
}

static void
handle(int sig, void (*fn)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

int
main(int argc, char **argv)
{
	unsigned long n = arg_num(argc > 1 ? argv[1] : NULL, 100);

	handle(SIGUSR1, on_usr1);
	handle(SIGTRAP, on_trap);
	handle(SIGSEGV, on_segv);
	for (unsigned long i = 0; i < n; i++)
		sig_churn(i);
	for (int i = 0; i < 3; i++)
		raise(SIGTRAP);
	for (int i = 0; i < 2; i++)
		__asm__ volatile("int3");
	for (int i = 0; i < 2; i++)
		if (sigsetjmp(segv_env, 1) == 0)
			*(volatile int *)opaque_ptr(NULL) = i;
	sig_leak();
	say(1, "sigs: usr1 ");
	say_num(1, (unsigned long)n_usr1);
	say(1, " trap ");
	say_num(1, (unsigned long)n_trap);
	say(1, " segv ");
	say_num(1, (unsigned long)n_segv);
	say(1, "\n");
	return 0;
}
