/* leak_ended.c - finds the stacks glibc keeps cached for ended threads, by the thread block at their top. */
#include <stdlib.h>
#include <string.h>

#include "leak_roots.h"
#include "maps.h"
#include "mem.h"
#include "util.h"

/* glibc puts a thread's TCB (struct pthread, ~2.3 KiB) just below the top of its stack mapping. */
#define ENDED_TOP	16384
/* Cached stacks are thread stacks: 64 KiB or more (glibc's minimum is 16 KiB; this keeps small mappings out). */
#define ENDED_MIN	65536

/* Non-zero when a stack pointer or the thread pointer of a live thread lies in [start, end). */
static int
ended_live_in(const struct leak_thread_regs *th, size_t nth, uint64_t start, uint64_t end)
{
	for (size_t k = 0; k < nth; k++)
		if (!th[k].ended && ((th[k].sp >= start && th[k].sp < end) || (th[k].tp >= start && th[k].tp < end)))
			return 1;
	return 0;
}

/*
 * The TCB in the top ENDED_TOP bytes of [start, end), or 0: a word that
 * holds its own address (tcbhead_t.tcb) with the same two words on
 * (tcbhead_t.self). No other memory has that shape by chance.
 */
static uint64_t
ended_tcb(pid_t pid, uint64_t start, uint64_t end, uint64_t *buf)
{
	uint64_t base = end - ENDED_TOP > start ? end - ENDED_TOP : start;
	size_t nw = (size_t)(end - base) / 8;

	if (mem_read(pid, base, buf, nw * 8) < 0)
		return 0;
	for (size_t k = 0; k + 2 < nw; k++) {
		uint64_t self = base + 8 * k;

		if (buf[k] == self && buf[k + 2] == self)
			return self;
	}
	return 0;
}

size_t
leak_roots_ended(pid_t pid, const char *maps, struct leak_thread_regs **th, size_t *nth)
{
	struct jt_maps m;
	uint64_t *buf;
	size_t found = 0;

	if (maps_parse(maps, &m) < 0)
		return 0;
	buf = xmalloc(ENDED_TOP);
	for (size_t i = 0; i < m.n; i++) {
		const struct maps_entry *e = &m.v[i];
		uint64_t tcb;

		/* A thread stack: anonymous, private, readable and writable, with no live thread in it. */
		if (e->name[0] || e->shared || !e->r || !e->w || e->end - e->start < ENDED_MIN ||
		    ended_live_in(*th, *nth, e->start, e->end))
			continue;
		if (!(tcb = ended_tcb(pid, e->start, e->end, buf)))
			continue;
		*th = xrealloc(*th, (*nth + 1) * sizeof(**th));
		memset(&(*th)[*nth], 0, sizeof(**th));
		(*th)[*nth].tp = tcb;
		(*th)[*nth].ended = 1;
		(*nth)++;
		found++;
		debug_msg("leak roots of %d: the stack %#llx-%#llx of an ended thread (TCB %#llx): only its TLS is a root",
			  pid, (unsigned long long)e->start, (unsigned long long)e->end, (unsigned long long)tcb);
	}
	free(buf);
	maps_clear(&m);
	return found;
}
