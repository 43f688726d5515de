/* uprobes.c - the kernel uprobe event source: allocator entries and returns as perf uprobe events, read from one ring buffer per CPU. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/perf_event.h>

#include "alloc.h"
#include "modules.h"
#include "perf_regs.h"
#include "proc.h"
#include "uevent.h"
#include "unwind.h"
#include "uprobes.h"
#include "util.h"

#define UP_PMU_DIR "/sys/bus/event_source/devices/uprobe"

/* One CPU's ring buffer, owned by a dummy event of ours that every probe event on that CPU writes through. */
struct up_ring {
	int fd;				/* -1: the CPU is offline */
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	uint64_t size;			/* bytes of data, a power of two */
	uint64_t pos, head;		/* the next record to read, and where the kernel's writing ended */
	uint8_t *rec;			/* the record at pos (in data, or copied to scratch when it wraps) */
	uint64_t time;
	uint8_t scratch[65536 + 16];	/* a record's size is a u16 */
};

struct jt_uprobes {
	struct jt_tracer *tr;
	int type;			/* the uprobe PMU's perf type */
	int retprobe_bit;		/* the config bit that makes it a uretprobe */
	uint32_t stack_copy;
	uint64_t ring_bytes;
	int nrings;
	struct up_ring **rings;		/* one per possible CPU */
	/* id of each event -> its site, open addressing */
	uint64_t *ids;
	struct jt_usite **id_site;
	size_t id_mask, id_count;
	struct jt_usite **sites;	/* every site ever made: samples may name them until the end */
	size_t nsites;
	struct jt_unwind_ctx *ctx;	/* unwinds under the tracer lock: one at a time */
	uint64_t lost, samples;
	pthread_t reader;
	int reader_running;
	volatile int quit;
};

static long
up_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Reads the first number in file (after "config:" in a format file). Returns it, or -1. */
static int
up_read_number(const char *path)
{
	char buf[64], *p;
	FILE *f = fopen(path, "re");
	int v = -1;

	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f)) {
		p = strchr(buf, ':');
		p = p ? p + 1 : buf;
		if (*p >= '0' && *p <= '9')
			v = atoi(p);
	}
	fclose(f);
	return v;
}

int
uprobes_usable(const char **why)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct data[2];
	int perfmon = 38;	/* CAP_PERFMON, not in every header */

	if (up_read_number(UP_PMU_DIR "/type") < 0) {
		*why = "this kernel has no uprobe PMU (" UP_PMU_DIR "): it needs CONFIG_UPROBE_EVENTS";
		return -1;
	}
	if (syscall(SYS_capget, &hdr, data) < 0) {
		*why = "cannot read jmptrace's capabilities";
		return -1;
	}
	if (!(data[0].effective & (1u << CAP_SYS_ADMIN)) && !(data[1].effective & (1u << (perfmon - 32)))) {
		*why = "it needs root, or CAP_PERFMON (or CAP_SYS_ADMIN) and CAP_SYS_PTRACE";
		return -1;
	}
	return 0;
}

/* ---- the ring buffers ---- */

static void
up_ring_close(struct up_ring *r)
{
	if (r->meta)
		munmap(r->meta, r->size + (uint64_t)sysconf(_SC_PAGESIZE));
	if (r->fd >= 0)
		close(r->fd);
	free(r);
}

/* The ring of cpu: a dummy software event on our own thread, its buffer mapped. NULL when the CPU is offline. */
static struct up_ring *
up_ring_open(const struct jt_uprobes *u, int cpu)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr), .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_DUMMY,
		.use_clockid = 1, .clockid = CLOCK_MONOTONIC, .sample_id_all = 1,
	};
	struct up_ring *r = xcalloc(1, sizeof(*r));
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	void *m;

	r->size = u->ring_bytes;
	r->fd = (int)up_perf_event_open(&attr, 0, cpu);
	if (r->fd < 0) {
		free(r);
		return NULL;
	}
	m = mmap(NULL, page + r->size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (m == MAP_FAILED) {
		perror_msg("cannot map a ring buffer of %llu bytes for CPU %d (--buffer-size)",
			   (unsigned long long)r->size, cpu);
		close(r->fd);
		free(r);
		return NULL;
	}
	r->meta = m;
	r->data = (uint8_t *)m + page;
	r->pos = r->meta->data_tail;
	return r;
}

/* The record at r->pos (NULL when none is left before r->head), with its time (0 for what is not a sample). */
static uint8_t *
up_ring_peek(struct up_ring *r)
{
	struct perf_event_header *h;
	uint64_t off;

	if (r->pos >= r->head)
		return r->rec = NULL;
	off = r->pos & (r->size - 1);
	h = (struct perf_event_header *)(r->data + off);
	if (off + sizeof(*h) > r->size || off + h->size > r->size) {
		/* It wraps: copy it out, header first, piece by piece. */
		uint64_t first = r->size - off;
		struct perf_event_header hh;

		for (size_t i = 0; i < sizeof(hh); i++)
			((uint8_t *)&hh)[i] = r->data[(off + i) & (r->size - 1)];
		first = first > hh.size ? hh.size : first;
		memcpy(r->scratch, r->data + off, first);
		memcpy(r->scratch + first, r->data, hh.size - first);
		r->rec = r->scratch;
	} else {
		r->rec = (uint8_t *)h;
	}
	h = (struct perf_event_header *)r->rec;
	r->time = h->type == PERF_RECORD_SAMPLE && h->size >= 32 ? *(uint64_t *)(r->rec + 24) : 0;
	return r->rec;
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

/* ---- the session ---- */

struct jt_uprobes *
uprobes_new(struct jt_tracer *tr, uint32_t stack_copy, uint64_t ring_bytes)
{
	struct jt_uprobes *u = xcalloc(1, sizeof(*u));
	const char *why;
	int ncpu = (int)sysconf(_SC_NPROCESSORS_CONF), nopen = 0;

	if (uprobes_usable(&why) < 0) {
		error_msg("--source uprobe: %s", why);
		free(u);
		return NULL;
	}
	u->tr = tr;
	u->type = up_read_number(UP_PMU_DIR "/type");
	u->retprobe_bit = up_read_number(UP_PMU_DIR "/format/retprobe");
	if (u->retprobe_bit < 0)
		u->retprobe_bit = 0;
	u->stack_copy = stack_copy;
	u->ring_bytes = ring_bytes;
	u->nrings = ncpu > 0 ? ncpu : 1;
	u->rings = xcalloc((size_t)u->nrings, sizeof(*u->rings));
	for (int c = 0; c < u->nrings; c++)
		if ((u->rings[c] = up_ring_open(u, c)))
			nopen++;
	u->ctx = unwind_ctx_new();
	if (nopen == 0) {
		perror_msg("--source uprobe: cannot open a perf ring buffer");
		uprobes_free(u);
		return NULL;
	}
	return u;
}

static void *
up_reader(void *arg)
{
	struct jt_uprobes *u = arg;
	struct pollfd pf[256];
	int n = 0;

	for (int c = 0; c < u->nrings && n < (int)ARRAY_SIZE(pf); c++)
		if (u->rings[c])
			pf[n++] = (struct pollfd){ .fd = u->rings[c]->fd, .events = POLLIN };
	while (!u->quit) {
		/* Woken by a quarter-full ring, or every 20 ms, so that a slow trickle is seen soon too. */
		poll(pf, (nfds_t)n, 20);
		pthread_mutex_lock(&u->tr->tthreads.lock);
		uprobes_drain(u);
		pthread_mutex_unlock(&u->tr->tthreads.lock);
	}
	return NULL;
}

int
uprobes_start(struct jt_uprobes *u)
{
	sigset_t all, old;
	int r;

	if (u->reader_running)
		return 0;
	/* The signals jmptrace acts on go to its main thread, never to the reader. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&u->reader, NULL, up_reader, u);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
		errno = r;
		perror_msg("--source uprobe: cannot start the reader thread");
		return -1;
	}
	u->reader_running = 1;
	return 0;
}

void
uprobes_free(struct jt_uprobes *u)
{
	if (!u)
		return;
	if (u->reader_running) {
		u->quit = 1;
		pthread_join(u->reader, NULL);
	}
	for (int c = 0; c < u->nrings; c++)
		if (u->rings[c])
			up_ring_close(u->rings[c]);
	free(u->rings);
	for (size_t i = 0; i < u->nsites; i++) {
		free(u->sites[i]->path);
		free(u->sites[i]);
	}
	free(u->sites);
	free(u->ids);
	free(u->id_site);
	unwind_ctx_free(u->ctx);
	free(u);
}

uint64_t
uprobes_lost(const struct jt_uprobes *u)
{
	return u ? u->lost : 0;
}

uint64_t
uprobes_samples(const struct jt_uprobes *u)
{
	return u ? u->samples : 0;
}

/* ---- probes ---- */

/* The file offset of run-time address addr in m, through its PT_LOAD segments. Returns 0 or -1. */
static int
up_file_offset(struct jt_proc *p, const struct jt_module *m, uint64_t addr, uint64_t *off)
{
	Elf *e;
	size_t n;
	uint64_t vaddr = addr - m->bias;
	int r = -1;

	pthread_mutex_lock(&p->mods.elf_lock);
	e = module_elf(m);
	if (e && elf_getphdrnum(e, &n) == 0)
		for (size_t i = 0; i < n && r < 0; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
			    vaddr < ph.p_vaddr + ph.p_filesz) {
				*off = vaddr - ph.p_vaddr + ph.p_offset;
				r = 0;
			}
		}
	pthread_mutex_unlock(&p->mods.elf_lock);
	return r;
}

/* Opens site s for thread t on every CPU, each event writing into that CPU's ring. Returns 0 or -1 with errno. */
static int
up_open(struct jt_uprobes *u, struct jt_thread *t, struct jt_usite *s)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr), .type = (uint32_t)u->type,
		.config = s->ret ? 1ULL << u->retprobe_bit : 0,
		.config1 = (uint64_t)(uintptr_t)s->path, .config2 = s->offset,
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER |
			       (s->stack ? PERF_SAMPLE_STACK_USER : 0),
		.sample_regs_user = ARCH_PERF_REGS_MASK, .sample_stack_user = s->stack,
		.use_clockid = 1, .clockid = CLOCK_MONOTONIC, .sample_id_all = 1,
		.watermark = 1, .wakeup_watermark = (uint32_t)(u->ring_bytes / 4),
	};

	for (int c = 0; c < u->nrings; c++) {
		uint64_t id;
		int fd;

		if (!u->rings[c])
			continue;
		fd = (int)up_perf_event_open(&attr, t->tid, c);
		if (fd < 0)
			return -1;
		if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, u->rings[c]->fd) < 0 || ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0) {
			int e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		up_id_put(u, id, s);
		t->ufds = xrealloc(t->ufds, (size_t)(t->nufds + 1) * sizeof(*t->ufds));
		t->ufds[t->nufds++] = fd;
	}
	return 0;
}

static struct jt_usite *
up_site_new(struct jt_uprobes *u, struct jt_proc *p, int fn, int ret, const char *path, uint64_t off)
{
	struct jt_usite *s = xcalloc(1, sizeof(*s));

	s->fn = fn;
	s->ret = ret;
	s->image = p->image;
	s->path = xstrdup(path);
	s->offset = off;
	u->sites = xrealloc(u->sites, (u->nsites + 1) * sizeof(*u->sites));
	u->sites[u->nsites++] = s;
	p->usites = xrealloc(p->usites, (p->nusites + 1) * sizeof(*p->usites));
	p->usites[p->nusites++] = s;
	return s;
}

/* Opens s for every thread of p. */
static int
up_open_all(struct jt_uprobes *u, struct jt_proc *p, struct jt_usite *s)
{
	for (size_t i = 0; i < ARRAY_SIZE(u->tr->threads); i++)
		for (struct jt_thread *t = u->tr->threads[i]; t; t = t->hnext)
			if (t->proc == p && up_open(u, t, s) < 0)
				return -1;
	return 0;
}

int
uprobes_has_return(int fn)
{
	enum jt_fn_kind k = alloc_fns[fn].kind;

	return k == FK_ALLOC || k == FK_CALLOC || k == FK_REALLOC || k == FK_MEMALIGN_PTR;
}

int
uprobes_place(struct jt_uprobes *u, struct jt_proc *p, const struct jt_module *m, int fn, uint64_t entry,
	      uint64_t site, uint64_t sp_delta, int emulated)
{
	uint64_t off, eoff;
	struct jt_usite *s;
	const char *path = module_file(m);

	if (up_file_offset(p, m, site, &off) < 0 || up_file_offset(p, m, entry, &eoff) < 0) {
		errno = ENOEXEC;
		return -1;
	}
	s = up_site_new(u, p, fn, 0, path, off);
	s->entry = entry;
	s->site = site;
	s->sp_delta = sp_delta;
	s->emulated = emulated;
	s->stack = u->stack_copy;
	if (up_open_all(u, p, s) < 0)
		return -1;
	if (!uprobes_has_return(fn))
		return 0;
	s = up_site_new(u, p, fn, 1, path, eoff);
	s->entry = s->site = entry;
	return up_open_all(u, p, s);
}

int
uprobes_thread_add(struct jt_uprobes *u, struct jt_thread *t)
{
	struct jt_proc *p = t->proc;

	if (p->vfork_child)
		return 0;
	for (size_t i = 0; i < p->nusites; i++)
		if (up_open(u, t, p->usites[i]) < 0) {
			perror_msg("thread %d: cannot open its uprobes", t->tid);
			return -1;
		}
	return 0;
}

void
uprobes_image_end(struct jt_uprobes *u, struct jt_proc *p)
{
	(void)u;
	for (size_t i = 0; i < ARRAY_SIZE(u->tr->threads); i++)
		for (struct jt_thread *t = u->tr->threads[i]; t; t = t->hnext)
			if (t->proc == p)
				thread_close_events(t);
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

	memcpy(&id, q, 8);
	if (!(s.site = up_id_get(u, id)))
		return;
	memcpy(pt, q + 8, 8);
	s.pid = (pid_t)pt[0];
	s.tid = (pid_t)pt[1];
	memcpy(&s.time, q + 16, 8);
	memcpy(&abi, q + 24, 8);
	q += 32;
	if (!abi || q + sizeof(v) > end)
		return;		/* a kernel thread's, or cut */
	memcpy(v, q, sizeof(v));
	q += sizeof(v);
	arch_regs_from_perf(v, &s.regs);
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
	if (uevent_apply(u->tr, u->ctx, &s))
		u->tr->events++;
}

static void
up_record(struct jt_uprobes *u, const uint8_t *rec)
{
	const struct perf_event_header *h = (const void *)rec;
	uint64_t n;

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		up_sample(u, rec, h->size);
		break;
	case PERF_RECORD_LOST:
		memcpy(&n, rec + sizeof(*h) + 8, 8);
		u->lost += n;
		break;
	default:
		break;
	}
}

void
uprobes_drain(struct jt_uprobes *u)
{
	struct up_ring *best;

	if (!u)
		return;
	for (int c = 0; c < u->nrings; c++) {
		struct up_ring *r = u->rings[c];

		if (!r)
			continue;
		r->head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
		up_ring_peek(r);
	}
	/* Merge: the oldest record of all rings first, up to each ring's head as read above. */
	for (;;) {
		best = NULL;
		for (int c = 0; c < u->nrings; c++) {
			struct up_ring *r = u->rings[c];

			if (r && r->rec && (!best || r->time < best->time))
				best = r;
		}
		if (!best)
			break;
		up_record(u, best->rec);
		best->pos += ((struct perf_event_header *)best->rec)->size;
		up_ring_peek(best);
	}
	for (int c = 0; c < u->nrings; c++)
		if (u->rings[c])
			__atomic_store_n(&u->rings[c]->meta->data_tail, u->rings[c]->pos, __ATOMIC_RELEASE);
}
