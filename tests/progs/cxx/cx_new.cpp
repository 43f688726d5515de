// cx_new.cpp - leaks one block from operator new(size_t)
#include "cxx.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) Obj *
cx_new()
{
	Obj *p = new Obj; /* SITE:cx_new */
	return static_cast<Obj *>(opaque_ptr(p));
}
