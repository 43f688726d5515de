/* perf_regs.c - the registers a perf sample carries (PERF_SAMPLE_REGS_USER) as arch_regs. */
#include <stddef.h>
#include <string.h>

#include "perf_regs.h"

_Static_assert(__builtin_popcountll(ARCH_PERF_REGS_MASK) == ARCH_PERF_REGS_N, "one value per mask bit");

_Static_assert((ARCH_PERF_REGS_RET_MASK & ~ARCH_PERF_REGS_MASK) == 0, "a subset");
_Static_assert((ARCH_PERF_REGS_FREE_MASK & ~ARCH_PERF_REGS_MASK) == 0, "a subset");

void
arch_regs_from_perf(const uint64_t *v, uint64_t mask, arch_regs *r)
{
	/* Where each bit of perf_event_x86_regs lands: AX .. FLAGS (0-9), R8 .. R15 (16-23). */
	static const size_t at[24] = {
		offsetof(arch_regs, rax), offsetof(arch_regs, rbx), offsetof(arch_regs, rcx),
		offsetof(arch_regs, rdx), offsetof(arch_regs, rsi), offsetof(arch_regs, rdi),
		offsetof(arch_regs, rbp), offsetof(arch_regs, rsp), offsetof(arch_regs, rip),
		offsetof(arch_regs, eflags), 0, 0, 0, 0, 0, 0,
		offsetof(arch_regs, r8), offsetof(arch_regs, r9), offsetof(arch_regs, r10),
		offsetof(arch_regs, r11), offsetof(arch_regs, r12), offsetof(arch_regs, r13),
		offsetof(arch_regs, r14), offsetof(arch_regs, r15),
	};

	memset(r, 0, sizeof(*r));
	mask &= ARCH_PERF_REGS_MASK;
	for (; mask; mask &= mask - 1)
		memcpy((uint8_t *)r + at[__builtin_ctzll(mask)], v++, sizeof(*v));
	/* A sample's registers are taken in the kernel's pt_regs: no orig_rax to restart. */
	r->orig_rax = (uint64_t)-1;
}
