/* gr.h - leakgrow: a running program that loses one block every few milliseconds. */
#ifndef JT_PROGS_GR_H
#define JT_PROGS_GR_H

#define GR_SIZE 200		/* bytes of each lost block */
#define GR_PERIOD_MS 5		/* a block lost every GR_PERIOD_MS while stdin is quiet */

/* Mallocs one block, fills it with a pattern (no pointer) and drops it: definitely lost. */
void gr_lose(void);

#endif
