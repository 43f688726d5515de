/* up_ring.c - reads perf ring buffers and merges several by their samples' time. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "up_ring.h"
#include "util.h"

static uint64_t
up_page(void)
{
	return (uint64_t)sysconf(_SC_PAGESIZE);
}

struct up_ring *
up_ring_wrap(int fd, void *map, uint64_t size)
{
	struct up_ring *r = xcalloc(1, sizeof(*r));

	r->fd = fd;
	r->size = size;
	r->meta = map;
	r->data = (uint8_t *)map + up_page();
	r->pos = r->meta->data_tail;
	return r;
}

struct up_ring *
up_ring_map(int fd, uint64_t size)
{
	void *m = mmap(NULL, up_page() + size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	struct up_ring *r;

	if (m == MAP_FAILED)
		return NULL;
	r = up_ring_wrap(fd, m, size);
	r->mapped = 1;
	return r;
}

void
up_ring_close(struct up_ring *r)
{
	if (r && r->mapped)
		munmap(r->meta, r->size + up_page());
	free(r);
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
	r->time = 0;
	if (h->type == PERF_RECORD_SAMPLE && h->size >= 32)
		memcpy(&r->time, r->rec + 24, sizeof(r->time));
	/*
	 * The kernel wrote it from another CPU: each line the reader touches
	 * is a miss. Ask for the registers and the stack copy's last word (its
	 * dyn_size) now, while the records before it are applied.
	 */
	__builtin_prefetch(r->rec + 64);
	__builtin_prefetch(r->rec + 128);
	__builtin_prefetch(r->rec + h->size - 8);
	return r->rec;
}

void
up_ring_merge(struct up_ring **rings, size_t n, uint64_t cut,
	      void (*apply)(void *arg, const uint8_t *rec), void *arg)
{
	struct up_ring *best;

	for (size_t i = 0; i < n; i++) {
		rings[i]->head = __atomic_load_n(&rings[i]->meta->data_head, __ATOMIC_ACQUIRE);
		up_ring_peek(rings[i]);
	}
	for (;;) {
		best = NULL;
		for (size_t i = 0; i < n; i++)
			if (rings[i]->rec && rings[i]->time < cut && (!best || rings[i]->time < best->time))
				best = rings[i];
		if (!best)
			break;
		apply(arg, best->rec);
		best->pos += ((struct perf_event_header *)best->rec)->size;
		up_ring_peek(best);
	}
	for (size_t i = 0; i < n; i++)
		__atomic_store_n(&rings[i]->meta->data_tail, rings[i]->pos, __ATOMIC_RELEASE);
}
