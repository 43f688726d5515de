/* report_fold.h - stacks folded into frame paths and a frame tree, for the folded-stacks and flame-graph writers (private to the report writers, src/report/report_*.c). */
#ifndef JT_REPORT_FOLD_H
#define JT_REPORT_FOLD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct jt_snapshot;

/* One folded stack: its frame names, outermost first, and its figure. */
struct fold_path {
	char **names;		/* owned; never contain ';' or a control character */
	uint32_t n;		/* at least 1 */
	uint64_t value;		/* > 0 */
};

/* One frame of the tree: a name on one path from the root, with all that it calls. */
struct fold_node {
	const char *name;	/* borrowed from a path (the root's is "all") */
	uint32_t depth;		/* 0 for the root */
	uint32_t parent;	/* index of its caller in nodes[]; the root's is 0 */
	uint64_t offset;	/* the sum of the values left of it: where it starts */
	uint64_t value;		/* its figure and its callees' */
};

struct jt_fold {
	struct fold_path *paths;	/* sorted (see fold_build), no two equal */
	size_t npaths;
	struct fold_node *nodes;	/* preorder; nodes[0] is the root, callees by name */
	size_t nnodes;
	uint64_t total;			/* the root's value: the sum over all paths */
	uint32_t max_depth;		/* the deepest node's depth */
};

/*
 * Folds every stack of s with a non-zero figure for s->cost (the filtered
 * stack left out; for definitely-lost, report_leak_cost's figure): each pc resolved into its source frames, named by
 * report_frame_label, outermost first; a stack cut at --depth starts with
 * "[truncated]", one with no frames is "[no stack]". Paths that name the
 * same frames are merged, their figures summed. Paths are sorted frame by
 * frame by name, a path after the paths it is a prefix of (so a tree laid out
 * in that order puts the callees at the left and the caller's own part at
 * the right, as flamegraph.pl does). Fills f; never fails. fold_free releases it.
 */
void fold_build(const struct jt_snapshot *s, struct jt_fold *f);
void fold_free(struct jt_fold *f);

#endif
