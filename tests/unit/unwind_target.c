/* unwind_target.c - a known call chain main -> f1 -> ... -> f8 that traps (int3) in f8, for test_unwind. */
#include <pthread.h>
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
CHAIN(f6, f7, 24)
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

/* With argument "thread" the chain runs in a second thread, else in main. */
int
main(int argc, char **argv)
{
	pthread_t th;
	void *ret;

	if (argc > 1 && strcmp(argv[1], "thread") == 0) {
		if (pthread_create(&th, NULL, thread_main, NULL) != 0)
			return 2;
		pthread_join(th, &ret);
		return ret == NULL;
	}
	return f1(argc) == 12345;
}
