/* park_pc.h - where a stopped thread's pc can be set to run code of its own process: a system call instruction, a jump to itself. */
#ifndef JT_PARK_PC_H
#define JT_PARK_PC_H

#include <stdint.h>

struct jt_proc;

/*
 * The address of a system call instruction in p's executable memory, the
 * vDSO first (found once, then cached in p->park_pc), or 0. Parked threads
 * wait on it (handover.c) and injected system calls run it (inject.c).
 */
uint64_t park_pc_syscall(struct jt_proc *p);
/* The address of a jump to itself in p (cached in p->spin_pc), or 0: where a thread under seccomp waits. */
uint64_t park_pc_spin(struct jt_proc *p);

#endif
