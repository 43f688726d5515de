// lx_scrub.cpp - overwrites the stack below the caller and the scratch registers, so that no
// stale start pointer survives to the exit.
#include <cstring>
#include "lx.h"

__attribute__((noinline, noipa)) void
lx_scrub()
{
	char junk[16384];

	std::memset(junk, 0, sizeof(junk));
	__asm__ volatile("" : : "r"(junk) : "memory");
	__asm__ volatile("xor %%eax, %%eax\n\txor %%ecx, %%ecx\n\txor %%edx, %%edx\n\t"
			 "xor %%esi, %%esi\n\txor %%edi, %%edi\n\txor %%r8d, %%r8d\n\t"
			 "xor %%r9d, %%r9d\n\txor %%r10d, %%r10d\n\txor %%r11d, %%r11d"
			 : : : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "memory");
}
