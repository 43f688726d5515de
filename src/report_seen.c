/* report_seen.c - what one JSON file already holds of each process's stacks, so that a snapshot lists only what changed. */
#include <stdlib.h>
#include <string.h>

#include "heap.h"
#include "report_seen.h"
#include "util.h"

struct seen_heap {
	int pid;
	const struct jt_heap *heap;
	unsigned key;
	struct seen_fig *figs;	/* by stack id */
	unsigned char *listed;	/* by stack id: 1 once the file holds an entry (with the frames) */
	uint32_t n;		/* entries of figs and listed */
	uint32_t known;		/* the highest id listed, plus 1 */
	struct seen_heap *next;
};

struct jt_seen {
	struct seen_heap *heaps;
	unsigned nkeys;
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
	free(s);
}

struct seen_heap *
seen_heap_of(struct jt_seen *s, int pid, const struct jt_heap *h)
{
	struct seen_heap **pp, *sh;
	uint32_t count = heap_stack_count(h);

	for (pp = &s->heaps; (sh = *pp); pp = &sh->next)
		if (sh->pid == pid && sh->heap == h)
			break;
	/* Ids only ever grow in one heap: fewer stacks is another heap that took the address. */
	if (sh && count < sh->known) {
		*pp = sh->next;
		seen_heap_free(sh);
		sh = NULL;
	}
	if (!sh) {
		sh = xcalloc(1, sizeof(*sh));
		sh->pid = pid;
		sh->heap = h;
		sh->key = ++s->nkeys;
		sh->next = s->heaps;
		s->heaps = sh;
	}
	return sh;
}

unsigned
seen_heap_key(const struct seen_heap *sh)
{
	return sh->key;
}

int
seen_changed(struct seen_heap *sh, uint32_t id, const struct seen_fig *fig, int *first)
{
	uint32_t n;

	if (id >= sh->n) {
		n = id + 1 > 2 * sh->n ? id + 1 : 2 * sh->n;
		sh->figs = xrealloc(sh->figs, n * sizeof(*sh->figs));
		sh->listed = xrealloc(sh->listed, n);
		memset(sh->figs + sh->n, 0, (n - sh->n) * sizeof(*sh->figs));
		memset(sh->listed + sh->n, 0, n - sh->n);
		sh->n = n;
	}
	if (id >= sh->known)
		sh->known = id + 1;
	*first = !sh->listed[id];
	if (!*first && memcmp(&sh->figs[id], fig, sizeof(*fig)) == 0)
		return 0;
	sh->figs[id] = *fig;
	sh->listed[id] = 1;
	return 1;
}
