// cx_del_sz_al.cpp - new Over, then delete: operator delete(void *, size_t, align_val_t)
#include "cxx.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void
cx_del_sz_al()
{
	Over *p = new Over;
	sink(p, sizeof(*p));
	delete static_cast<Over *>(opaque_ptr(p));
}
