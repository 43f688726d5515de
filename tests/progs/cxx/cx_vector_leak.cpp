// cx_vector_leak.cpp - leaks a std::vector<int> object and its buffer of 50 ints
#include "cxx.h"
#include "../common/sink.h"

#include <vector>

__attribute__((noinline, noipa)) void
cx_vector_leak()
{
	std::vector<int> *v = new std::vector<int>; /* SITE:cx_vector_obj */
	v->reserve(opaque_size(50)); /* SITE:cx_vector_buf */
	sink(v, sizeof(*v));
}
