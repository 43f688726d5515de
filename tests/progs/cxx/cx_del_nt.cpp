// cx_del_nt.cpp - operator new(size_t, nothrow_t), then operator delete(void *, nothrow_t)
#include "cxx.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void
cx_del_nt()
{
	void *p = ::operator new(opaque_size(24), std::nothrow);
	sink(p, 24);
	::operator delete(p, std::nothrow);
}
