/* regs.c - x86-64 register access through ptrace, and the system call register convention. */
#include <sys/ptrace.h>

#include "regs.h"

int
arch_regs_get(pid_t tid, arch_regs *regs)
{
	return ptrace(PTRACE_GETREGS, tid, 0L, regs) < 0 ? -1 : 0;
}

int
arch_regs_set(pid_t tid, const arch_regs *regs)
{
	return ptrace(PTRACE_SETREGS, tid, 0L, regs) < 0 ? -1 : 0;
}

void
arch_syscall_setup(arch_regs *r, uint64_t pc, long nr, const uint64_t args[6])
{
	r->rip = pc;
	r->rax = (uint64_t)nr;
	r->rdi = args[0];
	r->rsi = args[1];
	r->rdx = args[2];
	r->r10 = args[3];
	r->r8 = args[4];
	r->r9 = args[5];
	/* orig_rax -1: no system call under way, so none is restarted. */
	r->orig_rax = (uint64_t)-1;
}
