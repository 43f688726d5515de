/* attach.c - attaches to a running process with all its threads, and detaches leaving it as it was. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach.h"
#include "detach.h"
#include "elfhdr.h"
#include "handover.h"
#include "proc.h"
#include "procfs.h"
#include "stopall.h"
#include "tracer.h"
#include "tthread.h"
#include "util.h"

#define ATTACH_ROUNDS 100

static int
attach_is_kernel_thread(pid_t pid)
{
	unsigned long long flags;

	/* Field 9 is flags; PF_KTHREAD is 0x00200000. */
	return procfs_stat_field(pid, 9, &flags) == 0 && (flags & 0x00200000) != 0;
}

/* Says in one line why pid cannot be traced, before we even try. Returns 0 when it looks fine. */
static int
attach_precheck(pid_t pid)
{
	char buf[256], comm[64] = "?", path[64], what[64];

	if (pid == getpid()) {
		error_msg("cannot attach to process %d: that is jmptrace itself", pid);
		return -1;
	}
	if (kill(pid, 0) < 0 && errno == ESRCH) {
		error_msg("cannot attach to process %d: no such process", pid);
		return -1;
	}
	if (procfs_status_field(pid, "State", buf, sizeof(buf)) == 0 && buf[0] == 'Z') {
		error_msg("cannot attach to process %d: it is a zombie (it exited and waits for its parent)", pid);
		return -1;
	}
	if (attach_is_kernel_thread(pid)) {
		error_msg("cannot attach to process %d: it is a kernel thread, with no user-space heap", pid);
		return -1;
	}
	/* Unreadable (another user's process): PTRACE_SEIZE explains it then. */
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	if (elfhdr_classify_file(path, what, sizeof(what)) == ELFHDR_OTHER_ARCH) {
		error_msg("cannot attach to process %d: it is %s; jmptrace traces %s programs only",
			  pid, what, elfhdr_our_arch);
		return -1;
	}
	if (procfs_status_field(pid, "TracerPid", buf, sizeof(buf)) == 0 && atoi(buf) != 0) {
		pid_t tracer = atoi(buf);
		procfs_status_field(tracer, "Name", comm, sizeof(comm));
		error_msg("cannot attach to process %d: it is already traced by process %d (%s)", pid, tracer, comm);
		return -1;
	}
	return 0;
}

/*
 * Explains EPERM from PTRACE_SEIZE of thread tid of pid, once we know it is
 * not ours: another tracer got it first, another user, or the Yama
 * ptrace_scope policy.
 */
static void
attach_explain_eperm(pid_t pid, pid_t tid)
{
	char path[64], buf[32], comm[64] = "?";
	struct stat st;
	FILE *f;
	int scope = -1;

	if (procfs_status_field(tid, "TracerPid", buf, sizeof(buf)) == 0 && atoi(buf) != 0) {
		pid_t tracer = atoi(buf);

		procfs_status_field(tracer, "Name", comm, sizeof(comm));
		error_msg("cannot attach to process %d: its thread %d is already traced by process %d (%s)",
			  pid, tid, tracer, comm);
		return;
	}

	snprintf(path, sizeof(path), "/proc/%d", pid);
	if (stat(path, &st) == 0 && st.st_uid != geteuid() && geteuid() != 0) {
		error_msg("cannot attach to process %d: not permitted: it belongs to another user (uid %u); "
			  "run jmptrace as that user or as root", pid, (unsigned)st.st_uid);
		return;
	}
	if ((f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re"))) {
		if (fscanf(f, "%d", &scope) != 1)
			scope = -1;
		fclose(f);
	}
	if (scope > 0)
		error_msg("cannot attach to process %d: not permitted by kernel.yama.ptrace_scope=%d; "
			  "run as root or set it to 0 (sysctl kernel.yama.ptrace_scope=0)", pid, scope);
	else
		error_msg("cannot attach to process %d: operation not permitted "
			  "(a security module or the process's dumpable flag forbids tracing it)", pid);
}

/*
 * PTRACE_SEIZE of tid failed with EPERM. Returns 1 when tid is ours already
 * (created by a thread we seized: PTRACE_O_TRACECLONE attached it), 0 when
 * it is exiting or gone (the kernel refuses those too), -1 when it is
 * really refused, with errno EPERM.
 */
static int
attach_refused(pid_t tid)
{
	char buf[32];

	if (procfs_status_field(tid, "TracerPid", buf, sizeof(buf)) < 0)
		return 0;
	if (atoi(buf) == getpid())
		return 1;
	if (procfs_status_field(tid, "State", buf, sizeof(buf)) == 0 && (buf[0] == 'Z' || buf[0] == 'X'))
		return 0;
	errno = EPERM;
	return -1;
}

/*
 * PTRACE_SEIZE of tid, HANDOVER_SEIZE_MS at a time (handover.h): while
 * another thread of the process is in exec, the request waits until the
 * exec ends, and the exec until every other thread is reaped, those we
 * seized already by us alone (a deadlock that hung the attach and the
 * program's exec with it). So between tries our own tracees' exits and
 * stops are taken, and kept for stopall_wait; 10 s at most.
 */
static int
attach_seize(struct jt_tracer *tr, pid_t tid)
{
	struct jt_tthread *self = tthread_self();

	for (int tries = 0; tries < 1000; tries++) {
		if (tthread_seize(self, tid, (long)ATTACH_PTRACE_OPTIONS, HANDOVER_SEIZE_MS) == 0)
			return 0;
		if (errno != EINTR)
			return -1;
		handover_reap_own(tr, self);
	}
	errno = EBUSY;
	return -1;
}

/*
 * Seizes every thread listed in /proc/PID/task that is not ours yet. Returns
 * how many were new, or -1 with errno set and the thread that failed in *failed.
 */
static int
attach_seize_tasks(struct jt_tracer *tr, struct jt_proc *p, pid_t *failed)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int added = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", p->pid);
	if (!(dir = opendir(path)))
		return -1;
	while ((d = readdir(dir))) {
		pid_t tid = atoi(d->d_name);
		struct jt_thread *t;

		if (tid <= 0 || thread_find(tr, tid))
			continue;
		if (attach_seize(tr, tid) < 0) {
			int err = errno;
			int why = err == EPERM ? attach_refused(tid) : err == ESRCH ? 0 : -1;

			if (why == 0)
				continue;	/* it exited meanwhile */
			if (why < 0) {
				errno = err;
				*failed = tid;
				closedir(dir);
				return -1;
			}
			/* Ours already: its first stop is on its way to us. */
		}
		t = thread_new(tr, p, tid);
		thread_set_state(t, TS_STOPPING);
		ptrace(PTRACE_INTERRUPT, tid, 0L, 0L);
		added++;
	}
	closedir(dir);
	return added;
}

int
attach_process(struct jt_tracer *tr, pid_t pid, struct jt_proc **out)
{
	struct jt_proc *p;
	pid_t failed = pid;
	int added, i;

	if (attach_precheck(pid) < 0)
		return -1;
	p = proc_new(tr, pid, NULL);
	p->attached = 1;
	p->unseen_blocks = 1;
	tr->ptrace_options = ATTACH_PTRACE_OPTIONS;
	/* Threads may be created while we attach: repeat until a pass finds none. */
	for (i = 0; i < ATTACH_ROUNDS; i++) {
		added = attach_seize_tasks(tr, p, &failed);
		if (added < 0) {
			int err = errno;
			if (err == EPERM)
				attach_explain_eperm(pid, failed);
			else {
				errno = err;
				perror_msg("cannot attach to process %d", pid);
			}
			detach_all(tr);
			return -1;
		}
		if (added == 0)
			break;
	}
	proc_name(p, 1);
	*out = p;
	return stopall_wait(tr, p);
}
