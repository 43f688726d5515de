/* kops.h - the operations the stop core does on the kernel (waits, ptrace requests, registers, memory, signals, /proc facts), as one table a unit test can replace. */
#ifndef JT_KOPS_H
#define JT_KOPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch.h"

/*
 * Each member does what the system call or helper named in its comment
 * does, with the same results and errno. The stop core (stopall, handover,
 * lifecycle, restart, stop_event, sigtrap, inject, the loop's wait) reaches
 * the kernel only through kops, so that a unit test can script the order
 * in which stops, exits and events arrive (tests/unit/stopcore_test.h).
 */
struct jt_kops {
	/* wait4(pid, status, options, NULL). */
	pid_t (*wait)(pid_t pid, int *status, int options);
	/* wake_wait (wake.h): the same, unless the calling thread was woken since its wake_arm. */
	pid_t (*wait_unless_woken)(pid_t pid, int *status, int options);
	/* ptrace(req, tid, addr, data): one request, its result, -1 with errno set. */
	long (*ptrace)(int req, pid_t tid, void *addr, void *data);
	/* wake_ptrace (wake.h): the same, unless the calling thread was woken since its wake_arm. */
	long (*ptrace_unless_woken)(int req, pid_t tid, void *addr, void *data);
	/* arch_regs_get and arch_regs_set (regs.h). */
	int (*getregs)(pid_t tid, arch_regs *regs);
	int (*setregs)(pid_t tid, const arch_regs *regs);
	/* mem_read and mem_write (mem.h). */
	int (*read)(pid_t pid, uint64_t addr, void *buf, size_t len);
	int (*write)(pid_t pid, uint64_t addr, const void *buf, size_t len);
	/* tgkill(tgid, tid, sig). */
	int (*tgkill)(pid_t tgid, pid_t tid, int sig);
	/* procfs_status_field (procfs.h): a line of /proc/PID/status. */
	int (*status_field)(pid_t pid, const char *key, char *buf, size_t size);
	/* kcmp(a, b, KCMP_VM, 0, 0): 0 when a and b share their memory. */
	int (*kcmp_vm)(pid_t a, pid_t b);
};

/* The kernel itself. */
extern const struct jt_kops kops_kernel;

/*
 * The table in use: kops_kernel unless a unit test set another. Set before
 * the tracer threads start, read-only after.
 */
extern const struct jt_kops *kops;

/*
 * kops->wait(tid, status, __WALL) for one tracee, retried on EINTR: our tick
 * and SIGINT handlers are installed without SA_RESTART, so that the main
 * wait4 sees them, and an interrupted wait here is not an answer. Returns
 * tid, or -1 with errno set (ECHILD: not our tracee).
 */
pid_t kops_wait_tid(pid_t tid, int *status);

/* Non-zero when seccomp filters the thread's system calls, or /proc cannot say (kops->status_field). */
int kops_seccomp(pid_t tid);

/* kops->ptrace with an integer data argument (a signal, an option mask), no address. */
static inline long
kops_request(int req, pid_t tid, long data)
{
	return kops->ptrace(req, tid, NULL, (void *)data);
}

#endif
