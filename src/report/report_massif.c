/* report_massif.c - the --massif writer: valgrind's massif.out, from the timeline, detailed at the peak and now. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heap.h"
#include "report.h"
#include "report_common.h"
#include "sym.h"
#include "table.h"
#include "util.h"

/* At most this many snapshots, as massif's default --max-snapshots. */
#define MS_MAX_SNAPSHOTS 100
/* Levels of a tree below its root at most: ms_print reads a tree recursively, and Perl warns past 100. */
#define MS_MAX_LEVELS 96
/* A tree entry under this share of its snapshot (in hundredths of a percent) joins "in N places", as massif's --threshold=1.0. */
#define MS_THRESHOLD_BP 100

/*
 * One node of a heap tree. As in massif, the root is the allocation
 * functions, its children the code that called them, and each node's
 * children the callers of that code: stacks merge from the allocation site
 * outwards, a node's bytes being the sum of its children's.
 */
struct ms_node {
	char *label;		/* "0xADDR: func (file:line)", as massif writes it */
	struct ms_node *parent;	/* NULL for the root */
	uint64_t bytes;
	struct ms_node **kids;
	uint32_t nkids, cap;
};

/* One snapshot line of the file; kind says which tree follows it. */
enum ms_kind { MS_EMPTY, MS_PEAK, MS_DETAILED };

struct ms_snap {
	uint64_t time_ms;
	uint64_t bytes;
	enum ms_kind kind;
};

/*
 * Finds a node's child by label without a search of its siblings (the
 * root can have thousands): every node built, indexed by parent and label.
 */
struct ms_index {
	struct ms_node **all;
	size_t n, cap;
	struct jt_index by_label;	/* ids are positions in all */
};

/* The label's hash, mixed with the parent's address. */
static uint32_t
ms_hash(const struct ms_node *parent, const char *label)
{
	uint64_t h = table_hash_bytes(label, strlen(label)) ^ (uint64_t)(uintptr_t)parent * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(h ^ (h >> 32));
}

/* A child being looked up. */
struct ms_key {
	const struct ms_index *ix;
	const struct ms_node *parent;
	const char *label;
};

static int
ms_equal(const void *arg, uint32_t id)
{
	const struct ms_key *k = arg;
	const struct ms_node *n = k->ix->all[id];

	return n->parent == k->parent && strcmp(n->label, k->label) == 0;
}

/* Returns the child of n labelled label, adding it if new. */
static struct ms_node *
ms_child(struct ms_index *ix, struct ms_node *n, const char *label)
{
	struct ms_key key = { ix, n, label };
	uint32_t hash = ms_hash(n, label), id = index_find(&ix->by_label, hash, ms_equal, &key);
	struct ms_node *k;

	if (id != UINT32_MAX)
		return ix->all[id];
	if (n->nkids == n->cap) {
		n->cap = n->cap ? n->cap * 2 : 4;
		n->kids = xrealloc(n->kids, n->cap * sizeof(*n->kids));
	}
	if (ix->n == ix->cap) {
		ix->cap = ix->cap ? ix->cap * 2 : 256;
		ix->all = xrealloc(ix->all, ix->cap * sizeof(*ix->all));
	}
	k = xcalloc(1, sizeof(*k));
	k->label = xstrdup(label);
	k->parent = n;
	n->kids[n->nkids++] = k;
	index_add(&ix->by_label, hash, (uint32_t)ix->n);
	ix->all[ix->n++] = k;
	return k;
}

/* Adds bytes along the path labels[0..n) (allocation site first) under root. */
static void
ms_insert(struct ms_index *ix, struct ms_node *root, char *const *labels, uint32_t n, uint64_t bytes)
{
	struct ms_node *node = root;

	root->bytes += bytes;
	for (uint32_t i = 0; i < n; i++) {
		node = ms_child(ix, node, labels[i]);
		node->bytes += bytes;
	}
}

static void
ms_free(struct ms_node *n)
{
	for (uint32_t i = 0; i < n->nkids; i++) {
		ms_free(n->kids[i]);
		free(n->kids[i]);
	}
	free(n->kids);
	free(n->label);
}

/* Copies src into dst (of size len) with control bytes as '?': a label must stay one line. */
static void
ms_oneline(char *dst, size_t len, const char *src)
{
	size_t i;

	for (i = 0; src[i] && i + 1 < len; i++)
		dst[i] = (unsigned char)src[i] < 0x20 ? '?' : src[i];
	dst[i] = '\0';
}

/* massif's label of one source-level frame: "0xADDR: NAME (file:line)", "(in module)" without a line (report_frame_label, report_frame_place). */
static char *
ms_label(const struct jt_frame *fr)
{
	char buf[1024 + REPORT_LABEL_MAX + REPORT_PLACE_MAX], out[1024], label[REPORT_LABEL_MAX];
	char place[REPORT_PLACE_MAX];

	snprintf(buf, sizeof(buf), "0x%" PRIX64 ": %s%s", fr->address, report_frame_label(fr, label, sizeof(label)),
		 report_frame_place(fr, place, sizeof(place)));
	ms_oneline(out, sizeof(out), buf);
	return xstrdup(out);
}

/*
 * The labels of st from the allocation site outwards: one per source-level
 * frame, so an inlined function is a level of its own at its caller's
 * address (as massif with --read-inline-info). Like massif, it stops at
 * main: what runs below it is the C library's start-up; and after
 * MS_MAX_LEVELS labels, as massif's --depth does. A stack without
 * frames gets one label saying so. Returns a malloc'ed array of malloc'ed
 * strings; *n gets the count.
 */
static char **
ms_stack_labels(struct jt_sym *sym, const struct jt_stack *st, uint32_t *n)
{
	struct jt_frame fr[REPORT_MAX_FRAMES];
	uint32_t cap = st->depth + 2;
	char **out = xmalloc(cap * sizeof(*out));
	int at_main = 0;

	*n = 0;
	for (uint32_t i = 0; i < st->depth && !at_main && *n < MS_MAX_LEVELS; i++) {
		int m = report_resolve(sym, st, i, fr);

		if (*n + (uint32_t)m + 1 > cap) {
			cap = (*n + (uint32_t)m + 1) * 2;
			out = xrealloc(out, cap * sizeof(*out));
		}
		for (int k = 0; k < m && !at_main && *n < MS_MAX_LEVELS; k++) {
			out[(*n)++] = ms_label(&fr[k]);
			at_main = fr[k].function && strcmp(fr[k].function, "main") == 0;
		}
	}
	if (*n == 0)
		out[(*n)++] = xstrdup(st->filtered ? "(allocations outside --min-size/--max-size, not broken down)"
					 : "(no call stack was captured)");
	return out;
}

/* Builds the tree at the peak (per-stack peak_bytes) and the one now (live_bytes), symbolizing each stack once. */
static void
ms_build(const struct jt_snapshot *s, struct ms_node *peak, struct ms_node *now)
{
	uint32_t count = heap_stack_count(s->heap);
	struct ms_index ix = { 0 };

	index_init(&ix.by_label, 256);
	for (uint32_t id = 0; id < count; id++) {
		const struct jt_stack *st = heap_stack_get(s->heap, id);
		uint32_t n;
		char **labels;

		if (!st->peak_bytes && !st->live_bytes)
			continue;
		labels = ms_stack_labels(s->sym, st, &n);
		if (st->peak_bytes)
			ms_insert(&ix, peak, labels, n, st->peak_bytes);
		if (st->live_bytes)
			ms_insert(&ix, now, labels, n, st->live_bytes);
		for (uint32_t i = 0; i < n; i++)
			free(labels[i]);
		free(labels);
	}
	free(ix.all);
	index_free(&ix.by_label);
}

/* qsort order of a node's children: bytes descending, then label, so the file is the same every run. */
static int
ms_node_cmp(const void *a, const void *b)
{
	const struct ms_node *x = *(struct ms_node *const *)a, *y = *(struct ms_node *const *)b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return strcmp(x->label, y->label);
}

static int
ms_significant(uint64_t bytes, uint64_t total)
{
	return bytes * 10000 >= total * MS_THRESHOLD_BP;
}

/* massif's line for the children under the threshold ("in 1 place," / "in N places, all"). */
static void
ms_insig_line(FILE *f, unsigned depth, uint64_t bytes, uint32_t places)
{
	fprintf(f, "%*sn0: %" PRIu64 " in %" PRIu32 " place%s below massif's threshold (%.2f%%)\n",
		(int)depth, "", bytes, places, places == 1 ? "," : "s, all", MS_THRESHOLD_BP / 100.0);
}

/*
 * Writes node n at depth (one space of indent per level, as massif), then
 * its significant children largest first and, in its place by size, one
 * line for the rest, as massif does.
 */
static void
ms_write_node(FILE *f, struct ms_node *n, unsigned depth, uint64_t total)
{
	uint32_t nsig = 0, ninsig = 0, i;
	uint64_t insig = 0;
	int insig_done;

	if (n->nkids > 1)
		qsort(n->kids, n->nkids, sizeof(*n->kids), ms_node_cmp);
	for (i = 0; i < n->nkids; i++) {
		if (ms_significant(n->kids[i]->bytes, total))
			nsig++;
		else
			ninsig++, insig += n->kids[i]->bytes;
	}
	fprintf(f, "%*sn%" PRIu32 ": %" PRIu64 " %s\n", (int)depth, "", nsig + (ninsig > 0), n->bytes,
		n->label);
	insig_done = ninsig == 0;
	for (i = 0; i < nsig; i++) {
		if (!insig_done && insig > n->kids[i]->bytes) {
			ms_insig_line(f, depth + 1, insig, ninsig);
			insig_done = 1;
		}
		ms_write_node(f, n->kids[i], depth + 1, total);
	}
	if (!insig_done)
		ms_insig_line(f, depth + 1, insig, ninsig);
}

static void
ms_write_snap(FILE *f, unsigned num, const struct ms_snap *sn, struct ms_node *tree)
{
	static const char *const kinds[] = { "empty", "peak", "detailed" };

	fprintf(f, "#-----------\nsnapshot=%u\n#-----------\ntime=%" PRIu64 "\nmem_heap_B=%" PRIu64
		"\nmem_heap_extra_B=0\nmem_stacks_B=0\nheap_tree=%s\n", num, sn->time_ms, sn->bytes,
		kinds[sn->kind]);
	if (sn->kind != MS_EMPTY)
		ms_write_node(f, tree, 0, sn->bytes);
}

/*
 * Keeps at most max of the n samples: they are cut into max runs of
 * neighbours and each run keeps its highest, so a short spike still shows.
 * Writes into out[] (room for max) and returns the count.
 */
static size_t
ms_downsample(const struct jt_heap_sample *tl, size_t n, struct ms_snap *out, size_t max)
{
	size_t kept = 0;

	for (size_t g = 0; g < (n < max ? n : max); g++) {
		size_t lo = n <= max ? g : g * n / max, hi = n <= max ? g + 1 : (g + 1) * n / max, best = lo;

		for (size_t i = lo + 1; i < hi; i++)
			if (tl[i].live_bytes > tl[best].live_bytes)
				best = i;
		out[kept++] = (struct ms_snap){ tl[best].time_ms, tl[best].live_bytes, MS_EMPTY };
	}
	return kept;
}

/*
 * The snapshots, oldest first: time 0 with nothing live (the clock starts
 * with the heap), the timeline's samples before now (downsampled), the
 * peak with its tree where its time falls, and now with the live tree.
 * out[] has room for MS_MAX_SNAPSHOTS. Returns the count.
 */
static size_t
ms_snapshots(const struct jt_snapshot *s, uint64_t peak_tree, uint64_t now_tree, struct ms_snap *out)
{
	const struct jt_heap_sample *tl;
	struct jt_heap_totals t;
	struct jt_heap_peak pk;
	size_t n, before = 0, k = 0, i;

	heap_totals(s->heap, &t);
	heap_peak(s->heap, &pk);
	tl = heap_timeline(s->heap, &n);
	while (before < n && tl[before].time_ms < s->time_ms)
		before++;
	if (s->time_ms > 0 && (before == 0 || tl[0].time_ms > 0))
		out[k++] = (struct ms_snap){ 0, 0, MS_EMPTY };
	k += ms_downsample(tl, before, out + k, MS_MAX_SNAPSHOTS - 3);
	if (pk.live_bytes || peak_tree) {
		for (i = k; i > 0 && out[i - 1].time_ms > pk.time_ms; i--)
			out[i] = out[i - 1];
		/* The tree's bytes never exceed the snapshot's: ms_print checks it. */
		out[i] = (struct ms_snap){ pk.time_ms < s->time_ms ? pk.time_ms : s->time_ms,
					   pk.live_bytes > peak_tree ? pk.live_bytes : peak_tree, MS_PEAK };
		k++;
	}
	out[k++] = (struct ms_snap){ s->time_ms, t.live_bytes > now_tree ? t.live_bytes : now_tree, MS_DETAILED };
	return k;
}

/* "desc:": the options that shape the figures, as massif lists its own, or "(none)". */
static void
ms_header(FILE *f, const struct jt_snapshot *s)
{
	char cmd[4096];

	fputs("desc:", f);
	if (s->min_size > 0)
		fprintf(f, " --min-size %" PRIu64, s->min_size);
	if (s->max_size < UINT64_MAX)
		fprintf(f, " --max-size %" PRIu64, s->max_size);
	if (s->min_size == 0 && s->max_size == UINT64_MAX)
		fputs(" (none)", f);
	ms_oneline(cmd, sizeof(cmd), s->command ? s->command : "(unknown)");
	fprintf(f, "\ncmd: %s\ntime_unit: ms\n", cmd);
}

static void
ms_write(FILE *f, const struct jt_snapshot *s)
{
	static const char root_label[] = "(heap allocation functions) malloc/new/new[], --alloc-fns, etc.";
	struct ms_node peak = { .label = xstrdup(root_label) }, now = { .label = xstrdup(root_label) };
	struct ms_snap snaps[MS_MAX_SNAPSHOTS];
	size_t n;

	ms_build(s, &peak, &now);
	n = ms_snapshots(s, peak.bytes, now.bytes, snaps);
	ms_header(f, s);
	for (size_t i = 0; i < n; i++)
		ms_write_snap(f, (unsigned)i, &snaps[i], snaps[i].kind == MS_PEAK ? &peak : &now);
	ms_free(&peak);
	ms_free(&now);
}

int
report_massif(FILE *f, const struct jt_snapshot *s)
{
	ms_write(f, s);
	return ferror(f) ? -1 : 0;
}
