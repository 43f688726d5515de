/* test_report_text.c - unit tests for the text report of a hand-made heap: the stacks and sections, --sort, suppressions, --min-size, temporary allocations and signal frames (with their JSON), and which calls count as allocations. */
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heap.h"
#include "report.h"
#include "report_test.h"
#include "supp.h"
#include "sym.h"
#include "tap.h"
#include "unwind.h"

/* Asserts that text holds want (which ends in a newline) as a run of whole lines. */
static const char *
tr_has_lines(const char *text, const char *want, const char *what)
{
	const char *p = text;

	while ((p = strstr(p, want)) && p != text && p[-1] != '\n')
		p++;
	ok(p != NULL, "text has %s", what);
	if (!p)
		fprintf(stderr, "# missing:\n%s# in:\n%s", want, text);
	return p;
}

static char *
tr_text(const struct jt_snapshot *snap)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ok(report_text(f, snap) == 0, "report_text succeeds");
	fclose(f);
	return buf;
}

static void
test_text(struct jt_snapshot *snap, uint64_t newaddr)
{
	char want[2048], *text = tr_text(snap), *line, *save = NULL;
	const char *p1, *p2, *p3;

	tr_has_lines(text, "command:  ./leaky --fast\nexe:      /usr/bin/leaky\npid:      4242\nsource:   ptrace\nsnapshot: exit\n"
		     "process:  exited with status 3\n", "the header");
	tr_has_lines(text, "calls:\n"
		     "  malloc                              6\n"
		     "  realloc                             1\n"
		     "  free                                3\n"
		     "  operator new                        1\n"
		     "totals:\n"
		     "  allocation calls                    8\n"
		     "  bytes allocated             1,007,810\n"
		     "  frees                               2\n"
		     "  unknown frees                       1\n"
		     "  temporary allocations               0\n"
		     "  live                            7,310 bytes in 7 blocks\n"
		     "  peak live                   1,007,300 bytes\n\n", "the totals, no size filter line");
	snprintf(want, sizeof(want),
		 "1 invalid free (of addresses that were no live block: double frees, frees of non-heap"
		 " pointers) from 1 stack:\n\n"
		 "Invalid free #1: 1 call from this stack\n"
		 "    at 0x%" PRIx64 ": tr_leaf (" TR_SRC ":%d)\n"
		 "    by 0x%" PRIx64 ": tr_mid (" TR_SRC ":%d)\n\n"
		 "top 3 of 4 stacks by live bytes:\n",
		 leaf_stack[0], line_leaf, leaf_stack[1], line_mid);
	tr_has_lines(text, want, "the invalid free with its stack, before the live stacks");
	tr_has_lines(text, "top 3 of 4 stacks by live bytes:\n", "the stack count");
	snprintf(want, sizeof(want),
		 "#1: 4,000 bytes in 1 block live; 1 allocation call of 4,000 bytes in all from this stack;"
		 " peak 4,000 bytes in 1 block, 0 frees, 0 temporary\n"
		 "    at 0x%" PRIx64 ": tr_inline_helper (" TR_SRC ":%d) (inlined)\n"
		 "    by 0x%" PRIx64 ": tr_outer (" TR_SRC ":%d)\n\n",
		 inl_ret, line_inl, inl_ret, line_outer);
	p1 = tr_has_lines(text, want, "stack #1 with its inlined frame");
	snprintf(want, sizeof(want),
		 "#2: 3,000 bytes in 2 blocks live; 3 allocation calls of 3,500 bytes in all from this stack;"
		 " peak 3,000 bytes in 2 blocks, 1 free, 0 temporary\n"
		 "    at 0x%" PRIx64 ": tr_leaf (" TR_SRC ":%d)\n"
		 "    by 0x%" PRIx64 ": tr_mid (" TR_SRC ":%d)\n\n",
		 leaf_stack[0], line_leaf, leaf_stack[1], line_mid);
	p2 = tr_has_lines(text, want, "stack #2 at/by lines");
	snprintf(want, sizeof(want),
		 "#3: 300 bytes in 3 blocks live; 3 allocation calls of 300 bytes in all from this stack;"
		 " peak 300 bytes in 3 blocks, 0 frees, 0 temporary\n"
		 "    at 0x%" PRIx64 ": operator new (in libstdc++.so.6)\n"
		 "    by 0x%" PRIx64 ": libstdc++.so.6+0x11\n"
		 "    by 0x10: 0x10\n\n", newaddr + 1, STDCXX_BIAS + 0x11);
	p3 = tr_has_lines(text, want, "stack #3 without debug info");
	ok(p1 && p2 && p3 && p1 < p2 && p2 < p3, "stacks ordered by live bytes");
	ok(!strstr(text, "#4:"), "only the top 3 are listed");
	/* The sections, each top 3: the freed 1,000,000-byte block leads the peak and the bytes. */
	p1 = tr_has_lines(text, "PEAK: 1,007,300 bytes in 7 blocks at 42 ms\n"
			  "top 3 of 4 stacks by live bytes at the peak:\n\n"
			  "#1: 1,000,000 bytes in 1 block at the peak; live 0 bytes in 0 blocks,"
			  " 1 allocation call of 1,000,000 bytes, 1 free, 0 temporary\n"
			  "    at 0x1234: 0x1234\n\n", "the peak section");
	p2 = tr_has_lines(text, "MOST ALLOCATION CALLS\ntop 3 of 5 stacks by allocation calls:\n\n"
			  "#1: 3 allocation calls of 3,500 bytes; live 3,000 bytes in 2 blocks,"
			  " peak 3,000 bytes in 2 blocks, 1 free, 0 temporary\n", "the calls section");
	p3 = tr_has_lines(text, "MOST BYTES ALLOCATED\ntop 3 of 5 stacks by bytes allocated:\n\n"
			  "#1: 1,000,000 bytes allocated in 1 call; live 0 bytes in 0 blocks,"
			  " peak 1,000,000 bytes in 1 block, 1 free, 0 temporary\n", "the bytes section");
	ok(p1 && p2 && p3 && p1 < p2 && p2 < p3, "sections in the order peak, calls, bytes");
	ok(!strstr(text, "MOST TEMPORARY") && !strstr(text, "\nLIVE\n"),
	   "no temporary section without temporaries, no live section under --sort live");
	tr_has_lines(text, "SUMMARY: 7,310 bytes in 7 blocks still live from 4 stacks\n", "the summary");
	p1 = "SUMMARY: 7,310 bytes in 7 blocks still live from 4 stacks\n";
	ok(strlen(text) > strlen(p1) && strcmp(text + strlen(text) - strlen(p1), p1) == 0,
	   "the summary ends the report");
	ok(!strstr(text, "note:"), "no attach note when not attached");
	/* Shown by prove -v, for whoever changes the format. */
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		printf("# %s\n", line);
	free(text);

	snap->killed_by = SIGSEGV;
	snap->attached = 1;
	text = tr_text(snap);
	tr_has_lines(text, "process:  killed by SIGSEGV\n", "killed by SIGSEGV");
	ok(strstr(text, "blocks allocated\n          before the attach are unknown") != NULL,
	   "attach note");
	free(text);
	snap->killed_by = 0;
	snap->attached = 0;
}

/* report_json_add of one snapshot into a fresh file; returns its text (malloc'ed). */
static char *
tr_json_text(const struct jt_snapshot *snap)
{
	char json[] = "/tmp/jt_test_report_XXXXXX", *text;
	int fd = mkstemp(json);
	struct jt_json_out *j = fd >= 0 ? report_json_open(json) : NULL;

	if (fd >= 0)
		close(fd);
	ok(j && report_json_add(j, snap) == 0 && report_json_close(j) == 0, "JSON written");
	text = tr_slurp(json);
	unlink(json);
	return text;
}

/* --sort picks the main list; the live list becomes a section. */
static void
test_sort(struct jt_snapshot *snap)
{
	char *text;

	snap->sort = COST_CALLS;
	text = tr_text(snap);
	tr_has_lines(text, "top 3 of 5 stacks by allocation calls:\n\n"
		     "#1: 3 allocation calls of 3,500 bytes; live 3,000 bytes in 2 blocks,"
		     " peak 3,000 bytes in 2 blocks, 1 free, 0 temporary\n", "--sort calls: the main list");
	ok(strstr(text, "top 3 of 5 stacks by allocation calls:") < strstr(text, "PEAK: "),
	   "--sort calls: the main list before the sections");
	ok(!strstr(text, "MOST ALLOCATION CALLS"), "--sort calls: no calls section");
	tr_has_lines(text, "LIVE\ntop 3 of 4 stacks by live bytes:\n\n#1: 4,000 bytes in 1 block live;",
		     "--sort calls: a live section");
	tr_has_lines(text, "SUMMARY: 7,310 bytes in 7 blocks still live from 4 stacks\n", "--sort calls: the summary");
	free(text);
	snap->sort = COST_LIVE;
}

/* A leak:PATTERN file leaves the stack out of the live list, counted after it. */
static void
test_supp_report(struct jt_snapshot *snap)
{
	char path[] = "/tmp/jt_test_supp_XXXXXX", *text;
	int fd = mkstemp(path);
	struct jt_supp *sp;

	ok(fd >= 0 && write(fd, "# ours\n\nleak:tr_le*f$\n", 22) == 22, "suppressions file");
	close(fd);
	sp = supp_load(path, 1);
	unlink(path);
	ok(sp != NULL, "supp_load reads it");
	snap->supp = sp;
	text = tr_text(snap);
	tr_has_lines(text, "top 3 of 3 stacks by live bytes:\n", "suppressed: the stack count");
	tr_has_lines(text, "suppressed: 3,000 bytes in 2 blocks from 1 stack\n\nPEAK: ",
		     "suppressed: the line ending the live list");
	ok(!strstr(text, "#2: 3,000 bytes in 2 blocks live"), "suppressed: tr_leaf's stack is not in the live list");
	tr_has_lines(text, "#3: 10 bytes in 1 block live;", "suppressed: the next stack moves up");
	tr_has_lines(text, "SUMMARY: 4,310 bytes in 5 blocks still live from 3 stacks\n", "suppressed: the summary");
	free(text);
	text = tr_json_text(snap);
	ok(strstr(text, "\"suppressed\": {\"live_bytes\": 3000, \"live_blocks\": 2, \"stacks\": 1}, \"source\": \"ptrace\", \"lost_events\": 0}") != NULL,
	   "JSON: totals.suppressed, then the source and what it lost");
	ok(strstr(text, "\"histogram\": {\"512\": 1, \"1024\": 1, \"2048\": 1}, \"suppressed\": \"tr_le*f$\",")
	   != NULL, "JSON: the stack names its pattern");
	free(text);
	snap->supp = NULL;
	supp_free(sp);
}

/* --min-size: one totals line, and "filtered" in JSON, for the stack-less allocations. */
static void
test_filtered(struct jt_snapshot *snap, struct jt_heap *h)
{
	char *text;

	heap_alloc(h, 0xa000, 5, heap_filtered_stack(h));
	snap->min_size = 8;
	text = tr_text(snap);
	tr_has_lines(text, "  peak live                   1,007,300 bytes\n"
		     "  sizes under 8 bytes: 1 allocation call of 5 bytes, 5 bytes in 1 block live,"
		     " not broken down by stack\n\n", "--min-size: the totals line");
	ok(strstr(text, "top 3 of 4 stacks by live bytes:") != NULL, "--min-size: no stack for the filtered");
	free(text);
	text = tr_json_text(snap);
	ok(strstr(text, "\"temporary\": 0, \"filtered\": {\"alloc_calls\": 1, \"alloc_bytes\": 5,"
		  " \"live_bytes\": 5, \"live_blocks\": 1}, \"suppressed\":") != NULL, "--min-size: JSON totals.filtered");
	ok(!strstr(text, "\"live_bytes\": 5, \"live_blocks\": 1, \"alloc_calls\""), "--min-size: no JSON stack for it");
	free(text);
	snap->max_size = 4096;
	text = tr_text(snap);
	tr_has_lines(text, "  sizes outside 8..4,096 bytes: 1 allocation call", "--min-size and --max-size");
	free(text);
	snap->min_size = 0;
	text = tr_text(snap);
	tr_has_lines(text, "  sizes over 4,096 bytes: 1 allocation call", "--max-size");
	free(text);
	snap->max_size = UINT64_MAX;
}

/* Temporary allocations: the section, the totals line; histogram buckets 0 and 64. */
static void
test_temporary(struct jt_sym *s)
{
	uint64_t pcs[2] = { leaf_stack[0], leaf_stack[1] }, big = 0x1235;
	struct jt_heap *h = heap_new();
	struct jt_snapshot snap;
	uint32_t a = heap_stack_intern(h, pcs, 2), b = heap_stack_intern(h, &big, 1);
	char *text, want[1024];

	heap_set_clock(h, tr_clock, &tr_now_ms);
	heap_alloc(h, 0x1000, 0, a);
	heap_free(h, 0x1000, NULL, 1);
	heap_alloc(h, 0x1000, 1, a);
	heap_free(h, 0x1000, NULL, 1);
	heap_alloc(h, 0x1000, 100, a);
	heap_alloc(h, 0x2000, ((uint64_t)1 << 63) + 1, b);
	heap_free(h, 0x2000, NULL, 0);
	tr_snapshot(&snap, h, s);
	text = tr_text(&snap);
	tr_has_lines(text, "  temporary allocations               2\n", "temporary: the totals line");
	snprintf(want, sizeof(want), "MOST TEMPORARY ALLOCATIONS\n"
		 "top 1 of 1 stack by temporary allocations:\n\n"
		 "#1: 2 temporary allocations (67%% of 3 calls); live 100 bytes in 1 block,"
		 " peak 100 bytes in 1 block, 101 bytes allocated, 2 frees\n"
		 "    at 0x%" PRIx64 ": tr_leaf (" TR_SRC ":%d)\n", leaf_stack[0], line_leaf);
	tr_has_lines(text, want, "temporary: the section");
	free(text);
	text = tr_json_text(&snap);
	ok(strstr(text, "\"temporary\": 2, \"peak_bytes\": 100, \"peak_blocks\": 1, \"histogram\": {\"1\": 2, \"128\": 1}")
	   != NULL, "JSON: sizes 0 and 1 in bucket \"1\"");
	ok(strstr(text, "\"histogram\": {\"18446744073709551616\": 1}") != NULL, "JSON: the last bucket is 2^64");
	ok(strstr(text, "\"temporary\": 2, \"suppressed\": {") != NULL, "JSON: totals.temporary");
	free(text);
	heap_destroy(h);
}

/*
 * A stack captured in a signal handler: the trampoline's pc carries
 * UNWIND_PC_SIGNAL and prints as "<signal handler called>" in its module,
 * and the pc after it, where the signal interrupted, is looked up as it is:
 * tr_mid's first byte is tr_mid, where pc - 1 would not be.
 */
static void
test_signal_frame(struct jt_sym *s)
{
	uint64_t tramp = STDCXX_BIAS + 0x11, entry = (uint64_t)(uintptr_t)&tr_mid;
	uint64_t pcs[4] = { leaf_stack[0], tramp | UNWIND_PC_SIGNAL, entry, leaf_stack[1] };
	char json[] = "/tmp/jt_test_report_XXXXXX", want[1024], *text;
	struct jt_heap *h = heap_new();
	struct jt_json_out *j;
	struct jt_snapshot snap;
	int fd = mkstemp(json);

	heap_alloc(h, 0x1000, 24, heap_stack_intern(h, pcs, 4));
	tr_snapshot(&snap, h, s);
	text = tr_text(&snap);
	snprintf(want, sizeof(want),
		 "    at 0x%" PRIx64 ": tr_leaf (" TR_SRC ":%d)\n"
		 "    by 0x%" PRIx64 ": <signal handler called>\n"
		 "    by 0x%" PRIx64 ": tr_mid (" TR_SRC ":",
		 leaf_stack[0], line_leaf, tramp, entry);
	ok(strstr(text, want) != NULL, "text: the signal frame by name, then the interrupted pc in tr_mid");
	snprintf(want, sizeof(want), "    by 0x%" PRIx64 ": tr_mid (" TR_SRC ":%d)\n", leaf_stack[1], line_mid);
	tr_has_lines(text, want, "the return address after it");
	free(text);
	ok(fd >= 0 && (j = report_json_open(json)) != NULL, "report_json_open");
	if (fd >= 0)
		close(fd);
	if (fd >= 0 && j) {
		ok(report_json_add(j, &snap) == 0 && report_json_close(j) == 0, "JSON written");
		text = tr_slurp(json);
		snprintf(want, sizeof(want), "{\"address\": \"0x%" PRIx64 "\", \"module\": \"libstdc++.so.6\","
			 " \"offset\": \"0x11\", \"function\": \"<signal handler called>\", \"file\": null,"
			 " \"line\": 0, \"inlined\": false}", tramp);
		ok(strstr(text, want) != NULL, "JSON: the signal frame, in the trampoline's module");
		snprintf(want, sizeof(want), "{\"address\": \"0x%" PRIx64 "\", \"module\": \"%s\","
			 " \"offset\": \"0x%" PRIx64 "\", \"function\": \"tr_mid\"", entry, self_name,
			 entry - self_bias);
		ok(strstr(text, want) != NULL, "JSON: the interrupted pc in tr_mid");
		free(text);
	}
	unlink(json);
	heap_destroy(h);
}

/*
 * Which calls are allocation calls comes from the allocator table's kinds,
 * not from names: one call of each reported function in turn, and the
 * "allocation calls" total counts it unless its kind is FK_FREE (an
 * sdallocx added as FK_FREE must not count as an allocation).
 */
static void
test_free_kinds(void)
{
	struct jt_heap *h = heap_new();
	struct jt_snapshot snap;
	uint64_t one = 1, got;
	unsigned frees = 0, bad = 0;
	enum jt_fn fn;

	for (int i = 0; i < FN_REPORTED; i++) {
		int is_free = alloc_fns[i].kind == FK_FREE;
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		const char *at;

		fn = (enum jt_fn)i;
		memset(&snap, 0, sizeof(snap));
		snap.reason = "exit";
		snap.ncalls = 1;
		snap.call_fns = &fn;
		snap.calls = &one;
		snap.heap = h;
		snap.top = 1;
		report_text(f, &snap);
		fclose(f);
		frees += is_free;
		/* The column is as wide as the longest name: skip to the figure. */
		at = strstr(text, "  allocation calls ");
		got = at ? strtoull(at + strlen("  allocation calls "), NULL, 10) : 99;
		if (got != (is_free ? 0u : 1u)) {
			bad++;
			printf("# %s (%s) counted as %llu allocation calls\n", alloc_fns[i].name,
			       is_free ? "a free" : "an allocation", (unsigned long long)got);
		}
		free(text);
	}
	ok(bad == 0, "allocation calls: every reported function counted by its kind in the table");
	ok(frees > 0 && frees < FN_REPORTED, "allocation calls: the table has frees and allocations (%u frees)", frees);
	heap_destroy(h);
}

int
main(void)
{
	struct jt_sym *s = sym_new();
	struct jt_snapshot snap;
	struct jt_heap *h;
	struct tr_obj self;
	uint64_t newaddr;

	if (tr_start(s, &self, &newaddr, &h, &snap) != 0)
		return tap_done();
	test_text(&snap, newaddr);
	test_sort(&snap);
	test_supp_report(&snap);
	test_filtered(&snap, h);
	test_temporary(s);
	test_signal_frame(s);
	test_free_kinds();
	heap_destroy(h);
	sym_destroy(s);
	return tap_done();
}
