/* kops.c - the kernel's operations table (kops.h): the real system calls behind the stop core. */
#include <errno.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/kcmp.h>

#include "kops.h"
#include "mem.h"
#include "procfs.h"
#include "regs.h"
#include "wake.h"

static pid_t
kops_kernel_wait(pid_t pid, int *status, int options)
{
	return wait4(pid, status, options, NULL);
}

static long
kops_kernel_ptrace(int req, pid_t tid, void *addr, void *data)
{
	return ptrace((enum __ptrace_request)req, tid, addr, data);
}

static int
kops_kernel_tgkill(pid_t tgid, pid_t tid, int sig)
{
	return (int)syscall(SYS_tgkill, tgid, tid, sig);
}

static int
kops_kernel_kcmp_vm(pid_t a, pid_t b)
{
	return (int)syscall(SYS_kcmp, a, b, KCMP_VM, 0L, 0L);
}

const struct jt_kops kops_kernel = {
	.wait = kops_kernel_wait,
	.wait_unless_woken = wake_wait,
	.ptrace = kops_kernel_ptrace,
	.ptrace_unless_woken = wake_ptrace,
	.getregs = arch_regs_get,
	.setregs = arch_regs_set,
	.read = mem_read,
	.write = mem_write,
	.tgkill = kops_kernel_tgkill,
	.status_field = procfs_status_field,
	.kcmp_vm = kops_kernel_kcmp_vm,
};

const struct jt_kops *kops = &kops_kernel;

pid_t
kops_wait_tid(pid_t tid, int *status)
{
	pid_t r;

	while ((r = kops->wait(tid, status, __WALL)) < 0 && errno == EINTR)
		;
	return r;
}

int
kops_seccomp(pid_t tid)
{
	char buf[16];

	return kops->status_field(tid, "Seccomp", buf, sizeof(buf)) < 0 || atoi(buf) != 0;
}
