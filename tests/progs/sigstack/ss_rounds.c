/* ss_rounds.c - N rounds of the four calls during which a handler runs (main's or a thread's). */
#include "sigstack.h"

__attribute__((noinline, noipa)) void
ss_rounds(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		ss_use_malloc(); /* CALL:malloc */
		ss_use_calloc(); /* CALL:calloc */
		ss_use_realloc(); /* CALL:realloc */
		ss_use_nested(); /* CALL:nested */
	}
}
