/* test_pages.c - unit tests for the page table (--pages): partial unmaps split and trim regions, mremap moves and grows them, a mapping over one replaces that part. */
#include <stdlib.h>

#include "heap.h"
#include "pages.h"
#include "tap.h"

#define K 1024ull
#define M (1024 * K)

static uint64_t
lookup_size(const struct jt_heap *pg, uint64_t addr)
{
	uint64_t size = 0;

	return heap_lookup(pg, addr, &size, NULL) == 0 ? size : 0;
}

static void
check_totals(const struct jt_heap *pg, uint64_t bytes, uint64_t regions, const char *what)
{
	struct jt_heap_totals t;
	char name[128];

	heap_totals(pg, &t);
	snprintf(name, sizeof(name), "%s: live bytes", what);
	is_u64(t.live_bytes, bytes, name);
	snprintf(name, sizeof(name), "%s: regions", what);
	is_u64(t.live_blocks, regions, name);
}

int
main(void)
{
	struct jt_heap *heap = heap_new(), *pg = pages_new(heap);
	uint64_t pc1 = 0x1000, pc2 = 0x2000, base = 0x7f0000000000ull;
	uint32_t s1 = heap_stack_intern(pg, &pc1, 1), s2 = heap_stack_intern(pg, &pc2, 1);
	struct jt_heap_peak pk;
	uint32_t sid = 99;

	is_u64(pages_round(1), 4096, "a length rounds up to a page");
	is_u64(pages_round(8192), 8192, "a whole page count stays");
	for (int i = 0; i < 4; i++)
		pages_map(pg, base + i * 2 * M, M, i < 3 ? s1 : s2);
	check_totals(pg, 4 * M, 4, "four regions");
	pages_unmap(pg, base, M);
	check_totals(pg, 3 * M, 3, "one unmapped whole");
	pages_unmap(pg, base + 2 * M + M / 2, M / 2);
	is_u64(lookup_size(pg, base + 2 * M), M / 2, "half unmapped: the low half stays");
	pages_unmap(pg, base + 4 * M + 256 * K, 256 * K);
	is_u64(lookup_size(pg, base + 4 * M), 256 * K, "a hole: the piece below");
	is_u64(lookup_size(pg, base + 4 * M + 512 * K), 512 * K, "a hole: the piece above");
	check_totals(pg, M / 2 + 768 * K + M, 4, "trimmed and split");
	heap_lookup(pg, base + 4 * M + 512 * K, NULL, &sid);
	is_u64(sid, s1, "the piece above keeps its stack");
	/* One unmap across two regions and the gap between them. */
	pages_unmap(pg, base + 4 * M + 128 * K, 2 * M);
	is_u64(lookup_size(pg, base + 4 * M), 128 * K, "across regions: the first trimmed");
	is_u64(lookup_size(pg, base + 6 * M + 128 * K), M - 128 * K, "across regions: the second trimmed at its start");
	/* mremap: base + 6M + 128K (stack s2) moves to base + 20M and grows to 2M: one region, its stack. */
	pages_remap(pg, base + 6 * M + 128 * K, M - 128 * K, base + 20 * M, 2 * M, s1, 0);
	is_u64(lookup_size(pg, base + 6 * M + 128 * K), 0, "mremap: gone from the old place");
	is_u64(lookup_size(pg, base + 20 * M), 2 * M, "mremap: one region of the new length");
	heap_lookup(pg, base + 20 * M, NULL, &sid);
	is_u64(sid, s2, "mremap: the moved region keeps the stack that mapped it");
	/* Shrinking in place. */
	pages_remap(pg, base + 20 * M, 2 * M, base + 20 * M, M, s1, 0);
	is_u64(lookup_size(pg, base + 20 * M), M, "mremap: shrunk in place");
	/* A mapping nobody counted moves: nothing is counted. */
	pages_remap(pg, base + 40 * M, M, base + 50 * M, 2 * M, s1, 0);
	is_u64(lookup_size(pg, base + 50 * M), 0, "mremap of an uncounted mapping counts nothing");
	/* MAP_FIXED over the middle of a region: that part is the new mapping's. */
	pages_map(pg, base + 20 * M + 256 * K, 256 * K, s2);
	is_u64(lookup_size(pg, base + 20 * M), 256 * K, "MAP_FIXED: the part below stays");
	is_u64(lookup_size(pg, base + 20 * M + 256 * K), 256 * K, "MAP_FIXED: the new region");
	is_u64(lookup_size(pg, base + 20 * M + 512 * K), 512 * K, "MAP_FIXED: the part above stays");
	heap_sample(pg, 1);
	heap_peak(pg, &pk);
	is_u64(pk.live_bytes, 4 * M, "the peak is the four regions");
	is_u64(pk.live_blocks, 4, "the peak's regions");
	is_u64(heap_stack_get(pg, s1)->alloc_calls, 3, "mappings count the maps, not the pieces");
	heap_destroy(pg);
	heap_destroy(heap);
	return tap_done();
}
