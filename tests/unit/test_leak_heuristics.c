/* test_leak_heuristics.c - unit test of memcheck's leak heuristics (stdstring, length64, newarray, multipleinheritance) in the mark phase, on a fake address space. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leak.h"
#include "leak_test.h"
#include "tap.h"

/* One block reached from the root region by v; returns it classified under the heuristic set. */
static void
heur_case(int no_texts, unsigned set, uint64_t size, uint64_t ptr_off, const uint64_t *words, size_t nw, enum leak_kind k,
	  unsigned heur, const char *what)
{
	struct fake *f = fake_new(0x10000);
	size_t i;

	blk(f, H(0x100), size, 1);
	for (i = 0; i < nw; i++)
		poke(f, H(0x100) + 8 * i, words[i]);
	poke(f, DATA, H(0x100) + ptr_off);
	/* Vtables: VTAB+0x100 lists two functions, VTAB+0x200 only one (the rest data). */
	poke(f, VTAB + 0x108, TEXT + 0x10);
	poke(f, VTAB + 0x110, TEXT + 0x40);
	poke(f, VTAB + 0x200, TEXT + 0x10);
	poke(f, VTAB + 0x208, VTAB + 0x800);
	poke(f, VTAB + 0x300, TEXT + 0x20);
	poke(f, VTAB + 0x308, TEXT + 0x30);
	poke(f, VTAB + 0x400, VTAB + 0x900);	/* "functions" in the read-only mapping itself */
	poke(f, VTAB + 0x408, VTAB + 0x910);
	f->heur = set;
	f->no_texts = no_texts;
	ok(run(f) == 0, "%s: classify", what);
	expect(f, H(0x100), k, heur, 0, 0, what);
	is_u64(f->res.heur_bytes[heur ? heur - 1 : 0], heur ? size : 0, "heuristic bytes");
	is_u64(f->res.heur_blocks[heur ? heur - 1 : 0], heur ? 1 : 0, "heuristic blocks");
	fake_free(f);
}

static void
test_heuristics(void)
{
	const uint64_t str[] = { 5, 15, 0 }, str_long[] = { 16, 15, 0 };
	const uint64_t len64[] = { 32 }, len64_bad[] = { 31 };
	const uint64_t arr[] = { 3 }, arr_bad[] = { 5 }, arr_zero[] = { 0 };
	const uint64_t mi[] = { VTAB + 0x100, 0, VTAB + 0x300 }, mi_bad[] = { VTAB + 0x100, 0, VTAB + 0x200 };
	const uint64_t mi_notvt[] = { DATA, 0, VTAB + 0x300 }, mi_ro[] = { VTAB + 0x400, 0, VTAB + 0x400 };

	heur_case(0, LEAK_HEUR_ALL, 40, 24, str, 3, LEAK_REACHABLE, 1, "stdstring accepts");
	heur_case(0, LEAK_HEUR_ALL & ~LEAK_HEUR_STDSTRING, 40, 24, str, 3, LEAK_POSSIBLE, 0, "stdstring off");
	heur_case(0, LEAK_HEUR_ALL, 41, 24, str, 3, LEAK_POSSIBLE, 0, "stdstring: capacity does not fit the size");
	heur_case(0, LEAK_HEUR_ALL, 40, 24, str_long, 3, LEAK_POSSIBLE, 0, "stdstring: length over capacity");
	heur_case(0, LEAK_HEUR_ALL, 40, 8, len64, 1, LEAK_REACHABLE, 2, "length64 accepts (before newarray)");
	heur_case(0, LEAK_HEUR_LENGTH64, 40, 8, len64_bad, 1, LEAK_POSSIBLE, 0, "length64: wrong length");
	heur_case(0, LEAK_HEUR_ALL & ~LEAK_HEUR_LENGTH64 & ~LEAK_HEUR_NEWARRAY, 40, 8, len64, 1, LEAK_POSSIBLE, 0,
		  "length64 off");
	heur_case(0, LEAK_HEUR_NEWARRAY, 56, 8, arr, 1, LEAK_REACHABLE, 3, "newarray accepts");
	heur_case(0, LEAK_HEUR_ALL, 56, 8, arr_bad, 1, LEAK_POSSIBLE, 0, "newarray: count does not divide");
	heur_case(0, LEAK_HEUR_ALL, 56, 8, arr_zero, 1, LEAK_POSSIBLE, 0, "newarray: count 0");
	heur_case(0, LEAK_HEUR_ALL & ~LEAK_HEUR_NEWARRAY, 56, 8, arr, 1, LEAK_POSSIBLE, 0, "newarray off");
	heur_case(0, LEAK_HEUR_ALL, 32, 16, mi, 3, LEAK_REACHABLE, 4, "multipleinheritance accepts");
	heur_case(0, LEAK_HEUR_ALL & ~LEAK_HEUR_MULTIPLEINHERITANCE, 32, 16, mi, 3, LEAK_POSSIBLE, 0,
		  "multipleinheritance off");
	heur_case(0, LEAK_HEUR_ALL, 32, 16, mi_bad, 3, LEAK_POSSIBLE, 0, "multipleinheritance: one function only");
	heur_case(0, LEAK_HEUR_ALL, 32, 16, mi_ro, 3, LEAK_POSSIBLE, 0, "multipleinheritance: functions not in text");
	heur_case(1, LEAK_HEUR_ALL, 32, 16, mi_ro, 3, LEAK_REACHABLE, 4,
		  "multipleinheritance, no text mappings given: the vtables' mappings stand in");
	heur_case(0, LEAK_HEUR_ALL, 32, 16, mi_notvt, 3, LEAK_POSSIBLE, 0, "multipleinheritance: first word no vtable");
	heur_case(0, LEAK_HEUR_ALL, 32, 12, mi, 3, LEAK_POSSIBLE, 0, "multipleinheritance: unaligned pointer");
}

/* memcheck's bookkeeping of the heuristic field: cleared by a start pointer, kept on a possible block. */
static void
test_heuristic_field(void)
{
	struct fake *f = fake_new(0x10000);

	blk(f, H(0x100), 40, 1);	/* length64, then a start pointer: no longer via heuristic */
	blk(f, H(0x200), 32, 1);	/* possible, points at 300 + 8 */
	blk(f, H(0x300), 40, 1);	/* length64 layout, reached only from possible 200 */
	poke(f, H(0x100), 32);
	poke(f, H(0x300), 32);
	poke(f, DATA, H(0x108));
	poke(f, DATA + 8, H(0x100));
	poke(f, DATA + 16, H(0x210));
	poke(f, H(0x200), H(0x308));
	ok(run(f) == 0, "heuristic field: classify");
	expect(f, H(0x100), LEAK_REACHABLE, 0, 0, 0, "heuristic then start pointer");
	expect(f, H(0x300), LEAK_POSSIBLE, 2, 0, 0, "heuristic from a possible block");
	is_u64(f->res.heur_bytes[1], 40, "length64 bytes count the possible block, as memcheck's");
	is_u64(f->res.heur_blocks[1], 1, "length64 blocks");
	fake_free(f);
}

int
main(void)
{
	test_heuristics();
	test_heuristic_field();
	return tap_done();
}
