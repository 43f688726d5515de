/* dwarf_regs.h - DWARF register numbers of x86-64, where they sit in arch_regs, and the signal frame's saved registers (the contract every src/arch/<arch>/dwarf_regs.h fills). */
#ifndef JT_ARCH_DWARF_REGS_H
#define JT_ARCH_DWARF_REGS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "arch.h"

/*
 * The registers an unwind tracks, in DWARF numbering 0..ARCH_DWARF_NREGS-1.
 * ARCH_DWARF_RA is the return address column, which doubles as the frame's
 * pc; ARCH_DWARF_SP is the stack pointer, which the ABI makes the CFA.
 */
#define ARCH_DWARF_NREGS	17	/* rax..r15 are 0..15, 16 is the return address (rip) */
#define ARCH_DWARF_SP		7	/* rsp */
#define ARCH_DWARF_RA		16

/* How many registers a CFI step restores besides the stack pointer. */
#define ARCH_DWARF_NSAVED	7

/*
 * The registers a CFI step restores besides the stack pointer: the
 * callee-saved ones (rbx, rbp, r12..r15) and, last, the return address.
 */
extern const uint8_t arch_dwarf_saved[ARCH_DWARF_NSAVED];

/* Where DWARF register n (0..ARCH_DWARF_NREGS-1) sits in arch_regs. */
extern const size_t arch_dwarf_offset[ARCH_DWARF_NREGS];

/* DWARF register n of regs. */
static inline uint64_t
arch_dwarf_reg(const arch_regs *regs, int n)
{
	uint64_t v;

	memcpy(&v, (const char *) regs + arch_dwarf_offset[n], sizeof(v));
	return v;
}

/*
 * The kernel's signal frame, seen from the sigreturn trampoline (the
 * frame arch_is_sigreturn recognises). The registers of the interrupted
 * code lie in a block of ARCH_SIGFRAME_LEN bytes at sp + ARCH_SIGFRAME_OFF.
 * x86-64: the handler's return popped the rt_sigframe's pretcode, so sp
 * points at its ucontext, and the block is uc_mcontext.gregs.
 */
#define ARCH_SIGFRAME_OFF	40
#define ARCH_SIGFRAME_LEN	(17 * 8)	/* gregs up to and with REG_RIP */

/* Turns the block read from the signal frame into the interrupted code's registers, in DWARF numbering. */
void arch_sigframe_regs(const void *block, uint64_t regs[ARCH_DWARF_NREGS]);

/*
 * libdw 0.188's default CFI of x86-64 marks rax same-value where rbx was
 * meant, so an untouched rbx reads as undefined. No compiler marks a
 * callee-saved register undefined on purpose, so the unwinder reads an
 * undefined callee-saved register as same-value on every architecture.
 */

#endif
