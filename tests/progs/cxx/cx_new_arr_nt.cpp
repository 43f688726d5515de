// cx_new_arr_nt.cpp - leaks one block from operator new[](size_t, nothrow_t)
#include "cxx.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) char *
cx_new_arr_nt()
{
	char *p = new (std::nothrow) char[70]; /* SITE:cx_new_arr_nt */
	return static_cast<char *>(opaque_ptr(p));
}
