// lx_throw.cpp - throws and catches one exception, so that libstdc++'s exception machinery
// (and its emergency pool, malloc'ed at startup) is in use.
#include <stdexcept>
#include "lx.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) int
lx_throw()
{
	try {
		if (opaque_size(1))
			throw std::runtime_error("lx_throw");
	} catch (const std::exception &e) {
		return 1;
	}
	return 0;
}
