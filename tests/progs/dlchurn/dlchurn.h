/* dlchurn.h - the dlchurn test program: threads churn and leak while main loads and unloads a library. */
#ifndef JT_PROGS_DLCHURN_H
#define JT_PROGS_DLCHURN_H

#include <stddef.h>

#define DC_THREADS 4
#define DC_DEPTH 12		/* frames between a thread's start and dc_churn: each unwind walks them */
#define DC_CHURN_SIZE 56	/* dc_churn() mallocs and frees blocks of this size */
#define DC_LEAK_SIZE 88		/* dc_leak() leaks one block of this size per thread */

/* Total malloc+free pairs made by dc_churn so far, over all threads. */
extern unsigned long dc_progress;

void dc_churn(unsigned long k);		/* k malloc+free pairs */
void dc_deep(int depth, unsigned long k);	/* depth more frames, then dc_churn(k) */
void dc_leak(int tid);			/* leaks one block of DC_LEAK_SIZE bytes */

#endif
