/* lt_tls.c - a block whose only pointer is a __thread variable of the thread that made it. */
#include <stdlib.h>
#include "lt.h"

static __thread void *volatile lt_tls_slot;

__attribute__((noinline, noipa)) void
lt_tls(void)
{
	char *p = malloc(LT_TLS_SIZE); /* SITE:lt_tls */
	((volatile char *)p)[0] = 1;
	lt_tls_slot = p;
}
