// lx_multi.cpp - an object of a class with two bases, reached only through a pointer to its
// second base (block + 16, at that base's vtable pointer): still reachable through
// multipleinheritance.
#include "lx.h"

LxB *volatile lx_second;

LxA::~LxA() {}
LxB::~LxB() {}
LxC::~LxC() {}

__attribute__((noinline, noipa)) void
lx_multi()
{
	lx_second = new LxC; /* SITE:lx_multi */
}
