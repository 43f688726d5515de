/* report_test.h - for the unit tests of sym and the report writers: return addresses with known lines, the test binary's module, a hand-made heap and snapshot. */
#ifndef JT_TEST_REPORT_TEST_H
#define JT_TEST_REPORT_TEST_H

#include <limits.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heap.h"
#include "report.h"
#include "sym.h"
#include "tap.h"
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
 * call is never a tail call, even at -O2 (the lines are volatile: in a file
 * that reads none of them, the store would go and the call become a jump).
 */
static uint64_t leaf_stack[2];	/* [0] into tr_leaf, [1] into tr_mid */
static uint64_t inl_ret;	/* into tr_outer, at the call tr_inline_helper makes */
static volatile int line_leaf, line_mid, line_inl, line_outer;
static const char *self_name;	/* the test binary's file name, as frames name its module */
static uint64_t self_bias;	/* and its load bias */

/* The file the functions below are in, as their frames name it. */
#define TR_SRC "report_test.h"

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

/*
 * What the report tests start from: the test binary (its self_name and
 * self_bias set) and libstdc++ at STDCXX_BIAS reported to s, the return
 * addresses above captured, and in *newaddr operator new(unsigned long).
 * Returns -1 when a step fails: checking each is test_report_sym.c's job.
 */
static inline int
tr_setup(struct jt_sym *s, struct tr_obj *self, uint64_t *newaddr)
{
	if (tr_find_obj((uint64_t)(uintptr_t)&tr_leaf, self) != 0)
		return -1;
	self_name = tr_base(self->path);
	self_bias = self->bias;
	if (sym_add_module(s, self->path, self->bias, NULL) != 0 ||
	    sym_add_module(s, STDCXX, STDCXX_BIAS, NULL) != 0 ||
	    sym_lookup(s, STDCXX, "_Znwm", newaddr) != 0)
		return -1;
	tr_mid();
	tr_outer();
	return 0;
}

/* The heaps' clock in these tests: ms as the test sets them. */
static uint64_t tr_now_ms = 42;

static inline uint64_t
tr_clock(void *arg)
{
	return *(const uint64_t *)arg;
}

/*
 * Builds the heap the report tests print. Live stacks, biggest first:
 * inl 4000 B/1 block, leaf 3000 B/2, cxx 300 B/3, empty 10 B/1; and one
 * invalid free from the leaf's stack.
 */
static inline struct jt_heap *
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

static inline void
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

/*
 * A report program's start: unbuffered TAP, tr_setup's fixture in s, self
 * and *newaddr, its heap in *h (tr_build_heap) and a snapshot of it in
 * *snap. Returns 0, or -1 after a not-ok line: main then ends with
 * tap_done().
 */
static inline int
tr_start(struct jt_sym *s, struct tr_obj *self, uint64_t *newaddr, struct jt_heap **h, struct jt_snapshot *snap)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (tr_setup(s, self, newaddr) != 0) {
		ok(0, "cannot report the test binary and libstdc++ to sym");
		return -1;
	}
	*h = tr_build_heap(*newaddr);
	tr_snapshot(snap, *h, s);
	return 0;
}

static inline char *
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

#endif
