/* test_leak_arena.c - unit test of leak_arena_find and leak_arenas: glibc malloc's arenas found by their shape in a fake process's memory. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leak_arena.h"
#include "tap.h"

/* A fake process: libc's writable data, the executable's, and a thread arena's heap. */
#define LIBC_DATA	0x7ffff7dd3000ull
#define EXE_DATA	0x555555557000ull
#define THREAD_HEAP	0x7ffff0000000ull
#define SEG_BYTES	8192

static const char maps[] =
	"555555554000-555555556000 r--p 00000000 fe:00 11051085                   /tmp/prog\n"
	"555555557000-555555559000 rw-p 00003000 fe:00 11051085                   /tmp/prog\n"
	"555555560000-555555581000 rw-p 00000000 00:00 0                          [heap]\n"
	"7ffff0000000-7ffff0002000 rw-p 00000000 00:00 0 \n"
	"7ffff7c00000-7ffff7c26000 r--p 00000000 fe:00 332835                     /usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7ffff7dd3000-7ffff7dd5000 rw-p 001d3000 fe:00 332835                     /usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7ffff7dd5000-7ffff7de2000 rw-p 00000000 00:00 0 \n";

struct seg {
	uint64_t base;
	uint64_t w[SEG_BYTES / 8];
};

static struct seg segs[3] = { { .base = LIBC_DATA }, { .base = EXE_DATA }, { .base = THREAD_HEAP } };

static int
fake_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	(void)arg;
	for (size_t i = 0; i < 3; i++)
		if (addr >= segs[i].base && addr + len <= segs[i].base + SEG_BYTES) {
			memcpy(buf, (const char *)segs[i].w + (addr - segs[i].base), len);
			return 0;
		}
	return -1;
}

static uint64_t *
word_at(uint64_t addr)
{
	for (size_t i = 0; i < 3; i++)
		if (addr >= segs[i].base && addr < segs[i].base + SEG_BYTES)
			return &segs[i].w[(addr - segs[i].base) / 8];
	return NULL;
}

/*
 * Writes an arena (struct malloc_state) at a whose bins[0] lies off bytes
 * above it (112: glibc 2.27 and later; 104 before), as malloc_init_state
 * leaves it, with its top chunk at top, one chunk in bin 2 and its next
 * pointer next. Returns bins[0]'s address.
 */
static uint64_t
put_arena(uint64_t a, uint64_t off, uint64_t top, uint64_t next)
{
	uint64_t bins = a + off;

	for (uint64_t k = 0; k < 127; k++)
		*word_at(bins + 16 * k) = *word_at(bins + 16 * k + 8) = bins + 16 * k - 16;
	*word_at(bins + 16) = *word_at(bins + 24) = top - 0x40;	/* bin 2: one free chunk */
	*word_at(bins - 16) = top;
	*word_at(bins + 2048) = next;
	*word_at(bins + 2032) = 0x4;	/* binmap: bin 2 */
	return bins;
}

static void
clear(void)
{
	for (size_t i = 0; i < 3; i++)
		memset(segs[i].w, 0, sizeof(segs[i].w));
}

static int
has_cut(const struct leak_region *c, size_t n, uint64_t bins)
{
	for (size_t i = 0; i < n; i++)
		if (c[i].start == bins - LEAK_ARENA_BELOW && c[i].end == bins + LEAK_ARENA_ABOVE)
			return 1;
	return 0;
}

/* main_arena alone, its next pointing at itself, in libc's data. */
static void
test_main_only(uint64_t off)
{
	uint64_t main = LIBC_DATA + 0xc60, bins;
	struct leak_region *cut = NULL;
	size_t ncut = 0;

	clear();
	bins = put_arena(main, off, 0x555555570010, main);
	is_u64(leak_arena_find(segs[0].w, SEG_BYTES / 8, LIBC_DATA, 0), bins, "leak_arena_find: main_arena's bins");
	is_u64(leak_arena_find(segs[0].w, SEG_BYTES / 8, LIBC_DATA, bins + 8), 0, "leak_arena_find: nothing above it");
	is_u64(leak_arenas(maps, "/tmp/prog", fake_read, NULL, &cut, &ncut), 1, "leak_arenas: one arena");
	ok(ncut == 1 && has_cut(cut, ncut, bins), "its pointer words are cut (bins at +%llu)", (unsigned long long)off);
	free(cut);
}

/* main_arena, then two thread arenas in the list; one of them in the heap mapping of a thread. */
static void
test_list(void)
{
	uint64_t main = LIBC_DATA + 0xc60, t1 = THREAD_HEAP + 0x30, t2 = THREAD_HEAP + 0x1000, b0, b1, b2;
	struct leak_region *cut = NULL;
	size_t ncut = 0;

	clear();
	b0 = put_arena(main, 112, 0x555555570010, t1);
	b1 = put_arena(t1, 112, THREAD_HEAP + 0x900, t2);
	b2 = put_arena(t2, 112, THREAD_HEAP + 0x1900, main);
	is_u64(leak_arenas(maps, "/tmp/prog", fake_read, NULL, &cut, &ncut), 3, "leak_arenas: the list of three");
	ok(ncut == 3 && has_cut(cut, ncut, b0) && has_cut(cut, ncut, b1) && has_cut(cut, ncut, b2), "all three are cut");
	free(cut);

	/* A list that leads to memory that is no arena: main_arena and the arenas read before it. */
	*word_at(b2 + 2016) = 0;
	cut = NULL, ncut = 0;
	is_u64(leak_arenas(maps, "/tmp/prog", fake_read, NULL, &cut, &ncut), 2, "a broken list: the arenas before the break");
	ok(ncut == 2 && has_cut(cut, ncut, b0) && has_cut(cut, ncut, b1), "main_arena and the first thread arena are cut");
	free(cut);

	/* main_arena's next leads nowhere: no arena at all (the shape alone is not enough). */
	*word_at(b0 + 2048) = 0x1234560;
	cut = NULL, ncut = 0;
	is_u64(leak_arenas(maps, "/tmp/prog", fake_read, NULL, &cut, &ncut), 0, "main_arena's next leads nowhere: none");
	is_u64(ncut, 0, "nothing cut");
	free(cut);
}

/* A static program: main_arena in the executable's data, and none in libc's. */
static void
test_static(void)
{
	uint64_t main = EXE_DATA + 0x7c0, bins;
	struct leak_region *cut = NULL;
	size_t ncut = 0;

	clear();
	bins = put_arena(main, 112, 0x555555570010, main);
	is_u64(leak_arenas(maps, "/tmp/prog", fake_read, NULL, &cut, &ncut), 1, "static: main_arena in the executable");
	ok(ncut == 1 && has_cut(cut, ncut, bins), "static: cut");
	free(cut);
	cut = NULL, ncut = 0;
	is_u64(leak_arenas(maps, "/tmp/other", fake_read, NULL, &cut, &ncut), 0,
	       "another executable's data is not searched");
	free(cut);
}

/* Shapes that are not an arena. */
static void
test_not_arenas(void)
{
	uint64_t main = LIBC_DATA + 0xc60, bins;

	clear();
	is_u64(leak_arena_find(segs[0].w, SEG_BYTES / 8, LIBC_DATA, 0), 0, "zeroed data: none");
	bins = put_arena(main, 112, 0x555555570010, main);
	*word_at(bins + 2016) = 0x555555570020;
	is_u64(leak_arena_find(segs[0].w, SEG_BYTES / 8, LIBC_DATA, 0), 0, "bin 127 not empty: none");
	*word_at(bins + 2016) = bins + 2000;
	*word_at(bins + 16 * 40) = 0x555555570028;
	is_u64(leak_arena_find(segs[0].w, SEG_BYTES / 8, LIBC_DATA, 0), 0, "a bin pointing at no chunk: none");
	*word_at(bins + 16 * 40) = bins + 16 * 39;
	*word_at(bins - 16) = 0;
	is_u64(leak_arena_find(segs[0].w, SEG_BYTES / 8, LIBC_DATA, 0), 0, "no top: none");
	*word_at(bins - 16) = 0x555555570010;
	is_u64(leak_arena_find(segs[0].w, SEG_BYTES / 8, LIBC_DATA, 0), bins, "restored: found");
	is_u64(leak_arena_find(segs[0].w, (bins + 2000 - LIBC_DATA) / 8, LIBC_DATA, 0), 0,
	       "an arena cut short by the end of the words: none");
}

int
main(void)
{
	test_main_only(112);
	test_main_only(104);
	test_list();
	test_static();
	test_not_arenas();
	return tap_done();
}
