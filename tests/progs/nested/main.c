/*
 * main.c - nested: through the allocator of nested.h, nx_churn in main and in one thread
 * (2 * NX_CHURN pairs), nx_leak, nx_inside, my_free(NULL), nx_raw and nx_jump. In all,
 * traced with --alloc my_malloc=malloc --alloc my_free=free: 203 calls of my_malloc (200
 * of 40 bytes, 300 and 64 bytes, and the one that longjmps), 204 of my_free (200, the
 * pointer inside the 64-byte block and the block, NULL, nx_raw's); nx_raw's block, made by
 * malloc(32) in my_raw_malloc (not named) and released by my_free, a malloc call and a
 * free; live at exit 300 bytes from nx_leak and 16 from nx_deep's malloc; one invalid
 * free, of a pointer inside a live block, from nx_inside. Writes "nested: 1 free refused"
 * with write(2) and exits 0.
 */
#include <pthread.h>
#include <stdlib.h>
#include "nested.h"
#include "../common/sink.h"

static void *
churner(void *arg)
{
	nx_churn();
	return arg;
}

int
main(void)
{
	pthread_t th;

	if (pthread_create(&th, NULL, churner, NULL) != 0)
		return 1;
	nx_churn();
	pthread_join(th, NULL);
	nx_leak();
	nx_inside();
	my_free(opaque_ptr(NULL));
	nx_raw();
	nx_jump();
	say(1, "nested: ");
	say_num(1, my_refused());
	say(1, my_refused() == 1 ? " free refused\n" : " frees refused\n");
	return 0;
}
