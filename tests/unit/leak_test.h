/* leak_test.h - the fake address space that test_leak_mark.c and test_leak_heuristics.c classify: mappings, blocks, the run and the check of a verdict (static functions: one copy per test). */
#ifndef JT_LEAK_TEST_H
#define JT_LEAK_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leak.h"
#include "tap.h"

#define HEAP	0x10000000ull	/* the fake heap: 64 KiB, one read window */
#define DATA	0x20000000ull	/* a root region: 4 KiB */
#define VTAB	0x30000000ull	/* file-backed, read-only: vtables */
#define TEXT	0x40000000ull	/* file-backed, executable */
#define MAXMAP	8
#define MAXBLK	8192

/* A fake target: buffers mapped at chosen addresses, and the live blocks in them. */
struct fake {
	struct { uint64_t addr; size_t len; uint8_t *mem; } map[MAXMAP];
	int nmap;
	struct leak_block b[MAXBLK];
	size_t n;
	struct leak_region roots[4];
	size_t nroots;
	uint64_t words[4];
	size_t nwords;
	struct leak_region vt, tx;
	unsigned heur;
	int no_texts;		/* leave leak_input.texts out: the vtables stand in */
	struct leak_stats st;
	struct leak_result res;
	unsigned reads;
};

static int
fake_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = arg;
	int i;

	f->reads++;
	for (i = 0; i < f->nmap; i++) {
		if (addr >= f->map[i].addr && addr + len <= f->map[i].addr + f->map[i].len) {
			memcpy(buf, f->map[i].mem + (addr - f->map[i].addr), len);
			return 0;
		}
	}
	return -1;
}

static void
fake_map(struct fake *f, uint64_t addr, size_t len)
{
	f->map[f->nmap].addr = addr;
	f->map[f->nmap].len = len;
	f->map[f->nmap].mem = calloc(1, len);
	f->nmap++;
}

/* A fresh fake: the heap, one root region, a vtable and a text mapping; all heuristics. */
static struct fake *
fake_new(size_t heap_len)
{
	struct fake *f = calloc(1, sizeof(*f));

	fake_map(f, HEAP, heap_len);
	fake_map(f, DATA, 4096);
	fake_map(f, VTAB, 4096);
	fake_map(f, TEXT, 4096);
	f->roots[f->nroots++] = (struct leak_region){ DATA, DATA + 4096 };
	f->vt = (struct leak_region){ VTAB, VTAB + 4096 };
	f->tx = (struct leak_region){ TEXT, TEXT + 4096 };
	f->heur = LEAK_HEUR_ALL;
	return f;
}

static void
fake_free(struct fake *f)
{
	int i;

	for (i = 0; i < f->nmap; i++)
		free(f->map[i].mem);
	leak_result_clear(&f->res);
	free(f);
}

static void
poke(struct fake *f, uint64_t addr, uint64_t v)
{
	int i;

	for (i = 0; i < f->nmap; i++)
		if (addr >= f->map[i].addr && addr + 8 <= f->map[i].addr + f->map[i].len)
			memcpy(f->map[i].mem + (addr - f->map[i].addr), &v, 8);
}

static void
blk(struct fake *f, uint64_t addr, uint64_t size, uint32_t stack)
{
	f->b[f->n].addr = addr;
	f->b[f->n].size = size;
	f->b[f->n].stack_id = stack;
	f->n++;
}

static int
blk_cmp(const void *a, const void *b)
{
	const struct leak_block *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int
run(struct fake *f)
{
	struct leak_input in = {
		.roots = f->roots, .nroots = f->nroots, .words = f->words, .nwords = f->nwords,
		.vtables = &f->vt, .nvtables = 1, .texts = f->no_texts ? NULL : &f->tx, .ntexts = !f->no_texts,
		.heuristics = f->heur, .read = fake_read, .arg = f,
	};

	qsort(f->b, f->n, sizeof(f->b[0]), blk_cmp);
	if (leak_classify(f->b, f->n, &in, &f->st) != 0)
		return -1;
	return leak_records(f->b, f->n, &f->res);
}

static const struct leak_block *
at(const struct fake *f, uint64_t addr)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (f->b[i].addr == addr)
			return &f->b[i];
	return NULL;
}

static const char *kname[] = { "reachable", "possible", "indirect", "definite" };

/* Checks one block's kind (and heuristic, and indirect figures when a leader). */
static void
expect(const struct fake *f, uint64_t addr, enum leak_kind k, unsigned heur, uint64_t ind_bytes,
       uint64_t ind_blocks, const char *what)
{
	const struct leak_block *b = at(f, addr);

	ok(b && b->kind == k && b->heur == heur && b->ind_bytes == ind_bytes && b->ind_blocks == ind_blocks,
	   "%s: %s heur %u ind %llu/%llu (got %s heur %u ind %llu/%llu)", what, kname[k], heur,
	   (unsigned long long)ind_bytes, (unsigned long long)ind_blocks, b ? kname[b->kind] : "none",
	   b ? b->heur : 0, b ? (unsigned long long)b->ind_bytes : 0, b ? (unsigned long long)b->ind_blocks : 0);
}

#define H(off)	(HEAP + (off))

#endif
