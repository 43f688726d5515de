/* uprobes_perf.c - the uprobe source's perf path: events per thread and probe on its definitions, a ring per thread within the rings' budget, their samples merged by time. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "maps.h"
#include "perf_regs.h"
#include "proc.h"
#include "tracer.h"
#include "up_ring.h"
#include "uprobes.h"
#include "uprobes_int.h"
#include "util.h"

static long
up_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* ---- event ids ---- */

static void
up_id_put(struct jt_uprobes *u, uint64_t id, struct jt_usite *s)
{
	if (2 * (u->id_count + 1) > u->id_mask + 1) {
		size_t n = u->ids ? u->id_mask + 1 : 0, nn = n ? 2 * n : 1024;
		uint64_t *ids = xcalloc(nn, sizeof(*ids));
		struct jt_usite **vals = xcalloc(nn, sizeof(*vals));

		for (size_t i = 0; i < n; i++)
			if (u->ids[i]) {
				size_t j = (u->ids[i] * 0x9e3779b97f4a7c15ULL >> 20) & (nn - 1);
				while (ids[j])
					j = (j + 1) & (nn - 1);
				ids[j] = u->ids[i];
				vals[j] = u->id_site[i];
			}
		free(u->ids);
		free(u->id_site);
		u->ids = ids;
		u->id_site = vals;
		u->id_mask = nn - 1;
	}
	size_t j = (id * 0x9e3779b97f4a7c15ULL >> 20) & u->id_mask;
	while (u->ids[j])
		j = (j + 1) & u->id_mask;
	u->ids[j] = id;
	u->id_site[j] = s;
	u->id_count++;
}

static struct jt_usite *
up_id_get(const struct jt_uprobes *u, uint64_t id)
{
	if (!u->ids || !id)
		return NULL;
	for (size_t j = (id * 0x9e3779b97f4a7c15ULL >> 20) & u->id_mask; u->ids[j]; j = (j + 1) & u->id_mask)
		if (u->ids[j] == id)
			return u->id_site[j];
	return NULL;
}

/* ---- rings and events per thread ---- */

/*
 * Opens d's anchor once. It is the definition's first event, where the
 * kernel registers the probe: milliseconds, so never under the tracer lock
 * (uprobes_open_pending). A failure costs only the anchor's job.
 */
static void
up_anchor(struct jt_uprobes *u, struct up_def *d)
{
	struct perf_event_attr attr = { .size = sizeof(attr), .type = PERF_TYPE_TRACEPOINT, .config = d->id };

	if (d->anchor_tried)
		return;
	d->anchor_tried = 1;
	d->anchor = (int)up_perf_event_open(&attr, u->keeper, -1);
}

/* Events the kernel dropped on t's events so far (PERF_FORMAT_LOST). */
uint64_t
uprobes_thread_lost(const struct jt_thread *t)
{
	uint64_t v[2], lost = 0;

	for (int i = 0; i < t->nufds; i++)
		if (read(t->ufds[i], v, sizeof(v)) == (ssize_t)sizeof(v))
			lost += v[1];
	return lost;
}

/*
 * The size of a new thread's ring, taken from the rings' budget: the kernel
 * allocates a ring's pages at once and keeps them, 32 MiB a thread by
 * default, and a server of 500 threads would take 16 GiB of the machine's
 * memory. Past the budget a ring is halved until it fits, down to
 * UPROBES_RING_MIN: a busy thread with a small ring may lose events, and
 * they are counted.
 */
static uint64_t
up_ring_take(struct jt_uprobes *u, pid_t tid)
{
	uint64_t size, used = __atomic_load_n(&u->ring_used, __ATOMIC_RELAXED);
	char a[32], b[32], c[32];

	do {
		size = u->ring_bytes;
		while (size > UPROBES_RING_MIN && used + size > u->ring_total)
			size /= 2;
	} while (!__atomic_compare_exchange_n(&u->ring_used, &used, used + size, 0, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	if (size < u->ring_bytes)
		debug_msg("thread %d: a ring of %s KiB, not %s: the rings' budget of %s KiB is spent (--buffer-total)",
			  (int)tid, util_num(a, size >> 10), util_num(b, u->ring_bytes >> 10),
			  util_num(c, u->ring_total >> 10));
	return size;
}

/* Gives a ring's bytes back to the budget (when it is taken off its thread). */
static void
up_ring_give(struct jt_uprobes *u, uint64_t bytes)
{
	if (u)
		__atomic_fetch_sub(&u->ring_used, bytes, __ATOMIC_RELAXED);
}

/*
 * Takes t's events and ring off it and closes them (the kernel takes its
 * probes out of the thread): by up_closer when later suits, at once
 * otherwise. What the rings held was applied before (uprobes_drain).
 */
void
uprobes_thread_close(struct jt_uprobes *u, struct jt_thread *t, int later)
{
	struct up_grave *g = xcalloc(1, sizeof(*g));

	if (u)
		u->lost += uprobes_thread_lost(t);
	if (t->uring)
		up_ring_give(u, t->uring->size);
	*g = (struct up_grave){ .fds = t->ufds, .nfds = t->nufds, .ring = t->uring };
	t->ufds = NULL;
	t->nufds = 0;
	t->uring = NULL;
	if (!later || !u)
		uprobes_grave_close(g);
	else
		uprobes_bury(u, g);
}

/*
 * Opens a hook site for t: no sample, but a SIGTRAP the thread gets at
 * once (perf's sigtrap), a ptrace stop we handle like a breakpoint's, with
 * sig_data saying which. Unlike a trap byte of ours, it goes with our
 * descriptors: a SIGKILLed jmptrace leaves no trap behind.
 */
static int
up_open_hook(struct jt_thread *t, struct jt_usite *s, int disabled)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr), .type = PERF_TYPE_TRACEPOINT, .config = s->def->id,
		.sample_period = 1, .sigtrap = 1, .remove_on_exec = 1, .disabled = !!disabled,
		.sig_data = UPROBES_SIG_MAGIC | (uint64_t)s->fn,
	};
	int fd = (int)up_perf_event_open(&attr, t->tid, -1);

	if (fd < 0)
		return -1;
	t->ufds = xrealloc(t->ufds, (size_t)(t->nufds + 1) * sizeof(*t->ufds));
	t->ufds[t->nufds++] = fd;
	return 0;
}

/*
 * Opens site s for thread t: its first event gets the thread's ring, the
 * others write into it. Stores the event's id in *id (0 for a hook), for
 * the caller to enter (up_id_put); disabled, it counts nothing until
 * enabled. Returns 0 or -1 with errno.
 */
static int
up_event_open(struct jt_uprobes *u, struct jt_thread *t, struct jt_usite *s, int disabled, uint64_t *id)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr), .type = PERF_TYPE_TRACEPOINT, .config = s->def->id,
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER |
			       (s->stack ? PERF_SAMPLE_STACK_USER : 0),
		.sample_regs_user = s->regs_mask, .sample_stack_user = s->stack,
		.use_clockid = 1, .clockid = UTIL_CLOCK, .sample_id_all = 1,
		.watermark = 1,
		/* At an exec the kernel takes them off the thread: the new image gets its own. */
		.remove_on_exec = 1,
		/* What the kernel dropped, counted per event: exact, even for a thread that ended full. */
		.read_format = PERF_FORMAT_LOST,
		.disabled = !!disabled,
	};
	int fd, e, first = !t->uring;	/* the thread's first event makes its ring */
	uint64_t ring;

	*id = 0;
	if (s->hook)
		return up_open_hook(t, s, disabled);
	ring = first ? up_ring_take(u, t->tid) : t->uring->size;
	/* Woken when the ring is an eighth full. */
	attr.wakeup_watermark = (uint32_t)(ring / 8);
	if ((fd = (int)up_perf_event_open(&attr, t->tid, -1)) < 0)
		goto fail;
	if (first) {
		if (!(t->uring = up_ring_map(fd, ring)))
			goto fail;
	} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, t->uring->fd) < 0) {
		goto fail;
	}
	if (ioctl(fd, PERF_EVENT_IOC_ID, id) < 0)
		goto fail;
	t->ufds = xrealloc(t->ufds, (size_t)(t->nufds + 1) * sizeof(*t->ufds));
	t->ufds[t->nufds++] = fd;
	return 0;
fail:
	e = errno;
	if (first) {
		up_ring_close(t->uring);
		t->uring = NULL;
		up_ring_give(u, ring);
	}
	if (fd >= 0)
		close(fd);
	errno = e;
	return -1;
}

int
uprobes_hook_of(struct jt_uprobes *u, struct jt_thread *t)
{
	uint8_t si[128];
	uint64_t data;
	int code;

	if (ptrace(PTRACE_GETSIGINFO, t->tid, 0L, si) < 0)
		return -1;
	/* siginfo's si_code, and si_perf_data of a TRAP_PERF (after si_addr): the kernel's layout. */
	memcpy(&code, si + 8, sizeof(code));
	memcpy(&data, si + 24, sizeof(data));
	if (u->bpf)
		return uprobes_bpf_hook_of(t, code);
	if (code != UPROBES_TRAP_PERF || (data & ~(uint64_t)0xffff) != UPROBES_SIG_MAGIC)
		return -1;
	return (int)(data & 0xffff);
}

/* ---- opening, off the tracer lock ---- */

/*
 * Hands t the events a stand-in got while the lock was free (tracer lock
 * held again): their ids, so that the reader knows their samples, the
 * descriptors, and the stand-in's ring if t has none yet. ids[i] is
 * sites[i]'s (0 for a hook's or one not opened).
 */
static void
up_hand_over(struct jt_uprobes *u, struct jt_thread *t, const struct jt_thread *tmp, struct jt_usite **sites,
	     const uint64_t *ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i])
			up_id_put(u, ids[i], sites[i]);
	if (tmp->nufds) {
		t->ufds = xrealloc(t->ufds, (size_t)(t->nufds + tmp->nufds) * sizeof(*t->ufds));
		memcpy(t->ufds + t->nufds, tmp->ufds, (size_t)tmp->nufds * sizeof(*t->ufds));
		t->nufds += tmp->nufds;
	}
	if (!t->uring && tmp->uring) {
		t->uring = tmp->uring;
		uprobes_wake_reader(u);
	}
}

/*
 * The kernel takes milliseconds to open each event, dozens per thread:
 * meanwhile the reader must go on emptying the other threads' rings (they
 * fill while it waits), so the events are opened on a stand-in block
 * without the tracer lock and handed to t under it. t is stopped and has
 * no ring yet: nothing reads what the stand-in gets. Only the tracer
 * thread that holds the lock places probes, so p's list stays as it is.
 */
int
uprobes_thread_add(struct jt_uprobes *u, struct jt_thread *t)
{
	struct jt_proc *p = t->proc;
	struct jt_thread tmp = { .tid = t->tid, .proc = p, .uring = t->uring };
	struct jt_usite **sites;
	size_t n = p->nusites;
	uint64_t *ids;
	int r = 0;

	if (p->vfork_child)
		return 0;
	/* Before it runs: its first hit copies its whole stack already. */
	uprobes_bpf_top(u, t, 1, NULL);
	if (n == 0)
		return 0;
	sites = xmalloc(n * sizeof(*sites));
	memcpy(sites, p->usites, n * sizeof(*sites));
	ids = xcalloc(n, sizeof(*ids));
	tthread_unlock(&u->tr->tthreads);
	for (size_t i = 0; i < n && r == 0; i++)
		if (!sites[i]->pending && sites[i]->def)
			r = up_event_open(u, &tmp, sites[i], 0, &ids[i]);
	tthread_lock(&u->tr->tthreads);
	if (r < 0)
		perror_msg("thread %d: cannot open its uprobes", t->tid);
	up_hand_over(u, t, &tmp, sites, ids, n);
	free(tmp.ufds);
	free(ids);
	free(sites);
	return r;
}

/* One thread's share of uprobes_open_pending: a stand-in gets its new events while the lock is free. */
struct up_pend {
	struct jt_thread *t;
	struct jt_thread tmp;
	uint64_t *ids;			/* per pending site; 0 for a hook's, or one not opened */
};

/*
 * Why the opening waits for the end of a placement and drops the lock: a
 * module with allocators dlopen'ed by a busy threaded program needs dozens
 * of probes times its threads, a definition's first event registers the
 * probe (milliseconds), and the lock held through it kept the reader from
 * the rings while the other threads filled them (8 threads, a dlopen of
 * libstdc++: 130 ms, 180,000 events lost). Only the tracer thread that
 * holds the lock adds and ends threads (one tracer thread under this
 * source), so p's threads stay as they are; the reader may run meanwhile,
 * and p's image is complete for it. Never from a sample's work: in the
 * middle of a merge of the rings, which nobody else may touch, the lock
 * cannot be let go (an attached process's rendezvous only marks the
 * process for tracer thread 0: uevent_apply, loop.c); a debug build
 * asserts it.
 */
void
uprobes_open_pending(struct jt_uprobes *u, struct jt_proc *p,
		     void (*refused)(void *arg, const struct jt_usite *s, int err), void *arg)
{
	struct jt_usite **sites = NULL;
	struct up_pend *th = NULL;
	struct jt_maps maps = { 0 };
	size_t ns = 0, nt = 0;
	int *err;

	DEBUG_ASSERT(tthread_locked(&u->tr->tthreads));
	DEBUG_ASSERT(!u->draining);
	for (size_t i = 0; i < p->nusites; i++)
		if (p->usites[i]->pending) {
			p->usites[i]->pending = 0;
			sites = xrealloc(sites, (ns + 1) * sizeof(*sites));
			sites[ns++] = p->usites[i];
		}
	if (!ns)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(u->tr->threads) && !p->vfork_child; i++)
		for (struct jt_thread *t = u->tr->threads[i]; t; t = t->hnext) {
			if (t->proc != p)
				continue;
			/* The BPF path, before the links: their first hits copy whole stacks already. */
			uprobes_bpf_top(u, t, 0, &maps);
			th = xrealloc(th, (nt + 1) * sizeof(*th));
			th[nt] = (struct up_pend){ .t = t, .tmp = { .tid = t->tid, .proc = p, .uring = t->uring },
						   .ids = xcalloc(ns, sizeof(uint64_t)) };
			nt++;
		}
	maps_clear(&maps);
	err = xcalloc(ns, sizeof(*err));
	tthread_unlock(&u->tr->tthreads);
	if (u->bpf)
		uprobes_bpf_link(u, p, sites, ns, err);
	for (size_t j = 0; j < ns; j++)
		if (sites[j]->def)
			up_anchor(u, sites[j]->def);
	/* Disabled: a sample whose id the reader does not know yet would be dropped unseen. */
	for (size_t k = 0; k < nt; k++)
		for (size_t j = 0; j < ns; j++)
			if (sites[j]->def && up_event_open(u, &th[k].tmp, sites[j], 1, &th[k].ids[j]) < 0) {
				if (errno == ESRCH)
					break;	/* the thread ended: its exit stop says so */
				if (!err[j])
					err[j] = errno;
			}
	tthread_lock(&u->tr->tthreads);
	for (size_t k = 0; k < nt; k++)
		up_hand_over(u, th[k].t, &th[k].tmp, sites, th[k].ids, ns);
	/* Ids entered, under the lock the reader takes to read them: now they may count. */
	for (size_t k = 0; k < nt; k++) {
		for (int i = 0; i < th[k].tmp.nufds; i++)
			if (ioctl(th[k].tmp.ufds[i], PERF_EVENT_IOC_ENABLE, 0) < 0 && errno != ESRCH)
				perror_msg("thread %d: cannot enable a uprobe", th[k].t->tid);
		free(th[k].tmp.ufds);
		free(th[k].ids);
	}
	for (size_t j = 0; j < ns; j++)
		if (err[j] && refused)
			refused(arg, sites[j], err[j]);
	free(err);
	free(th);
	free(sites);
}

void
uprobes_image_end(struct jt_uprobes *u, struct jt_proc *p)
{
	/*
	 * The kernel took the events off at the exec (remove_on_exec). Their
	 * descriptors stay open until the thread ends: closing the last event
	 * of a probe on a live process waits for a grace period (the kernel
	 * takes the probe out of its memory), on a dead one it does not. The
	 * new image's events get a ring of their own (everything in the old
	 * one was applied at the exec stop). On the BPF path the exec left one
	 * thread, on a new stack: its top comes with the new image's links.
	 */
	for (size_t i = 0; i < ARRAY_SIZE(u->tr->threads); i++)
		for (struct jt_thread *t = u->tr->threads[i]; t; t = t->hnext) {
			if (t->proc != p)
				continue;
			uprobes_bpf_top_drop(u, t, 0);
			if (t->uring) {
				up_ring_give(u, t->uring->size);
				up_ring_close(t->uring);
				t->uring = NULL;
			}
		}
	/* The BPF path's links would go on probing the new image's copy of the same files. */
	if (u->bpf)
		uprobes_bpf_unlink(u, p->pid, 1);
	free(p->usites);
	p->usites = NULL;
	p->nusites = 0;
}

/* ---- reading ---- */

/* Parses one sample record and applies it. */
static void
up_sample(struct jt_uprobes *u, const uint8_t *rec, size_t size)
{
	struct jt_usample s = { 0 };
	const uint8_t *q = rec + sizeof(struct perf_event_header), *end = rec + size;
	uint64_t id, abi, v[ARCH_PERF_REGS_N];
	uint32_t pt[2];
	size_t nv;

	memcpy(&id, q, 8);
	if (!(s.site = up_id_get(u, id)))
		return;
	memcpy(pt, q + 8, 8);
	s.pid = (pid_t)pt[0];
	s.tid = (pid_t)pt[1];
	memcpy(&s.time, q + 16, 8);
	memcpy(&abi, q + 24, 8);
	q += 32;
	nv = (size_t)s.site->nregs * sizeof(v[0]);
	if (!abi || q + nv > end)
		return;		/* a kernel thread's, or cut */
	memcpy(v, q, nv);
	q += nv;
	arch_regs_from_perf(v, s.site->regs_mask, &s.regs);
	if (s.site->stack && q + 8 <= end) {
		uint64_t len, dyn;

		memcpy(&len, q, 8);
		q += 8;
		if (len && q + len + 8 <= end) {
			memcpy(&dyn, q + len, 8);
			s.stack = q;
			s.stack_len = dyn < len ? dyn : len;
		}
	}
	u->samples++;
	uprobes_apply(u, &s);
}

static void
up_record(struct jt_uprobes *u, const uint8_t *rec)
{
	const struct perf_event_header *h = (const void *)rec;

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		up_sample(u, rec, h->size);
		break;
	default:
		break;
	}
}

static void
up_apply(void *arg, const uint8_t *rec)
{
	up_record(arg, rec);
}

void
uprobes_settle(struct jt_uprobes *u, const struct jt_thread *held)
{
	if (u && u->bpf)
		uprobes_bpf_settle(u, held);
	else
		uprobes_drain(u);
}

void
uprobes_drain(struct jt_uprobes *u)
{
	struct up_ring **rings = NULL;
	size_t n = 0, cap = 0;

	if (!u)
		return;
	DEBUG_ASSERT(tthread_locked(&u->tr->tthreads));
	if (u->bpf) {
		uprobes_bpf_drain(u);
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(u->tr->threads); i++)
		for (struct jt_thread *t = u->tr->threads[i]; t; t = t->hnext) {
			if (!t->uring)
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 16;
				rings = xrealloc(rings, cap * sizeof(*rings));
			}
			rings[n++] = t->uring;
		}
	/* The kernel stamps with UTIL_CLOCK (up_event_open), the clock read here. */
	u->draining = 1;
	up_ring_merge(rings, n, util_now_ns(), up_apply, u);
	u->draining = 0;
	free(rings);
}
