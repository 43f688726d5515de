/* leak_roots.c - plans the roots of a leak check from a process's maps and threads: registers, stacks, TLS, the modules' data and the program's own mappings. */
#include <stdlib.h>
#include <string.h>

#include "leak_roots.h"
#include "maps.h"
#include "regs.h"
#include "util.h"

/*
 * The static TLS of a thread lies below its thread pointer: the modules'
 * PT_TLS blocks (tls_size) and glibc's surplus for initial-exec TLS of
 * libraries loaded later (1520 bytes in glibc 2.36: 3 * 144 + 4 * 144 +
 * 512, tunable with glibc.rtld.optional_static_tls), each aligned. A
 * page besides tls_size covers the default surplus and the alignment
 * with room to spare: scanning too much costs a few stale words at worst
 * (a block called reachable that memcheck would call lost), scanning too
 * little calls a block lost that is not.
 */
#define ROOTS_TLS_BELOW	4096
/*
 * The TCB at the thread pointer: glibc's struct pthread, 2368 bytes in
 * 2.36 (its _thread_db_sizeof_pthread), with pthread_getspecific's values
 * and the dtv pointer. One page covers it in the versions around, and in
 * a static program it still ends before malloc's first chunk in [heap]
 * (4272 bytes above the thread pointer here), whose free chunks hold
 * stale pointers.
 */
#define ROOTS_TCB_ABOVE	4096
#define ROOTS_TLS_ENDED	1024

/* A growing array of regions. */
struct roots_vec {
	struct leak_region *v;
	size_t n, cap;
};

/* What every mapping is judged against. */
struct roots_ctx {
	const struct jt_maps *maps;
	const uint64_t *sps;		/* the threads' stack pointers, sorted */
	size_t nsps;
	const struct leak_block *b;	/* live blocks, sorted by address */
	size_t n;
	int attached;
	const struct leak_thread_regs *th;
	size_t nth;
};

static void
roots_add(struct roots_vec *rv, uint64_t start, uint64_t end)
{
	if (start >= end)
		return;
	if (rv->n == rv->cap) {
		rv->cap = rv->cap ? 2 * rv->cap : 32;
		rv->v = xrealloc(rv->v, rv->cap * sizeof(*rv->v));
	}
	rv->v[rv->n++] = (struct leak_region) { start, end };
}

static int
roots_region_cmp(const void *a, const void *b)
{
	const struct leak_region *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * Sorts the regions and joins those that overlap or touch: the mark phase
 * reads each region in large chunks, so fewer regions mean fewer reads,
 * and a TLS region inside a stack region adds nothing.
 */
static void
roots_merge(struct roots_vec *rv)
{
	size_t i, k = 0;

	if (rv->n < 2)
		return;
	qsort(rv->v, rv->n, sizeof(*rv->v), roots_region_cmp);
	for (i = 1; i < rv->n; i++) {
		if (rv->v[i].start <= rv->v[k].end) {
			if (rv->v[i].end > rv->v[k].end)
				rv->v[k].end = rv->v[i].end;
		} else {
			rv->v[++k] = rv->v[i];
		}
	}
	rv->n = k + 1;
}

static int
roots_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The kernel's own pages: their contents are no program data, and [vvar]'s pages may fault. */
static int
roots_map_is_kernel(const struct maps_entry *e)
{
	return roots_prefix(e->name, "[vvar") || strcmp(e->name, "[vdso]") == 0 || strcmp(e->name, "[vsyscall]") == 0;
}

/*
 * A device mapping (a frame buffer, a GPU's memory, /dev/mem): reading it
 * may have side effects or hang, as memcheck says of them too. /dev/zero
 * is anonymous memory (shared anonymous mappings are shown so) and
 * /dev/shm holds tmpfs files: both ordinary memory.
 */
static int
roots_map_is_device(const struct maps_entry *e)
{
	return roots_prefix(e->name, "/dev/") && !roots_prefix(e->name, "/dev/zero") &&
	       !roots_prefix(e->name, "/dev/shm/");
}

/* Memory that may hold the program's pointers and can be read without harm. */
static int
roots_map_scannable(const struct maps_entry *e)
{
	return e->r && e->w && !roots_map_is_kernel(e) && !roots_map_is_device(e);
}

/* No file behind it: plain anonymous, or named by the program (prctl PR_SET_VMA_ANON_NAME). */
static int
roots_map_is_anon(const struct maps_entry *e)
{
	return e->name[0] == '\0' || roots_prefix(e->name, "[anon:") || roots_prefix(e->name, "[anon_shmem:");
}

/* A module's bss: the unnamed anonymous mapping right after one of the module's file mappings. */
static int
roots_map_is_bss(const struct jt_maps *m, size_t i)
{
	const struct maps_entry *e = &m->v[i];

	return e->name[0] == '\0' && i > 0 && m->v[i - 1].end == e->start && m->v[i - 1].name[0] == '/';
}

/* The index of the first live block at or above addr (n when none). */
static size_t
roots_block_at(const struct roots_ctx *c, uint64_t addr)
{
	size_t lo = 0, hi = c->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->b[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The lowest stack pointer in [start, end), or 0 when no thread's is there. */
static uint64_t
roots_lowest_sp(const struct roots_ctx *c, uint64_t start, uint64_t end)
{
	size_t lo = 0, hi = c->nsps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->sps[mid] < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->nsps && c->sps[lo] < end ? c->sps[lo] : 0;
}

/*
 * Malloc's memory: [heap] (brk), or an anonymous mapping that holds a
 * live block (an arena of another thread, a chunk malloc mmapped). A bss
 * holding a block (an mmapped chunk the kernel merged into it) stays the
 * module's data: counting it a root scans a chunk header or two too many,
 * the other way would lose the module's globals.
 */
static int
roots_map_is_heap(const struct roots_ctx *c, size_t i)
{
	const struct maps_entry *e = &c->maps->v[i];
	size_t k;

	if (strcmp(e->name, "[heap]") == 0)
		return 1;
	if (!roots_map_is_anon(e) || roots_map_is_bss(c->maps, i))
		return 0;
	k = roots_block_at(c, e->start);
	return k < c->n && c->b[k].addr < e->end;
}

/*
 * The part of heap mapping i that is a root in launch mode. Free chunks
 * hold stale pointers, so none of it is, but for one case: with no gap
 * between the program's data and [heap] (ASLR off: setarch -R, or a brk
 * offset of 0) the kernel grows the bss into the brk area, and [heap]
 * starts with the program's bss. Its part below the first live block is
 * then a root: the bss, and in a static program the main thread's TLS,
 * besides at worst a few free chunks.
 */
static void
roots_of_heap(const struct roots_ctx *c, size_t i, struct roots_vec *rv)
{
	const struct maps_entry *e = &c->maps->v[i];
	const struct maps_entry *prev = i > 0 ? &c->maps->v[i - 1] : NULL;
	size_t k;

	if (strcmp(e->name, "[heap]") != 0 || !prev || prev->end != e->start || prev->name[0] != '/' || !prev->w)
		return;
	k = roots_block_at(c, e->start);
	roots_add(rv, e->start, k < c->n && c->b[k].addr < e->end ? c->b[k].addr : e->end);
}

/* What of mapping i is a root. */
static void
roots_of_map(const struct roots_ctx *c, size_t i, struct roots_vec *rv)
{
	const struct maps_entry *e = &c->maps->v[i];
	uint64_t sp;

	if (!roots_map_scannable(e))
		return;
	/*
	 * A stack: what lies below the lowest stack pointer in it is dead
	 * (bar the red zone, which a leaf function uses without moving it).
	 * First, so that a stack the kernel merged with a chunk above it, or
	 * a signal stack in the heap, still counts.
	 */
	sp = roots_lowest_sp(c, e->start, e->end);
	if (sp) {
		roots_add(rv, sp - e->start > ARCH_RED_ZONE ? sp - ARCH_RED_ZONE : e->start, e->end);
		return;
	}
	/*
	 * Attached, blocks older than the attach are unknown: a heap byte
	 * that is no known block may be one, and a pointer in it the only
	 * one to a known block. The mark phase skips the known blocks in it.
	 */
	if (roots_map_is_heap(c, i) && !c->attached) {
		roots_of_heap(c, i, rv);
		return;
	}
	/*
	 * The stack of an ended thread, kept for reuse: its frames are dead
	 * (memcheck makes them unaddressable as the stack pointer rises);
	 * only its TLS and TCB are roots (roots_of_tls).
	 */
	for (size_t k = 0; k < c->nth; k++)
		if (c->th[k].ended && c->th[k].tp >= e->start && c->th[k].tp < e->end)
			return;
	/* Module data and bss, the program's own mmaps, shared memory, a stack of no thread we could read. */
	roots_add(rv, e->start, e->end);
}

/*
 * Each thread's TLS and TCB around its thread pointer (x86-64 variant
 * II), clipped to the mapping that holds it. A thread's pthread stack
 * holds both at its top (the stack scan covers them); the main thread's
 * are elsewhere: ld.so's minimal malloc in a dynamic program, but the
 * start of [heap] (sbrk) in a static one, where only this region makes
 * them roots.
 */
static void
roots_of_tls(const struct jt_maps *m, const struct leak_thread_regs *th, size_t nth, uint64_t tls_size,
	     struct roots_vec *rv)
{
	size_t k;

	for (k = 0; k < nth; k++) {
		/*
		 * An ended thread's: its static TLS and a margin smaller than
		 * glibc's TLS surplus (1,520 bytes by default), so never into
		 * its dead frames below.
		 */
		uint64_t tp = th[k].tp, below = tls_size + (th[k].ended ? ROOTS_TLS_ENDED : ROOTS_TLS_BELOW), lo, hi;
		ssize_t i = maps_find(m, tp);

		if (i < 0 || !roots_map_scannable(&m->v[i]))
			continue;
		lo = tp - m->v[i].start > below ? tp - below : m->v[i].start;
		/*
		 * A pthread's stack grows down from just below its TLS: the
		 * margin must not reach below its stack pointer, into dead
		 * frames (bar the red zone) that memcheck never scans.
		 */
		if (th[k].sp < tp && th[k].sp >= m->v[i].start && th[k].sp - ARCH_RED_ZONE > lo)
			lo = th[k].sp - ARCH_RED_ZONE;
		hi = m->v[i].end - tp > ROOTS_TCB_ABOVE ? tp + ROOTS_TCB_ABOVE : m->v[i].end;
		roots_add(rv, lo, hi);
	}
}

/*
 * Where a vtable may be (the multipleinheritance heuristic): file-backed,
 * readable and not writable, as memcheck asks. Touching ones are joined:
 * only whether an address is inside one matters.
 */
static void
roots_vtables(const struct jt_maps *m, struct roots_vec *rv)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (m->v[i].name[0] == '/' && m->v[i].r && !m->v[i].w)
			roots_add(rv, m->v[i].start, m->v[i].end);
	roots_merge(rv);
}

/* Where a vtable's functions may be: file-backed and executable (memcheck's test of its entries). */
static void
roots_texts(const struct jt_maps *m, struct roots_vec *rv)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (m->v[i].name[0] == '/' && m->v[i].x)
			roots_add(rv, m->v[i].start, m->v[i].end);
	roots_merge(rv);
}

static int
roots_u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Every thread's register words, one after the other. */
static void
roots_words(const struct leak_thread_regs *th, size_t nth, struct leak_roots *out)
{
	size_t k, nw = 0;

	for (k = 0; k < nth; k++)
		nw += th[k].nwords < ARRAY_SIZE(th[k].words) ? th[k].nwords : ARRAY_SIZE(th[k].words);
	if (!nw)
		return;
	out->words = xmalloc(nw * sizeof(*out->words));
	for (k = 0; k < nth; k++) {
		size_t w = th[k].nwords < ARRAY_SIZE(th[k].words) ? th[k].nwords : ARRAY_SIZE(th[k].words);

		memcpy(out->words + out->nwords, th[k].words, w * sizeof(*out->words));
		out->nwords += w;
	}
}

int
leak_roots_plan(const char *maps, const struct leak_thread_regs *th, size_t nth, const struct leak_block *b,
		size_t n, uint64_t tls_size, int attached, struct leak_roots *out)
{
	struct jt_maps m;
	struct roots_vec rv = { 0 }, vt = { 0 }, tx = { 0 };
	uint64_t *sps = nth ? xmalloc(nth * sizeof(*sps)) : NULL;
	struct roots_ctx c = { &m, sps, 0, b, n, attached, th, nth };
	size_t i;

	memset(out, 0, sizeof(*out));
	if (maps_parse(maps, &m) < 0) {
		free(sps);
		return -1;
	}
	for (i = 0; i < nth; i++)
		if (th[i].sp)
			sps[c.nsps++] = th[i].sp;
	if (c.nsps)
		qsort(sps, c.nsps, sizeof(*sps), roots_u64_cmp);
	for (i = 0; i < m.n; i++)
		roots_of_map(&c, i, &rv);
	roots_of_tls(&m, th, nth, tls_size, &rv);
	roots_merge(&rv);
	roots_vtables(&m, &vt);
	roots_texts(&m, &tx);
	roots_words(th, nth, out);
	out->regions = rv.v;
	out->nregions = rv.n;
	out->vtables = vt.v;
	out->nvtables = vt.n;
	out->texts = tx.v;
	out->ntexts = tx.n;
	for (i = 0; i < nth; i++)
		out->nthreads += !th[i].ended;
	free(sps);
	maps_clear(&m);
	return 0;
}

void
leak_roots_cut(struct leak_roots *r, const struct leak_region *cut, size_t ncut)
{
	struct leak_region *c;
	struct roots_vec rv = { 0 };

	if (!ncut)
		return;
	c = xmalloc(ncut * sizeof(*c));
	memcpy(c, cut, ncut * sizeof(*c));
	qsort(c, ncut, sizeof(*c), roots_region_cmp);
	for (size_t i = 0; i < r->nregions; i++) {
		uint64_t cur = r->regions[i].start, end = r->regions[i].end;

		for (size_t k = 0; k < ncut && c[k].start < end; k++) {
			if (c[k].end <= cur)
				continue;
			roots_add(&rv, cur, c[k].start);
			cur = c[k].end;
		}
		roots_add(&rv, cur, end);
	}
	free(c);
	free(r->regions);
	r->regions = rv.v;
	r->nregions = rv.n;
}

void
leak_roots_clear(struct leak_roots *r)
{
	free(r->regions);
	free(r->words);
	free(r->vtables);
	free(r->texts);
	memset(r, 0, sizeof(*r));
}
