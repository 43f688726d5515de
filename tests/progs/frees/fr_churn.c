/* fr_churn.c - malloc+free pairs and free(NULL) calls: nothing from here is live at exit. */
#include <stdlib.h>
#include "frees.h"
#include "../common/sink.h"

static const size_t sizes[NSIZES] = { 24, 72, 200, 1000 };

__attribute__((noinline, noipa)) void
fr_churn(unsigned long k)
{
	for (unsigned long i = 0; i < k; i++) {
		size_t n = sizes[i % NSIZES];
		void *p = malloc(n); /* SITE:fr_churn */
		sink(p, n);
		free(p);
	}
}

__attribute__((noinline, noipa)) void
fr_free_null(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		free(opaque_ptr(NULL)); /* SITE:fr_free_null */
}
