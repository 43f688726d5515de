/* proc.c - lifecycle of the per-process and per-thread control blocks. */
#include <elf.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "growth.h"
#include "heap.h"
#include "pages.h"
#include "leak.h"
#include "mem.h"
#include "proc.h"
#include "options.h"
#include "tracer.h"
#include "procfs.h"
#include "sym.h"
#include "unwind.h"
#include "util.h"
#include "worker.h"

/* The last image number given (jt_proc.image). */
static uint64_t proc_images;

#define TID_HASH(tid) ((unsigned)(tid) % ARRAY_SIZE(((struct jt_tracer *)0)->threads))

struct jt_proc *
proc_new(struct jt_tracer *tr, pid_t pid, const char *command)
{
	struct jt_proc *p = xcalloc(1, sizeof(*p));

	p->pid = pid;
	p->vm_owner = p;
	p->command = xstrdup(command ? command : "?");
	modules_init(&p->mods);
	bp_table_init(&p->bps);
	p->sym = sym_new();
	p->unwinder = tr->opt->unwinder;
	p->uw = unwind_new_backend(&p->mods, p->unwinder);
	p->heap = heap_new();
	if (tr->opt->pages)
		p->pages = pages_new(p->heap);
	p->growth = growth_new();
	p->leak_check = tr->opt->leak_check;
	p->uprobes = tr->uprobes;
	p->image = ++proc_images;
	p->next = tr->procs;
	tr->procs = p;
	return p;
}

void
proc_reset_image(struct jt_tracer *tr, struct jt_proc *p)
{
	/* The snapshot being written may read its symbolizer. */
	worker_wait(tr->snap_worker);
	bp_table_clear(&p->bps);
	bp_table_init(&p->bps);
	unwind_destroy(p->uw);
	modules_clear(&p->mods);
	modules_init(&p->mods);
	p->uw = unwind_new_backend(&p->mods, p->unwinder);
	sym_destroy(p->sym);
	p->sym = sym_new();
	p->r_debug = 0;
	p->mods_gen = 0;
	/* Only the launched program's first image is held to its names at its start (lifecycle.c). */
	p->names_due = 0;
	alias_clear(&p->aliases);
	memset(&p->own, 0, sizeof(p->own));
	heap_clear_live(p->heap);
	if (p->pages)
		heap_clear_live(p->pages);
	p->brk_cur = 0;
	/* Every block of the new image is allocated in our sight. */
	p->unseen_blocks = 0;
	/* The new image has its own code, and execve set every caught signal back to SIG_DFL. */
	p->park_pc = p->spin_pc = 0;
	memset(&p->sigtrap, 0, sizeof(p->sigtrap));
	p->image = ++proc_images;
	p->utramp = 0;
	free(p->usites);
	p->usites = NULL;
	p->nusites = 0;
}

struct jt_proc *
proc_take_image(struct jt_tracer *tr, struct jt_proc *p)
{
	struct jt_proc *old = xcalloc(1, sizeof(*old));

	(void)tr;
	old->pid = p->pid;
	old->vm_owner = old;
	old->attached = p->attached;
	old->execs = p->execs;
	old->image_ended = ++p->execs;
	old->command = xstrdup(p->command);
	old->exe = p->exe ? xstrdup(p->exe) : NULL;
	old->exe_named = p->exe_named ? xstrdup(p->exe_named) : NULL;
	modules_init(&old->mods);
	bp_table_init(&old->bps);
	old->unwinder = p->unwinder;
	/* Its stacks are raw pcs of the old image: only its own modules name them. */
	old->sym = p->sym;
	p->sym = sym_new();
	old->heap = p->heap;
	p->heap = heap_new();
	/* time_ms goes on counting from the first image's start: --interval's due times are on it. */
	heap_clock_from(p->heap, old->heap);
	if ((old->pages = p->pages))
		p->pages = pages_new(p->heap);
	old->growth = p->growth;
	p->growth = growth_new();
	memcpy(old->calls, p->calls, sizeof(old->calls));
	memset(p->calls, 0, sizeof(p->calls));
	old->untraced = p->untraced;
	old->nuntraced = p->nuntraced;
	p->untraced = NULL;
	p->nuntraced = 0;
	old->leak = p->leak;
	p->leak = NULL;
	old->json_timeline = p->json_timeline;
	old->json_pages_timeline = p->json_pages_timeline;
	p->json_timeline = p->json_pages_timeline = 0;
	return old;
}

void
proc_unlink(struct jt_tracer *tr, struct jt_proc *p)
{
	for (struct jt_proc **pp = &tr->procs; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
}

void
proc_free(struct jt_tracer *tr, struct jt_proc *p)
{
	proc_unlink(tr, p);
	/* The snapshot being written may read its tables. */
	worker_wait(tr->snap_worker);
	unwind_destroy(p->uw);
	modules_clear(&p->mods);
	bp_table_clear(&p->bps);
	sym_destroy(p->sym);
	heap_destroy(p->heap);
	heap_destroy(p->pages);
	growth_destroy(p->growth);
	leak_result_clear(p->leak);
	free(p->leak);
	alias_clear(&p->aliases);
	for (size_t i = 0; i < p->nuntraced; i++) {
		free(p->untraced[i].module);
		free(p->untraced[i].reason);
	}
	free(p->untraced);
	free(p->usites);
	free(p->udrops);
	free(p->command);
	free(p->exe);
	free(p->exe_named);
	free(p);
}

/* Reads the string at addr of pid into buf (size bytes with its NUL), a page at a time: it may end at the stack's top. Returns 0 or -1. */
static int
proc_read_str(pid_t pid, uint64_t addr, char *buf, size_t size)
{
	size_t got = 0, n;

	while (got < size) {
		n = 4096 - ((addr + got) & 4095);
		if (n > size - got)
			n = size - got;
		if (mem_read(pid, addr + got, buf + got, n) < 0)
			return -1;
		if (memchr(buf + got, '\0', n))
			return 0;
		got += n;
	}
	return -1;
}

/* Non-zero when paths a and b are the same file. */
static int
proc_same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/*
 * The path pid's program was run by: AT_EXECFN, the name execve was given,
 * made absolute against the process's working directory. Unlike
 * /proc/PID/exe it keeps a symlink's own name (redis-server, a symlink to
 * redis-check-rdb). NULL when that no longer names the executable (the
 * process changed directory, or the file was replaced).
 */
static char *
proc_exe_named(pid_t pid)
{
	char name[PATH_MAX], dir[PATH_MAX + 64], real[PATH_MAX], exe[64], *slash, *base, *out;
	uint64_t at;

	if (procfs_auxv(pid, AT_EXECFN, &at) < 0 || proc_read_str(pid, at, name, sizeof(name)) < 0)
		return NULL;
	slash = strrchr(name, '/');
	base = slash ? slash + 1 : name;
	if (slash)
		*slash = '\0';
	if (!slash)
		snprintf(dir, sizeof(dir), "/proc/%d/cwd", (int)pid);
	else if (slash == name)
		snprintf(dir, sizeof(dir), "/");
	else if (name[0] == '/')
		snprintf(dir, sizeof(dir), "%s", name);
	else
		snprintf(dir, sizeof(dir), "/proc/%d/cwd/%s", (int)pid, name);
	if (!realpath(dir, real))
		return NULL;
	out = xmalloc(strlen(real) + strlen(base) + 2);
	sprintf(out, "%s/%s", strcmp(real, "/") ? real : "", base);
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	if (!proc_same_file(out, exe)) {
		free(out);
		return NULL;
	}
	return out;
}

void
proc_name(struct jt_proc *p, int cmdline)
{
	char *line;

	free(p->exe);
	p->exe = procfs_exe(p->pid);
	free(p->exe_named);
	p->exe_named = proc_exe_named(p->pid);
	if (!cmdline)
		return;
	if (!(line = procfs_cmdline(p->pid)) && p->exe)
		line = xstrdup(p->exe);
	if (line) {
		free(p->command);
		p->command = line;
	}
}

void
proc_name_as(struct jt_proc *p, const struct jt_proc *from)
{
	free(p->command);
	p->command = xstrdup(from->command);
	free(p->exe);
	p->exe = from->exe ? xstrdup(from->exe) : NULL;
	free(p->exe_named);
	p->exe_named = from->exe_named ? xstrdup(from->exe_named) : NULL;
}

struct jt_proc *
proc_find(struct jt_tracer *tr, pid_t pid)
{
	for (struct jt_proc *p = tr->procs; p; p = p->next)
		if (p->pid == pid)
			return p;
	return NULL;
}

void
proc_each_thread(struct jt_tracer *tr, struct jt_proc *p, const struct jt_thread *skip,
		 void (*fn)(struct jt_tracer *, struct jt_thread *))
{
	pid_t pid = p->pid;

	for (size_t i = 0; i < ARRAY_SIZE(tr->threads); i++) {
		struct jt_thread *t = tr->threads[i], *next;

		for (; t; t = next) {
			next = t->hnext;
			if (t->proc != p || t == skip)
				continue;
			fn(tr, t);
			if (proc_find(tr, pid) != p)
				return;
		}
	}
}

struct jt_thread *
thread_find(struct jt_tracer *tr, pid_t tid)
{
	for (struct jt_thread *t = tr->threads[TID_HASH(tid)]; t; t = t->hnext)
		if (t->tid == tid)
			return t;
	return NULL;
}

struct jt_thread *
thread_new(struct jt_tracer *tr, struct jt_proc *p, pid_t tid)
{
	struct jt_thread *t = xcalloc(1, sizeof(*t));

	t->tid = tid;
	t->proc = p;
	t->pin_cpu = -1;
	/* ptrace makes it a tracee of the thread that attached it, or of the one tracing its creator. */
	t->owner = tthread_self();
	if (t->owner)
		t->owner->ntracees++;
	t->hnext = tr->threads[TID_HASH(tid)];
	tr->threads[TID_HASH(tid)] = t;
	p->nthreads++;
	return t;
}

void
thread_free(struct jt_tracer *tr, struct jt_thread *t)
{
	struct jt_thread **pp;

	/* Before it is taken out: what the source applies for it last is its thread's (thread_find). */
	if (tr->thread_gone)
		tr->thread_gone(tr, t);
	for (pp = &tr->threads[TID_HASH(t->tid)]; *pp; pp = &(*pp)->hnext)
		if (*pp == t) {
			*pp = t->hnext;
			break;
		}
	t->proc->nthreads--;
	if (t->owner) {
		t->owner->ntracees--;
		t->owner->nactive -= t->active;
		/*
		 * On its way to t->owner, it waits in that tracer thread's
		 * inbox: out of it too. An exec frees the threads it killed,
		 * parked ones among them, and a seize that waited for that
		 * exec puts its thread back in the inbox (handover_receive).
		 */
		if (thread_in_transit(t))
			for (pp = &t->owner->inbox; *pp; pp = &(*pp)->inext)
				if (*pp == t) {
					*pp = t->inext;
					break;
				}
	}
	unwind_memo_free(t->umemo);
	free(t);
}

void
thread_set_owner(struct jt_thread *t, struct jt_tthread *to)
{
	if (t->owner == to)
		return;
	if (t->owner) {
		t->owner->ntracees--;
		t->owner->nactive -= t->active;
	}
	if (to) {
		to->ntracees++;
		to->nactive += t->active;
	}
	t->owner = to;
}

int
proc_unwind(struct jt_tracer *tr, struct jt_thread *t, struct jt_unwind_ctx *ctx, const arch_regs *regs,
	    uint64_t *pcs, int max, int unlock)
{
	struct jt_proc *p = t->proc;
	int n;

	unwind_ctx_memo(ctx, &t->umemo);
	if (!unlock || p->unwind_block)
		return unwind_stack_ctx(p->uw, ctx, t->tid, regs, pcs, max);
	/*
	 * Outside the lock the unwind reads only what proc_unwinds_quiesce
	 * keeps still (p's modules and unwinder), t's memory and ctx; t is
	 * stopped, and only the calling tracer thread restarts it or hands it
	 * over.
	 */
	DEBUG_ASSERT(tthread_locked(&tr->tthreads));
	p->unwinding++;
	tthread_unlock(&tr->tthreads);
	n = unwind_stack_ctx(p->uw, ctx, t->tid, regs, pcs, max);
	tthread_lock(&tr->tthreads);
	if (--p->unwinding == 0 && p->unwind_block)
		pthread_cond_broadcast(&tr->tthreads.unwound);
	return n;
}

void
proc_unwinds_quiesce(struct jt_tracer *tr, struct jt_proc *p)
{
	DEBUG_ASSERT(tthread_locked(&tr->tthreads));
	p->unwind_block++;
	while (p->unwinding)
		tthread_wait(&tr->tthreads, &tr->tthreads.unwound, NULL);
}

void
proc_unwinds_allow(struct jt_proc *p)
{
	p->unwind_block--;
}
