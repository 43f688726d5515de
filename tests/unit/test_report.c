/* test_report.c - unit tests for sym (lookup, symbolization, inlining, demangling) and report (text and JSON). */
#include <dlfcn.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heap.h"
#include "report.h"
#include "supp.h"
#include "sym.h"
#include "tap.h"
#include "unwind.h"
#include "util.h"

/*
 * Keep the test functions as written at any -O level: no inlining, no
 * cloning, no interprocedural shortcuts (clang has no noipa, and does not
 * need it here), and under LTO keep the global symbols global.
 */
#ifdef __clang__
#define TR_NOIPA __attribute__((noinline))
#define TR_EXPORTED
#else
#define TR_NOIPA __attribute__((noinline, noipa))
#define TR_EXPORTED __attribute__((externally_visible))
#endif

#define STDCXX "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"
/* A made-up load bias: libdwfl only needs it not to overlap other modules. */
#define STDCXX_BIAS ((uint64_t)0x10000000)

/*
 * Real return addresses captured by the noipa functions below, and the
 * source line of each call. Every capture is followed by a store, so the
 * call is never a tail call, even at -O2.
 */
static uint64_t leaf_stack[2];	/* [0] into tr_leaf, [1] into tr_mid */
static uint64_t inl_ret;	/* into tr_outer, at the call tr_inline_helper makes */
static int line_leaf, line_mid, line_inl, line_outer;
static const char *self_name;	/* the test binary's file name, as frames name its module */
static uint64_t self_bias;	/* and its load bias */

TR_EXPORTED int tr_global_var = 42;

/* Stores the address its caller returns to. */
static TR_NOIPA void
tr_capture(uint64_t *where)
{
	*where = (uint64_t)__builtin_return_address(0);
}

static TR_NOIPA void
tr_leaf(void)
{
	leaf_stack[1] = (uint64_t)__builtin_return_address(0);
	tr_capture(&leaf_stack[0]); line_leaf = __LINE__;
}

static TR_NOIPA void
tr_mid(void)
{
	tr_leaf(); line_mid = __LINE__;
}

static inline __attribute__((always_inline)) void
tr_inline_helper(void)
{
	tr_capture(&inl_ret); line_inl = __LINE__;
}

static TR_NOIPA void
tr_outer(void)
{
	tr_inline_helper(); line_outer = __LINE__;
}

TR_NOIPA TR_EXPORTED int
tr_global_fn(void)
{
	return tr_global_var + 1;
}

/* What dl_iterate_phdr knows about the object holding one address. */
struct tr_obj {
	uint64_t addr;
	char path[PATH_MAX];
	uint64_t bias;
	int found;
};

static int
tr_find_obj_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct tr_obj *o = data;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || o->addr < start || o->addr >= start + ph->p_memsz)
			continue;
		snprintf(o->path, sizeof(o->path), "%s", info->dlpi_name);
		o->bias = info->dlpi_addr;
		o->found = 1;
		return 1;
	}
	return 0;
}

/* Finds the loaded object holding addr; the main program's name is read from /proc/self/exe. */
static int
tr_find_obj(uint64_t addr, struct tr_obj *o)
{
	memset(o, 0, sizeof(*o));
	o->addr = addr;
	dl_iterate_phdr(tr_find_obj_cb, o);
	if (o->found && o->path[0] == '\0') {
		ssize_t n = readlink("/proc/self/exe", o->path, sizeof(o->path) - 1);

		if (n <= 0)
			return -1;
		o->path[n] = '\0';
	}
	return o->found ? 0 : -1;
}

static const char *
tr_base(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path ? path : "(null)";
}

static int
tr_streq(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/* Checks one frame's function, file basename, line and inlined flag. */
static void
tr_check_frame(const struct jt_frame *f, const char *fn, int line, int inlined, const char *what)
{
	ok(tr_streq(f->function, fn), "%s: function is %s (got %s)", what, fn,
	   f->function ? f->function : "(null)");
	ok(tr_streq(tr_base(f->file), "test_report.c"), "%s: file is test_report.c (got %s)", what,
	   f->file ? f->file : "(null)");
	is_u64(f->line, line, "line");
	is_u64(f->inlined, inlined, "inlined flag");
	ok(tr_streq(f->module, self_name), "%s: module is %s", what, self_name);
}

static void
test_self(struct jt_sym *s, const struct tr_obj *self)
{
	struct jt_frame f[8];
	uint64_t addr = 0;
	const char *err = NULL;
	int n;

	memset(f, 0, sizeof(f));

	ok(sym_add_module(s, self->path, self->bias, &err) == 0, "report the test binary (%s)",
	   err ? err : "ok");
	ok(sym_add_module(s, self->path, self->bias, &err) == 0, "reporting it again is a no-op");
	ok(sym_module_has_symbols(s, self->path), "the test binary has symbols");
	ok(sym_lookup(s, self->path, "tr_global_fn", &addr) == 0, "lookup tr_global_fn");
	is_u64(addr, (uint64_t)(uintptr_t)&tr_global_fn, "tr_global_fn address");
	ok(sym_lookup(s, self->path, "tr_global_fn@VERS_1", &addr) == 0, "a version suffix is ignored");
	ok(sym_lookup(s, self->path, "tr_global_var", &addr) != 0, "sym_lookup skips data objects");
	ok(sym_lookup_any(s, self->path, "tr_global_var", &addr) == 0, "sym_lookup_any finds them");
	is_u64(addr, (uint64_t)(uintptr_t)&tr_global_var, "tr_global_var address");
	ok(sym_lookup(s, self->path, "tr_leaf", &addr) != 0, "local symbols are not looked up");

	tr_mid();
	n = sym_resolve(s, leaf_stack[0], 1, f, 8);
	is_u64(n, 1, "return address in tr_leaf: one frame");
	tr_check_frame(&f[0], "tr_leaf", line_leaf, 0, "leaf");
	is_u64(f[0].address, leaf_stack[0], "frame keeps the raw pc");
	is_u64(f[0].offset, leaf_stack[0] - self->bias, "offset is pc minus bias");
	n = sym_resolve(s, leaf_stack[1], 1, f, 8);
	is_u64(n, 1, "return address in tr_mid: one frame");
	tr_check_frame(&f[0], "tr_mid", line_mid, 0, "mid");

	tr_outer();
	n = sym_resolve(s, inl_ret, 1, f, 8);
	is_u64(n, 2, "inlined call: two frames");
	tr_check_frame(&f[0], "tr_inline_helper", line_inl, 1, "inlined helper");
	tr_check_frame(&f[1], "tr_outer", line_outer, 0, "outer");
	is_u64(f[1].address, inl_ret, "both frames carry the same pc");
	n = sym_resolve(s, inl_ret, 1, f, 1);
	is_u64(n, 1, "sym_resolve never returns more than max");

	n = sym_resolve(s, (uint64_t)(uintptr_t)&tr_global_fn, 0, f, 8);
	ok(n == 1 && tr_streq(f[0].function, "tr_global_fn"), "a function's entry (not a return address)");
}

static void
test_errors(struct jt_sym *s)
{
	struct jt_frame f[4];
	const char *err = NULL;
	uint64_t addr;

	ok(sym_add_module(s, "/nonexistent/libnope.so", 0x50000000, &err) == -1, "missing file fails");
	ok(err && strstr(err, "/nonexistent/libnope.so"), "with a message naming it (%s)",
	   err ? err : "(null)");
	ok(sym_lookup(s, "/nonexistent/libnope.so", "malloc", &addr) == -1, "lookup in unknown module");
	ok(!sym_module_has_symbols(s, "/nonexistent/libnope.so"), "unknown module has no symbols");
	is_u64(sym_resolve(s, 0x10, 1, f, 4), 1, "unmapped pc: one frame");
	ok(f[0].address == 0x10 && !f[0].module && !f[0].function && !f[0].file && f[0].line == 0,
	   "unmapped pc: a bare address");
}

/*
 * A module reported over the range of an older one (dlclose, then dlopen at
 * the same place) replaces it: libc at 0x40000000, then libstdc++ 1 MiB
 * higher over libc's tail. libc's malloc, in its first MiB, is then unknown.
 */
static void
test_overlap(const char *libc_path)
{
	struct jt_sym *s = sym_new();
	struct jt_frame f[4];
	uint64_t malloc_addr = 0, addr;

	ok(sym_add_module(s, libc_path, 0x40000000, NULL) == 0, "overlap: report libc");
	ok(sym_lookup(s, libc_path, "malloc", &malloc_addr) == 0, "overlap: malloc in libc");
	ok(malloc_addr < 0x40100000, "overlap: malloc lies in libc's first MiB");
	sym_resolve(s, malloc_addr, 0, f, 4);
	ok(tr_streq(f[0].module, "libc.so.6"), "overlap: malloc resolves in libc");
	ok(sym_add_module(s, STDCXX, 0x40100000, NULL) == 0, "overlap: report libstdc++ over it");
	ok(sym_lookup(s, libc_path, "malloc", &addr) == -1, "overlap: libc is forgotten");
	sym_resolve(s, malloc_addr, 0, f, 4);
	ok(!f[0].module && !f[0].function, "overlap: its old range is unknown (got %s)",
	   f[0].module ? f[0].module : "nothing");
	ok(sym_lookup(s, STDCXX, "_Znwm", &addr) == 0 && addr > 0x40100000, "overlap: libstdc++ works");
	sym_destroy(s);
}

static void
test_libc(struct jt_sym *s)
{
	void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *real = h ? dlsym(h, "malloc") : NULL;
	struct jt_frame f[4];
	struct tr_obj libc;
	uint64_t addr = 0;
	const char *err = NULL;

	/* dlsym through libc's handle finds libc's malloc even when ASan interposes one. */
	ok(real && tr_find_obj((uint64_t)(uintptr_t)real, &libc) == 0, "libc is loaded");
	if (!real)
		return;
	ok(sym_add_module(s, libc.path, libc.bias, &err) == 0, "report %s", libc.path);
	ok(sym_lookup(s, libc.path, "malloc", &addr) == 0, "lookup malloc in libc");
	is_u64(addr, (uint64_t)(uintptr_t)real, "malloc address equals dlsym's");
	ok(sym_lookup(s, libc.path, "jt_no_such_function", &addr) == -1, "a missing name fails");
	ok(sym_lookup(s, libc.path, "memcpy", &addr) == 0, "an IFUNC counts as a function");
	ok(sym_lookup(s, libc.path, "stdout", &addr) == -1, "stdout is not a function");
	ok(sym_lookup_any(s, libc.path, "stdout", &addr) == 0, "but sym_lookup_any finds it");
	sym_resolve(s, (uint64_t)(uintptr_t)real, 0, f, 4);
	ok(tr_streq(f[0].module, "libc.so.6"), "malloc's frame names libc.so.6");
	is_u64(f[0].offset, (uint64_t)(uintptr_t)real - libc.bias, "module offset");
	dlclose(h);
	test_overlap(libc.path);
}

/* Returns the address of operator new(unsigned long) in libstdc++ as reported at STDCXX_BIAS. */
static uint64_t
test_cxx(struct jt_sym *s)
{
	struct jt_frame f[4];
	const char *err = NULL, *first;
	uint64_t addr = 0;

	ok(sym_add_module(s, STDCXX, STDCXX_BIAS, &err) == 0, "report libstdc++ (%s)", err ? err : "ok");
	ok(sym_lookup(s, STDCXX, "_Znwm", &addr) == 0, "lookup _Znwm");
	ok(addr > STDCXX_BIAS && addr < STDCXX_BIAS + 0x1000000, "_Znwm lies in the made-up range");
	sym_resolve(s, addr, 0, f, 4);
	ok(tr_streq(f[0].function, "operator new(unsigned long)"), "demangled: %s",
	   f[0].function ? f[0].function : "(null)");
	ok(tr_streq(f[0].name, "operator new"), "shown short: %s", f[0].name ? f[0].name : "(null)");
	ok(tr_streq(f[0].module, "libstdc++.so.6"), "module libstdc++.so.6");
	sym_set_full_names(s, 1);
	sym_resolve(s, addr, 0, f, 4);
	ok(tr_streq(f[0].name, "operator new(unsigned long)"), "--full-names: shown in full: %s",
	   f[0].name ? f[0].name : "(null)");
	sym_set_full_names(s, 0);
	sym_resolve(s, addr, 0, f, 4);
	first = f[0].function;
	sym_resolve(s, addr, 0, f, 4);
	ok(first == f[0].function, "a second resolve comes from the cache");
	sym_resolve(s, STDCXX_BIAS + 0x11, 1, f, 4);
	ok(!f[0].function && f[0].offset == 0x11 && tr_streq(f[0].module, "libstdc++.so.6"),
	   "no symbol: module and offset only");
	return addr;
}

/*
 * Builds the heap the report tests print. Live stacks, biggest first:
 * inl 4000 B/1 block, leaf 3000 B/2, cxx 300 B/3, empty 10 B/1; and one
 * invalid free from the leaf's stack.
 */
/* The heaps' clock in these tests: ms as the test sets them. */
static uint64_t tr_now_ms = 42;

static uint64_t
tr_clock(void *arg)
{
	return *(const uint64_t *)arg;
}

static struct jt_heap *
tr_build_heap(uint64_t newaddr)
{
	struct jt_heap *h = heap_new();
	uint64_t cxx[3] = { newaddr + 1, STDCXX_BIAS + 0x11, 0x10 };
	uint64_t gone = 0x1234;
	uint32_t a = heap_stack_intern(h, leaf_stack, 2);
	uint32_t b = heap_stack_intern(h, &inl_ret, 1);
	uint32_t c = heap_stack_intern(h, cxx, 3);
	uint32_t d = heap_stack_intern(h, &gone, 1);
	uint32_t e = heap_stack_intern(h, NULL, 0);

	heap_set_clock(h, tr_clock, &tr_now_ms);
	heap_alloc(h, 0x1000, 1000, a);
	heap_alloc(h, 0x2000, 2000, a);
	heap_alloc(h, 0x3000, 500, a);
	heap_free(h, 0x3000, NULL, 0);
	heap_alloc(h, 0x4000, 4000, b);
	heap_alloc(h, 0x5000, 100, c);
	heap_alloc(h, 0x6000, 100, c);
	heap_alloc(h, 0x7000, 100, c);
	heap_alloc(h, 0x8000, 1000000, d);
	heap_free(h, 0x8000, NULL, 0);
	heap_alloc(h, 0x9000, 10, e);
	/* A double free made from the leaf's stack. */
	heap_free(h, 0x3000, NULL, 0);
	heap_invalid_free(h, a, 0);
	return h;
}

static const enum jt_fn call_fns[] = {
	FN_MALLOC, FN_CALLOC, FN_REALLOC, FN_FREE, FN_NEW, FN_DEL,
};
static const uint64_t calls[] = { 6, 0, 1, 3, 1, 0 };

static void
tr_snapshot(struct jt_snapshot *snap, struct jt_heap *h, struct jt_sym *s)
{
	memset(snap, 0, sizeof(*snap));
	snap->reason = "exit";
	snap->pid = 4242;
	snap->command = "./leaky --fast";
	snap->exe = "/usr/bin/leaky";
	snap->exited = 1;
	snap->exit_status = 3;
	snap->ncalls = 6;
	snap->call_fns = call_fns;
	snap->calls = calls;
	snap->heap = h;
	snap->sym = s;
	snap->top = 3;
	snap->max_size = UINT64_MAX;
	snap->seq = 1;
	snap->time_ms = 1234;
}

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
		 "    at 0x%" PRIx64 ": tr_leaf (test_report.c:%d)\n"
		 "    by 0x%" PRIx64 ": tr_mid (test_report.c:%d)\n\n"
		 "top 3 of 4 stacks by live bytes:\n",
		 leaf_stack[0], line_leaf, leaf_stack[1], line_mid);
	tr_has_lines(text, want, "the invalid free with its stack, before the live stacks");
	tr_has_lines(text, "top 3 of 4 stacks by live bytes:\n", "the stack count");
	snprintf(want, sizeof(want),
		 "#1: 4,000 bytes in 1 block live; 1 allocation call of 4,000 bytes in all from this stack;"
		 " peak 4,000 bytes in 1 block, 0 frees, 0 temporary\n"
		 "    at 0x%" PRIx64 ": tr_inline_helper (test_report.c:%d) (inlined)\n"
		 "    by 0x%" PRIx64 ": tr_outer (test_report.c:%d)\n\n",
		 inl_ret, line_inl, inl_ret, line_outer);
	p1 = tr_has_lines(text, want, "stack #1 with its inlined frame");
	snprintf(want, sizeof(want),
		 "#2: 3,000 bytes in 2 blocks live; 3 allocation calls of 3,500 bytes in all from this stack;"
		 " peak 3,000 bytes in 2 blocks, 1 free, 0 temporary\n"
		 "    at 0x%" PRIx64 ": tr_leaf (test_report.c:%d)\n"
		 "    by 0x%" PRIx64 ": tr_mid (test_report.c:%d)\n\n",
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

/* Writes a Python checker for the JSON file; returns 0 when it could be written. */
static int
tr_write_checker(const char *path, uint64_t newaddr)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fprintf(f,
		"import json, os, sys\n"
		"d = json.load(open(sys.argv[1], encoding='utf-8'))\n"
		"assert list(d) == ['format', 'snapshots'] and d['format'] == 2, list(d)\n"
		"snaps = d['snapshots']\n"
		"assert len(snaps) == int(sys.argv[2]), len(snaps)\n"
		"if not snaps: sys.exit(0)\n"
		"a = snaps[0]\n"
		"assert a['reason'] == 'exit' and a['pid'] == 4242 and a['command'] == './leaky --fast'\n"
		"assert a['exe'] == '/usr/bin/leaky', a['exe']\n"
		"assert a['exited'] is True and a['exit_status'] == 3 and a['killed_by'] is None\n"
		"assert a['attached'] is False\n"
		"assert a['totals'] == {'calls': {'malloc': 6, 'calloc': 0, 'realloc': 1, 'free': 3,"
		" 'operator new': 1, 'operator delete': 0}, 'alloc_calls': 8, 'bytes_allocated': 1007810,"
		" 'frees': 2, 'unknown_frees': 1, 'live_bytes': 7310, 'live_blocks': 7,"
		" 'peak_live_bytes': 1007300, 'temporary': 0, 'source': 'ptrace', 'lost_events': 0,"
		" 'suppressed': {'live_bytes': 0, 'live_blocks': 0, 'stacks': 0}}, a['totals']\n"
		"assert a['seq'] == 1 and a['time_ms'] == 1234, (a['seq'], a['time_ms'])\n"
		"assert a['peak'] == {'live_bytes': 1007300, 'live_blocks': 7, 'time_ms': 42}, a['peak']\n"
		"assert a['timeline'] and all(list(p) == ['time_ms', 'live_bytes', 'live_blocks', 'stacks']"
		" and all(type(p[k]) is int for k in list(p)[:3])"
		" and all(len(c) == 2 and type(c[0]) is int and type(c[1]) is int for c in p['stacks'])"
		" for p in a['timeline']), a['timeline']\n"
		"assert all(list(s)[0] == 'id' and type(s['id']) is int for s in a['stacks']), a['stacks']\n"
		"assert type(a['no_debug_info']) is list, a['no_debug_info']\n"
		"# Frames by their number in the file's table, each frame once in it.\n"
		"tab = a['new_frames']\n"
		"assert len(set(json.dumps(f, sort_keys=True) for f in tab)) == len(tab), tab\n"
		"assert all(type(k) is int for s in a['stacks'] for k in s['frames']), a['stacks']\n"
		"st = [dict(s, frames=[tab[k] for k in s['frames']]) for s in a['stacks']]\n"
		"# The live stacks by live bytes, then the freed one: every stack that allocated.\n"
		"assert [(s['live_bytes'], s['live_blocks'], s['alloc_calls'], s['alloc_bytes']) for s in st]"
		" == [(4000, 1, 1, 4000), (3000, 2, 3, 3500), (300, 3, 3, 300), (10, 1, 1, 10),"
		" (0, 0, 1, 1000000)], st\n"
		"assert [(s['frees'], s['temporary'], s['peak_bytes'], s['peak_blocks']) for s in st]"
		" == [(0, 0, 4000, 1), (1, 0, 3000, 2), (0, 0, 300, 3), (0, 0, 0, 0), (1, 0, 1000000, 1)], st\n"
		"assert [list(s['histogram'].items()) for s in st] == [[('4096', 1)],"
		" [('512', 1), ('1024', 1), ('2048', 1)], [('128', 3)], [('16', 1)], [('1048576', 1)]], st\n"
		"assert not any('suppressed' in s for s in st) and 'filtered' not in a['totals']\n"
		"assert [f['address'] for f in st[4]['frames']] == ['0x1234'], st[4]\n"
		"fr = [{k: v for k, v in dict(f, file=os.path.basename(f['file'] or '')).items() if k != 'offset'}"
		" for f in st[0]['frames']]\n"
		"assert fr == [{'address': '0x%" PRIx64 "', 'module': sys.argv[3], 'function': 'tr_inline_helper',"
		" 'file': 'test_report.c', 'line': %d, 'inlined': True}, {'address': '0x%" PRIx64 "',"
		" 'module': sys.argv[3], 'function': 'tr_outer', 'file': 'test_report.c', 'line': %d,"
		" 'inlined': False}], fr\n"
		"assert [f['function'] for f in st[1]['frames']] == ['tr_leaf', 'tr_mid']\n"
		"assert [f['offset'] for f in st[2]['frames']][1:] == ['0x11', None], st[2]['frames']\n"
		"assert [{k: v for k, v in f.items() if k != 'offset'} for f in st[2]['frames']]"
		" == [{'address': '0x%" PRIx64 "', 'module': 'libstdc++.so.6',"
		" 'function': 'operator new(unsigned long)', 'file': None, 'line': 0, 'inlined': False},"
		" {'address': '0x%" PRIx64 "', 'module': 'libstdc++.so.6', 'function': None, 'file': None,"
		" 'line': 0, 'inlined': False}, {'address': '0x10', 'module': None, 'function': None,"
		" 'file': None, 'line': 0, 'inlined': False}], st[2]['frames']\n"
		"assert st[3]['frames'] == []\n"
		"inv = a['invalid_frees']\n"
		"assert [(i['count'], [f['function'] for f in i['frames']]) for i in inv]"
		" == [(1, ['tr_leaf', 'tr_mid'])], inv\n"
		"assert inv[0]['frames'] == st[1]['frames'], inv\n"
		"if len(snaps) > 1:\n"
		"    b = snaps[1]\n"
		"    assert b['command'] == 'q\"b\\\\s\\nn\\x01c\\ufffd\\u00e9', repr(b['command'])\n"
		"    assert b['exited'] is True and b['exit_status'] is None and b['killed_by'] == 'SIGSEGV'\n"
		"    assert b['attached'] is True and b['reason'] == 'signal'\n"
		"    # The first's process had exited: a later snapshot of its pid is another image's, given whole.\n"
		"    assert a['heap'] == 1 and b['heap'] == 2 and b['stacks_listed'] == 'changed', (b['heap'], a['heap'])\n"
		"    assert len(b['stacks']) == len(a['stacks']) and all('frames' in s for s in b['stacks']), b['stacks']\n",
		inl_ret, line_inl, inl_ret, line_outer, newaddr + 1, STDCXX_BIAS + 0x11);
	return fclose(f) == 0 ? 0 : -1;
}

static int
tr_python_check(const char *checker, const char *json, int nsnapshots)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "python3 %s %s %d '%s' >&2", checker, json, nsnapshots, self_name);
	return system(cmd);
}

static char *
tr_slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = xcalloc(1, 1 << 20);

	if (f) {
		if (fread(buf, 1, (1 << 20) - 1, f) == 0)
			buf[0] = '\0';
		fclose(f);
	}
	return buf;
}

/*
 * The JSON file once report_json_add's snapshot is in: the writer thread
 * appends it after the call returns (outwriter.h), so the file is read
 * again until it differs from prev and ends with its tail (2 s at most).
 */
static char *
tr_slurp_after(const char *path, const char *prev)
{
	char *text = tr_slurp(path);
	size_t n;

	for (int i = 0; i < 2000; i++) {
		n = strlen(text);
		if (strcmp(text, prev) != 0 && n > 4 && strcmp(text + n - 4, "\n]}\n") == 0)
			break;
		free(text);
		usleep(1000);
		text = tr_slurp(path);
	}
	return text;
}

static void
test_json(struct jt_snapshot *snap, uint64_t newaddr)
{
	char json[] = "/tmp/jt_test_report_XXXXXX", checker[64], *text, *prev;
	int fd = mkstemp(json), python = system("command -v python3 >/dev/null 2>&1") == 0;
	struct jt_json_out *j;

	ok(fd >= 0, "temporary JSON file");
	close(fd);
	snprintf(checker, sizeof(checker), "%s.py", json);
	ok(tr_write_checker(checker, newaddr) == 0, "write the checker");
	j = report_json_open(json);
	ok(j != NULL, "report_json_open");
	if (!j)
		return;
	text = tr_slurp(json);
	ok(strcmp(text, "{\"format\": 2, \"snapshots\": [\n]}\n") == 0, "a fresh file is an empty valid report");
	/* The blocks were made at 42 ms: 250 ms old at the snapshot's view. */
	heap_view_begin((struct jt_heap *)snap->heap, tr_now_ms + 250, 0);
	ok(report_json_add(j, snap) == 0, "first report_json_add");
	heap_view_end((struct jt_heap *)snap->heap);
	prev = text;
	text = tr_slurp_after(json, prev);
	free(prev);
	ok(strstr(text, "\"alloc_calls\": 8, \"bytes_allocated\": 1007810, \"frees\": 2,"
		  " \"unknown_frees\": 1, \"live_bytes\": 7310, \"live_blocks\": 7,"
		  " \"peak_live_bytes\": 1007300,") != NULL, "JSON totals figures");
	/* Format 2 gives the time the blocks were made, not their age: time_ms 1234 less 250 ms. */
	ok(strstr(text, "{\"id\": 1, \"live_bytes\": 4000, \"live_blocks\": 1, \"oldest_ms\": 984,"
		  " \"newest_ms\": 984, \"alloc_calls\": 1, \"alloc_bytes\": 4000,") != NULL,
	   "JSON stack figures: the id first, the allocation times after the live figures");
	ok(strstr(text, "\"stacks\": [\n  {\"id\": ") != NULL, "JSON: a stack's first key is its id");
	if (python)
		ok(tr_python_check(checker, json, 1) == 0, "one snapshot: python's json accepts it");
	else
		ok(1, "# SKIP python3 not found");

	snap->reason = "signal";
	snap->command = "q\"b\\s\nn\001c\377\303\251";
	snap->killed_by = SIGSEGV;
	snap->attached = 1;
	ok(report_json_add(j, snap) == 0, "second report_json_add");
	prev = text;
	text = tr_slurp_after(json, prev);
	free(prev);
	ok(strstr(text, "\"command\": \"q\\\"b\\\\s\\nn\\u0001c\\ufffd\303\251\"") != NULL,
	   "strings are escaped");
	ok(strstr(text, "\"exit_status\": null, \"killed_by\": \"SIGSEGV\", \"attached\": true") != NULL,
	   "killed snapshot fields");
	ok(strlen(text) > 4 && strcmp(text + strlen(text) - 4, "\n]}\n") == 0, "file ends with ]}");
	free(text);
	if (python)
		ok(tr_python_check(checker, json, 2) == 0, "two snapshots: still valid JSON");
	else
		ok(1, "# SKIP python3 not found");
	ok(report_json_close(j) == 0, "report_json_close");
	unlink(checker);
	unlink(json);
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
		 "    at 0x%" PRIx64 ": tr_leaf (test_report.c:%d)\n", leaf_stack[0], line_leaf);
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
		 "    at 0x%" PRIx64 ": tr_leaf (test_report.c:%d)\n"
		 "    by 0x%" PRIx64 ": <signal handler called>\n"
		 "    by 0x%" PRIx64 ": tr_mid (test_report.c:",
		 leaf_stack[0], line_leaf, tramp, entry);
	ok(strstr(text, want) != NULL, "text: the signal frame by name, then the interrupted pc in tr_mid");
	snprintf(want, sizeof(want), "    by 0x%" PRIx64 ": tr_mid (test_report.c:%d)\n", leaf_stack[1], line_mid);
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

/* util_utf8_len, the one check of the JSON and flame graph writers: what a strict parser accepts. */
static void
test_utf8(void)
{
	static const struct { const char *bytes; int len; const char *what; } cases[] = {
		{ "a", 0, "ASCII is no sequence" },
		{ "\xc3\xa9", 2, "U+00E9" },
		{ "\xe2\x82\xac", 3, "U+20AC" },
		{ "\xf0\x9f\x98\x80", 4, "U+1F600" },
		{ "\xc0\xaf", 0, "overlong 2-byte" },
		{ "\xe0\x80\xaf", 0, "overlong 3-byte" },
		{ "\xf0\x80\x80\xaf", 0, "overlong 4-byte" },
		{ "\xed\xa0\x80", 0, "a surrogate (U+D800)" },
		{ "\xf4\x90\x80\x80", 0, "past U+10FFFF" },
		{ "\xe2\x82", 0, "truncated" },
		{ "\x80", 0, "a stray continuation byte" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int n = util_utf8_len((const unsigned char *)cases[i].bytes);

		ok(n == cases[i].len, "util_utf8_len: %s: %d (got %d)", cases[i].what, cases[i].len, n);
	}
}

int
main(void)
{
	struct jt_sym *s = sym_new();
	struct jt_snapshot snap;
	struct jt_heap *h;
	struct tr_obj self;
	uint64_t newaddr;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (tr_find_obj((uint64_t)(uintptr_t)&tr_leaf, &self) != 0) {
		ok(0, "cannot find the test binary among the loaded objects");
		return tap_done();
	}
	ok(1, "the test binary is %s, load bias 0x%" PRIx64, self.path, self.bias);
	self_name = tr_base(self.path);
	self_bias = self.bias;
	test_self(s, &self);
	test_errors(s);
	test_libc(s);
	newaddr = test_cxx(s);
	h = tr_build_heap(newaddr);
	tr_snapshot(&snap, h, s);
	test_text(&snap, newaddr);
	test_json(&snap, newaddr);
	test_sort(&snap);
	test_supp_report(&snap);
	test_filtered(&snap, h);
	test_temporary(s);
	test_signal_frame(s);
	test_free_kinds();
	test_utf8();
	heap_destroy(h);
	sym_destroy(s);
	return tap_done();
}
