/* syscallcp.c - x86-64: the flag check and the `syscall` in one window a signal handler can move out of. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ucontext.h>

#include "syscallcp.h"

#define SYSCALLCP_STR(x) SYSCALLCP_STR_(x)
#define SYSCALLCP_STR_(x) #x

/*
 * In assembly, so that nothing the compiler schedules stands between the
 * check and the `syscall`, and the window has known bounds. Arguments: rdi
 * flag, rsi nr, rdx, rcx, r8, r9 the call's four; the kernel takes rax nr
 * and rdi, rsi, rdx, r10. r11 (the `syscall` instruction's scratch) holds
 * the flag's address until the check.
 */
__asm__(
	".text\n"
	".globl arch_syscallcp\n"
	".type arch_syscallcp, @function\n"
	"arch_syscallcp:\n"
	"	movq %rdi, %r11\n"
	"	movq %rsi, %rax\n"
	"	movq %rdx, %rdi\n"
	"	movq %rcx, %rsi\n"
	"	movq %r8, %rdx\n"
	"	movq %r9, %r10\n"
	"syscallcp_begin:\n"
	"	cmpl $0, (%r11)\n"
	"	jne syscallcp_cancel\n"
	"	syscall\n"
	"syscallcp_end:\n"
	"	ret\n"
	"syscallcp_cancel:\n"
	"	movq $-" SYSCALLCP_STR(EINTR) ", %rax\n"
	"	ret\n"
	".size arch_syscallcp, . - arch_syscallcp\n");

extern const char syscallcp_begin[], syscallcp_end[], syscallcp_cancel[];

void
arch_syscallcp_cancel(void *ucontext)
{
	greg_t *pc = &((ucontext_t *)ucontext)->uc_mcontext.gregs[REG_RIP];

	if ((uintptr_t)*pc >= (uintptr_t)syscallcp_begin && (uintptr_t)*pc < (uintptr_t)syscallcp_end)
		*pc = (greg_t)(uintptr_t)syscallcp_cancel;
}
