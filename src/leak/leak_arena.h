/* leak_arena.h - glibc malloc's arenas in a stopped process: the allocator's own bookkeeping, which is no root of a leak check. */
#ifndef JT_LEAK_ARENA_H
#define JT_LEAK_ARENA_H

#include <stddef.h>
#include <stdint.h>

#include "leak.h"

/*
 * An arena (glibc's struct malloc_state) is known by its bins: 127 pairs
 * of chunk pointers (fd, bk), each pair of an empty bin pointing 16 bytes
 * below itself, and the last bin (127) always empty. Its words that point
 * at chunks lie around bins[0]: fastbinsY, top and last_remainder below
 * it, binmap, next and next_free above, the same in every glibc since
 * 2.26 (and before, bar the fields in front of fastbinsY).
 */
#define LEAK_ARENA_BELOW	96	/* fastbinsY[10], top, last_remainder */
#define LEAK_ARENA_ABOVE	2064	/* bins[254], binmap[4], next, next_free */

/*
 * The address of an arena's bins[0] among the words w[0..nw) read at base
 * (8-aligned), the lowest at or above *from, or 0 when there is none; all
 * of [bins - LEAK_ARENA_BELOW, bins + LEAK_ARENA_ABOVE) lies in w. Pure:
 * the shape alone, not where its next pointer leads.
 */
uint64_t leak_arena_find(const uint64_t *w, size_t nw, uint64_t base, uint64_t from);

/* Reads len bytes of the target at addr: 0, or -1 when any part cannot be read. */
typedef int (*leak_arena_read_fn)(void *arg, uint64_t addr, void *buf, size_t len);

/*
 * The arenas of a stopped process: main_arena in the writable data of the
 * C library, found in maps (the text of /proc/PID/maps) as a file named
 * libc.so* or libc-*, or else of the executable exe (a static program),
 * and the others by the circular list of arenas from it (they live in
 * their heap mappings). Appends each arena's pointer words to *cut (realloc'ed)
 * and returns how many arenas it found: 0 for a process whose malloc is
 * not glibc's, or whose arenas are not set up yet.
 */
size_t leak_arenas(const char *maps, const char *exe, leak_arena_read_fn read, void *arg, struct leak_region **cut,
		   size_t *ncut);

#endif
