// lx_length64.cpp - a block that starts with the length of the rest (as sqlite's allocator
// does), reached only through a pointer past that word: still reachable through length64.
#include <cstdint>
#include <cstdlib>
#include "lx.h"

char *volatile lx_sized;

__attribute__((noinline, noipa)) void
lx_length64()
{
	uint64_t *p = static_cast<uint64_t *>(std::malloc(LX_LENGTH64_SIZE)); /* SITE:lx_length64 */
	*reinterpret_cast<volatile uint64_t *>(p) = LX_LENGTH64_SIZE - 8;
	lx_sized = reinterpret_cast<char *>(p + 1);
}
