// cx_after_throw.cpp - leaks malloc(33) and new long after a caught throw: tracing must go on normally
#include "cxx.h"
#include "../common/sink.h"

#include <cstdlib>

__attribute__((noinline, noipa)) void
cx_after_throw()
{
	void *p = malloc(opaque_size(33)); /* SITE:cx_after_throw_malloc */
	long *q = new long; /* SITE:cx_after_throw_new */
	sink(p, 33);
	sink(q, sizeof(*q));
}
