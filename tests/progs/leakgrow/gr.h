/* gr.h - leakgrow: a running program that loses one block every few milliseconds. */
#ifndef JT_PROGS_GR_H
#define JT_PROGS_GR_H

#define GR_SIZE 200		/* bytes of each lost block */
#define GR_PERIOD_MS 5		/* a block lost every GR_PERIOD_MS while stdin is quiet */

#define GR_KEEP_SIZE 232		/* the block gr_keep makes */
#define GR_HOLDER_SIZE 512	/* the holder, made before any attach */

/* Mallocs one block, fills it with a pattern (no pointer) and drops it: definitely lost. */
void gr_lose(void);
/*
 * Mallocs one block and stores its only pointer in the holder, a block made at the start
 * (before jmptrace attaches, so unknown to it): still reachable.
 */
void gr_keep(void **holder);

#endif
