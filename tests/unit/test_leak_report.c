/* test_leak_report.c - unit tests for the leak verdicts in the reports: text, JSON, cost definitely-lost, folded and flame graph, from a hand-made heap and leak result. */
#include <json-c/json.h>
#include <link.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heap.h"
#include "leak.h"
#include "report.h"
#include "report_leak.h"
#include "supp.h"
#include "sym.h"
#include "report_write.h"
#include "tap.h"
#include "util.h"

/* The allocating functions of the made-up stacks: their names are what the frames show. */
#define TL_FN __attribute__((noinline, used))
TL_FN void tl_a(void) { __asm__ volatile("nop; nop"); }
TL_FN void tl_b(void) { __asm__ volatile("nop; nop"); }
TL_FN void tl_c(void) { __asm__ volatile("nop; nop"); }
TL_FN void tl_d(void) { __asm__ volatile("nop; nop"); }
TL_FN void tl_e(void) { __asm__ volatile("nop; nop"); }

/* Stack ids of the fixture, by the function each one allocates in. */
struct tl_fix {
	struct jt_heap *h;
	struct jt_sym *sym;
	uint32_t a, b, c, d, e;
	struct leak_record rec[5];
	struct leak_result r;
};

/* The main program's load bias and path, from the first object dl_iterate_phdr reports. */
static int
tl_self_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(uint64_t *)data = info->dlpi_addr;
	return 1;
}

/* A stack of one frame: a return address just inside fn, so that it resolves to fn. */
static uint32_t
tl_stack(struct jt_heap *h, void (*fn)(void))
{
	uint64_t pc = (uint64_t)(uintptr_t)fn + 1;

	return heap_stack_intern(h, &pc, 1);
}

static void
tl_allocs(struct jt_heap *h, uint64_t base, unsigned n, uint64_t size, uint32_t stack)
{
	for (unsigned i = 0; i < n; i++)
		heap_alloc(h, base + i * 0x100, size, stack);
}

/*
 * The fixture, records in valgrind's order (total bytes ascending):
 *   1: tl_e definitely lost 20 bytes in 2 blocks (suppressed in the tests that load a suppression)
 *   2: tl_b indirectly lost 48 bytes in 3 blocks
 *   3: tl_c still reachable 56 bytes in 2 blocks, via stdstring
 *   4: tl_a definitely lost 48 bytes in 3 blocks, 48 in 3 indirect (tl_b's)
 *   5: tl_d possibly lost 1,000 bytes in 1 block
 */
static void
tl_build(struct tl_fix *x)
{
	char exe[PATH_MAX];
	uint64_t bias = 0;
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	memset(x, 0, sizeof(*x));
	exe[len > 0 ? len : 0] = '\0';
	dl_iterate_phdr(tl_self_cb, &bias);
	x->sym = sym_new();
	ok(sym_add_module(x->sym, exe, bias, NULL) == 0, "the test binary is symbolized");
	x->h = heap_new();
	x->a = tl_stack(x->h, tl_a);
	x->b = tl_stack(x->h, tl_b);
	x->c = tl_stack(x->h, tl_c);
	x->d = tl_stack(x->h, tl_d);
	x->e = tl_stack(x->h, tl_e);
	tl_allocs(x->h, 0x10000, 3, 16, x->a);
	tl_allocs(x->h, 0x20000, 3, 16, x->b);
	tl_allocs(x->h, 0x30000, 2, 28, x->c);
	tl_allocs(x->h, 0x40000, 1, 1000, x->d);
	tl_allocs(x->h, 0x50000, 2, 10, x->e);
	x->rec[0] = (struct leak_record){ x->e, LEAK_DEFINITE, 20, 2, 0, 0, 1 };
	x->rec[1] = (struct leak_record){ x->b, LEAK_INDIRECT, 48, 3, 0, 0, 2 };
	x->rec[2] = (struct leak_record){ x->c, LEAK_REACHABLE, 56, 2, 0, 0, 3 };
	x->rec[3] = (struct leak_record){ x->a, LEAK_DEFINITE, 48, 3, 48, 3, 4 };
	x->rec[4] = (struct leak_record){ x->d, LEAK_POSSIBLE, 1000, 1, 0, 0, 5 };
	x->r.records = x->rec;
	x->r.nrecords = 5;
	x->r.bytes[LEAK_DEFINITE] = 68;
	x->r.blocks[LEAK_DEFINITE] = 5;
	x->r.bytes[LEAK_INDIRECT] = 48;
	x->r.blocks[LEAK_INDIRECT] = 3;
	x->r.bytes[LEAK_POSSIBLE] = 1000;
	x->r.blocks[LEAK_POSSIBLE] = 1;
	x->r.bytes[LEAK_REACHABLE] = 56;
	x->r.blocks[LEAK_REACHABLE] = 2;
	x->r.heur_bytes[0] = 56;
	x->r.heur_blocks[0] = 2;
	x->r.heuristics = LEAK_HEUR_STDSTRING | LEAK_HEUR_NEWARRAY;
	x->r.stats.root_bytes = 2202010;	/* 2.1 MiB */
	x->r.stats.block_bytes = 40960;
	x->r.nthreads = 4;
	x->r.pause_us = 1800;
	x->r.scan_us = 1500;
}

static void
tl_snapshot(struct jt_snapshot *s, struct tl_fix *x)
{
	memset(s, 0, sizeof(*s));
	s->reason = "exit";
	s->pid = 77;
	s->command = "./leaky";
	s->exited = 1;
	s->heap = x->h;
	s->sym = x->sym;
	s->top = 5;
	s->max_size = UINT64_MAX;
	s->seq = 1;
	s->leak_check = 1;
	s->leak = &x->r;
	s->show_leak_kinds = 1u << LEAK_DEFINITE | 1u << LEAK_POSSIBLE;
}

static char *
tl_text(const struct jt_snapshot *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ok(report_text(f, s) == 0, "report_text succeeds");
	fclose(f);
	return buf;
}

/* Asserts that text holds want as a run of whole lines. */
static void
tl_has(const char *text, const char *want, const char *what)
{
	const char *p = text;

	while ((p = strstr(p, want)) && p != text && p[-1] != '\n')
		p++;
	ok(p != NULL, "text: %s", what);
	if (!p)
		fprintf(stderr, "# missing:\n%s# in:\n%s", want, text);
}

static struct jt_supp *
tl_supp(void)
{
	char path[] = "/tmp/jt_test_leak_supp_XXXXXX";
	int fd = mkstemp(path);
	struct jt_supp *sp;

	ok(fd >= 0 && write(fd, "leak:tl_e\n", 10) == 10, "suppressions file");
	close(fd);
	sp = supp_load(path, 1);
	unlink(path);
	ok(sp != NULL, "supp_load");
	return sp;
}

static void
test_text(struct jt_snapshot *s)
{
	char *text = tl_text(s), want[256];

	tl_has(text, "in all:   peak 1,172 bytes; 0 allocation calls of 1,172 bytes, 0 frees\n\n"
	       "LEAK CHECK (at exit: 4 threads stopped 1.8 ms; 2.1 MB of roots and 40.0 KB of blocks scanned)\n\n"
	       "96 (48 direct, 48 indirect) bytes in 3 blocks are definitely lost in loss record 4 of 5\n",
	       "the section follows the figures under the header, its title, then record 4");
	tl_has(text, "\nSUMMARY: 1,152 bytes in 9 blocks still live from 4 stacks\n", "the summary is the last line");
	snprintf(want, sizeof(want), "in loss record 4 of 5\n    at 0x%llx: tl_a (test_leak_report.c:",
		 (unsigned long long)(uintptr_t)tl_a + 1);
	ok(strstr(text, want) != NULL, "text: record 4's frame is tl_a's");
	tl_has(text, "1,000 bytes in 1 block are possibly lost in loss record 5 of 5\n", "record 5");
	tl_has(text, "LEAK SUMMARY:\n"
	       "   definitely lost: 48 bytes in 3 blocks\n"
	       "   indirectly lost: 48 bytes in 3 blocks\n"
	       "     possibly lost: 1,000 bytes in 1 block\n"
	       "   still reachable: 56 bytes in 2 blocks\n"
	       "                      of which reachable via heuristic:\n"
	       "                        stdstring          : 56 bytes in 2 blocks\n"
	       "        suppressed: 20 bytes in 2 blocks\n", "the LEAK SUMMARY, tl_e suppressed");
	ok(!strstr(text, "loss record 1 of"), "text: the suppressed record is not listed");
	ok(!strstr(text, "loss record 2 of") && !strstr(text, "loss record 3 of"),
	   "text: kinds outside --show-leak-kinds are not listed");
	ok(!strstr(text, "note: jmptrace attached"), "text: no attach note");
	free(text);
}

/* --show-leak-kinds all, the attach note, no check, no --leak-check. */
static void
test_text_variants(struct jt_snapshot *s, struct tl_fix *x)
{
	char *text;

	s->show_leak_kinds = (1u << LEAK_NKINDS) - 1;
	x->r.attached = 1;
	text = tl_text(s);
	tl_has(text, "48 bytes in 3 blocks are indirectly lost in loss record 2 of 5\n", "all kinds: record 2");
	tl_has(text, "56 bytes in 2 blocks are still reachable in loss record 3 of 5\n", "all kinds: record 3");
	ok(!strstr(text, "loss record 1 of"), "all kinds: the suppressed record is still not listed");
	tl_has(text, "note: jmptrace attached to a running process, so blocks allocated before\n"
	       "      the attach are unknown: heap memory that is no known block was taken as\n"
	       "      a root, and the verdicts err towards reachable.\n", "attached: the note");
	free(text);
	x->r.attached = 0;
	s->show_leak_kinds = 1u << LEAK_DEFINITE | 1u << LEAK_POSSIBLE;

	s->leak = NULL;
	text = tl_text(s);
	tl_has(text, "LEAK CHECK: no check could run (the process was gone before it could be\n"
	       "stopped with its memory intact: killed by a signal before _exit?)\n", "no check: one line");
	ok(!strstr(text, "LEAK SUMMARY"), "no check: no summary");
	free(text);
	s->leak = &x->r;

	s->leak_check = 0;
	text = tl_text(s);
	ok(!strstr(text, "LEAK CHECK"), "no --leak-check: no section");
	free(text);
	s->leak_check = 1;
}

/* --sort definitely-lost and the cost: tl_a's records, direct and indirect; nothing for the suppressed tl_e. */
static void
test_cost(struct jt_snapshot *s, struct tl_fix *x)
{
	struct report_leak rl;
	char *text;

	report_leak_init(&rl, s);
	is_u64(report_leak_cost(&rl, heap_stack_get(x->h, x->a), COST_DEFINITELY_LOST), 96,
	       "cost: tl_a loses 48 direct + 48 indirect bytes");
	is_u64(rl.lost_blocks[x->a], 6, "cost: tl_a loses 3 + 3 blocks");
	is_u64(report_leak_cost(&rl, heap_stack_get(x->h, x->e), COST_DEFINITELY_LOST), 0,
	       "cost: the suppressed tl_e loses nothing");
	is_u64(report_leak_cost(&rl, heap_stack_get(x->h, x->d), COST_DEFINITELY_LOST), 0,
	       "cost: possibly lost is not definitely lost");
	is_u64(report_leak_cost(&rl, heap_stack_get(x->h, x->d), COST_LIVE), 1000, "cost: live is report_cost_of's");
	is_u64(report_cost_of(heap_stack_get(x->h, x->a), COST_DEFINITELY_LOST), 0,
	       "report_cost_of has no verdict: 0");
	report_leak_free(&rl);

	s->sort = COST_DEFINITELY_LOST;
	text = tl_text(s);
	tl_has(text, "top 1 of 1 stack by bytes definitely lost:\n\n"
	       "#1: 96 bytes in 6 blocks definitely lost; live 48 bytes in 3 blocks, peak 0 bytes in 0 blocks,"
	       " 0 frees, 0 temporary\n", "--sort definitely-lost: the main list");
	tl_has(text, "LIVE\ntop 4 of 4 stacks by live bytes:\n", "--sort definitely-lost: the live section");
	free(text);
	s->sort = COST_LIVE;
}

static char *
tl_slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int c;

	while (f && (c = fgetc(f)) != EOF)
		fputc(c, m);
	if (f)
		fclose(f);
	fclose(m);
	return buf;
}

/* The snapshot's JSON, parsed; NULL when it does not parse. */
static struct json_object *
tl_json(const struct jt_snapshot *s)
{
	char path[] = "/tmp/jt_test_leak_json_XXXXXX", *text;
	int fd = mkstemp(path);
	struct jt_json_out *j = fd >= 0 ? report_json_open(path) : NULL;
	struct json_object *o, *snaps, *snap = NULL;

	if (fd >= 0)
		close(fd);
	ok(j && report_json_add(j, s) == 0 && report_json_close(j) == 0, "JSON written");
	text = tl_slurp(path);
	unlink(path);
	o = json_tokener_parse(text);
	ok(o != NULL, "json-c parses it");
	free(text);
	if (o && json_object_object_get_ex(o, "snapshots", &snaps))
		snap = json_object_get(json_object_array_get_idx(snaps, 0));
	json_object_put(o);
	return snap;
}

/* The integer at a path of object keys (NULL-terminated), or -1 when absent. */
static long long
tl_int(struct json_object *o, ...)
{
	va_list ap;
	const char *k;

	va_start(ap, o);
	while (o && (k = va_arg(ap, const char *)))
		if (!json_object_object_get_ex(o, k, &o))
			o = NULL;
	va_end(ap);
	return o ? json_object_get_int64(o) : -1;
}

static void
test_json(struct jt_snapshot *s, struct tl_fix *x)
{
	struct json_object *snap = tl_json(s), *lc = NULL, *recs = NULL, *rec, *stacks = NULL, *st, *v, *nf = NULL;

	ok(snap && json_object_object_get_ex(snap, "leak_check", &lc) && lc, "JSON: leak_check is there");
	is_u64(tl_int(lc, "pause_us", NULL), 1800, "JSON: pause_us");
	is_u64(tl_int(lc, "scan_us", NULL), 1500, "JSON: scan_us");
	is_u64(tl_int(lc, "threads", NULL), 4, "JSON: threads");
	is_u64(tl_int(lc, "root_bytes", NULL), 2202010, "JSON: root_bytes");
	is_u64(tl_int(lc, "block_bytes", NULL), 40960, "JSON: block_bytes");
	ok(json_object_object_get_ex(lc, "heuristics", &v)
	   && strcmp(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN), "[\"stdstring\",\"newarray\"]") == 0,
	   "JSON: heuristics");
	is_u64(tl_int(lc, "summary", "definitely_lost", "bytes", NULL), 48, "JSON: definitely lost bytes");
	is_u64(tl_int(lc, "summary", "definitely_lost", "blocks", NULL), 3, "JSON: definitely lost blocks");
	is_u64(tl_int(lc, "summary", "indirectly_lost", "bytes", NULL), 48, "JSON: indirectly lost bytes");
	is_u64(tl_int(lc, "summary", "possibly_lost", "bytes", NULL), 1000, "JSON: possibly lost bytes");
	is_u64(tl_int(lc, "summary", "still_reachable", "blocks", NULL), 2, "JSON: still reachable blocks");
	is_u64(tl_int(lc, "summary", "reachable_via_heuristic", "stdstring", "bytes", NULL), 56,
	       "JSON: reachable via stdstring");
	is_u64(tl_int(lc, "summary", "suppressed", "bytes", NULL), 20, "JSON: suppressed bytes");
	ok(json_object_object_get_ex(lc, "records", &recs) && json_object_array_length(recs) == 5,
	   "JSON: all 5 records, whatever --show-leak-kinds");
	rec = json_object_array_get_idx(recs, 3);
	is_u64(tl_int(rec, "record", NULL), 4, "JSON: record 4's number");
	ok(json_object_object_get_ex(rec, "leak_kind", &v) && strcmp(json_object_get_string(v), "definitely_lost") == 0,
	   "JSON: record 4 is definitely_lost");
	is_u64(tl_int(rec, "bytes", NULL), 48, "JSON: record 4 bytes");
	is_u64(tl_int(rec, "blocks", NULL), 3, "JSON: record 4 blocks");
	is_u64(tl_int(rec, "indirect_bytes", NULL), 48, "JSON: record 4 indirect bytes");
	is_u64(tl_int(rec, "indirect_blocks", NULL), 3, "JSON: record 4 indirect blocks");
	ok(json_object_object_get_ex(rec, "frames", &v)
	   && json_object_object_get_ex(json_object_array_get_idx(v, 0), "function", &v)
	   && strcmp(json_object_get_string(v), "tl_a") == 0, "JSON: record 4's frame is tl_a");
	/*
	 * "stack" names the entry of "stacks": the one with tl_a's live
	 * figures. Format 2: a stack's frames are numbers in the file's frame
	 * table, here the one snapshot's "new_frames".
	 */
	json_object_object_get_ex(snap, "stacks", &stacks);
	st = json_object_array_get_idx(stacks, (size_t)tl_int(rec, "stack", NULL));
	ok(st && json_object_object_get_ex(st, "frames", &v) && json_object_object_get_ex(snap, "new_frames", &nf)
	   && json_object_object_get_ex(json_object_array_get_idx(nf, (size_t)json_object_get_int64(
						json_object_array_get_idx(v, 0))), "function", &v)
	   && strcmp(json_object_get_string(v), "tl_a") == 0, "JSON: record 4's stack is tl_a's entry");
	is_u64(tl_int(st, "live_blocks", NULL), 3, "JSON: that entry has tl_a's 3 live blocks");
	ok(json_object_object_get_ex(json_object_array_get_idx(recs, 0), "suppressed", &v)
	   && json_object_get_boolean(v), "JSON: record 1 (tl_e) is suppressed");
	ok(json_object_object_get_ex(rec, "suppressed", &v) && !json_object_get_boolean(v),
	   "JSON: record 4 is not");
	json_object_put(snap);

	s->leak = NULL;
	snap = tl_json(s);
	ok(snap && json_object_object_get_ex(snap, "leak_check", &lc) && lc == NULL, "JSON: no check: null");
	json_object_put(snap);
	s->leak = &x->r;
	s->leak_check = 0;
	snap = tl_json(s);
	ok(snap && !json_object_object_get_ex(snap, "leak_check", NULL), "JSON: no --leak-check: no key");
	json_object_put(snap);
	s->leak_check = 1;
}

/*
 * go tool pprof reads leaked_space and leaked_objects: tl_a's 96 bytes in
 * 6 blocks, nothing else (skipped without go).
 */
static void
tl_pprof(const char *path)
{
	char cmd[512], *out = NULL, line[256];
	size_t len = 0;
	FILE *p, *m;

	if (system("command -v go >/dev/null 2>&1") != 0) {
		ok(1, "# SKIP go not found");
		return;
	}
	m = open_memstream(&out, &len);
	snprintf(cmd, sizeof(cmd), "for i in leaked_space leaked_objects; do go tool pprof -sample_index=$i "
		 "-top %s 2>&1 | grep -E 'tl_|^ +[0-9]'; done", path);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p))
		fputs(line, m);
	if (p)
		pclose(p);
	fclose(m);
	ok(strstr(out, "      96B   100%   100%        96B   100%  tl_a\n") != NULL, "pprof: leaked_space, tl_a 96 bytes");
	ok(strstr(out, "         6   100%   100%          6   100%  tl_a\n") != NULL, "pprof: leaked_objects, tl_a 6");
	ok(!strstr(out, "tl_e") && !strstr(out, "tl_d"), "pprof: no other stack lost anything");
	if (!strstr(out, "tl_a"))
		fprintf(stderr, "# pprof said:\n%s", out);
	free(out);
}

/* --folded-cost definitely-lost: one line, tl_a's; the flame graph names the figure. */
static void
test_formats(struct jt_snapshot *s)
{
	char path[] = "/tmp/jt_test_leak_fold_XXXXXX", *text;
	int fd = mkstemp(path);

	close(fd);
	s->cost = COST_DEFINITELY_LOST;
	ok(report_write(report_folded, path, s) == 0, "folded written");
	text = tl_slurp(path);
	ok(strcmp(text, "tl_a 96\n") == 0, "folded: one line, tl_a with 96 bytes");
	if (strcmp(text, "tl_a 96\n") != 0)
		fprintf(stderr, "# got:\n%s", text);
	free(text);
	ok(report_write(report_flamegraph, path, s) == 0, "flame graph written");
	text = tl_slurp(path);
	ok(strstr(text, "tl_a (96 bytes, 100.00%)") != NULL, "flame graph: tl_a's frame");
	ok(strstr(text, "bytes definitely lost") != NULL, "flame graph: names the figure");
	free(text);
	ok(report_write(report_pprof, path, s) == 0, "pprof written");
	tl_pprof(path);
	unlink(path);
	s->cost = COST_LIVE;
}

int
main(void)
{
	struct tl_fix x;
	struct jt_snapshot s;

	setvbuf(stdout, NULL, _IONBF, 0);
	tl_build(&x);
	tl_snapshot(&s, &x);
	s.supp = tl_supp();
	test_text(&s);
	test_text_variants(&s, &x);
	test_cost(&s, &x);
	test_json(&s, &x);
	test_formats(&s);
	supp_free((struct jt_supp *)s.supp);
	heap_destroy(x.h);
	sym_destroy(x.sym);
	return tap_done();
}
