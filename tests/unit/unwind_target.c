/* unwind_target.c - a known call chain main -> f1 -> ... -> f8 that traps (int3) in f8, for test_unwind. */
#include <pthread.h>
#include <signal.h>
#include <string.h>

/*
 * noipa keeps each function whole and named as written: no inlining, no
 * cloning into f3.constprop.0, no tail call that would drop a frame. Each
 * frame keeps a different amount of stack and uses its callee's result,
 * so the unwinder must apply every function's own CFA rule.
 */
#define STEP __attribute__((noinline, noipa))

int STEP
f8(int x)
{
	volatile char pad[88];

	pad[0] = (char) x;
	/* The tracer sees SIGTRAP here, with rip just past the int3, still in f8. */
	__asm__ volatile("int3");
	return pad[0] + 1;
}

#define CHAIN(name, callee, size) \
	int STEP name(int x) \
	{ \
		volatile char pad[size]; \
		pad[0] = (char) x; \
		return callee(pad[0] + 1) + pad[0]; \
	}

CHAIN(f7, f8, 8)

/*
 * f6 realigns its stack for an over-aligned buffer beside a variable one,
 * so gcc keeps its CFA in the frame (DW_CFA_def_cfa_expression: rbp - n,
 * deref) and saves registers relative to rbp (DW_CFA_expression).
 */
int STEP
f6(int x)
{
	volatile char wide[24] __attribute__((aligned(64)));
	volatile char *var = __builtin_alloca((unsigned) (x & 63) + 16);

	wide[0] = (char) x;
	var[0] = (char) x;
	return f7(wide[0] + 1) + var[0];
}

CHAIN(f5, f6, 200)
CHAIN(f4, f5, 40)
CHAIN(f3, f4, 1000)
CHAIN(f2, f3, 16)
CHAIN(f1, f2, 72)

void * STEP
thread_main(void *arg)
{
	volatile int r = f1(1);

	return (void *) (long) r;
}

/* The chain in a signal handler: the unwinder must step through the kernel's signal frame. */
void STEP
on_signal(int sig)
{
	volatile int r = f1(sig);	/* used, so not a tail call */

	(void) r;
}

/*
 * raise, which the signal interrupts, returns here. This frame is bigger
 * than the unwinder's stack window, so the slots above it must be fetched
 * separately.
 */
int STEP
sig_main(void)
{
	volatile char pad[100000];

	pad[0] = 1;
	signal(SIGUSR1, on_signal);
	return raise(SIGUSR1) + pad[0];
}

/* With argument "thread" the chain runs in a second thread, with "signal" in a handler, else in main. */
int
main(int argc, char **argv)
{
	pthread_t th;
	void *ret;

	if (argc > 1 && strcmp(argv[1], "signal") == 0)
		return sig_main() == 12345;
	if (argc > 1 && strcmp(argv[1], "thread") == 0) {
		if (pthread_create(&th, NULL, thread_main, NULL) != 0)
			return 2;
		pthread_join(th, &ret);
		return ret == NULL;
	}
	return f1(argc) == 12345;
}
