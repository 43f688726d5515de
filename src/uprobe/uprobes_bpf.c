/* uprobes_bpf.c - the uprobe source's BPF path: its sites in uprobe_multi links per process, its records from the one ring to the same apply. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kops.h"
#include "maps.h"
#include "perf_regs.h"
#include "proc.h"
#include "procfs.h"
#include "regs.h"
#include "thread.h"
#include "tracer.h"
#include "up_bpf.h"
#include "up_bpf_abi.h"
#include "uprobes.h"
#include "uprobes_int.h"
#include "util.h"

_Static_assert(UPROBES_FREE_COPY <= UP_BPF_PF_STACK, "a deferred free keeps the stack a free's record has");

/*
 * A joined call's record (up_bpf.h): the samples of its entry and of its
 * return, applied in turn. The entry's registers are the record's with
 * the entry's instruction pointer; the return's, the return address and
 * the stack pointer the return leaves with.
 */
static void
uprobes_bpf_joined(struct jt_uprobes *u, const struct jt_usite *rs, const struct up_bpf_event *ev)
{
	const struct jt_usite *es = rs->pair;
	struct jt_usample s = { .site = es, .pid = ev->pid, .tid = ev->tid, .time = ev->time };
	uint64_t ret;

	if (!rs->ret || !es || ev->nregs != es->nregs)
		return;
	arch_regs_from_perf(ev->regs, es->regs_mask, &s.regs);
	ret = arch_pc(&s.regs);
	arch_set_pc(&s.regs, es->site);
	s.stack = ev->stack;
	s.stack_len = ev->stack_len;
	u->samples++;
	u->joined++;
	u->stack_bytes += ev->stack_len;
	uprobes_apply(u, &s);
	s.site = rs;
	arch_set_pc(&s.regs, ret);
	arch_set_sp(&s.regs, arch_sp_after_ret(arch_sp(&s.regs)));
	s.stack = NULL;
	s.stack_len = 0;
	uprobes_apply(u, &s);
}

/* One record of the ring as a sample of its site: what the perf path's reader makes of a perf sample. */
static void
uprobes_bpf_event(void *arg, const struct up_bpf_event *ev)
{
	struct jt_uprobes *u = arg;
	struct jt_usample s = { 0 };

	if (ev->site >= u->nsites)
		return;
	if (ev->pf_seq) {
		/* A deferred free read at a snapshot (uprobes_bpf_settle) comes again with its record: once. */
		struct jt_thread *t = thread_find(u->tr, ev->tid);

		if (t && ev->pf_seq <= t->upf_seq)
			return;
		if (t)
			t->upf_seq = ev->pf_seq;
	}
	if (ev->joined) {
		uprobes_bpf_joined(u, u->sites[ev->site], ev);
		return;
	}
	s.site = u->sites[ev->site];
	if (s.site->hook) {
		/* Its SIGTRAP follows, whatever the image: the stop takes it for ours (uprobes_bpf_hook_of). */
		struct jt_thread *t = thread_find(u->tr, ev->tid);

		if (t)
			t->uhook = s.site->fn + 1;
		return;
	}
	if (ev->nregs != s.site->nregs)
		return;
	s.pid = ev->pid;
	s.tid = ev->tid;
	s.time = ev->time;
	arch_regs_from_perf(ev->regs, s.site->regs_mask, &s.regs);
	if (s.site->stack && ev->stack) {
		s.stack = ev->stack;
		s.stack_len = ev->stack_len;
	}
	u->samples++;
	u->stack_bytes += ev->stack_len;
	uprobes_apply(u, &s);
}

/*
 * The BPF path wherever the kernel makes uprobe_multi links and lets us
 * load the program; else the perf path, and -v says why.
 * JMPTRACE_TEST_UPROBE_PATH=perf keeps the perf path on a kernel that has
 * the BPF one: a hook for the tests (tests/uprobe.t, uprobe_paths.t), as
 * JMPTRACE_TEST_FAULT is, since the kernels that take the perf path
 * (Debian 12's 6.1) are not where the tests run. A user never chooses.
 */
int
uprobes_bpf_choose(struct jt_uprobes *u, uint64_t ring_bytes)
{
	const char *test = getenv("JMPTRACE_TEST_UPROBE_PATH");
	char why[192], a[32];

	if (test && strcmp(test, "perf") == 0) {
		debug_msg("uprobe source: the perf path, a ring per thread (JMPTRACE_TEST_UPROBE_PATH=perf)");
		return 0;
	}
	if (!(u->bpf = up_bpf_open(ring_bytes, uprobes_bpf_event, u, why, sizeof(why)))) {
		debug_msg("uprobe source: the perf path, a ring per thread: %s", why);
		return 0;
	}
	debug_msg("uprobe source: the BPF path, uprobe_multi links per process and one ring of %s KiB for all threads",
		  util_num(a, ring_bytes >> 10));
	return 0;
}

/* Links sites[i] and every later one of its file and kind not linked yet (done[]); a refusal goes to their err[]. */
static void
uprobes_bpf_link_file(struct jt_uprobes *u, struct jt_proc *p, struct jt_usite **sites, size_t n, size_t i,
		      char *done, int *err)
{
	uint64_t *offs = xmalloc(n * sizeof(*offs)), *cookies = xmalloc(n * sizeof(*cookies));
	size_t m = 0;
	int fd;

	for (size_t j = i; j < n; j++) {
		struct jt_usite *s = sites[j];

		if (done[j] || s->ret != sites[i]->ret || strcmp(s->path, sites[i]->path) != 0)
			continue;
		done[j] = 1;
		offs[m] = s->file_off;
		cookies[m++] = up_bpf_cookie(s->index, s->regs_mask, s->stack, s->hook, s->join, s->defer);
	}
	if ((fd = up_bpf_link(u->bpf, p->pid, sites[i]->path, offs, cookies, m, sites[i]->ret)) < 0) {
		int e = errno;

		for (size_t j = i; j < n; j++)
			if (sites[j]->path && strcmp(sites[j]->path, sites[i]->path) == 0 && sites[j]->ret == sites[i]->ret)
				err[j] = e;
	} else {
		u->links = xrealloc(u->links, (u->nlinks + 1) * sizeof(*u->links));
		u->links[u->nlinks++] = (struct up_link){ .pid = p->pid, .fd = fd };
	}
	free(offs);
	free(cookies);
}

/*
 * One link per (file, entries or returns): uprobe_multi takes one path per
 * link, and its return flag for the whole link. The pid filter covers the
 * threads p makes later with no work of ours.
 */
void
uprobes_bpf_link(struct jt_uprobes *u, struct jt_proc *p, struct jt_usite **sites, size_t n, int *err)
{
	char *done = xcalloc(n ? n : 1, 1);

	for (size_t i = 0; i < n; i++) {
		if (sites[i]->def || !sites[i]->path || p->vfork_child)
			done[i] = 1;
		else if (sites[i]->index >= UP_BPF_SITES_MAX) {
			done[i] = 1;
			err[i] = E2BIG;
		}
	}
	for (size_t i = 0; i < n; i++)
		if (!done[i])
			uprobes_bpf_link_file(u, p, sites, n, i, done, err);
	for (size_t i = 0; i < n; i++) {
		free(sites[i]->path);
		sites[i]->path = NULL;
	}
	free(done);
}

void
uprobes_bpf_unlink(struct jt_uprobes *u, pid_t pid, int later)
{
	struct up_grave *g = xcalloc(1, sizeof(*g));
	size_t k = 0;

	for (size_t i = 0; i < u->nlinks; i++) {
		if (pid && u->links[i].pid != pid) {
			u->links[k++] = u->links[i];
			continue;
		}
		g->fds = xrealloc(g->fds, (size_t)(g->nfds + 1) * sizeof(*g->fds));
		g->fds[g->nfds++] = u->links[i].fd;
	}
	u->nlinks = k;
	if (!g->nfds) {
		free(g);
		return;
	}
	if (pid)
		debug_msg("process %d: its %d uprobe_multi links closed%s", (int)pid, g->nfds, later ? " in the background" : "");
	g->together = 1;
	if (later) {
		uprobes_bury(u, g);
		return;
	}
	uprobes_grave_close(g);
}

/*
 * How far below the start of stack a stack pointer may be and still be
 * taken for one of main's frames (a fork child's copy of them included):
 * a thread's own stack is a mapping elsewhere, most often far below.
 */
#define UP_TOP_NEAR ((uint64_t)64 << 20)

/* The end of the mapping of pid that holds addr, or 0; maps is read at the first call. */
static uint64_t
uprobes_bpf_mapping_end(pid_t pid, uint64_t addr, struct jt_maps *maps)
{
	ssize_t i;

	if (!maps || (!maps->v && maps_read(pid, maps) < 0))
		return 0;
	return (i = maps_find(maps, addr)) >= 0 ? maps->v[i].end : 0;
}

void
uprobes_bpf_top(struct jt_uprobes *u, struct jt_thread *t, int fresh, struct jt_maps *maps)
{
	unsigned long long start;
	uint64_t sp, top;
	arch_regs r;

	/* A thread that runs has no registers to read: it gets its top at the next link, or never. */
	if (!u || !u->bpf || !u->stack_whole || t->utop || kops->getregs(t->tid, &r) < 0)
		return;
	sp = arch_sp(&r);
	/*
	 * A new thread: everything above is its thread block, not frames (no
	 * read of /proc for it). The start of stack is the stack pointer
	 * _start began with: main's frames are all below it.
	 */
	if (fresh)
		top = sp;
	else if (procfs_stat_field(t->proc->pid, 28, &start) == 0 && sp <= start && start - sp < UP_TOP_NEAR)
		top = start;
	else
		top = uprobes_bpf_mapping_end(t->proc->pid, sp, maps);
	if (!top)
		return;
	if (up_bpf_set_top(u->bpf, t->tid, top) < 0) {
		debug_msg("thread %d: no stack top for the BPF program (%s): its hits copy %u bytes of stack",
			  t->tid, strerror(errno), u->stack_copy);
		return;
	}
	t->utop = top;
	t->upf_seq = 0;
	debug_msg("thread %d: its hits copy its stack up to %#llx (%llu bytes above its stack pointer now)", t->tid,
		  (unsigned long long)top, (unsigned long long)(top - sp));
}

void
uprobes_bpf_top_drop(struct jt_uprobes *u, struct jt_thread *t, int ended)
{
	if (!u || !u->bpf || !t->utop)
		return;
	/* Its free deferred last goes after its records (unless a drain stopped short): the thread makes no more. */
	if (ended) {
		uprobes_bpf_drain(u);
		up_bpf_pending(u->bpf, t->proc->pid, t->tid, up_bpf_drained_at(u->bpf) ? UINT64_MAX : 0);
	}
	up_bpf_drop_top(u->bpf, t->tid);
	t->utop = 0;
}

/*
 * How much earlier than the drain a running thread's free must be for a
 * settle to apply it: the program's clock (the kernel's fast monotonic
 * accessor) may lag the one jmptrace reads by a moment around a
 * timekeeping update, and a record of the thread's from before its free
 * must lie before the drain's end. A stopped thread's are all before it.
 */
#define UP_SETTLE_MARGIN_NS 1000000ULL

void
uprobes_bpf_settle(struct jt_uprobes *u, const struct jt_thread *held)
{
	uint64_t before;

	if (!u || !u->bpf)
		return;
	uprobes_bpf_drain(u);
	if ((before = up_bpf_drained_at(u->bpf)) <= UP_SETTLE_MARGIN_NS)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(u->tr->threads); i++)
		for (struct jt_thread *t = u->tr->threads[i]; t; t = t->hnext)
			if (t->utop)
				up_bpf_pending(u->bpf, t->proc->pid, t->tid,
					       t == held || thread_is_stopped(t) ? UINT64_MAX
										  : before - UP_SETTLE_MARGIN_NS);
}

/*
 * bpf_send_signal_thread sends SIGTRAP as the kernel's own (SI_KERNEL, as
 * an int3 of the program's does): the hook's record, applied at the stop
 * before this (stop.c drains first), says that this one is ours.
 */
int
uprobes_bpf_hook_of(struct jt_thread *t, int code)
{
	int fn = t->uhook - 1;

	if (code != SI_KERNEL || !t->uhook)
		return -1;
	t->uhook = 0;
	return fn;
}

void
uprobes_bpf_drain(struct jt_uprobes *u)
{
	u->draining = 1;
	up_bpf_drain(u->bpf);
	u->draining = 0;
}

void
uprobes_bpf_free(struct jt_uprobes *u)
{
	up_bpf_close(u->bpf);
	u->bpf = NULL;
	free(u->links);
	u->links = NULL;
	u->nlinks = 0;
}
