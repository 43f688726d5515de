/* a_reallocarray.c - reallocarray from NULL, then grown: the block ends on the second call site */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdlib.h>
#include "allocators.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void *
a_reallocarray(size_t n1, size_t n2, size_t size)
{
	void *p = reallocarray(opaque_ptr(NULL), n1, size); /* SITE:a_reallocarray_1 */
	p = reallocarray(opaque_ptr(p), n2, size); /* SITE:a_reallocarray_2 */
	return opaque_ptr(p);
}
