/* leak.h - the leak test program: what each file leaks, so the test can compute exact figures. */
#ifndef JT_PROGS_LEAK_H
#define JT_PROGS_LEAK_H

#include <stddef.h>

/* leak_here() leaks n blocks; block i has LEAK_SIZE(i) bytes. */
#define LEAK_SIZE(i) ((size_t)1024 + 16 * (size_t)(i))
#define LEAK_SMALL_SIZE 8	/* leak_small() leaks one block of this size */
#define CHURN_SIZE 64		/* churn() mallocs and frees n blocks of this size */
#define CTOR_SIZE 55		/* leak_in_ctor() leaks one block before main */
#define ATEXIT_SIZE 77		/* leak_at_exit() leaks one block after main returns */

void leak_here(int n);
void leak_small(void);
void churn(int n);

#endif
