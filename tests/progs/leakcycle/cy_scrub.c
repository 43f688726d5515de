/* cy_scrub.c - overwrites the stack below the caller and the scratch registers (no stale pointers). */
#include <string.h>
#include "cy.h"

__attribute__((noinline, noipa)) void
cy_scrub(void)
{
	char junk[16384];

	memset(junk, 0, sizeof(junk));
	__asm__ volatile("" : : "r"(junk) : "memory");
	__asm__ volatile("xor %%eax, %%eax\n\txor %%ecx, %%ecx\n\txor %%edx, %%edx\n\t"
			 "xor %%esi, %%esi\n\txor %%edi, %%edi\n\txor %%r8d, %%r8d\n\t"
			 "xor %%r9d, %%r9d\n\txor %%r10d, %%r10d\n\txor %%r11d, %%r11d"
			 : : : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "memory");
}
