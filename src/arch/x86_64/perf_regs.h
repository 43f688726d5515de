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

/* How many values a sample with ARCH_PERF_REGS_MASK carries. */
#define ARCH_PERF_REGS_N 18

/* Fills r from the values of a sample taken with ARCH_PERF_REGS_MASK, in the mask's bit order. */
void arch_regs_from_perf(const uint64_t *v, arch_regs *r);

#endif
