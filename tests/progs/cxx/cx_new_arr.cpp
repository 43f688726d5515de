// cx_new_arr.cpp - leaks one block from operator new[](size_t)
#include "cxx.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) int *
cx_new_arr()
{
	int *p = new int[25]; /* SITE:cx_new_arr */
	return static_cast<int *>(opaque_ptr(p));
}
