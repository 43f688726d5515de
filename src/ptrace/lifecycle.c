/* lifecycle.c - processes and threads coming and going: a new thread or child adopted, fork, exec, exit. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bp.h"
#include "cpu.h"
#include "elfhdr.h"
#include "image.h"
#include "kops.h"
#include "lifecycle.h"
#include "mem.h"
#include "named.h"
#include "options.h"
#include "proc.h"
#include "restart.h"
#include "tracer.h"
#include "tthread.h"
#include "up_child.h"
#include "uprobes.h"
#include "util.h"

static void lifecycle_detach_proc(struct jt_tracer *tr, struct jt_proc *p);

/* Reads the Tgid and PPid lines of /proc/TID/status. Returns 0 or -1. */
static int
lifecycle_read_ids(pid_t tid, pid_t *tgid, pid_t *ppid)
{
	char buf[32];

	*tgid = *ppid = 0;
	if (kops->status_field(tid, "Tgid", buf, sizeof(buf)) == 0)
		*tgid = atoi(buf);
	if (kops->status_field(tid, "PPid", buf, sizeof(buf)) == 0)
		*ppid = atoi(buf);
	return *tgid ? 0 : -1;
}

/*
 * A forked child inherited our trap bytes but is not traced (no -f): give it
 * back its original code and let it go, so it runs exactly as it would.
 */
static void
lifecycle_release_child(struct jt_proc *parent, pid_t pid)
{
	/* --pin: it inherited the pinned affinity of the thread that forked; not ours to keep. */
	if (parent->pin_orig_set && cpu_unpin(pid, &parent->pin_orig) < 0 && errno != ESRCH)
		perror_msg("child %d: cannot give its CPU affinity back", pid);
	if (bp_restore_into(&parent->bps, pid) < 0)
		debug_msg("could not clean breakpoints out of child %d", pid);
	if (up_child_release(parent, pid) < 0)
		debug_msg("could not clean the uprobes' trap bytes out of child %d", pid);
	if (kops_request(PTRACE_DETACH, pid, 0) < 0 && errno != ESRCH)
		perror_msg("ptrace(PTRACE_DETACH, %d)", pid);
}

void
lifecycle_unpin(struct jt_thread *t)
{
	if (t->pin_cpu >= 0 && cpu_unpin(t->tid, &t->pin_saved) < 0 && errno != ESRCH)
		perror_msg("thread %d: cannot give its CPU affinity back", t->tid);
	t->pin_cpu = -1;
}

/*
 * -f: a forked child gets its own tables. Its memory is a copy of the
 * parent's, trap bytes included: clean it and set it up like a new image.
 * Blocks it inherited are unknown to it, like blocks before an attach.
 */
static struct jt_thread *
lifecycle_follow_child(struct jt_tracer *tr, struct jt_proc *parent, pid_t pid)
{
	struct jt_proc *p = proc_new(tr, pid, NULL);
	struct jt_thread *t = thread_new(tr, p, pid);

	proc_name_as(p, parent);

	p->unseen_blocks = 1;
	/* fork copies the signal dispositions, handler addresses still valid in the copy. */
	p->sigtrap = parent->sigtrap;
	/* --pin: it inherited its parent's pinned affinity; its own is the parent's from before. */
	p->pin_orig_set = parent->pin_orig_set;
	p->pin_orig = parent->pin_orig;
	bp_restore_into(&parent->bps, pid);
	if (image_setup(p) < 0) {
		lifecycle_detach_proc(tr, p);
		return NULL;
	}
	return t;
}

struct jt_thread *
lifecycle_adopt(struct jt_tracer *tr, pid_t tid)
{
	pid_t tgid, ppid;
	struct jt_proc *p, *parent;

	if (lifecycle_read_ids(tid, &tgid, &ppid) < 0)
		return NULL;
	if ((p = proc_find(tr, tgid))) {
		struct jt_thread *t = thread_new(tr, p, tid);

		/* --source uprobe: before it runs its first instruction. */
		if (p->uprobes)
			uprobes_thread_add(p->uprobes, t);
		return t;
	}
	parent = proc_find(tr, ppid);
	if (!parent)
		parent = tr->procs;
	if (!parent)
		return NULL;
	if (kops->kcmp_vm(parent->pid, tid) == 0) {
		/* vfork or CLONE_VM: it runs in the parent's memory, over our trap bytes. */
		p = proc_new(tr, tid, NULL);
		proc_name_as(p, parent);
		p->vfork_child = 1;
		p->vm_owner = parent;
		p->pin_orig_set = parent->pin_orig_set;
		p->pin_orig = parent->pin_orig;
		return thread_new(tr, p, tid);
	}
	if (!tr->opt->follow_forks) {
		lifecycle_release_child(parent, tid);
		return NULL;
	}
	return lifecycle_follow_child(tr, parent, tid);
}

/* Forgets every thread of p but keep (the one that survives an execve). */
static void
lifecycle_drop_threads(struct jt_tracer *tr, struct jt_proc *p, struct jt_thread *keep)
{
	proc_each_thread(tr, p, keep, thread_free);
}

/* Lets thread t go as it is, and forgets it. */
static void
lifecycle_let_go(struct jt_tracer *tr, struct jt_thread *t)
{
	lifecycle_unpin(t);
	kops_request(PTRACE_DETACH, t->tid, 0);
	thread_free(tr, t);
}

/* Lets every thread of p go as it is, and forgets p unless it is the main process. */
static void
lifecycle_detach_proc(struct jt_tracer *tr, struct jt_proc *p)
{
	proc_each_thread(tr, p, NULL, lifecycle_let_go);
	if (p->pid != tr->main_pid)
		proc_free(tr, p);
}

/*
 * Non-zero when p exec'd a program of another architecture (say a 32-bit
 * one: only programs of the architecture jmptrace was built for have the
 * symbols and registers we expect); what says what it is.
 */
static int
lifecycle_exec_foreign(const struct jt_proc *p, char *what, size_t size)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/exe", p->pid);
	return elfhdr_classify_file(path, what, size) == ELFHDR_OTHER_ARCH;
}

/*
 * An image we cannot trace: let the program run on untraced, or end the run
 * if it is the first. old is the report due of the image before, or NULL.
 */
static void
lifecycle_exec_untraceable(struct jt_tracer *tr, struct jt_proc *p, const char *foreign, struct jt_proc *old)
{
	int attached_main = p->pid == tr->main_pid && p->attached;

	if (!tr->image_seen) {
		/* A #! script whose interpreter launch_check could not look at. */
		if (foreign)
			error_msg("cannot trace '%s': it is %s; jmptrace traces %s programs only",
				  tr->opt->argv ? tr->opt->argv[0] : p->command, foreign, elfhdr_our_arch);
		kill(p->pid, SIGKILL);
		tr->fatal = 1;
		return;
	}
	if (foreign)
		error_msg("process %d: %s is %s; jmptrace traces %s programs only: it runs on untraced",
			  p->pid, p->exe ? p->exe : p->command, foreign, elfhdr_our_arch);
	else
		error_msg("process %d: the new program cannot be traced; letting it run untraced", p->pid);
	lifecycle_detach_proc(tr, p);	/* frees p unless it is the main process */
	if (attached_main) {
		/*
		 * Not our child: its end will never be reported to us. Its report
		 * is written now, and the run ends as a detach does. The image
		 * before is what was traced: its report is the run's last, in
		 * -o's FILE itself; the new one has nothing to report.
		 */
		if (old)
			old->image_ended = 0;
		else
			p->report_due = "exec";
		tr->detached = 1;
	}
}

static struct restart lifecycle_exec_quiet(struct jt_tracer *tr, struct jt_thread *t);
static void lifecycle_report_due(struct jt_tracer *tr, struct jt_proc *p, const char *reason);

/* Non-zero when p's image made a traced call: a heap, or pages, to report. */
static int
lifecycle_image_called(const struct jt_proc *p)
{
	for (size_t i = 0; i < ARRAY_SIZE(p->calls); i++)
		if (p->calls[i])
			return 1;
	return 0;
}

/*
 * p's image, traced until this exec, ends: its figures go into a report of
 * their own (reason "exec"), written once this stop is handled, and p
 * starts the new image from zero. An image that made no traced call has
 * nothing to say and gets no report. Returns the report due, or NULL.
 */
static struct jt_proc *
lifecycle_image_end(struct jt_tracer *tr, struct jt_proc *p)
{
	struct jt_proc *old = proc_take_image(tr, p);

	if (!lifecycle_image_called(old)) {
		proc_free(tr, old);
		return NULL;
	}
	lifecycle_report_due(tr, old, "exec");
	return old;
}

/*
 * The exec of t's process: its other threads are gone, and its image and
 * unwinder are replaced. First every unwind of it running outside the lock
 * must end (one may still be reading a thread the exec killed).
 */
struct restart
lifecycle_exec(struct jt_tracer *tr, struct jt_thread *t)
{
	struct jt_proc *p = t->proc;
	pid_t pid = p->pid;
	struct restart r;

	proc_unwinds_quiesce(tr, p);
	r = lifecycle_exec_quiet(tr, t);
	/* Unless the exec let it go and forgot it. */
	if (proc_find(tr, pid) == p)
		proc_unwinds_allow(p);
	return r;
}

static struct restart
lifecycle_exec_quiet(struct jt_tracer *tr, struct jt_thread *t)
{
	struct jt_proc *p = t->proc;
	struct jt_proc *old = NULL;
	unsigned long old_tid = 0;
	char what[64];
	/*
	 * The image that ends was traced: not the launch's exec, not a vfork
	 * child's (it ran in its parent's memory, recording nothing), not one
	 * exec'd during the detach. During the detach itself the snapshot
	 * that asked for it holds the image's figures already.
	 */
	int traced = tr->image_seen && !p->vfork_child && !p->exec_unseen && !tr->detaching;

	kops->ptrace(PTRACE_GETEVENTMSG, t->tid, NULL, &old_tid);
	mem_forget(p->pid);
	lifecycle_drop_threads(tr, p, t);
	/* A non-leader that execs takes over the leader's tid. */
	if (t->tid != p->pid) {
		struct jt_thread *nt = thread_new(tr, p, p->pid);

		/* The same thread under a new tid: its affinity (--pin) is still the one we saved. */
		nt->pin_cpu = t->pin_cpu;
		nt->pin_saved = t->pin_saved;
		nt->born_traced = t->born_traced;
		thread_free(tr, t);
		t = nt;
	}
	/*
	 * Its tracer handles the exec's stop (loop.c passes it on when the
	 * thread that forked the program waited for it): a non-leader traced
	 * by another tracer thread took over the leader's tid, and the leader's
	 * block it keeps is its tracer's now.
	 */
	if (tthread_self())
		thread_set_owner(t, tthread_self());
	t->ncalls = 0;
	if (p->vfork_child && tr->opt->follow_forks) {
		/* It leaves its parent's memory at exec and becomes a process of its own. */
		p->vfork_child = 0;
		p->vm_owner = p;
	} else if (p->vfork_child || (p->pid != tr->main_pid && !tr->opt->follow_forks)) {
		/* A vfork child leaves its parent's memory at exec: it is no longer ours. */
		lifecycle_detach_proc(tr, p);
		return restart_decide(RESTART_NONE, 0, 0, NULL);
	}
	/* --source uprobe: every event of the image that ends is applied, the frees its threads deferred too. */
	uprobes_settle(p->uprobes, t);
	if (traced)
		old = lifecycle_image_end(tr, p);
	/* Its probes were on the old image's files; the new image gets its own. */
	if (p->uprobes)
		uprobes_image_end(p->uprobes, p);
	proc_reset_image(tr, p);
	/* A launched program keeps the argv it was given as its command line. */
	proc_name(p, tr->image_seen || p->pid != tr->main_pid);
	if (tr->detaching) {
		/*
		 * About to be let go: give the new image none of our trap bytes. It
		 * is not held here, inside execve (see stopall_collect); it is stopped
		 * again on its way out.
		 */
		p->exec_unseen = 1;
		return restart_decide(RESTART_CONT, t->tid, 0, "exec'd during the detach");
	}
	if (lifecycle_exec_foreign(p, what, sizeof(what))) {
		lifecycle_exec_untraceable(tr, p, what, old);
		return restart_decide(RESTART_NONE, 0, 0, NULL);
	}
	if (image_setup(p) < 0) {
		lifecycle_exec_untraceable(tr, p, NULL, old);
		return restart_decide(RESTART_NONE, 0, 0, NULL);
	}
	/* A static program loads nothing later: a name of --alloc it does not define is defined nowhere. */
	if (!tr->image_seen && p->is_static && named_missing_say(p, NAMED_START)) {
		kill(p->pid, SIGKILL);
		tr->fatal = 1;
		tr->bad_names = 1;
		return restart_decide(RESTART_NONE, 0, 0, NULL);
	}
	/*
	 * A dynamic one is held to its names once the libraries it is linked
	 * with are loaded (image_update). A script's first image is its
	 * interpreter, which need not define the program's names.
	 */
	p->names_due = !tr->image_seen && !p->is_static && !tr->launched_script;
	tr->image_seen = 1;
	return restart_decide(RESTART_CONT, t->tid, 0, "on its new image");
}

/*
 * t stopped at a fork, vfork or clone event: the child exists, traced by
 * us, and stops before its first instruction. Waits for that stop, which
 * the caller handles at once (stop_take_child), so that no child is ever
 * traced without being in our tables: a detach that came before its first
 * stop was reported would leave it with our trap bytes (a fork copies
 * them), untraced.
 */
pid_t
lifecycle_wait_child(struct jt_tracer *tr, struct jt_thread *t, unsigned event, int *status)
{
	unsigned long child = 0;
	pid_t r;

	if (event != PTRACE_EVENT_FORK && event != PTRACE_EVENT_VFORK && event != PTRACE_EVENT_CLONE)
		return 0;
	/* Once resumed, a vfork parent waits in the kernel until its child execs or exits. */
	t->vforking = event == PTRACE_EVENT_VFORK;
	if (kops->ptrace(PTRACE_GETEVENTMSG, t->tid, NULL, &child) < 0 || child == 0 || thread_find(tr, (pid_t)child))
		return 0;
	/*
	 * Its first stop may have been waited for already by a sweep of all our
	 * tracees (a recall reaps them while it waits) and kept for the loop:
	 * a wait for it would then block for ever.
	 */
	if (tthread_take_waited_of(tthread_self(), (pid_t)child, status) == 0)
		return (pid_t)child;
	/* ECHILD: its first stop was seen already and it was let go (a fork without -f). */
	do
		r = kops->wait((pid_t)child, status, __WALL | __WNOTHREAD);
	while (r < 0 && errno == EINTR);
	return r == (pid_t)child ? r : 0;
}

/*
 * Process p ended and its report is due: it leaves the process list for
 * tr->ended, where the loop finds it once the stop at hand is handled, so
 * no report is ever written in the middle of another process's pause.
 */
static void
lifecycle_report_due(struct jt_tracer *tr, struct jt_proc *p, const char *reason)
{
	struct jt_proc **pp = &tr->ended;

	proc_unlink(tr, p);
	p->report_due = reason;
	p->next = NULL;
	while (*pp)
		pp = &(*pp)->next;
	*pp = p;
}

/* Records how process p ended, from its wait status. */
static void
lifecycle_set_exit(struct jt_proc *p, int status)
{
	p->exited = 1;
	if (WIFEXITED(status))
		p->exit_status = WEXITSTATUS(status);
	else
		p->killed_by = WTERMSIG(status);
}

void
lifecycle_exited(struct jt_tracer *tr, pid_t tid, int status)
{
	struct jt_thread *t = thread_find(tr, tid);
	struct jt_proc *p;

	if (!t) {
		/*
		 * The main process may have been let go (an untraceable exec); it
		 * is still our child, and its report must say how it ended.
		 */
		if (tid == tr->main_pid) {
			if ((p = proc_find(tr, tid)))
				lifecycle_set_exit(p, status);
			tr->main_exited = 1;
			tr->main_status = status;
		}
		return;
	}
	p = t->proc;
	thread_free(tr, t);
	if (tid != p->pid)
		return;
	lifecycle_set_exit(p, status);
	if (p->pid == tr->main_pid) {
		tr->main_exited = 1;
		tr->main_status = status;
		return;
	}
	proc_unwinds_quiesce(tr, p);
	lifecycle_drop_threads(tr, p, NULL);
	/* An image exec'd during the detach was never traced: a snapshot of it would read 0 calls. */
	if (tr->opt->follow_forks && !p->vfork_child && !p->exec_unseen)
		lifecycle_report_due(tr, p, "exit");
	else
		proc_free(tr, p);
}

