/* report_lists.h - the text report's lists of stacks, ranked by a cost (private to the report writers, src/report/report_*.c). */
#ifndef JT_REPORT_LISTS_H
#define JT_REPORT_LISTS_H

#include <stdint.h>
#include <stdio.h>

struct jt_snapshot;
struct report_leak;

/* What suppressions left out of the live list, and the runtime rules (supp_add_runtime) of any list. */
struct lists_supp {
	uint64_t bytes, blocks;
	uint32_t stacks;
	uint64_t rt_bytes, rt_blocks;	/* the runtime's live figures */
	uint32_t rt_stacks;
};

/*
 * The live list as every list is written: returns how many stacks it
 * ranks, those of the runtime rules and of other suppressions left out
 * and counted in *sup (for the report's first lines and its SUMMARY).
 */
uint32_t lists_live(const struct jt_snapshot *s, struct lists_supp *sup, const struct report_leak *rl);

/*
 * Writes the main list (s->sort: --sort), then the other lists as
 * sections, each as s->sections (--sections) asks: LIVE, PEAK, MOST
 * ALLOCATION CALLS, MOST BYTES ALLOCATED, MOST TEMPORARY ALLOCATIONS,
 * leaving out the one --sort shows and those with no stack. Each: a title,
 * "top N of M stacks by ...", each top stack's figure line and frames,
 * then what suppressions and the runtime rules left out. The definitely
 * lost list (rl's figures) is only ever the main list.
 */
void lists_write(FILE *f, const struct jt_snapshot *s, const struct report_leak *rl);

#endif
