/* test_perf_regs.c - unit tests for arch_regs_from_perf: each mask's values land in their registers, the rest read 0. */
#include <stdint.h>
#include <string.h>

#include "perf_regs.h"
#include "tap.h"

/* Values 101, 102, ... one per bit of mask, as the kernel lays them out. */
static void
fill(uint64_t *v)
{
	for (int i = 0; i < ARCH_PERF_REGS_N; i++)
		v[i] = 101 + (uint64_t)i;
}

int
main(void)
{
	uint64_t v[ARCH_PERF_REGS_N];
	arch_regs r;

	fill(v);
	arch_regs_from_perf(v, ARCH_PERF_REGS_MASK, &r);
	is_u64(r.rax, 101, "full: ax is the first value");
	is_u64(r.rdi, 106, "full: di the sixth");
	is_u64(r.rsp, 108, "full: sp the eighth");
	is_u64(r.rip, 109, "full: ip the ninth");
	is_u64(r.eflags, 110, "full: flags the tenth");
	is_u64(r.r8, 111, "full: r8 follows the flags (bits 10-15 are segment registers, not asked for)");
	is_u64(r.r15, 118, "full: r15 the last");
	is_u64(r.orig_rax, UINT64_MAX, "full: no system call to restart");

	memset(&r, 0xa5, sizeof(r));
	arch_regs_from_perf(v, ARCH_PERF_REGS_RET_MASK, &r);
	is_u64(r.rax, 101, "return: ax, the value returned");
	is_u64(r.rsp, 102, "return: sp second");
	is_u64(r.rip, 103, "return: ip third");
	is_u64(r.rdi | r.rbx | r.rbp | r.r15 | r.eflags, 0, "return: the registers not asked for read 0");

	memset(&r, 0xa5, sizeof(r));
	arch_regs_from_perf(v, ARCH_PERF_REGS_FREE_MASK, &r);
	is_u64(r.rsi, 101, "free: si first");
	is_u64(r.rdi, 102, "free: di, the pointer, second");
	is_u64(r.rbp, 103, "free: bp third");
	is_u64(r.rsp, 104, "free: sp fourth");
	is_u64(r.rip, 105, "free: ip fifth");
	is_u64(r.rax | r.rbx | r.r12 | r.eflags, 0, "free: the registers not asked for read 0");

	/* A bit outside ARCH_PERF_REGS_MASK (a segment register) takes no value. */
	memset(&r, 0, sizeof(r));
	arch_regs_from_perf(v, (1ULL << 10) | (1ULL << 0), &r);
	is_u64(r.rax, 101, "a bit the sample never asks for is skipped, not given a value");
	return tap_done();
}
