// cx_new_al.cpp - leaks one block from operator new(size_t, align_val_t)
#include "cxx.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) Over *
cx_new_al()
{
	Over *p = new Over; /* SITE:cx_new_al */
	return static_cast<Over *>(opaque_ptr(p));
}
