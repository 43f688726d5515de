// cx_del.cpp - operator new(size_t), then operator delete(void *)
#include "cxx.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void
cx_del()
{
	void *p = ::operator new(opaque_size(16));
	sink(p, 16);
	::operator delete(p);
}
