// cx_del_sz.cpp - new Obj, then delete: operator delete(void *, size_t)
#include "cxx.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void
cx_del_sz()
{
	Obj *p = new Obj;
	sink(p, sizeof(*p));
	delete static_cast<Obj *>(opaque_ptr(p));
}
