/* test_seen.c - report_seen.c: which stacks a JSON file must list again, each process's heap numbered, each frame once in the table. */
#include <stdio.h>
#include <string.h>

#include "heap.h"
#include "report_seen.h"
#include "tap.h"

/* Stacks with ids 0..n-1 in h. */
static void
ts_stacks(struct jt_heap *h, uint32_t n)
{
	for (uint64_t pc = 0x1000; heap_stack_count(h) < n; pc += 0x10)
		heap_stack_intern(h, &pc, 1);
}

static void
test_changed(void)
{
	struct jt_seen *s = seen_new();
	struct jt_heap *h = heap_new(), *h2 = heap_new();
	struct seen_fig a = { .live_bytes = 100, .live_blocks = 1, .alloc_calls = 1, .alloc_bytes = 100 }, b = a;
	struct seen_heap *sh, *sh2;
	int first;

	ts_stacks(h, 3);
	ts_stacks(h2, 1);
	sh = seen_heap_of(s, 10, 0, h);
	is_u64(seen_heap_key(sh), 1, "the first heap is 1");
	ok(seen_changed(sh, 2, &a, &first) == 1 && first == 1, "a stack never listed: listed, with its frames");
	ok(seen_changed(sh, 2, &a, &first) == 0 && first == 0, "the same figures: left out");
	b.frees = 1;
	ok(seen_changed(sh, 2, &b, &first) == 1 && first == 0, "a figure changed: listed, without its frames");
	ok(seen_changed(sh, 0, &a, &first) == 1 && first == 1, "another stack: its own record");
	ok(seen_heap_of(s, 10, 0, h) == sh, "the same heap of the same pid: the same record");
	sh2 = seen_heap_of(s, 11, 0, h2);
	is_u64(seen_heap_key(sh2), 2, "another process's heap: 2");
	ok(seen_changed(sh2, 0, &a, &first) == 1 && first == 1, "... whose stacks are its own");
	/*
	 * A new heap of pid 11 (a process that reused the pid): at another
	 * address, or at h2's with fewer stacks than the file knew; either way
	 * another number.
	 */
	heap_destroy(h2);
	h2 = heap_new();
	sh2 = seen_heap_of(s, 11, 0, h2);
	is_u64(seen_heap_key(sh2), 3, "a new heap of the same pid: 3");
	ok(seen_changed(sh2, 0, &a, &first) == 1 && first == 1, "... and its stacks are listed again, with frames");
	/* The same pid after an exec: another image, another number, whatever the heap's address. */
	sh2 = seen_heap_of(s, 11, 1, h2);
	is_u64(seen_heap_key(sh2), 4, "the same pid and heap, one exec later: 4");
	/* An image that ended: a heap at its address later is another one, even with as many stacks. */
	seen_heap_end(seen_heap_of(s, 10, 0, h));
	sh = seen_heap_of(s, 10, 0, h);
	is_u64(seen_heap_key(sh), 5, "after its image ended, the same pid and heap: 5");
	ok(seen_changed(sh, 2, &a, &first) == 1 && first == 1, "... its stacks listed again, with frames");
	heap_destroy(h);
	heap_destroy(h2);
	seen_free(s);
}

static void
test_frames(void)
{
	struct jt_seen *s = seen_new();
	char text[64];
	uint32_t i, bad = 0;

	is_u64(seen_frame(s, "{\"a\": 1}", 8), 0, "the first frame is 0");
	is_u64(seen_frame(s, "{\"a\": 2}", 8), 1, "another is 1");
	is_u64(seen_frame(s, "{\"a\": 1}", 8), 0, "the first again: 0");
	ok(strcmp(seen_frames_take(s), "{\"a\": 1},\n  {\"a\": 2}") == 0, "the new frames, once each, in order");
	ok(strcmp(seen_frames_take(s), "") == 0, "then none");
	/* Past the table's first size, every frame keeps its number. */
	for (i = 0; i < 5000; i++) {
		int n = snprintf(text, sizeof(text), "{\"n\": %u}", i);

		bad += seen_frame(s, text, (size_t)n) != i + 2;
	}
	for (i = 0; i < 5000; i += 7) {
		int n = snprintf(text, sizeof(text), "{\"n\": %u}", i);

		bad += seen_frame(s, text, (size_t)n) != i + 2;
	}
	is_u64(bad, 0, "5,000 frames: each its number, found again after the table grew");
	ok(strncmp(seen_frames_take(s), "{\"n\": 0},\n  {\"n\": 1}", 20) == 0, "their texts are taken in order");
	seen_free(s);
}

int
main(void)
{
	test_changed();
	test_frames();
	return tap_done();
}
