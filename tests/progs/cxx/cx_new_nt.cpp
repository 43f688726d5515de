// cx_new_nt.cpp - leaks one block from operator new(size_t, nothrow_t)
#include "cxx.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) Obj *
cx_new_nt()
{
	Obj *p = new (std::nothrow) Obj; /* SITE:cx_new_nt */
	return static_cast<Obj *>(opaque_ptr(p));
}
