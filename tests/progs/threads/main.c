/*
 * main.c - threads: usage `threads [K [L [S [W [F]]]]]` (defaults 1000, 5, 40, 1, 0).
 * W times in a row, starts NTHREADS threads together (a barrier); each makes K malloc+free
 * pairs in th_churn() and leaks L blocks of S bytes from th_leak(); main joins them all.
 * With F=1 a seccomp filter first makes pause() fail with EPERM in every thread, as a
 * sandboxed program's might. Exits 0. Output is written with write(2), so stdio
 * allocates nothing.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include "threads.h"
#include "../common/sink.h"

static unsigned long k_pairs, l_blocks, s_bytes;
static pthread_barrier_t start;

static void *
worker(void *arg)
{
	int tid = (int)(long)arg;

	pthread_barrier_wait(&start);
	th_churn(k_pairs);
	th_leak(tid, l_blocks, s_bytes);
	return NULL;
}

/* Denies pause() (EPERM) to this thread and the threads it starts afterwards. */
static int
deny_pause(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pause, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

int
main(int argc, char **argv)
{
	pthread_t th[NTHREADS];
	unsigned long waves;

	k_pairs = arg_num(argc > 1 ? argv[1] : NULL, 1000);
	l_blocks = arg_num(argc > 2 ? argv[2] : NULL, 5);
	s_bytes = arg_num(argc > 3 ? argv[3] : NULL, 40);
	waves = arg_num(argc > 4 ? argv[4] : NULL, 1);
	if (arg_num(argc > 5 ? argv[5] : NULL, 0) && deny_pause() != 0) {
		say(2, "threads: cannot install the seccomp filter\n");
		return 1;
	}
	pthread_barrier_init(&start, NULL, NTHREADS);
	for (unsigned long w = 0; w < waves; w++) {
		for (long i = 0; i < NTHREADS; i++)
			if (pthread_create(&th[i], NULL, worker, (void *)i) != 0)
				return 1;
		for (int i = 0; i < NTHREADS; i++)
			pthread_join(th[i], NULL);
	}
	say(1, "threads: done\n");
	return 0;
}
