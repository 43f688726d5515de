// cx_del_arr_sz.cpp - new WithDtor[5], then delete[]: operator delete[](void *, size_t) (the cookie knows the size)
#include "cxx.h"
#include "../common/sink.h"

WithDtor::~WithDtor()
{
	sink(this, 0);
}

__attribute__((noinline, noipa)) void
cx_del_arr_sz()
{
	WithDtor *p = new WithDtor[5];
	sink(p, sizeof(*p));
	delete[] static_cast<WithDtor *>(opaque_ptr(p));
}
