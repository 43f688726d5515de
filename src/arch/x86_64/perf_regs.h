/* perf_regs.h - the registers a perf sample carries (PERF_SAMPLE_REGS_USER) as arch_regs. */
#ifndef JT_ARCH_PERF_REGS_H
#define JT_ARCH_PERF_REGS_H

#include <stdint.h>

#include "arch.h"

/*
 * The registers every uprobe sample asks for: the general registers, the
 * pc, the stack pointer and the flags (bits of asm/perf_regs.h's
 * perf_event_x86_regs); the segment registers are of no use to an unwinder.
 */
#define ARCH_PERF_REGS_MASK 0x0000000000ff03ffULL

/* How many values a sample with ARCH_PERF_REGS_MASK carries, at most. */
#define ARCH_PERF_REGS_N 18

/*
 * A return's sample needs only the value returned and where the return
 * left from (ax, sp, ip); a free's its argument and what an unwinder
 * starts from (di, si, bp, sp, ip). Each register less is 8 bytes the
 * kernel copies into the ring and the reader loads from another CPU.
 */
#define ARCH_PERF_REGS_RET_MASK 0x0000000000000181ULL
#define ARCH_PERF_REGS_FREE_MASK 0x00000000000001f0ULL

/*
 * Fills r from the values of a sample taken with mask (a subset of
 * ARCH_PERF_REGS_MASK), in the mask's bit order; the registers the mask
 * leaves out read 0.
 */
void arch_regs_from_perf(const uint64_t *v, uint64_t mask, arch_regs *r);

#endif
