/* report_leak.h - the leak verdict as the reports show it: suppressions applied, per-stack lost figures, the text section and the JSON object (private to the report writers, src/report/report_*.c). */
#ifndef JT_REPORT_LEAK_H
#define JT_REPORT_LEAK_H

#include <stdint.h>
#include <stdio.h>

#include "leak.h"

struct jt_snapshot;
struct jt_stack;

/*
 * A snapshot's leak result with its suppressions applied, computed once
 * for a writer: which loss records a suppression matches, the LEAK
 * SUMMARY without them, and each stack's definitely lost figures.
 */
struct report_leak {
	const struct leak_result *r;	/* s->leak, or NULL: then everything below is zero */
	uint8_t *supp;			/* per record (r->records order): 1 when a suppression matches its stack */
	uint64_t bytes[LEAK_NKINDS], blocks[LEAK_NKINDS];	/* the summary, suppressed records left out */
	uint64_t supp_bytes, supp_blocks;			/* what they held ("suppressed:") */
	/*
	 * Per stack id (0..nstacks): the definitely lost records that no
	 * suppression matches, their bytes direct plus indirect (valgrind's
	 * record total) and their blocks direct plus indirect.
	 */
	uint64_t *lost_bytes, *lost_blocks;
	uint32_t nstacks;
};

/*
 * Fills rl from s->leak (may be NULL), matching each record's stack
 * against s->supp. Never fails; report_leak_free releases it.
 */
void report_leak_init(struct report_leak *rl, const struct jt_snapshot *s);
void report_leak_free(struct report_leak *rl);

/*
 * The figure of stack st for cost c: for COST_DEFINITELY_LOST its
 * lost_bytes in rl (0 when rl is NULL or has no check), for the others
 * report_cost_of's.
 */
uint64_t report_leak_cost(const struct report_leak *rl, const struct jt_stack *st, int c);

/*
 * The text report's LEAK CHECK section (nothing unless s->leak_check):
 * the check's figures, a note when attached, every loss record of a kind
 * in s->show_leak_kinds that no suppression matches, with its frames
 * (report_text_frames), then the LEAK SUMMARY; or one line when no check
 * could run.
 */
void report_leak_text(FILE *f, const struct jt_snapshot *s);

/*
 * The JSON snapshot's "leak_check" (nothing unless s->leak_check): null
 * when no check could run, else the check's figures, the summary and every
 * loss record (all kinds, whatever --show-leak-kinds lists in text), in the
 * result's order. ids[0..n) are the snapshot's stacks in its "stacks"
 * order: a record's "stack" is its stack's index there (null for none).
 */
void report_leak_json(FILE *f, const struct jt_snapshot *s, const uint32_t *ids, uint32_t n);

#endif
