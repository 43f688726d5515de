// cx_string_leak.cpp - leaks a std::string object and its buffer of 100 chars (+1 for the NUL)
#include "cxx.h"
#include "../common/sink.h"

#include <string>

__attribute__((noinline, noipa)) void
cx_string_leak()
{
	std::string *s = new std::string(opaque_size(100), (char)0x78); /* SITE:cx_string */
	sink(s, sizeof(*s));
}
