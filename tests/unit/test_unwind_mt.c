/* test_unwind_mt.c - several threads unwind one stopped child at once, each with its own jt_unwind_ctx, and must all get the single-threaded result. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "modules.h"
#include "tap.h"
#include "unwind.h"
#include "unwind_child.h"
#include "util.h"

#define MT_THREADS	2
#define MT_ROUNDS	20	/* each starts from a new module set: every cache is rebuilt under contention */
#define MT_CALLS	300	/* unwinds per thread per round */
#define MT_RATE_CALLS	20000	/* unwinds per thread when timing */
#define MT_CASES	5
#define MT_COPY		1024	/* bytes of the stack copied for the uprobe source's kind of unwind */

/* One kind of unwind the threads repeat, with its single-threaded result. */
struct mt_case {
	struct user_regs_struct regs;
	uint64_t ov_addr, ov_value;	/* ov_addr 0: no override */
	uint8_t stack[MT_COPY];		/* with ncopy: the stack at rsp, unwound from this copy */
	size_t ncopy;
	uint64_t want[MAX_FRAMES];
	int nwant;
};

/* What one tracer thread of the test does. */
struct mt_job {
	struct jt_unwind *u;
	struct jt_unwind_ctx *ctx;
	pid_t tid;
	const struct mt_case *cases;
	int ncases, first, calls, bad;
	pthread_barrier_t *start;
};

static int
mt_unwind(struct jt_unwind *u, struct jt_unwind_ctx *ctx, pid_t tid, const struct mt_case *k, uint64_t *pcs)
{
	if (k->ov_addr)
		unwind_ctx_override(ctx, k->ov_addr, k->ov_value);
	if (k->ncopy)
		unwind_ctx_stack(ctx, k->regs.rsp, k->stack, k->ncopy);
	return unwind_stack_ctx(u, ctx, tid, &k->regs, pcs, MAX_FRAMES);
}

/* Runs the job's unwinds, each kind in turn, and counts those that differ from the reference. */
static void *
mt_thread(void *arg)
{
	struct mt_job *j = arg;
	const struct mt_case *k;
	uint64_t got[MAX_FRAMES];
	int i, n;

	pthread_barrier_wait(j->start);
	for (i = 0; i < j->calls; i++) {
		k = &j->cases[(i + j->first) % j->ncases];
		n = mt_unwind(j->u, j->ctx, j->tid, k, got);
		if (n != k->nwant || memcmp(got, k->want, (size_t) n * sizeof(*got)) != 0)
			j->bad++;
	}
	return NULL;
}

/*
 * Runs nthreads jobs of calls unwinds each at once, with a ctx each, or
 * one shared ctx (the old design, where the scratch lived in the
 * unwinder). Returns the unwinds that went wrong; *us is the wall time.
 */
static int
mt_run(struct jt_unwind *u, pid_t tid, const struct mt_case *cases, int ncases, int nthreads, int calls,
       int shared, double *us)
{
	struct mt_job job[MT_THREADS];
	pthread_t th[MT_THREADS];
	pthread_barrier_t start;
	struct jt_unwind_ctx *one = shared ? unwind_ctx_new() : NULL;
	double t0;
	int i, bad = 0;

	pthread_barrier_init(&start, NULL, (unsigned) nthreads + 1);
	for (i = 0; i < nthreads; i++) {
		job[i] = (struct mt_job) { u, one ? one : unwind_ctx_new(), tid, cases, ncases, i, calls, 0, &start };
		if (pthread_create(&th[i], NULL, mt_thread, &job[i]) != 0) {
			printf("Bail out! pthread_create\n");
			exit(1);
		}
	}
	pthread_barrier_wait(&start);
	t0 = now_us();
	for (i = 0; i < nthreads; i++) {
		pthread_join(th[i], NULL);
		bad += job[i].bad;
		if (!one)
			unwind_ctx_free(job[i].ctx);
	}
	*us = now_us() - t0;
	unwind_ctx_free(one);
	pthread_barrier_destroy(&start);
	return bad;
}

/*
 * The kinds of unwind the threads mix: the plain stack; one whose return
 * address into f7 reads as f5's (an override, which must stay in its own
 * ctx); one with a stack pointer at an unmapped page, whose failed reads
 * fall back to mem.c's /proc/PID/mem descriptors; one from a copy of the
 * stack's first MT_COPY bytes (the uprobe source's), cut short there;
 * and, with a PLT, one stopped in it, which the dw backend hands to
 * libunwind. Returns how many; the references come from one thread.
 */
static int
mt_cases(const struct target *t, struct jt_unwind *u, const struct child *c, const struct jt_module *exe,
	 struct mt_case *k)
{
	struct jt_unwind_ctx *ctx = unwind_ctx_new();
	uint64_t stack[64], plt = plt_entry(t);
	int i, n = 0;

	k[n++] = (struct mt_case) { .regs = c->regs };
	k[0].nwant = mt_unwind(u, ctx, c->tid, &k[0], k[0].want);
	if (k[0].nwant >= 4 && mem_read(c->tid, c->regs.rsp, stack, sizeof(stack)) == 0) {
		for (i = 0; i < 64 && stack[i] != k[0].want[1]; i++)
			;
		if (i < 64)
			k[n++] = (struct mt_case) { .regs = c->regs, .ov_addr = c->regs.rsp + 8 * i,
						    .ov_value = k[0].want[3] };
	}
	k[n] = (struct mt_case) { .regs = c->regs };
	k[n++].regs.rsp = 0x1000;
	k[n] = (struct mt_case) { .regs = c->regs, .ncopy = MT_COPY };
	if (mem_read(c->tid, c->regs.rsp, k[n].stack, MT_COPY) == 0)
		n++;
	if (plt && !t->is_static) {
		k[n] = (struct mt_case) { .regs = c->regs, .ov_addr = c->regs.rsp - 8, .ov_value = c->regs.rip };
		k[n].regs.rip = exe->bias + plt;
		k[n++].regs.rsp -= 8;
	}
	for (i = 1; i < n; i++)
		k[i].nwant = mt_unwind(u, ctx, c->tid, &k[i], k[i].want);
	unwind_ctx_free(ctx);
	return n;
}

/*
 * Two threads unwind the same stopped thread at once, each with its own
 * ctx, many times, from a fresh module set each round (so indexes, CFI and
 * rules are built while the other thread reads them); every result must
 * equal the single-threaded one. JT_UNWIND_MT_SHARED=1 gives both threads
 * one ctx, the old design, to show that the check can fail. Then times
 * unwinds/s of one thread against two.
 */
static void
test_concurrent(const struct target *t, const char *what, const char *be, const struct child *c, const uint64_t *pcs,
		int depth)
{
	const char *env = getenv("JT_UNWIND_MT_SHARED");
	int shared = env && *env == '1', bad = 0, round, ncases, i;
	struct mt_case cases[MT_CASES];
	struct jt_modules m;
	struct jt_module *exe;
	struct jt_unwind *u;
	double us, us1;

	modules_init(&m);
	if (modules_refresh(&m, c->pid) <= 0 || !(exe = main_module(&m)) || !(u = unwind_new_backend(&m, be))) {
		ok(0, "%s/%s/%s/concurrent: unwinder made", be, t->mode, what);
		modules_clear(&m);
		return;
	}
	ncases = mt_cases(t, u, c, exe, cases);
	ok(same_pcs(pcs, depth, cases[0].want, cases[0].nwant), "%s/%s/%s/concurrent: a ctx of its own unwinds alike",
	   be, t->mode, what);
	for (i = 0; i < ncases && !cases[i].ncopy; i++)
		;
	ok(i < ncases && cases[i].nwant > 1 && cases[i].nwant < depth
	   && memcmp(cases[i].want, pcs, (size_t) cases[i].nwant * sizeof(*pcs)) == 0,
	   "%s/%s/%s/concurrent: a copy of %d bytes gives a prefix of the pcs (%d frames)", be, t->mode, what, MT_COPY,
	   i < ncases ? cases[i].nwant : 0);
	for (round = 0; round < MT_ROUNDS; round++) {
		modules_clear(&m);	/* under exclusion, as unwind.h asks */
		modules_refresh(&m, c->pid);
		bad += mt_run(u, c->tid, cases, ncases, MT_THREADS, MT_CALLS, shared, &us);
	}
	ok(bad == 0, "%s/%s/%s/concurrent: %d threads x %d unwinds x %d rounds of %d kinds%s: %d differ from one thread's",
	   be, t->mode, what, MT_THREADS, MT_CALLS, MT_ROUNDS, ncases, shared ? " (one shared ctx)" : "", bad);
	bad = mt_run(u, c->tid, cases, 1, 1, MT_THREADS * MT_RATE_CALLS, shared, &us1);
	bad += mt_run(u, c->tid, cases, 1, MT_THREADS, MT_RATE_CALLS, shared, &us);
	printf("# %s/%s/%s: %.0f unwinds/s in 1 thread, %.0f in %d threads (x%.2f)\n", be, t->mode, what,
	       MT_THREADS * MT_RATE_CALLS / us1 * 1e6, MT_THREADS * MT_RATE_CALLS / us * 1e6, MT_THREADS, us1 / us);
	ok(bad == 0, "%s/%s/%s/concurrent: timed unwinds are right too (%d differ)", be, t->mode, what, bad);
	unwind_destroy(u);
	modules_clear(&m);
}

/* The reference: one unwind with unwind_stack, the single-caller form, by a fresh unwinder. */
static int
reference(const char *be, struct jt_modules *m, const struct child *c, uint64_t *pcs)
{
	struct jt_unwind *u = unwind_new_backend(m, be);
	int n = u ? unwind_stack(u, c->tid, &c->regs, pcs, MAX_FRAMES) : 0;

	unwind_destroy(u);
	return n;
}

/* The chain in main, or in a signal handler (through a signal frame), unwound concurrently with each backend. */
static void
test_child(const struct target *t, const char *what)
{
	uint64_t pcs[MAX_FRAMES];
	struct child c = { 0 };
	struct jt_modules m;
	int good, depth;
	size_t k;

	modules_init(&m);
	good = child_start(t, what, &c) == 0 && modules_refresh(&m, c.pid) > 0;
	ok(good, "%s/%s: stopped at the int3", t->mode, what);
	for (k = 0; good && k < ARRAY_SIZE(backends); k++) {
		depth = reference(backends[k], &m, &c, pcs);
		ok(depth > 9, "%s/%s/%s: %d frames from one thread", backends[k], t->mode, what, depth);
		test_concurrent(t, what, backends[k], &c, pcs, depth);
	}
	child_kill(&c);
	modules_clear(&m);
}

int
main(void)
{
	struct target targets[] = { TARGET_PIE, TARGET_STATIC };
	char dir[PATH_MAX], src[PATH_MAX];
	size_t i;

	if (child_test_begin(src, dir, "jt-unwind-mt") != 0)
		return tap_done();
	for (i = 0; i < ARRAY_SIZE(targets); i++) {
		if (build_target(&targets[i], dir, src) != 0) {
			ok(0, "built %s target", targets[i].mode);
			continue;
		}
		test_child(&targets[i], "main");
		test_child(&targets[i], "signal");
	}
	child_test_end(dir);
	return tap_done();
}
