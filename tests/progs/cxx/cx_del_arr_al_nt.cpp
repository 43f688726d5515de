// cx_del_arr_al_nt.cpp - operator new[](size_t, align_val_t, nothrow_t), then operator delete[](void *, align_val_t, nothrow_t)
#include "cxx.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void
cx_del_arr_al_nt()
{
	void *p = ::operator new[](opaque_size(64), std::align_val_t(64), std::nothrow);
	sink(p, 64);
	::operator delete[](p, std::align_val_t(64), std::nothrow);
}
