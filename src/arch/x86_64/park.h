/* park.h - the code a thread waits on while it travels between tracer threads, traced by nobody (the contract every src/arch/<arch>/park.h fills). */
#ifndef JT_ARCH_PARK_H
#define JT_ARCH_PARK_H

#include <stdint.h>

#include "arch.h"

/* The instructions we look for in the tracee's executable memory. */
enum arch_park_code {
	ARCH_PARK_SYSCALL,	/* one system call instruction */
	ARCH_PARK_SPIN,		/* a jump to itself */
};

/* Length of each code's bytes, and the alignment the CPU needs to run them there. */
#define ARCH_PARK_CODE_LEN 2
#define ARCH_PARK_CODE_ALIGN 1

/* The ARCH_PARK_CODE_LEN bytes of code (static storage). */
const uint8_t *arch_park_bytes(enum arch_park_code code);

/*
 * Points r at the park code at pc. For ARCH_PARK_SYSCALL it is set up to
 * call pause(), which only SIGKILL or PTRACE_INTERRUPT ends once every
 * signal is blocked; ARCH_PARK_SPIN leaves the other registers alone. Either
 * way r is marked as not inside a system call, so the kernel does not
 * restart the one the thread was interrupted in.
 */
void arch_park_setup(arch_regs *r, enum arch_park_code code, uint64_t pc);

#endif
