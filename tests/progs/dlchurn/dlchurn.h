/* dlchurn.h - the dlchurn test program: threads churn and leak while main loads and unloads libraries. */
#ifndef JT_PROGS_DLCHURN_H
#define JT_PROGS_DLCHURN_H

#include <stddef.h>

#define DC_THREADS 4
#define DC_DEPTH 49		/* functions dc_deep0..dc_deep48 between a thread's start and dc_churn */
#define DC_CHURN_SIZE 56	/* dc_churn() mallocs and frees blocks of this size */
#define DC_LEAK_SIZE 88		/* dc_leak() leaks one block of this size per thread */
#define DC_KEEP_EVERY 16	/* dc_churn() also leaks a block of DC_KEEP_SIZE every 16 pairs */
#define DC_KEEP_SIZE 24

/* Total malloc+free pairs made by dc_churn so far, over all threads. */
extern unsigned long dc_progress;

void dc_churn(unsigned long k);		/* k malloc+free pairs, and k / DC_KEEP_EVERY dc_keep() */
void dc_keep(void);			/* leaks one block of DC_KEEP_SIZE bytes */
void dc_deep0(unsigned long k);		/* DC_DEPTH frames of distinct functions, then dc_churn(k) */
void dc_leak(int tid);			/* leaks one block of DC_LEAK_SIZE bytes */

#endif
