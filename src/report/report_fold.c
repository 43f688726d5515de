/* report_fold.c - folds the snapshot's stacks into named frame paths and a frame tree (folded stacks, flame graph). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heap.h"
#include "report.h"
#include "report_common.h"
#include "report_fold.h"
#include "report_leak.h"
#include "sym.h"
#include "util.h"

/*
 * A name as a folded line can hold it: ';' separates frames and a newline
 * ends the line, so ';' becomes ':' and control characters become spaces
 * (spaces are fine: readers split the figure off at the last space).
 */
static char *
fold_name(const char *name)
{
	char *out = xstrdup(name), *c;

	for (c = out; *c; c++) {
		if (*c == ';')
			*c = ':';
		else if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = ' ';
	}
	return out;
}

/* Resolves st into p->names, outermost first. */
static void
fold_stack(struct jt_sym *sym, const struct jt_stack *st, struct fold_path *p)
{
	struct jt_frame fr[REPORT_MAX_FRAMES];
	size_t max = (size_t)st->depth * REPORT_MAX_FRAMES + 1, n = 0, i;
	char buf[REPORT_LABEL_MAX];
	uint32_t d;

	p->names = xmalloc(max * sizeof(*p->names));
	/* Collected innermost first, as the stack is, then reversed. */
	for (d = 0; d < st->depth; d++) {
		int k, nf = report_resolve(sym, st, d, fr);

		for (k = 0; k < nf; k++)
			p->names[n++] = fold_name(report_frame_label(&fr[k], buf, sizeof(buf)));
	}
	if (st->truncated)
		p->names[n++] = xstrdup("[truncated]");
	else if (n == 0)
		p->names[n++] = xstrdup("[no stack]");
	for (i = 0; i < n / 2; i++) {
		char *t = p->names[i];

		p->names[i] = p->names[n - 1 - i];
		p->names[n - 1 - i] = t;
	}
	/* Room was made for every pc to be REPORT_MAX_FRAMES deep; keep what is used. */
	p->names = xrealloc(p->names, n * sizeof(*p->names));
	p->n = (uint32_t)n;
}

/* Frame by frame by name; a path sorts after the longer paths it is a prefix of. */
static int
fold_path_cmp(const void *a, const void *b)
{
	const struct fold_path *x = a, *y = b;
	uint32_t i;

	for (i = 0; i < x->n && i < y->n; i++) {
		int c = strcmp(x->names[i], y->names[i]);

		if (c)
			return c;
	}
	return x->n > y->n ? -1 : x->n < y->n;
}

static void
fold_path_free(struct fold_path *p)
{
	for (uint32_t i = 0; i < p->n; i++)
		free(p->names[i]);
	free(p->names);
}

/* Sorts f->paths and merges the equal ones (stacks that differ only in pcs that symbolize alike). */
static void
fold_merge(struct jt_fold *f)
{
	size_t i, out = 0;

	qsort(f->paths, f->npaths, sizeof(*f->paths), fold_path_cmp);
	for (i = 0; i < f->npaths; i++) {
		if (out && fold_path_cmp(&f->paths[out - 1], &f->paths[i]) == 0) {
			f->paths[out - 1].value += f->paths[i].value;
			fold_path_free(&f->paths[i]);
		} else {
			f->paths[out++] = f->paths[i];
		}
	}
	f->npaths = out;
}

/*
 * Builds the preorder tree from the sorted paths: a path opens a node for
 * each frame past the prefix it shares with the path before it, and adds its
 * value to every node on it. A node starts where the values before its first
 * path end.
 */
static void
fold_tree(struct jt_fold *f)
{
	size_t cap = 1, i;
	uint32_t *open = NULL, maxn = 0, k, d;
	uint64_t offset = 0;

	for (i = 0; i < f->npaths; i++) {
		cap += f->paths[i].n;
		if (f->paths[i].n > maxn)
			maxn = f->paths[i].n;
	}
	f->nodes = xmalloc(cap * sizeof(*f->nodes));
	open = xmalloc((maxn + 1) * sizeof(*open));
	f->nodes[0] = (struct fold_node){ .name = "all" };
	f->nnodes = 1;
	open[0] = 0;
	for (i = 0; i < f->npaths; i++) {
		const struct fold_path *p = &f->paths[i], *prev = i ? &f->paths[i - 1] : NULL;

		for (k = 0; prev && k < p->n && k < prev->n && strcmp(p->names[k], prev->names[k]) == 0; k++)
			;
		for (d = k; d < p->n; d++) {
			f->nodes[f->nnodes] = (struct fold_node){ .name = p->names[d], .depth = d + 1,
				.parent = open[d], .offset = offset };
			open[d + 1] = (uint32_t)f->nnodes++;
		}
		for (d = 0; d <= p->n; d++)
			f->nodes[open[d]].value += p->value;
		if (p->n > f->max_depth)
			f->max_depth = p->n;
		offset += p->value;
	}
	f->total = offset;
	free(open);
}

void
fold_build(const struct jt_snapshot *s, struct jt_fold *f)
{
	uint32_t id, count = heap_stack_count(s->heap);
	struct report_leak rl;

	memset(f, 0, sizeof(*f));
	/* Only definitely-lost needs it: the table of each stack's lost bytes, built once. */
	report_leak_init(&rl, s);
	f->paths = xmalloc((count ? count : 1) * sizeof(*f->paths));
	for (id = 0; id < count; id++) {
		const struct jt_stack *st = heap_stack_get(s->heap, id);
		uint64_t v = st ? report_leak_cost(&rl, st, s->cost) : 0;

		if (!v || st->filtered)
			continue;
		fold_stack(s->sym, st, &f->paths[f->npaths]);
		f->paths[f->npaths++].value = v;
	}
	report_leak_free(&rl);
	fold_merge(f);
	fold_tree(f);
}

void
fold_free(struct jt_fold *f)
{
	for (size_t i = 0; i < f->npaths; i++)
		fold_path_free(&f->paths[i]);
	free(f->paths);
	free(f->nodes);
	memset(f, 0, sizeof(*f));
}

