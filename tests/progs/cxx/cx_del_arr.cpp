// cx_del_arr.cpp - new char[16], then delete[]: operator delete[](void *) (no cookie, so unsized)
#include "cxx.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void
cx_del_arr()
{
	char *p = new char[opaque_size(16)];
	sink(p, 16);
	delete[] p;
}
