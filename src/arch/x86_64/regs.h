/* regs.h - a stopped thread's registers: reading and writing them, and setting them up for one system call (the contract every src/arch/<arch>/regs.h fills). */
#ifndef JT_ARCH_REGS_H
#define JT_ARCH_REGS_H

#include <stdint.h>
#include <sys/types.h>

#include "arch.h"

/*
 * Bytes below the stack pointer the ABI lets a function use without moving
 * the stack pointer: scratch memory we borrow must lie below them.
 */
#define ARCH_RED_ZONE 128

/*
 * Reads (get) or writes (set) every general register of tid, which must be
 * in a ptrace stop of the calling tracer thread. Return 0, or -1 with errno
 * set (ESRCH: the thread is gone or not stopped).
 */
int arch_regs_get(pid_t tid, arch_regs *regs);
int arch_regs_set(pid_t tid, const arch_regs *regs);

/*
 * Makes r ready to run system call nr with args from pc, which must hold a
 * system call instruction (see park.h): the number and arguments in their
 * registers, and r marked as not inside a system call, so the kernel does
 * not restart an interrupted one over ours. The other registers stay.
 * arch_retval gives the call's result once the instruction ran.
 */
void arch_syscall_setup(arch_regs *r, uint64_t pc, long nr, const uint64_t args[6]);

#endif
