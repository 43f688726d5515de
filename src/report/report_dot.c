/* report_dot.c - the --dot writer: a Graphviz call graph of the allocating code, functions with self and total cost. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heap.h"
#include "report.h"
#include "report_leak.h"
#include "report_common.h"
#include "sym.h"
#include "table.h"
#include "util.h"

/* A function below this share of the total (in thousandths) is left out, with its edges. */
#define DOT_MIN_PERMILLE 5

/* One function of the graph: every stack that runs through it adds its cost to total once. */
struct dot_fn {
	char *name;		/* the node's name: report_frame_label of its frames */
	uint64_t self;		/* cost of the stacks whose innermost frame it is */
	uint64_t total;		/* cost of the stacks it is on (inclusive) */
	uint32_t seen;		/* 1 + the last stack that added to total, so recursion counts once */
};

/* One call, caller -> callee, with the cost of the stacks that make it. */
struct dot_edge {
	uint32_t from, to;	/* indexes in the function array */
	uint64_t cost;
	uint32_t seen;		/* as dot_fn's */
};

/*
 * The graph being built. Functions and edges are found through tables, so
 * that a large program's thousands of functions cost no quadratic search.
 */
struct dot_graph {
	struct dot_fn *fns;
	uint32_t nfns, fns_cap;
	struct jt_index fn_index;	/* by name */
	struct dot_edge *edges;
	uint32_t nedges, edges_cap;
	struct jt_table edge_index;	/* (from << 32 | to) + 1 -> index in edges */
	uint64_t total;		/* cost of every stack in the graph */
};

/* A function being looked up by name. */
struct dot_fn_key {
	const struct dot_graph *g;
	const char *name;
};

static int
dot_fn_equal(const void *arg, uint32_t id)
{
	const struct dot_fn_key *k = arg;

	return strcmp(k->g->fns[id].name, k->name) == 0;
}

/* Returns the index of the function called name, adding it if new. */
static uint32_t
dot_fn_get(struct dot_graph *g, const char *name)
{
	struct dot_fn_key k = { g, name };
	uint32_t hash = (uint32_t)table_hash_bytes(name, strlen(name)), id = index_find(&g->fn_index, hash, dot_fn_equal, &k);

	if (id != UINT32_MAX)
		return id;
	if (g->nfns == g->fns_cap) {
		g->fns_cap = g->fns_cap ? g->fns_cap * 2 : 64;
		g->fns = xrealloc(g->fns, g->fns_cap * sizeof(*g->fns));
	}
	g->fns[g->nfns] = (struct dot_fn){ .name = xstrdup(name) };
	index_add(&g->fn_index, hash, g->nfns);
	return g->nfns++;
}

/* Returns the edge from -> to, adding it if new. */
static struct dot_edge *
dot_edge_get(struct dot_graph *g, uint32_t from, uint32_t to)
{
	struct jt_slot *s;
	int fresh;

	/* + 1: the table's keys are not zero. */
	s = table_claim(&g->edge_index, ((uint64_t)from << 32 | to) + 1, &fresh);
	if (!fresh)
		return &g->edges[s->val];
	if (g->nedges == g->edges_cap) {
		g->edges_cap = g->edges_cap ? g->edges_cap * 2 : 64;
		g->edges = xrealloc(g->edges, g->edges_cap * sizeof(*g->edges));
	}
	g->edges[g->nedges] = (struct dot_edge){ .from = from, .to = to };
	s->val = g->nedges;
	return &g->edges[g->nedges++];
}

/*
 * The functions of st, innermost first: one per source-level frame (an
 * inlined function is a node of its own). Returns a malloc'ed array; *n
 * gets the count.
 */
static uint32_t *
dot_stack_fns(struct dot_graph *g, struct jt_sym *sym, const struct jt_stack *st, uint32_t *n)
{
	struct jt_frame fr[REPORT_MAX_FRAMES];
	uint32_t cap = st->depth + 8, *out = xmalloc(cap * sizeof(*out));
	char buf[REPORT_LABEL_MAX];

	*n = 0;
	for (uint32_t i = 0; i < st->depth; i++) {
		int m = report_resolve(sym, st, i, fr);

		if (*n + (uint32_t)m > cap) {
			cap = (*n + (uint32_t)m) * 2;
			out = xrealloc(out, cap * sizeof(*out));
		}
		for (int k = 0; k < m; k++)
			out[(*n)++] = dot_fn_get(g, report_frame_label(&fr[k], buf, sizeof(buf)));
	}
	return out;
}

/* Adds st's cost to its innermost function's self, to each function and each call on it once. */
static void
dot_add_stack(struct dot_graph *g, struct jt_sym *sym, const struct jt_stack *st, uint64_t cost)
{
	uint32_t n, *fns = dot_stack_fns(g, sym, st, &n);

	g->total += cost;
	if (n)
		g->fns[fns[0]].self += cost;
	for (uint32_t k = 0; k < n; k++) {
		struct dot_fn *fn = &g->fns[fns[k]];

		if (fn->seen != st->id + 1) {
			fn->seen = st->id + 1;
			fn->total += cost;
		}
		if (k + 1 < n) {
			struct dot_edge *e = dot_edge_get(g, fns[k + 1], fns[k]);

			if (e->seen != st->id + 1) {
				e->seen = st->id + 1;
				e->cost += cost;
			}
		}
	}
	free(fns);
}

/* Writes str inside a DOT double-quoted string: quotes and backslashes escaped, control bytes as '?'. */
static void
dot_escape(FILE *f, const char *str)
{
	for (const unsigned char *p = (const unsigned char *)str; *p; p++) {
		if (*p == '"' || *p == '\\')
			fputc('\\', f);
		fputc(*p < 0x20 ? '?' : *p, f);
	}
}

/* The unit of a cost's figures, as labels print it. */
static const char *
dot_unit(enum report_cost c)
{
	return c == COST_CALLS ? "calls" : c == COST_TEMPORARY ? "temporary allocations" : "bytes";
}

static int
dot_kept(const struct dot_graph *g, uint32_t i)
{
	return g->fns[i].total * 1000 >= g->total * DOT_MIN_PERMILLE && g->fns[i].total > 0;
}

static double
dot_share(const struct dot_graph *g, uint64_t v)
{
	return g->total ? (double)v / (double)g->total : 0.0;
}

/* One node: its font grows with its self share and the red of its fill with its total share, as in pprof's graphs. */
static void
dot_node(FILE *f, const struct dot_graph *g, const struct dot_fn *fn, const char *unit)
{
	double self = dot_share(g, fn->self), total = dot_share(g, fn->total);
	char a[32], b[32];

	fputs("  \"", f);
	dot_escape(f, fn->name);
	fprintf(f, "\" [label=\"");
	dot_escape(f, fn->name);
	fprintf(f, "\\nself %s %s (%.2f%%)\\ntotal %s %s (%.2f%%)\", fontsize=%.1f, "
		"fillcolor=\"0.000 %.3f 1.000\"];\n", util_num(a, fn->self), unit, 100 * self,
		util_num(b, fn->total), unit, 100 * total, 10 + 14 * self, 0.05 + 0.75 * total);
}

static void
dot_edge(FILE *f, const struct dot_graph *g, const struct dot_edge *e)
{
	char a[32];

	fputs("  \"", f);
	dot_escape(f, g->fns[e->from].name);
	fputs("\" -> \"", f);
	dot_escape(f, g->fns[e->to].name);
	fprintf(f, "\" [label=\"%s\", penwidth=%.2f];\n", util_num(a, e->cost),
		1 + 5 * dot_share(g, e->cost));
}

/* qsort_r orders: functions by total descending, edges by cost descending; then by index. */
static int
dot_fn_cmp(const void *a, const void *b, void *arg)
{
	const struct dot_graph *g = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (g->fns[x].total != g->fns[y].total)
		return g->fns[x].total > g->fns[y].total ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int
dot_edge_cmp(const void *a, const void *b)
{
	const struct dot_edge *x = a, *y = b;

	if (x->cost != y->cost)
		return x->cost > y->cost ? -1 : 1;
	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

/* The graph's title: what was measured, the total, and what was left out. */
static void
dot_title(FILE *f, const struct jt_snapshot *s, const struct dot_graph *g, uint32_t dropped)
{
	char a[32], b[32];

	fputs("  label=\"", f);
	dot_escape(f, s->command ? s->command : "(unknown)");
	fprintf(f, "\\lsnapshot %u (", s->seq);
	dot_escape(f, s->reason ? s->reason : "(unknown)");
	fprintf(f, "), cost: %s, %s %s in all\\l%s %s below 0.5%% of the total left out\\l\";\n",
		report_cost_name(s->cost), util_num(a, g->total), dot_unit(s->cost), util_num(b, dropped),
		dropped == 1 ? "function" : "functions");
}

static void
dot_write(FILE *f, const struct jt_snapshot *s, struct dot_graph *g)
{
	uint32_t *order = xmalloc((g->nfns ? g->nfns : 1) * sizeof(*order)), kept = 0;

	for (uint32_t i = 0; i < g->nfns; i++)
		if (dot_kept(g, i))
			order[kept++] = i;
	qsort_r(order, kept, sizeof(*order), dot_fn_cmp, g);
	if (g->nedges > 1)
		qsort(g->edges, g->nedges, sizeof(*g->edges), dot_edge_cmp);
	fputs("digraph jmptrace {\n  labelloc=t;\n  labeljust=l;\n", f);
	dot_title(f, s, g, g->nfns - kept);
	fputs("  node [shape=box, style=filled, fontname=\"Helvetica\"];\n", f);
	for (uint32_t i = 0; i < kept; i++)
		dot_node(f, g, &g->fns[order[i]], dot_unit(s->cost));
	for (uint32_t i = 0; i < g->nedges; i++)
		if (dot_kept(g, g->edges[i].from) && dot_kept(g, g->edges[i].to))
			dot_edge(f, g, &g->edges[i]);
	fputs("}\n", f);
	free(order);
}

static void
dot_graph_free(struct dot_graph *g)
{
	for (uint32_t i = 0; i < g->nfns; i++)
		free(g->fns[i].name);
	free(g->fns);
	index_free(&g->fn_index);
	free(g->edges);
	table_free(&g->edge_index);
}

/*
 * The graph of s->cost (--folded-cost; live bytes by default): every stack
 * but the filtered one with a non-zero cost adds it to its functions.
 */
static void
dot_build(struct dot_graph *g, const struct jt_snapshot *s)
{
	uint32_t count = heap_stack_count(s->heap);
	struct report_leak rl;

	report_leak_init(&rl, s);
	index_init(&g->fn_index, 64);
	table_init(&g->edge_index, 64, 0);
	for (uint32_t id = 0; id < count; id++) {
		const struct jt_stack *st = heap_stack_get(s->heap, id);
		uint64_t cost = report_leak_cost(&rl, st, s->cost);

		if (!st->filtered && cost)
			dot_add_stack(g, s->sym, st, cost);
	}
	report_leak_free(&rl);
}

int
report_dot(FILE *f, const struct jt_snapshot *s)
{
	struct dot_graph g = { 0 };

	dot_build(&g, s);
	dot_write(f, s, &g);
	dot_graph_free(&g);
	return ferror(f) ? -1 : 0;
}
