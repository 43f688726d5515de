/* test_fold.c - unit tests for report_fold (paths, merging, the frame tree) and the folded and flame-graph writers. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heap.h"
#include "report.h"
#include "report_fold.h"
#include "report_write.h"
#include "tap.h"
#include "unwind.h"
#include "util.h"

/* The path's frames joined by ';', as a folded line has them. */
static const char *
tf_join(const struct fold_path *p)
{
	static char buf[256];
	size_t o = 0;

	buf[0] = '\0';
	for (uint32_t i = 0; i < p->n; i++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%s", i ? ";" : "", p->names[i]);
	return buf;
}

static char *
tf_slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 16);

	if (f) {
		size_t n = fread(buf, 1, (1 << 16) - 1, f);

		buf[n] = '\0';
		fclose(f);
	}
	return buf;
}

/*
 * Without a symbolizer a frame is named by its address, and a signal frame
 * by gdb's name whatever its pc: two stacks through different signal pcs
 * fold alike and must merge.
 */
static struct jt_heap *
tf_heap(void)
{
	struct jt_heap *h = heap_new();
	const uint64_t a[] = { 0x10, 0x20, 0x30 }, b[] = { 0x11, 0x20, 0x30 }, c[] = { 0x20, 0x30 };
	const uint64_t d[] = { 0x40 | UNWIND_PC_SIGNAL, 0x30 }, e[] = { 0x41 | UNWIND_PC_SIGNAL, 0x30 };
	const uint64_t g[] = { 0x50, 0x30 };
	uint64_t size;

	heap_alloc(h, 0x1000, 100, heap_stack_intern(h, a, 3));
	heap_alloc(h, 0x2000, 100, heap_stack_intern(h, a, 3));
	heap_alloc(h, 0x3000, 50, heap_stack_intern(h, b, 3));
	heap_alloc(h, 0x4000, 7, heap_stack_intern(h, c, 2));
	heap_alloc(h, 0x5000, 5, heap_stack_intern(h, d, 2));
	heap_alloc(h, 0x6000, 6, heap_stack_intern(h, e, 2));
	heap_alloc(h, 0x7000, 1000, heap_stack_intern(h, g, 2));
	heap_free(h, 0x7000, &size, 1);		/* not live: no path for live, one for calls */
	heap_alloc(h, 0x8000, 99, heap_filtered_stack(h));	/* never a path */
	heap_alloc(h, 0x9000, 3, heap_stack_intern_cut(h, g + 1, 1, 1));
	return h;
}

static void
test_paths(struct jt_heap *h)
{
	struct jt_snapshot s = { .heap = h, .cost = COST_LIVE };
	struct jt_fold f;
	static const struct { const char *path; uint64_t value; } want[] = {
		{ "0x30;0x20;0x10", 200 },	/* two blocks of one stack */
		{ "0x30;0x20;0x11", 50 },
		{ "0x30;0x20", 7 },		/* after its longer paths: the caller's own part */
		{ "0x30;<signal handler called>", 11 },	/* two stacks merged */
		{ "[truncated];0x30", 3 },	/* '[' sorts after '0' */
	};

	fold_build(&s, &f);
	is_u64(f.npaths, ARRAY_SIZE(want), "live: paths (filtered and freed stacks left out)");
	for (size_t i = 0; i < f.npaths && i < ARRAY_SIZE(want); i++) {
		ok(strcmp(tf_join(&f.paths[i]), want[i].path) == 0, "path %zu is %s (got %s)", i,
		   want[i].path, tf_join(&f.paths[i]));
		is_u64(f.paths[i].value, want[i].value, "its value");
	}
	is_u64(f.total, 271, "live: total");
	is_u64(f.max_depth, 3, "live: deepest path");
	is_u64(f.nodes[f.nnodes - 1].depth, 2, "live: the truncated stack's frame sits above [truncated]");
	fold_free(&f);

	s.cost = COST_CALLS;
	fold_build(&s, &f);
	is_u64(f.total, 8, "calls: total (the freed stack counts)");
	ok(f.npaths == 6 && strcmp(tf_join(&f.paths[3]), "0x30;0x50") == 0 && f.paths[3].value == 1,
	   "calls: 0x30;0x50 1 sorts after 0x30;0x20 and its longer paths");
	fold_free(&f);
}

/* The tree in preorder: each node at the offset where its first path starts. */
static void
test_tree(struct jt_heap *h)
{
	struct jt_snapshot s = { .heap = h, .cost = COST_LIVE };
	struct jt_fold f;
	static const struct { const char *name; uint32_t depth, parent; uint64_t offset, value; } want[] = {
		{ "all", 0, 0, 0, 271 },
		{ "0x30", 1, 0, 0, 268 },
		{ "0x20", 2, 1, 0, 257 },
		{ "0x10", 3, 2, 0, 200 },
		{ "0x11", 3, 2, 200, 50 },
		{ "<signal handler called>", 2, 1, 257, 11 },
		{ "[truncated]", 1, 0, 268, 3 },
		{ "0x30", 2, 6, 268, 3 },
	};

	fold_build(&s, &f);
	is_u64(f.nnodes, ARRAY_SIZE(want), "tree: nodes");
	for (size_t i = 0; i < f.nnodes && i < ARRAY_SIZE(want); i++) {
		const struct fold_node *n = &f.nodes[i];

		ok(strcmp(n->name, want[i].name) == 0 && n->depth == want[i].depth &&
		   n->parent == want[i].parent && n->offset == want[i].offset && n->value == want[i].value,
		   "node %zu: %s depth %u parent %u offset %llu value %llu (got %s %u %u %llu %llu)", i,
		   want[i].name, want[i].depth, want[i].parent, (unsigned long long)want[i].offset,
		   (unsigned long long)want[i].value, n->name, n->depth, n->parent,
		   (unsigned long long)n->offset, (unsigned long long)n->value);
	}
	fold_free(&f);
}

static void
test_writers(struct jt_heap *h)
{
	char dir[] = "/tmp/test_fold.XXXXXX", path[64];
	struct jt_snapshot s = { .heap = h, .cost = COST_LIVE, .command = "a<b>&c", .pid = 42,
				 .seq = 3, .reason = "exit" };
	char *text;
	FILE *f;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/out.folded", dir);
	ok(report_write(report_folded, path, &s) == 0, "report_folded returns 0");
	text = tf_slurp(path);
	ok(strcmp(text, "0x30;0x20;0x10 200\n0x30;0x20;0x11 50\n0x30;0x20 7\n"
		   "0x30;<signal handler called> 11\n[truncated];0x30 3\n") == 0, "folded file:\n%s", text);
	free(text);
	unlink(path);

	snprintf(path, sizeof(path), "%s/out.svg", dir);
	ok(report_write(report_flamegraph, path, &s) == 0, "report_flamegraph returns 0");
	text = tf_slurp(path);
	ok(strstr(text, "<title>0x10 (200 bytes, 73.80%)</title>") != NULL, "svg: a frame's title");
	ok(strstr(text, "<title>&lt;signal handler called&gt; (11 bytes, 4.06%)</title>") != NULL,
	   "svg: names are escaped");
	ok(strstr(text, ">a&lt;b&gt;&amp;c (pid 42), snapshot 3 (exit): 271 bytes in all</text>") != NULL,
	   "svg: the subtitle, escaped");
	ok(strstr(text, "id=\"f3\" data-d=\"3\" data-p=\"f2\" data-o=\"0\" data-v=\"200\"") != NULL,
	   "svg: a frame's tree figures");
	free(text);
	unlink(path);

	f = fopen("/dev/full", "w");
	ok(f && (report_folded(f, &s) < 0 || fflush(f) != 0), "a write error: -1");
	if (f)
		fclose(f);
	rmdir(dir);
}

int
main(void)
{
	struct jt_heap *h = tf_heap();

	test_paths(h);
	test_tree(h);
	test_writers(h);
	heap_destroy(h);
	return tap_done();
}
