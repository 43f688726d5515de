/* report_seen.c - what one JSON file already holds of each process's stacks, so that a snapshot lists only what changed. */
#include <stdlib.h>
#include <string.h>

#include "heap.h"
#include "report_seen.h"
#include "util.h"

struct seen_heap {
	int pid;
	unsigned execs;
	int ended;		/* seen_heap_end: its image's last snapshot is written */
	const struct jt_heap *heap;
	unsigned key;
	struct seen_fig *figs;	/* by stack id */
	unsigned char *listed;	/* by stack id: 1 once the file holds an entry (with the frames) */
	uint32_t n;		/* entries of figs and listed */
	uint32_t known;		/* the highest id listed, plus 1 */
	struct seen_heap *next;
};

/* One frame of the table: where its text is in the arena, and its hash. */
struct seen_slot {
	size_t off, len;
	uint64_t hash;
	uint32_t id;
	int used;
};

struct jt_seen {
	struct seen_heap *heaps;
	unsigned nkeys;
	struct seen_slot *slots;	/* open addressing, a power of two of them, at most half used */
	size_t nslots, nframes;
	char *arena;			/* every frame's text, one after the other */
	size_t arena_len, arena_cap;
	char *pending;			/* the new frames' texts since seen_frames_take, joined */
	size_t pending_len, pending_cap;
	char *taken;			/* what seen_frames_take returned last */
};

struct jt_seen *
seen_new(void)
{
	return xcalloc(1, sizeof(struct jt_seen));
}

static void
seen_heap_free(struct seen_heap *sh)
{
	free(sh->figs);
	free(sh->listed);
	free(sh);
}

void
seen_free(struct jt_seen *s)
{
	struct seen_heap *sh, *next;

	if (!s)
		return;
	for (sh = s->heaps; sh; sh = next) {
		next = sh->next;
		seen_heap_free(sh);
	}
	free(s->slots);
	free(s->arena);
	free(s->pending);
	free(s->taken);
	free(s);
}

struct seen_heap *
seen_heap_of(struct jt_seen *s, int pid, unsigned execs, const struct jt_heap *h)
{
	struct seen_heap **pp, *sh, *found = NULL;
	uint32_t count = heap_stack_count(h);

	/* A snapshot's frozen copy names the heap it was taken of. */
	h = heap_identity(h);
	/* The ended images' records go: a later heap at their address is another one. */
	for (pp = &s->heaps; (sh = *pp);) {
		if (sh->ended) {
			*pp = sh->next;
			seen_heap_free(sh);
		} else {
			if (sh->pid == pid && sh->execs == execs && sh->heap == h)
				found = sh;
			pp = &sh->next;
		}
	}
	sh = found;
	/* Ids only ever grow in one heap: fewer stacks is another heap that took the address. */
	if (sh && count < sh->known)
		sh->ended = 1;
	if (!sh || sh->ended) {
		sh = xcalloc(1, sizeof(*sh));
		sh->pid = pid;
		sh->execs = execs;
		sh->heap = h;
		sh->key = ++s->nkeys;
		sh->next = s->heaps;
		s->heaps = sh;
	}
	return sh;
}

void
seen_heap_end(struct seen_heap *sh)
{
	sh->ended = 1;
}

unsigned
seen_heap_key(const struct seen_heap *sh)
{
	return sh->key;
}

/* Makes room for stack id in sh's arrays, the new entries zeroed. */
static void
seen_reserve(struct seen_heap *sh, uint32_t id)
{
	uint32_t n;

	if (id < sh->n)
		return;
	n = id + 1 > 2 * sh->n ? id + 1 : 2 * sh->n;
	sh->figs = xrealloc(sh->figs, n * sizeof(*sh->figs));
	sh->listed = xrealloc(sh->listed, n);
	memset(sh->figs + sh->n, 0, (n - sh->n) * sizeof(*sh->figs));
	memset(sh->listed + sh->n, 0, n - sh->n);
	sh->n = n;
}

int
seen_changed(struct seen_heap *sh, uint32_t id, const struct seen_fig *fig, int *first)
{
	seen_reserve(sh, id);
	if (id >= sh->known)
		sh->known = id + 1;
	*first = !sh->listed[id];
	if (!*first && memcmp(&sh->figs[id], fig, sizeof(*fig)) == 0)
		return 0;
	sh->figs[id] = *fig;
	sh->listed[id] = 1;
	return 1;
}

static uint64_t
seen_hash(const char *text, size_t len)
{
	uint64_t h = 14695981039346656037ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)text[i]) * 1099511628211ull;
	return h;
}

/* Appends len bytes of text to the buffer *buf (*n used of *cap). */
static void
seen_append(char **buf, size_t *n, size_t *cap, const char *text, size_t len)
{
	if (*n + len + 1 > *cap) {
		*cap = 2 * (*n + len + 1);
		*buf = xrealloc(*buf, *cap);
	}
	memcpy(*buf + *n, text, len);
	*n += len;
	(*buf)[*n] = '\0';
}

/* Doubles the table (or makes it), every frame put back by its hash. */
static void
seen_grow(struct jt_seen *s)
{
	size_t n = s->nslots ? 2 * s->nslots : 1024;
	struct seen_slot *slots = xcalloc(n, sizeof(*slots));

	for (size_t i = 0; i < s->nslots; i++) {
		size_t k;

		if (!s->slots[i].used)
			continue;
		for (k = s->slots[i].hash & (n - 1); slots[k].used; k = (k + 1) & (n - 1))
			;
		slots[k] = s->slots[i];
	}
	free(s->slots);
	s->slots = slots;
	s->nslots = n;
}

uint32_t
seen_frame(struct jt_seen *s, const char *text, size_t len)
{
	uint64_t h = seen_hash(text, len);
	struct seen_slot *sl;
	size_t k;

	if (2 * (s->nframes + 1) > s->nslots)
		seen_grow(s);
	for (k = h & (s->nslots - 1); (sl = &s->slots[k])->used; k = (k + 1) & (s->nslots - 1))
		if (sl->hash == h && sl->len == len && memcmp(s->arena + sl->off, text, len) == 0)
			return sl->id;
	*sl = (struct seen_slot){ .off = s->arena_len, .len = len, .hash = h, .id = (uint32_t)s->nframes++, .used = 1 };
	seen_append(&s->arena, &s->arena_len, &s->arena_cap, text, len);
	if (s->pending_len)
		seen_append(&s->pending, &s->pending_len, &s->pending_cap, ",\n  ", 4);
	seen_append(&s->pending, &s->pending_len, &s->pending_cap, text, len);
	return sl->id;
}

const char *
seen_frames_take(struct jt_seen *s)
{
	free(s->taken);
	s->taken = s->pending ? s->pending : xstrdup("");
	s->pending = NULL;
	s->pending_len = s->pending_cap = 0;
	return s->taken;
}
