/* stopcore_test.h - the scripted kernel (a jt_kops whose waits a test queues and whose requests it logs) and the session that test_stopcore_stopall.c and test_stopcore_handover.c drive through it (static functions: one copy per test). */
#ifndef JT_STOPCORE_TEST_H
#define JT_STOPCORE_TEST_H

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>

#include "kops.h"
#include "options.h"
#include "proc.h"
#include "tracer.h"
#include "tap.h"
#include "tthread.h"

/* A wait status as the kernel builds it: stopped by sig, with a PTRACE_EVENT_* above. */
#define STOPPED(sig, event) ((((event) << 8 | (sig)) << 8) | 0x7f)

/* Thread ids above the kernel's PID_MAX_LIMIT (4,194,304): a call that missed the seam reaches no process. */
#define TID(n) (5000000 + (n))

/* The fake target memory: one small page of code, nops but what a test writes. */
#define MEM_BASE 0x400000u
#define EXIT_ADDR (MEM_BASE + 0x40)
#define PARK_ADDR (MEM_BASE + 0x80)

/*
 * The scripted kernel: the wait results a test queued, in order; what each
 * thread's registers hold; and a log of every operation the stop core did.
 */
static struct {
	struct {
		pid_t tid;
		int status;
	} waits[16];
	int nwaits, next;
	arch_regs regs[8];		/* by tid - TID(0) */
	unsigned long eventmsg;		/* PTRACE_GETEVENTMSG's answer */
	pid_t gone;			/* a thread whose requests fail with ESRCH, or 0 */
	pid_t status_tid, status_tgid, status_ppid;	/* /proc/status_tid/status names its Tgid and PPid */
	uint8_t mem[256];
	char log[2048];
} fk;

static void __attribute__((format(printf, 1, 2)))
fk_log(const char *fmt, ...)
{
	size_t len = strlen(fk.log);
	va_list ap;

	if (len)
		len += (size_t)snprintf(fk.log + len, sizeof(fk.log) - len, "; ");
	va_start(ap, fmt);
	vsnprintf(fk.log + len, sizeof(fk.log) - len, fmt, ap);
	va_end(ap);
}

static void
fk_queue(pid_t tid, int status)
{
	fk.waits[fk.nwaits].tid = tid;
	fk.waits[fk.nwaits++].status = status;
}

/* The next queued result (for pid -1) or the first one of pid; ECHILD when there is none: a wait that would hang. */
static pid_t
fk_wait(pid_t pid, int *status, int options)
{
	for (int i = fk.next; i < fk.nwaits; i++) {
		pid_t tid = fk.waits[i].tid;

		if (pid != -1 && tid != pid)
			continue;
		*status = fk.waits[i].status;
		memmove(&fk.waits[i], &fk.waits[i + 1], (size_t)(fk.nwaits - i - 1) * sizeof(fk.waits[0]));
		fk.nwaits--;
		fk_log("wait %d = %d", pid == -1 ? -1 : pid - TID(0), tid - TID(0));
		return tid;
	}
	fk_log("wait %d = none", pid == -1 ? -1 : pid - TID(0));
	errno = ECHILD;
	return -1;
}

static const char *
fk_req_name(int req)
{
	switch (req) {
	case PTRACE_CONT: return "cont";
	case PTRACE_LISTEN: return "listen";
	case PTRACE_SINGLESTEP: return "step";
	case PTRACE_INTERRUPT: return "interrupt";
	case PTRACE_SEIZE: return "seize";
	case PTRACE_DETACH: return "detach";
	case PTRACE_GETEVENTMSG: return "geteventmsg";
	case PTRACE_GETSIGINFO: return "getsiginfo";
	case PTRACE_GETSIGMASK: return "getsigmask";
	case PTRACE_SETSIGMASK: return "setsigmask";
	default: return "other";
	}
}

static long
fk_ptrace(int req, pid_t tid, void *addr, void *data)
{
	long sig = (long)data;

	if (req == PTRACE_CONT || req == PTRACE_DETACH)
		fk_log("%s %d sig %ld", fk_req_name(req), tid - TID(0), sig);
	else
		fk_log("%s %d", fk_req_name(req), tid - TID(0));
	if (tid == fk.gone) {
		errno = ESRCH;
		return -1;
	}
	if (req == PTRACE_GETEVENTMSG)
		*(unsigned long *)data = fk.eventmsg;
	else if (req == PTRACE_GETSIGMASK)
		*(uint64_t *)data = 0;
	else if (req == PTRACE_GETSIGINFO)
		memset(data, 0, sizeof(siginfo_t));
	return 0;
}

static arch_regs *
fk_regs_of(pid_t tid)
{
	unsigned i = (unsigned)(tid - TID(0));

	return i < 8 ? &fk.regs[i] : NULL;
}

static int
fk_getregs(pid_t tid, arch_regs *regs)
{
	arch_regs *r = fk_regs_of(tid);

	fk_log("getregs %d", tid - TID(0));
	if (!r || tid == fk.gone) {
		errno = ESRCH;
		return -1;
	}
	*regs = *r;
	return 0;
}

static int
fk_setregs(pid_t tid, const arch_regs *regs)
{
	arch_regs *r = fk_regs_of(tid);

	fk_log("setregs %d pc %#llx", tid - TID(0), (unsigned long long)arch_pc(regs));
	if (!r || tid == fk.gone) {
		errno = ESRCH;
		return -1;
	}
	*r = *regs;
	return 0;
}

static int
fk_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	if (addr < MEM_BASE || addr + len > MEM_BASE + sizeof(fk.mem)) {
		errno = EIO;
		return -1;
	}
	memcpy(buf, fk.mem + (addr - MEM_BASE), len);
	return 0;
}

static int
fk_write(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	if (addr < MEM_BASE || addr + len > MEM_BASE + sizeof(fk.mem)) {
		errno = EIO;
		return -1;
	}
	memcpy(fk.mem + (addr - MEM_BASE), buf, len);
	return 0;
}

static int
fk_tgkill(pid_t tgid, pid_t tid, int sig)
{
	fk_log("tgkill %d sig %d", tid - TID(0), sig);
	return 0;
}

/* Tgid and PPid of the one thread a test names; every other line and thread is not there. */
static int
fk_status_field(pid_t pid, const char *key, char *buf, size_t size)
{
	pid_t v;

	if (pid != fk.status_tid)
		return -1;
	if (strcmp(key, "Tgid") == 0)
		v = fk.status_tgid;
	else if (strcmp(key, "PPid") == 0)
		v = fk.status_ppid;
	else
		return -1;
	snprintf(buf, size, "%d", v);
	return 0;
}

/* Every thread a test makes with another's tid shares its memory: the vfork child. */
static int
fk_kcmp_vm(pid_t a, pid_t b)
{
	return 0;
}

static const struct jt_kops fk_kops = {
	.wait = fk_wait,
	.wait_unless_woken = fk_wait,
	.ptrace = fk_ptrace,
	.ptrace_unless_woken = fk_ptrace,
	.getregs = fk_getregs,
	.setregs = fk_setregs,
	.read = fk_read,
	.write = fk_write,
	.tgkill = fk_tgkill,
	.status_field = fk_status_field,
	.kcmp_vm = fk_kcmp_vm,
};

static struct jt_options opt;
static struct jt_tracer tr;

/* A fresh session with no process, one tracer thread (the caller), and an empty script. */
static void
world_reset(void)
{
	memset(&fk, 0, sizeof(fk));
	memset(fk.mem, 0x90, sizeof(fk.mem));	/* nop */
	tthread_clear_waited(&tr.tthreads.t[0]);
	tr.tthreads.n = 1;
	tr.tthreads.t[0].inbox = NULL;
}

static void
world_free(void)
{
	struct jt_proc *p;

	while ((p = tr.procs)) {
		proc_each_thread(&tr, p, NULL, thread_free);
		proc_free(&tr, p);
	}
	while ((p = tr.ended)) {
		tr.ended = p->next;
		proc_free(&tr, p);
	}
	opt.follow_forks = 0;
}

static struct jt_thread *
thread_make(struct jt_proc *p, pid_t tid, enum jt_thread_state state)
{
	struct jt_thread *t = thread_new(&tr, p, tid);

	t->state = state;
	return t;
}

/* Clears the log, so that a test checks the requests of one step at a time. */
static void
log_clear(void)
{
	fk.log[0] = '\0';
}

static void
log_is(const char *want, const char *name)
{
	int same = strcmp(fk.log, want) == 0;

	ok(same, "%s", name);
	if (!same)
		printf("#   got:  %s\n#   want: %s\n", fk.log, want);
}

/* A stop-core program's start: the session as the loop holds it for the stop core, its kernel calls faked. */
static void
sc_begin(void)
{
	tr.opt = &opt;
	tthread_init(&tr.tthreads, &tr, 0);
	tthread_lock(&tr.tthreads);
	kops = &fk_kops;
}

/* Its end: the lock given back; the plan. */
static int
sc_end(void)
{
	tthread_clear_waited(&tr.tthreads.t[0]);
	tthread_unlock(&tr.tthreads);
	return tap_done();
}

#endif
