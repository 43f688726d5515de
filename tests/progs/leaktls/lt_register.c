/* lt_register.c - a block that the calling thread then keeps only in a register. */
#include <stdlib.h>
#include "lt.h"

__attribute__((noinline, noipa)) void *
lt_register(void)
{
	char *p = malloc(LT_REG_SIZE); /* SITE:lt_register */
	((volatile char *)p)[0] = 1;
	return p;
}
