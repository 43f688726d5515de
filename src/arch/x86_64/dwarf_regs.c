/* dwarf_regs.c - the x86-64 DWARF register map: arch_regs offsets and the ucontext of a signal frame. */
#include <stddef.h>
#include <string.h>
#include <sys/ucontext.h>
#include <sys/user.h>

#include "dwarf_regs.h"

#define REG_AT(r) offsetof(struct user_regs_struct, r)

const uint8_t arch_dwarf_saved[ARCH_DWARF_NSAVED] = { 3, 6, 12, 13, 14, 15, ARCH_DWARF_RA };

const size_t arch_dwarf_offset[ARCH_DWARF_NREGS] = {
	REG_AT(rax), REG_AT(rdx), REG_AT(rcx), REG_AT(rbx), REG_AT(rsi), REG_AT(rdi),
	REG_AT(rbp), REG_AT(rsp), REG_AT(r8), REG_AT(r9), REG_AT(r10), REG_AT(r11),
	REG_AT(r12), REG_AT(r13), REG_AT(r14), REG_AT(r15), REG_AT(rip),
};

/* Where the DWARF registers sit in a signal's uc_mcontext.gregs. */
static const uint8_t dwarf_greg[ARCH_DWARF_NREGS] = {
	REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI, REG_RBP, REG_RSP,
	REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP,
};

_Static_assert(ARCH_SIGFRAME_LEN == (REG_RIP + 1) * sizeof(greg_t), "gregs up to rip");
_Static_assert(ARCH_SIGFRAME_OFF == offsetof(ucontext_t, uc_mcontext.gregs), "gregs in the ucontext");

void
arch_sigframe_regs(const void *block, uint64_t regs[ARCH_DWARF_NREGS])
{
	uint64_t g[REG_RIP + 1];
	int i;

	memcpy(g, block, sizeof(g));
	for (i = 0; i < ARCH_DWARF_NREGS; i++)
		regs[i] = g[dwarf_greg[i]];
}
