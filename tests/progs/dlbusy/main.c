/*
 * main.c - dlbusy: usage `dlbusy K T [GATE]`. T threads start together with main (a barrier);
 * each makes K malloc+free pairs in churn(), or with GATE goes on until main is done. With
 * GATE main first waits until the file GATE exists (a test attaches meanwhile), and waits
 * 300 ms after the dlopen. Then main dlopens libstdc++ (RTLD_NOW), whose
 * allocators (operator new and delete) then get probes while the threads allocate, and
 * calls its operator new 100 times through dlsym, of 48 bytes each, from make_new(); it
 * deletes 93 of the blocks and leaks 7. Then it joins the threads, writes "dlbusy: done"
 * and exits 0; exits 1 when libstdc++ cannot be loaded. The static builds (-DDLBUSY_STATIC)
 * leave the dlopen out and make the 100 blocks with malloc.
 * Output is written with write(2), so stdio allocates nothing.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include "../common/sink.h"
#ifndef DLBUSY_STATIC
#include <dlfcn.h>
#endif

#define NEW_CALLS 100
#define NEW_KEPT 7

static unsigned long k_pairs;
static volatile int done;	/* GATE: main has made and deleted its blocks */
static pthread_barrier_t start;
static void *(*op_new)(size_t);
static void (*op_delete)(void *);

static void *
churn(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&start);
	for (unsigned long i = 0; i < k_pairs || (k_pairs == 0 && !done); i++) {
		void *p = malloc(opaque_size(16 + (i & 255))); /* SITE:churn */
		sink(p, 1);
		free(opaque_ptr(p));
	}
	return NULL;
}

static __attribute__((noinline)) void *
make_new(void)
{
	void *p = op_new(opaque_size(48)); /* SITE:make_new */

	sink(p, 0);	/* not a tail call: make_new stays the caller */
	return p;
}

int
main(int argc, char **argv)
{
	unsigned long t = argc > 2 ? arg_num(argv[2], 4) : 4;
	pthread_t th[64];
	void *kept[NEW_CALLS];

	const char *gate = argc > 3 ? argv[3] : NULL;

	k_pairs = gate ? 0 : arg_num(argc > 1 ? argv[1] : NULL, 100000);
	if (t < 1 || t > 64)
		t = 4;
	pthread_barrier_init(&start, NULL, (unsigned)t + 1);
	for (unsigned long i = 0; i < t; i++)
		pthread_create(&th[i], NULL, churn, NULL);
	pthread_barrier_wait(&start);
	while (gate && access(gate, F_OK) != 0)
		usleep(10000);
#ifdef DLBUSY_STATIC
	op_new = malloc;
	op_delete = free;
#else
	void *h = dlopen("libstdc++.so.6", RTLD_NOW);

	if (!h || !(op_new = (void *(*)(size_t))dlsym(h, "_Znwm")) ||
	    !(op_delete = (void (*)(void *))dlsym(h, "_ZdlPv"))) {
		say(2, "dlbusy: cannot load libstdc++\n");
		return 1;
	}
#endif
	/* Attached, the uprobe source probes a library a moment after its rendezvous. */
	if (gate)
		usleep(300000);
	for (int i = 0; i < NEW_CALLS; i++)
		kept[i] = make_new();
	for (int i = NEW_KEPT; i < NEW_CALLS; i++)
		op_delete(kept[i]);
	for (int i = 0; i < NEW_KEPT; i++)
		sink(kept[i], 0);
	done = 1;
	for (unsigned long i = 0; i < t; i++)
		pthread_join(th[i], NULL);
	say(1, "dlbusy: done\n");
	return 0;
}
