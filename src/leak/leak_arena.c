/* leak_arena.c - finds glibc malloc's arenas in a stopped process by their shape, so that the allocator's bookkeeping is no root of a leak check. */
#include <stdlib.h>
#include <string.h>

#include "leak_arena.h"
#include "maps.h"
#include "util.h"

#define LA_PAIRS	127			/* bins 1..127 (NBINS - 1), a pair of words each */
#define LA_LAST		(16 * (LA_PAIRS - 1))	/* bin 127, from bins[0]: no chunk size maps to it */
#define LA_NEXT		2048			/* next, from bins[0] */
#define LA_WORDS	((LEAK_ARENA_BELOW + LEAK_ARENA_ABOVE) / 8)
/* An arena's list never holds more: glibc's arena_max is 8 per CPU by default. */
#define LA_MAX_ARENAS	4096

/*
 * Where bins[0] lies above an arena's start, which the next pointers give:
 * 112 since glibc 2.27 (mutex, flags, have_fastchunks and padding before
 * fastbinsY), 104 before.
 */
static const uint64_t la_offsets[] = { 112, 104 };

/*
 * Whether a[0..LA_WORDS), read at bins - LEAK_ARENA_BELOW, is an arena
 * whose bins[0] is at bins: each bin word points 16 bytes below its own
 * pair (an empty bin) or at a chunk (16-aligned), bin 127 is empty, and
 * top and next are set (malloc_init_state points top at bin 1).
 */
static int
la_shape(const uint64_t *a, uint64_t bins)
{
	const uint64_t *b = a + LEAK_ARENA_BELOW / 8;
	uint64_t last = bins + LA_LAST - 16, next = b[LA_NEXT / 8];

	for (size_t k = 0; k < 2 * LA_PAIRS; k++) {
		uint64_t self = bins + 16 * (k / 2) - 16;

		if (b[k] != self && (!b[k] || (b[k] & 15)))
			return 0;
	}
	return b[LA_LAST / 8] == last && b[LA_LAST / 8 + 1] == last && b[-2] && next && !(next & 7);
}

uint64_t
leak_arena_find(const uint64_t *w, size_t nw, uint64_t base, uint64_t from)
{
	/* k: the index of bin 127's first word; the arena's words start k0 words below it. */
	const size_t k0 = (LEAK_ARENA_BELOW + LA_LAST) / 8;
	size_t k = k0;

	if (nw < LA_WORDS)
		return 0;
	if (from + LA_LAST > base + 8 * k)
		k = (size_t)((from + LA_LAST - base + 7) / 8);
	for (; k <= nw - LA_WORDS + k0; k++) {
		uint64_t at = base + 8 * k;

		if (w[k] == at - 16 && w[k + 1] == at - 16 && la_shape(w + k - k0, at - LA_LAST))
			return at - LA_LAST;
	}
	return 0;
}

/* The bins[0] of the arena that starts at a, its words read into buf (LA_WORDS), or 0. */
static uint64_t
la_arena_at(leak_arena_read_fn read, void *arg, uint64_t a, uint64_t *buf)
{
	for (size_t i = 0; i < ARRAY_SIZE(la_offsets); i++) {
		uint64_t bins = a + la_offsets[i];

		if (read(arg, bins - LEAK_ARENA_BELOW, buf, LA_WORDS * 8) == 0 && la_shape(buf, bins))
			return bins;
	}
	return 0;
}

/* Whether a, an arena's next pointer, is the start of the arena whose bins[0] is at bins. */
static int
la_is_start(uint64_t a, uint64_t bins)
{
	for (size_t i = 0; i < ARRAY_SIZE(la_offsets); i++)
		if (a + la_offsets[i] == bins)
			return 1;
	return 0;
}

static void
la_cut(uint64_t bins, struct leak_region **cut, size_t *ncut)
{
	*cut = xrealloc(*cut, (*ncut + 1) * sizeof(**cut));
	(*cut)[(*ncut)++] = (struct leak_region) { bins - LEAK_ARENA_BELOW, bins + LEAK_ARENA_ABOVE };
}

/*
 * main_arena at bins, whose next pointer is next: the list of arenas from
 * it must lead back to it or to another arena, else it is no arena. Cuts
 * it and every arena of the list, and returns how many. A thread arena is
 * cut only when read whole: a list that ends early keeps the rest roots.
 */
static size_t
la_list(uint64_t bins, uint64_t next, leak_arena_read_fn read, void *arg, struct leak_region **cut, size_t *ncut)
{
	uint64_t *buf = xmalloc(LA_WORDS * 8), a = next, b;
	size_t found = 1;

	la_cut(bins, cut, ncut);
	while (found < LA_MAX_ARENAS && !la_is_start(a, bins) && (b = la_arena_at(read, arg, a, buf))) {
		la_cut(b, cut, ncut);
		found++;
		a = buf[(LEAK_ARENA_BELOW + LA_NEXT) / 8];
	}
	free(buf);
	if (found == 1 && !la_is_start(a, bins)) {
		(*ncut)--;
		return 0;
	}
	return found;
}

/* A mapping where main_arena may be: the writable data of the C library (want NULL), or of the file want. */
static int
la_map_wanted(const struct maps_entry *e, const char *want)
{
	const char *base = strrchr(e->name, '/');

	if (e->name[0] != '/' || !e->r || !e->w || e->shared)
		return 0;
	if (want)
		return strcmp(e->name, want) == 0;
	base++;
	return strncmp(base, "libc.so", 7) == 0 || strncmp(base, "libc-", 5) == 0;
}

/* Searches [start, end) for main_arena; on a find, follows its list. Returns the arenas cut. */
static size_t
la_search(uint64_t start, uint64_t end, leak_arena_read_fn read, void *arg, struct leak_region **cut, size_t *ncut)
{
	size_t nw = (size_t)(end - start) / 8, found = 0;
	uint64_t *w = xmalloc(nw * 8), bins = 0;

	if (read(arg, start, w, nw * 8) == 0)
		while (!found && (bins = leak_arena_find(w, nw, start, bins ? bins + 8 : 0)))
			found = la_list(bins, w[(bins + LA_NEXT - start) / 8], read, arg, cut, ncut);
	free(w);
	return found;
}

/* Searches the writable data of the mappings la_map_wanted(want) takes. Returns the arenas cut. */
static size_t
la_search_maps(const struct jt_maps *m, const char *want, leak_arena_read_fn read, void *arg, struct leak_region **cut,
	       size_t *ncut)
{
	size_t i, j, found = 0;

	for (i = 0; i < m->n; i = j) {
		j = i + 1;
		if (!la_map_wanted(&m->v[i], want))
			continue;
		/* A file's adjacent writable mappings as one range: an arena may straddle them. */
		while (j < m->n && m->v[j].start == m->v[j - 1].end && la_map_wanted(&m->v[j], want) &&
		       strcmp(m->v[j].name, m->v[i].name) == 0)
			j++;
		found += la_search(m->v[i].start, m->v[j - 1].end, read, arg, cut, ncut);
	}
	return found;
}

size_t
leak_arenas(const char *maps, const char *exe, leak_arena_read_fn read, void *arg, struct leak_region **cut,
	    size_t *ncut)
{
	struct jt_maps m;
	size_t found;

	if (maps_parse(maps, &m) < 0)
		return 0;
	/* The executable's data only without a C library of its own: a static program's. */
	found = la_search_maps(&m, NULL, read, arg, cut, ncut);
	if (!found && exe)
		found = la_search_maps(&m, exe, read, arg, cut, ncut);
	maps_clear(&m);
	return found;
}
