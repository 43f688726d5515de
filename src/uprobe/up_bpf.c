/* up_bpf.c - the uprobe source's BPF path: loads the program built into jmptrace, makes its uprobe_multi links, reads its ring. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "perf_regs.h"
#include "up_bpf.h"
#include "up_bpf_abi.h"
#include "up_bpf_int.h"
#include "util.h"

_Static_assert(UP_BPF_SITES_MAX - 1 == UP_BPF_SITE_MASK, "up_bpf.h's bound is the cookie's");

/* The object clang built from src/uprobe/bpf/uprobe.bpf.c, linked in by up_bpf_obj.S. */
extern const char up_bpf_obj[];
extern const char up_bpf_obj_end[];

struct up_bpf {
	struct bpf_object *obj;
	int prog_fd;
	int lost_fd;
	int tops_fd;
	struct ring_buffer *rb;
	/* The ring's consumer and producer positions, read-only: the bound of a drain (up_bpf_drain). */
	const volatile unsigned long *pos;
	size_t pos_len;
	uint64_t budget, taken;	/* a drain's bytes to take, and those taken */
	up_bpf_fn fn;
	void *arg;
	/*
	 * The ring has one consumer at a time: a drain, which applies, or a
	 * stash, which copies the records out to apply later (up_bpf_stash).
	 * The stash's records are older than the ring's: a drain applies
	 * them first.
	 */
	pthread_mutex_t consume;
	int stashing;			/* the record callback copies instead of applying */
	struct up_stash *stash, *stash_tail;
	uint64_t stash_bytes;		/* held in the stash now */
	uint64_t stash_max;		/* past it, records stay in the ring (which may fill) */
	uint64_t stashed;		/* taken into it in all (-v) */
	uint64_t dropped;		/* records lost for want of memory for them (up_bpf_keep) */
	uint64_t ring_bytes;		/* the ring's size: records move out only once it is half full */
	/*
	 * Emptied pieces kept for the next copies, a ring's worth at most
	 * (up_bpf_spare).
	 */
	struct up_stash *spare;
	uint64_t spare_bytes;
	/*
	 * A drain applies the records written before it began, and only
	 * those: the ring's up to due_end, and the stash's first stash_due
	 * bytes (records moved out of the ring during the drain count when
	 * they lie before due_end; cons_at is where the current consume
	 * began, so that a record's place in the ring is cons_at + taken).
	 */
	int draining;
	unsigned long due_end, cons_at;
	uint64_t stash_due;
};

/*
 * A piece of the stash: records as the ring holds them, each a size_t
 * length and its bytes, 8-aligned: a record takes the room it took in the
 * ring (BPF_RINGBUF_HDR_SZ is 8). Applied from start, added to at used.
 */
struct up_stash {
	struct up_stash *next;
	size_t start, used, cap;
	size_t len;		/* its mapping's, this header with it */
	unsigned char data[];
};

/* A piece's size: mapped whole, its pages made at once. */
#define UP_STASH_PIECE ((size_t)2 << 20)
#define UP_STASH_ROOM(size) ((sizeof(size_t) + (size) + 7) / 8 * 8)
/*
 * What the stash may hold: 16 rings' worth, and 512 MiB at least (8
 * threads allocating as fast as they can on 2 CPUs leave 150 MB under a
 * snapshot of 300 ms). Beyond, the ring fills and drops, counted as lost.
 */
#define UP_STASH_RINGS 16
#define UP_STASH_MIN ((uint64_t)512 << 20)
/* Bytes of the next record up_bpf_record asks for ahead. */
#define UP_BPF_AHEAD 640

/* libbpf's messages (a verifier's refusal among them) only with -v: a fallback is no error. */
static int
up_bpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!jt_debug || level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* BPF_LINK_CREATE of a uprobe_multi link: libbpf 1.1 has no call for it. Returns the fd or -1 with errno. */
static int
up_bpf_link_create(int prog_fd, pid_t pid, const char *path, const uint64_t *offsets, const uint64_t *cookies,
		   size_t n, int ret)
{
	struct up_bpf_link_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_fd = (uint32_t)prog_fd;
	a.attach_type = UP_BPF_TRACE_UPROBE_MULTI;
	a.path = (uint64_t)(uintptr_t)path;
	a.offsets = (uint64_t)(uintptr_t)offsets;
	a.cookies = (uint64_t)(uintptr_t)cookies;
	a.cnt = (uint32_t)n;
	a.multi_flags = ret ? UP_BPF_F_UPROBE_MULTI_RETURN : 0;
	a.pid = (uint32_t)pid;
	return (int)syscall(SYS_bpf, BPF_LINK_CREATE, &a, sizeof(a));
}

/*
 * Whether the kernel makes uprobe_multi links for this program, without
 * registering a probe (whose removal would cost a grace period): a link
 * for a pid no process can have (above PID_MAX_LIMIT) gets as far as the
 * pid's lookup, past every check of the attach type, the flags and the
 * path, and fails there with ESRCH.
 */
static int
up_bpf_probe(int prog_fd, char *why, size_t size)
{
	uint64_t off = 0, cookie = 0;
	int fd = up_bpf_link_create(prog_fd, 0x3fffffff, "/proc/self/exe", &off, &cookie, 1, 0);

	if (fd >= 0) {
		close(fd);	/* cannot be: no such process */
		return 0;
	}
	if (errno == ESRCH)
		return 0;
	snprintf(why, size, "this kernel makes no uprobe_multi link (Linux 6.6): %s", strerror(errno));
	return -1;
}

/* Hands one record of the program's to fn. */
static void
up_bpf_apply(struct up_bpf *b, const void *data, size_t size)
{
	const struct up_bpf_rec *r = data;
	struct up_bpf_event ev;

	if (size < sizeof(*r) || r->nregs > UP_BPF_NREGS || r->stack_len > size - sizeof(*r))
		return;
	ev = (struct up_bpf_event){
		.site = (uint32_t)(r->cookie & UP_BPF_SITE_MASK), .pid = (pid_t)r->pid, .tid = (pid_t)r->tid,
		.time = r->time, .regs = (const uint64_t *)r->regs, .nregs = r->nregs,
		.stack = r->stack_len ? (const uint8_t *)(r + 1) : NULL, .stack_len = r->stack_len,
		.joined = (r->cookie & UP_BPF_JOINED) != 0,
	};
	b->fn(b->arg, &ev);
}

/*
 * A new piece of at least need bytes of records, its pages made in one
 * call before the copies: faulted in one at a time as the records were
 * copied, a fresh piece took them at 0.9-1.8 GB/s, hardly faster than 4
 * threads write them (0.7-1.2 GB/s). (Not on huge pages: with the usual
 * defrag=madvise, each waits for the kernel to compact memory: slower.)
 */
static struct up_stash *
up_stash_new(size_t need)
{
	size_t len = (sizeof(struct up_stash) + need + UP_STASH_PIECE - 1) / UP_STASH_PIECE * UP_STASH_PIECE;
	struct up_stash *s = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (s == MAP_FAILED)
		return NULL;
	/* Linux 5.14; without it the pages are made as they are touched. */
	(void)madvise(s, len, MADV_POPULATE_WRITE);
	*s = (struct up_stash){ .cap = len - sizeof(*s), .len = len };
	return s;
}

static void
up_stash_free(struct up_stash *s)
{
	munmap(s, s->len);
}

/*
 * Copies one record to the stash's end. Without memory for it, the record
 * is lost (the ring's consumer has passed it), counted, and no other is
 * moved: the ring keeps them, and drops what it cannot hold, counted.
 */
static int
up_bpf_keep(struct up_bpf *b, const void *data, size_t size)
{
	size_t need = UP_STASH_ROOM(size);
	struct up_stash *s = b->stash_tail;

	if (!s || s->cap - s->used < need) {
		if (b->spare && b->spare->cap >= need) {
			s = b->spare;
			b->spare = s->next;
			b->spare_bytes -= s->len;
			s->next = NULL;
			s->start = s->used = 0;
		} else if (!(s = up_stash_new(need))) {
			__atomic_add_fetch(&b->dropped, 1, __ATOMIC_RELAXED);
			b->stash_max = b->stash_bytes;
			return -1;
		}
		if (b->stash_tail)
			b->stash_tail->next = s;
		else
			b->stash = s;
		b->stash_tail = s;
	}
	memcpy(s->data + s->used, &size, sizeof(size));
	memcpy(s->data + s->used + sizeof(size), data, size);
	s->used += need;
	b->stash_bytes += need;
	b->stashed += need;
	if (b->draining && (long)(b->cons_at + b->taken - b->due_end) < 0)
		b->stash_due += need;
	return 0;
}

/*
 * A piece emptied: kept for the next copies while the spares hold less
 * than a ring's worth (what a move takes at most). A piece
 * used again takes records at 11 GB/s, a fresh one at 2: when moves took
 * longer than the ring took to fill half again, every piece applied was
 * followed by another move, the stash grew to 300 MB within one drain,
 * and the ring dropped records all the while (dlbusy attached: 1 run in 15).
 */
static void
up_bpf_spare(struct up_bpf *b, struct up_stash *s)
{
	if (b->spare_bytes + s->len > b->ring_bytes) {
		up_stash_free(s);
		return;
	}
	s->next = b->spare;
	b->spare = s;
	b->spare_bytes += s->len;
}

/* The bytes of records the ring holds now, submitted or not. */
static unsigned long up_bpf_pos(const struct up_bpf *b, int prod);

static uint64_t
up_bpf_fill(const struct up_bpf *b)
{
	return up_bpf_pos(b, 1) - up_bpf_pos(b, 0);
}

static int
up_bpf_record(void *arg, void *data, size_t size)
{
	struct up_bpf *b = arg;
	/* A record's room in the ring: its header and length, to 8 bytes (the kernel's BPF_RINGBUF_HDR_SZ). */
	size_t room = (size + BPF_RINGBUF_HDR_SZ + 7) / 8 * 8;
	const char *next = (const char *)data - BPF_RINGBUF_HDR_SZ + room;

	/*
	 * The next record was written on another CPU, and each of its cache
	 * lines comes from there when first read. Asked for now (its header,
	 * registers and a short stack), they arrive while this one is applied.
	 * The ring's data is mapped twice over: past its end is its start.
	 */
	for (size_t at = 0; at < UP_BPF_AHEAD; at += 64)
		__builtin_prefetch(next + at);
	if (b->stashing) {
		if (up_bpf_keep(b, data, size) < 0)
			return -1;
	} else {
		up_bpf_apply(b, data, size);
	}
	b->taken += room;
	return b->taken >= b->budget ? -1 : 0;
}

static void up_bpf_consume(struct up_bpf *b, int wait, unsigned long end);

/*
 * Moves the records the ring holds to the stash's end once the ring is
 * half full, unless the stash is full (b->consume held). Not sooner: a
 * copy costs as much as a record's hashing, and records left in the ring
 * wait there as well as in the stash.
 */
static void
up_bpf_move(struct up_bpf *b)
{
	if (b->stash_bytes >= b->stash_max || up_bpf_fill(b) < b->ring_bytes / 2)
		return;
	b->stashing = 1;
	up_bpf_consume(b, 0, up_bpf_pos(b, 1));
	b->stashing = 0;
}

/*
 * Applies the stash's records that are due, its first b->stash_due bytes
 * (b->consume held). Between two pieces the ring's records may join the
 * stash's end: applying a long stash takes long, and the ring must not
 * fill meanwhile.
 */
static void
up_bpf_unstash(struct up_bpf *b)
{
	struct up_stash *s;

	while (b->stash_due > 0 && (s = b->stash)) {
		while (s->start < s->used && b->stash_due > 0) {
			size_t size, room;

			memcpy(&size, s->data + s->start, sizeof(size));
			room = UP_STASH_ROOM(size);
			up_bpf_apply(b, s->data + s->start + sizeof(size), size);
			s->start += room;
			b->stash_bytes -= room;
			b->stash_due = b->stash_due > room ? b->stash_due - room : 0;
		}
		if (s->start < s->used)
			break;
		if (!(b->stash = s->next))
			b->stash_tail = NULL;
		up_bpf_spare(b, s);
		up_bpf_move(b);
	}
}

/* Opens and loads the object with a ring of ring_bytes. Returns 0, or -1 with why written. */
static int
up_bpf_load(struct up_bpf *b, uint64_t ring_bytes, char *why, size_t size)
{
	struct bpf_program *prog;
	struct bpf_map *ring, *lost, *tops;
	int e;

	b->obj = bpf_object__open_mem(up_bpf_obj, (size_t)(up_bpf_obj_end - up_bpf_obj), NULL);
	if (!b->obj) {
		snprintf(why, size, "cannot open its BPF object: %s", strerror(errno));
		return -1;
	}
	prog = bpf_object__find_program_by_name(b->obj, "up_hit");
	ring = bpf_object__find_map_by_name(b->obj, "ring");
	lost = bpf_object__find_map_by_name(b->obj, "lost");
	tops = bpf_object__find_map_by_name(b->obj, "tops");
	if (!prog || !ring || !lost || !tops) {
		snprintf(why, size, "its BPF object lacks the program or a map");
		return -1;
	}
	/* A kernel without uprobe_multi refuses the load or, at the latest, the link (up_bpf_probe). */
	bpf_program__set_expected_attach_type(prog, (enum bpf_attach_type)UP_BPF_TRACE_UPROBE_MULTI);
	if (bpf_map__set_max_entries(ring, (uint32_t)ring_bytes) < 0 || (e = bpf_object__load(b->obj)) < 0) {
		e = errno;
		snprintf(why, size, "cannot load its BPF program: %s%s", strerror(e),
			 e == EPERM ? " (it needs CAP_BPF and CAP_PERFMON)" : "");
		return -1;
	}
	b->prog_fd = bpf_program__fd(prog);
	b->lost_fd = bpf_map__fd(lost);
	b->tops_fd = bpf_map__fd(tops);
	if (!(b->rb = ring_buffer__new(bpf_map__fd(ring), up_bpf_record, b, NULL))) {
		snprintf(why, size, "cannot map its ring: %s", strerror(errno));
		return -1;
	}
	/* The consumer's page and the producer's after it, as the kernel lays them out. */
	b->pos_len = 2 * (size_t)sysconf(_SC_PAGESIZE);
	b->pos = mmap(NULL, b->pos_len, PROT_READ, MAP_SHARED, bpf_map__fd(ring), 0);
	if (b->pos == MAP_FAILED) {
		b->pos = NULL;
		snprintf(why, size, "cannot map its ring's positions: %s", strerror(errno));
		return -1;
	}
	return 0;
}

struct up_bpf *
up_bpf_open(uint64_t ring_bytes, up_bpf_fn fn, void *arg, char *why, size_t size)
{
	struct up_bpf *b = xcalloc(1, sizeof(*b));

	b->fn = fn;
	b->arg = arg;
	b->prog_fd = b->lost_fd = b->tops_fd = -1;
	b->ring_bytes = ring_bytes;
	b->stash_max = ring_bytes * UP_STASH_RINGS > UP_STASH_MIN ? ring_bytes * UP_STASH_RINGS : UP_STASH_MIN;
	{
		pthread_mutexattr_t ma;

		/*
		 * A drain holds it for as long as it applies, in a tracer thread
		 * of ordinary (or idle) priority: the real-time reader waiting
		 * for it lends that thread its priority, as it does through the
		 * tracer lock (tthread.c), or the ring fills behind a drain that
		 * the program's busy threads keep off the CPU.
		 */
		pthread_mutexattr_init(&ma);
		pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
		pthread_mutex_init(&b->consume, &ma);
		pthread_mutexattr_destroy(&ma);
	}
	libbpf_set_print(up_bpf_print);
	if (ring_bytes > ((uint64_t)1 << 31)) {
		snprintf(why, size, "a BPF ring holds at most 2 GiB (--buffer-size)");
		goto fail;
	}
	if (up_bpf_load(b, ring_bytes, why, size) < 0 || up_bpf_probe(b->prog_fd, why, size) < 0)
		goto fail;
	return b;
fail:
	up_bpf_close(b);
	return NULL;
}

void
up_bpf_close(struct up_bpf *b)
{
	if (!b)
		return;
	if (b->pos)
		munmap((void *)b->pos, b->pos_len);
	ring_buffer__free(b->rb);
	bpf_object__close(b->obj);
	for (struct up_stash *s = b->stash, *next; s; s = next) {
		next = s->next;
		up_stash_free(s);
	}
	for (struct up_stash *s = b->spare, *next; s; s = next) {
		next = s->next;
		up_stash_free(s);
	}
	pthread_mutex_destroy(&b->consume);
	free(b);
}

uint64_t
up_bpf_cookie(uint32_t site, uint64_t regs_mask, uint32_t stack, int hook, int join)
{
	uint64_t kind = hook ? UP_BPF_HOOK
		      : regs_mask == ARCH_PERF_REGS_RET_MASK ? UP_BPF_REGS_RET
		      : regs_mask == ARCH_PERF_REGS_FREE_MASK ? UP_BPF_REGS_FREE : UP_BPF_REGS_FULL;

	return (site & UP_BPF_SITE_MASK) | kind << UP_BPF_KIND_SHIFT | (join ? UP_BPF_JOIN : 0) |
	       (uint64_t)stack << UP_BPF_STACK_SHIFT;
}

int
up_bpf_link(struct up_bpf *b, pid_t pid, const char *path, const uint64_t *offsets, const uint64_t *cookies,
	    size_t n, int ret)
{
	return up_bpf_link_create(b->prog_fd, pid, path, offsets, cookies, n, ret);
}

int
up_bpf_poll_fd(const struct up_bpf *b)
{
	return ring_buffer__epoll_fd(b->rb);
}

/* The ring's consumer position now, or its producer's (prod): the first word of their pages. */
static unsigned long
up_bpf_pos(const struct up_bpf *b, int prod)
{
	return __atomic_load_n(&b->pos[prod ? b->pos_len / 2 / sizeof(*b->pos) : 0], __ATOMIC_ACQUIRE);
}

/*
 * libbpf 1.1's ring_buffer__consume goes on for as long as records keep
 * coming: under threads that write faster than we apply, one drain could
 * last for ever with the tracer lock held (a detach waits for it). So a
 * drain takes what was written when it began, and no more (libbpf 1.5 has
 * ring_buffer__consume_n; Debian 12 has 1.1): the record callback stops it
 * once that many bytes are taken. What comes later is the next drain's.
 *
 * And all of it: the consume also stops at a record reserved but not yet
 * submitted, by a thread still in the BPF program (a microsecond, unless
 * it was preempted there), and the records after it, a stopped thread's
 * among them (a hook's, which tells its SIGTRAP from the program's own),
 * must be applied before its stop is. So the drain waits for that record,
 * up to 100 ms (when wait; a stash takes what it can at once); a writer
 * kept off the CPU longer leaves them to the next.
 */
static void
up_bpf_consume(struct up_bpf *b, int wait, unsigned long end)
{
	unsigned long cons = up_bpf_pos(b, 0);

	for (int waits = 0; (long)(end - cons) > 0; waits++) {
		b->budget = end - cons;
		b->taken = 0;
		b->cons_at = cons;
		(void)ring_buffer__consume(b->rb);
		cons = up_bpf_pos(b, 0);
		/* Past end, or stopped short by a record not submitted yet (positions only grow). */
		if ((long)(cons - end) >= 0 || waits == 1000 || !wait)
			break;
		if (waits > 0)
			usleep(100);
	}
}

void
up_bpf_drain(struct up_bpf *b)
{
	unsigned long end;

	if (!b)
		return;
	pthread_mutex_lock(&b->consume);
	end = up_bpf_pos(b, 1);
	if (b->stash) {
		/*
		 * The stash's records come before the ring's, and all of them
		 * before this drain; those the ring moves to it meanwhile, up
		 * to end, as well. What comes after end is the next drain's,
		 * and it stays where it is: moving every record through the
		 * stash while one is left kept it from ever emptying.
		 */
		b->due_end = end;
		b->stash_due = b->stash_bytes;
		b->draining = 1;
		up_bpf_unstash(b);
		b->draining = 0;
	}
	/* The ring's records up to end, once the stash holds no older record (it then holds none before end). */
	if (!b->stash)
		up_bpf_consume(b, 1, end);
	pthread_mutex_unlock(&b->consume);
}

void
up_bpf_stash(struct up_bpf *b)
{
	if (!b)
		return;
	pthread_mutex_lock(&b->consume);
	up_bpf_move(b);
	pthread_mutex_unlock(&b->consume);
}

uint64_t
up_bpf_stashed(struct up_bpf *b)
{
	uint64_t n;

	if (!b)
		return 0;
	pthread_mutex_lock(&b->consume);
	n = b->stashed;
	pthread_mutex_unlock(&b->consume);
	return n;
}

int
up_bpf_set_top(struct up_bpf *b, pid_t tid, uint64_t top)
{
	uint32_t key = (uint32_t)tid;
	struct up_bpf_top v = { .top = top };

	return bpf_map_update_elem(b->tops_fd, &key, &v, BPF_ANY);
}

void
up_bpf_drop_top(struct up_bpf *b, pid_t tid)
{
	uint32_t key = (uint32_t)tid;

	(void)bpf_map_delete_elem(b->tops_fd, &key);
}

uint64_t
up_bpf_lost(const struct up_bpf *b)
{
	uint32_t key = UP_BPF_LOST_KEY;
	uint64_t n = 0;

	if (!b)
		return 0;
	if (bpf_map_lookup_elem(b->lost_fd, &key, &n) < 0)
		n = 0;
	return n + __atomic_load_n(&b->dropped, __ATOMIC_RELAXED);
}
