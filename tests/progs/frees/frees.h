/* frees.h - the frees test program: threads that free everything they allocate and end at different times. */
#ifndef JT_PROGS_FREES_H
#define JT_PROGS_FREES_H

#define NTHREADS 8
#define NSIZES 4	/* fr_churn() cycles through this many sizes: several tcache bins fill */

void fr_churn(unsigned long k);		/* k malloc+free pairs */
void fr_free_null(unsigned long n);	/* n calls of free(NULL) */

#endif
