/* threads.h - the threads test program: 8 threads churn and leak from their own functions. */
#ifndef JT_PROGS_THREADS_H
#define JT_PROGS_THREADS_H

#include <stddef.h>

#define NTHREADS 8
#define CHURN_SIZE 48	/* th_churn() mallocs and frees blocks of this size */

void th_churn(unsigned long k);			/* k malloc+free pairs */
void th_leak(int tid, unsigned long l, size_t s);	/* leaks l blocks of s bytes */

#endif
