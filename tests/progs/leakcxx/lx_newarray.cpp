// lx_newarray.cpp - new[] of elements with a destructor, reached only through the pointer to
// the first element (block + 8, after the count): still reachable through newarray.
#include "lx.h"

LxElem *volatile lx_array;

__attribute__((noinline)) LxElem::~LxElem()
{
	v[0] = 0;
}

__attribute__((noinline, noipa)) void
lx_newarray()
{
	lx_array = new LxElem[LX_NELEM]; /* SITE:lx_newarray */
}
