/* waitcp.c - x86-64: the flag check and the `syscall` of wait4 in one window a signal handler can move out of. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>

#include "waitcp.h"

#define WAITCP_STR(x) WAITCP_STR_(x)
#define WAITCP_STR_(x) #x

/*
 * In assembly, so that nothing the compiler schedules stands between the
 * check and the `syscall`, and the window has known bounds. Arguments: rdi
 * flag, esi pid, rdx status, ecx options; wait4 takes rdi, rsi, rdx, r10.
 */
__asm__(
	".text\n"
	".globl arch_waitcp\n"
	".type arch_waitcp, @function\n"
	"arch_waitcp:\n"
	"	movq %rdi, %r11\n"
	"	movslq %esi, %rdi\n"
	"	movq %rdx, %rsi\n"
	"	movslq %ecx, %rdx\n"
	"	xorl %r10d, %r10d\n"
	"	movl $" WAITCP_STR(SYS_wait4) ", %eax\n"
	"waitcp_begin:\n"
	"	cmpl $0, (%r11)\n"
	"	jne waitcp_cancel\n"
	"	syscall\n"
	"waitcp_end:\n"
	"	ret\n"
	"waitcp_cancel:\n"
	"	movq $-" WAITCP_STR(EINTR) ", %rax\n"
	"	ret\n"
	".size arch_waitcp, . - arch_waitcp\n");

extern const char waitcp_begin[], waitcp_end[], waitcp_cancel[];

void
arch_waitcp_cancel(void *ucontext)
{
	greg_t *pc = &((ucontext_t *)ucontext)->uc_mcontext.gregs[REG_RIP];

	if ((uintptr_t)*pc >= (uintptr_t)waitcp_begin && (uintptr_t)*pc < (uintptr_t)waitcp_end)
		*pc = (greg_t)(uintptr_t)waitcp_cancel;
}
