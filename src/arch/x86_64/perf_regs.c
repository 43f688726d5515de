/* perf_regs.c - the registers a perf sample carries (PERF_SAMPLE_REGS_USER) as arch_regs. */
#include <string.h>

#include "perf_regs.h"

_Static_assert(__builtin_popcountll(ARCH_PERF_REGS_MASK) == ARCH_PERF_REGS_N, "one value per mask bit");

void
arch_regs_from_perf(const uint64_t *v, arch_regs *r)
{
	memset(r, 0, sizeof(*r));
	/* PERF_REG_X86_AX .. FLAGS: bits 0-9. */
	r->rax = v[0];
	r->rbx = v[1];
	r->rcx = v[2];
	r->rdx = v[3];
	r->rsi = v[4];
	r->rdi = v[5];
	r->rbp = v[6];
	r->rsp = v[7];
	r->rip = v[8];
	r->eflags = v[9];
	/* PERF_REG_X86_R8 .. R15: bits 16-23. */
	r->r8 = v[10];
	r->r9 = v[11];
	r->r10 = v[12];
	r->r11 = v[13];
	r->r12 = v[14];
	r->r13 = v[15];
	r->r14 = v[16];
	r->r15 = v[17];
	/* A sample's registers are taken in the kernel's pt_regs: no orig_rax to restart. */
	r->orig_rax = (uint64_t)-1;
}
