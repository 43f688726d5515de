// lx_string.cpp - a std::string whose only pointer is its own char pointer (to rep + 24):
// still reachable through the stdstring heuristic.
#include <new>
#include <string>
#include "lx.h"

// Raw storage: the string object lives here and its destructor never runs at exit. Not
// static, or the compiler may drop the store of the char pointer as never read.
alignas(std::string) unsigned char lx_string_slot[sizeof(std::string)];

__attribute__((noinline, noipa)) void
lx_string()
{
	new (lx_string_slot) std::string(LX_STRING_LEN, 's'); /* SITE:lx_string */
}
