// cx_del_arr_sz_al.cpp - operator new[](size_t, align_val_t), then operator delete[](void *, size_t, align_val_t)
#include "cxx.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void
cx_del_arr_sz_al()
{
	void *p = ::operator new[](opaque_size(256), std::align_val_t(64));
	sink(p, 256);
	::operator delete[](p, 256, std::align_val_t(64));
}
