/* js_lose.c - a block whose pointer is dropped at once. */
#include "js.h"

__attribute__((noinline, noipa)) void
js_lose(void)
{
	char *p = je_malloc(JS_LOSE_SIZE); /* SITE:js_lose */

	((volatile char *)p)[0] = 1;
}
