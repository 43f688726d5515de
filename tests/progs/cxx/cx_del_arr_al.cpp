// cx_del_arr_al.cpp - new Over[2], then delete[]: operator delete[](void *, align_val_t)
#include "cxx.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void
cx_del_arr_al()
{
	Over *p = new Over[opaque_size(2)];
	sink(p, sizeof(*p));
	delete[] static_cast<Over *>(opaque_ptr(p));
}
