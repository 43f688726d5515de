// cx_throw.cpp - new char[huge]: malloc fails, so operator new[] throws std::bad_alloc
#include "cxx.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void
cx_throw()
{
	char *p = new char[opaque_size((size_t)1 << 60)]; /* SITE:cx_throw */
	sink(p, 1);
}
