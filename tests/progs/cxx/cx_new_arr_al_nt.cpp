// cx_new_arr_al_nt.cpp - leaks one block from operator new[](size_t, align_val_t, nothrow_t)
#include "cxx.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) Over *
cx_new_arr_al_nt()
{
	Over *p = new (std::nothrow) Over[3]; /* SITE:cx_new_arr_al_nt */
	return static_cast<Over *>(opaque_ptr(p));
}
