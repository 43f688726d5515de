/* up_bpf_ring.c - the uprobe source's BPF path: reads its one ring, in drains bounded where they began, and a stash while records cannot be applied. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "up_bpf.h"
#include "up_bpf_abi.h"
#include "up_bpf_int.h"
#include "util.h"

_Static_assert(sizeof(struct up_bpf_rec) % 8 == 0 && sizeof(struct up_bpf_pf) % 8 == 0,
	       "a record's sizes keep its deferred free 8-aligned");

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
/* Bytes of the next record up_bpf_record asks for ahead. */
#define UP_BPF_AHEAD 640

/* Hands a deferred free of thread tid of pid to fn, made a record of its site. */
static void
up_bpf_apply_pf(struct up_bpf *b, pid_t pid, pid_t tid, const struct up_bpf_pf *pf)
{
	struct up_bpf_event ev;

	if (!pf->cookie || pf->nregs > UP_BPF_PF_NREGS || pf->stack_len > UP_BPF_PF_STACK)
		return;
	ev = (struct up_bpf_event){
		.site = (uint32_t)(pf->cookie & UP_BPF_SITE_MASK), .pid = pid, .tid = tid, .time = pf->time,
		.regs = (const uint64_t *)pf->regs, .nregs = pf->nregs,
		.stack = pf->stack_len ? pf->stack : NULL, .stack_len = pf->stack_len, .pf_seq = pf->seq,
	};
	b->fn(b->arg, &ev);
}

/* Hands one record of the program's to fn: the deferred free it carries first. */
static void
up_bpf_apply(struct up_bpf *b, const void *data, size_t size)
{
	const struct up_bpf_rec *r = data;
	struct up_bpf_event ev;

	if (size < sizeof(*r))
		return;
	if (r->cookie & UP_BPF_PF) {
		if (size < sizeof(*r) + sizeof(struct up_bpf_pf) || size % 8)
			return;
		/* At the record's end, 8-aligned as the record is: read in place, its stack only where it is needed. */
		size -= sizeof(struct up_bpf_pf);
		up_bpf_apply_pf(b, (pid_t)r->pid, (pid_t)r->tid, (const struct up_bpf_pf *)((const char *)data + size));
		b->deferred++;
		if (r->cookie & UP_BPF_PF_ONLY)
			return;
	}
	if (r->nregs > UP_BPF_NREGS || r->stack_len > size - sizeof(*r))
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

int
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
	uint64_t now;

	if (!b)
		return;
	pthread_mutex_lock(&b->consume);
	/* Every record made before now lies before end: its reservation was made before end was read. */
	now = util_now_ns();
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
	b->drained_at = !b->stash && (long)(up_bpf_pos(b, 0) - end) >= 0 ? now : 0;
	pthread_mutex_unlock(&b->consume);
}

uint64_t
up_bpf_drained_at(struct up_bpf *b)
{
	return b ? b->drained_at : 0;
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

/*
 * The program may be writing the entry as it is read: a copy is taken
 * when two lookups in a row give the same bytes with an even ver (the
 * program makes it odd first and even last; x86 keeps its stores in
 * order), whatever order the kernel copies the value's bytes in.
 */
int
up_bpf_pending(struct up_bpf *b, pid_t pid, pid_t tid, uint64_t before)
{
	uint32_t key = (uint32_t)tid;
	struct up_bpf_top v[2];

	if (!b)
		return 0;
	for (int tries = 0; tries < 8; tries++) {
		if (bpf_map_lookup_elem(b->tops_fd, &key, &v[0]) < 0 || bpf_map_lookup_elem(b->tops_fd, &key, &v[1]) < 0)
			return 0;
		if ((v[0].pf.ver & 1) || memcmp(&v[0].pf, &v[1].pf, sizeof(v[0].pf)) != 0)
			continue;
		if (!v[0].pf.cookie || v[0].pf.time > before)
			return 0;
		pthread_mutex_lock(&b->consume);
		up_bpf_apply_pf(b, pid, tid, &v[0].pf);
		pthread_mutex_unlock(&b->consume);
		return 1;
	}
	return 0;
}

uint64_t
up_bpf_deferred(const struct up_bpf *b)
{
	return b ? __atomic_load_n(&b->deferred, __ATOMIC_RELAXED) : 0;
}

void
up_bpf_stash_free_all(struct up_bpf *b)
{
	for (struct up_stash *s = b->stash, *next; s; s = next) {
		next = s->next;
		up_stash_free(s);
	}
	for (struct up_stash *s = b->spare, *next; s; s = next) {
		next = s->next;
		up_stash_free(s);
	}
	b->stash = b->stash_tail = b->spare = NULL;
	b->stash_bytes = b->spare_bytes = 0;
}
