/* test_unwind.c - unwinds a child stopped in a known call chain, built in every link mode, with each backend, also from two threads at once; also tests mem and modules. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <elf.h>

#include "mem.h"
#include "modules.h"
#include "tap.h"
#include "unwind.h"
#include "util.h"

#define WAIT_SECONDS	20
#define MAX_FRAMES	64
#define BENCH_CALLS	10000

/* One link mode of unwind_target.c. */
struct target {
	const char *mode;
	const char *flags;
	int pie;			/* expect a non-zero bias */
	int is_static;			/* expect the executable to be the only module */
	char path[PATH_MAX];
	struct { uint64_t addr, size; char name[16]; } sym[16];
	int nsym;
};

/* A stopped child: the process and the thread that hit int3. */
struct child {
	pid_t pid, tid;
	struct user_regs_struct regs;
};

static const char *const chain_main[] = { "f8", "f7", "f6", "f5", "f4", "f3", "f2", "f1", "main" };
static const char *const chain_thread[] = { "f8", "f7", "f6", "f5", "f4", "f3", "f2", "f1", "thread_main" };
static const char *const chain_signal[] = { "f8", "f7", "f6", "f5", "f4", "f3", "f2", "f1", "on_signal" };
/* Besides the chain, load_syms wants these. */
static const char *const other_syms[] = { "thread_main", "on_signal", "sig_main" };

/* Every unwind check runs with each; the first is the reference for comparing them. */
static const char *const backends[] = { "libunwind", "dw" };
#define N_BACKENDS ARRAY_SIZE(backends)

static volatile pid_t live_child;

/* On timeout: kill the child (PTRACE_O_EXITKILL may not be set yet) and bail out. */
static void
on_alarm(int sig)
{
	static const char msg[] = "Bail out! timeout waiting for the child\n";

	if (live_child > 0)
		kill(live_child, SIGKILL);
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(1);
}

/* Finds unwind_target.c: $JT_UNWIND_TARGET_SRC, next to this file, or from the binary's place in build/unit. */
static int
find_source(char *out, size_t len)
{
	const char *env = getenv("JT_UNWIND_TARGET_SRC");
	char exe[PATH_MAX];
	ssize_t n;

	if (env && access(env, R_OK) == 0)
		return snprintf(out, len, "%s", env), 0;
	snprintf(out, len, "%.*s/unwind_target.c",
		 (int) (strrchr(__FILE__, '/') ? strrchr(__FILE__, '/') - __FILE__ : 1),
		 strrchr(__FILE__, '/') ? __FILE__ : ".");
	if (access(out, R_OK) == 0)
		return 0;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	snprintf(out, len, "%.*s/../../tests/unit/unwind_target.c", PATH_MAX / 2, exe);
	return access(out, R_OK);
}

/* Reads the addresses and sizes of the chain's functions with nm. */
static int
load_syms(struct target *t)
{
	char cmd[PATH_MAX + 64], line[256], name[64], type;
	unsigned long addr, size;
	FILE *p;
	size_t i;

	snprintf(cmd, sizeof(cmd), "nm -S --defined-only '%s'", t->path);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	t->nsym = 0;
	while (fgets(line, sizeof(line), p)) {
		if (sscanf(line, "%lx %lx %c %63s", &addr, &size, &type, name) != 4)
			continue;
		for (i = 0; i < ARRAY_SIZE(chain_main) + ARRAY_SIZE(other_syms); i++)
			if (strcmp(name, i < ARRAY_SIZE(chain_main) ? chain_main[i]
				   : other_syms[i - ARRAY_SIZE(chain_main)]) == 0)
				break;
		if (i == ARRAY_SIZE(chain_main) + ARRAY_SIZE(other_syms) || t->nsym == (int) ARRAY_SIZE(t->sym))
			continue;
		t->sym[t->nsym].addr = addr;
		t->sym[t->nsym].size = size;
		snprintf(t->sym[t->nsym].name, sizeof(t->sym[0].name), "%.15s", name);
		t->nsym++;
	}
	pclose(p);
	return t->nsym == (int) (ARRAY_SIZE(chain_main) + ARRAY_SIZE(other_syms)) ? 0 : -1;
}

static uint64_t
sym_addr(const struct target *t, const char *name)
{
	int i;

	for (i = 0; i < t->nsym; i++)
		if (strcmp(t->sym[i].name, name) == 0)
			return t->sym[i].addr;
	return 0;
}

/* Name of the chain function holding link-time address a, or "?". */
static const char *
sym_owner(const struct target *t, uint64_t a)
{
	int i;

	for (i = 0; i < t->nsym; i++)
		if (a >= t->sym[i].addr && a < t->sym[i].addr + t->sym[i].size)
			return t->sym[i].name;
	return "?";
}

static int
build_target(struct target *t, const char *dir, const char *src)
{
	char cmd[3 * PATH_MAX];

	snprintf(t->path, sizeof(t->path), "%s/target-%s", dir, t->mode);
	snprintf(cmd, sizeof(cmd),
		 "cc -O2 -g -fomit-frame-pointer -fasynchronous-unwind-tables -pthread %s -o '%s' '%s'",
		 t->flags, t->path, src);
	if (system(cmd) != 0)
		return -1;
	return load_syms(t);
}

/* Waits for any stop or exit of our children, with a timeout. */
static pid_t
wait_any(int *status)
{
	pid_t r;

	alarm(WAIT_SECONDS);
	r = waitpid(-1, status, __WALL);
	alarm(0);
	return r;
}

/* Runs the target until some thread hits the int3 in f8. Returns 0 or -1. */
static int
child_start(const struct target *t, const char *arg, struct child *c)
{
	int status, sig;
	pid_t w;

	c->pid = fork();
	if (c->pid == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		execl(t->path, t->path, arg, (char *) NULL);
		_exit(127);
	}
	live_child = c->pid;
	if (c->pid < 0 || wait_any(&status) != c->pid || !WIFSTOPPED(status))
		return -1;
	/* The exec stop; from now on the child dies with us. */
	ptrace(PTRACE_SETOPTIONS, c->pid, 0, PTRACE_O_EXITKILL | PTRACE_O_TRACECLONE);
	ptrace(PTRACE_CONT, c->pid, 0, 0);
	for (;;) {
		w = wait_any(&status);
		if (w < 0 || WIFEXITED(status) || WIFSIGNALED(status))
			return -1;
		sig = WSTOPSIG(status);
		if (sig == SIGTRAP && (status >> 16) == 0)
			break;
		/* Clone events and a new thread's first SIGSTOP are not for the child to see. */
		ptrace(PTRACE_CONT, w, 0, (sig == SIGTRAP || sig == SIGSTOP) ? 0 : sig);
	}
	c->tid = w;
	return ptrace(PTRACE_GETREGS, w, 0, &c->regs) == 0 ? 0 : -1;
}

/* Kills the child and reaps all of its threads. */
static void
child_kill(struct child *c)
{
	int status;

	if (c->pid <= 0)
		return;
	kill(c->pid, SIGKILL);
	while (wait_any(&status) > 0)
		;
	live_child = 0;
}

/* Checks that frames 0..n-1 belong to chain[0..n-1]; prints the frames when they do not. */
static int
check_chain(const struct target *t, const struct jt_module *exe, const uint64_t *pcs, int depth,
	    const char *const *chain, int n)
{
	const char *owner;
	int i, good = depth >= n;

	for (i = 0; i < n && i < depth; i++) {
		/* A return address belongs to the call before it. */
		owner = sym_owner(t, pcs[i] - (i ? 1 : 0) - exe->bias);
		if (strcmp(owner, chain[i]) != 0) {
			printf("# frame %d: pc %#llx is in %s, want %s\n", i,
			       (unsigned long long) pcs[i], owner, chain[i]);
			good = 0;
		}
	}
	return good;
}

static struct jt_module *
main_module(const struct jt_modules *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (m->v[i]->is_main)
			return m->v[i];
	return NULL;
}

static void
test_modules(const struct target *t, const struct jt_modules *m, const struct jt_module *exe)
{
	size_t i, n_main = 0, sorted = 1, found = 1;

	for (i = 0; i < m->n; i++) {
		n_main += m->v[i]->is_main;
		if (i && m->v[i - 1]->end > m->v[i]->start)
			sorted = 0;
		if (modules_find(m, m->v[i]->start) != m->v[i] || modules_find(m, m->v[i]->end - 1) != m->v[i])
			found = 0;
		if (modules_find(m, m->v[i]->end) == m->v[i])
			found = 0;
	}
	is_u64(n_main, 1, "one module holds AT_ENTRY");
	ok(sorted, "%s: modules sorted and disjoint", t->mode);
	ok(found, "%s: modules_find finds every module by its first and last byte", t->mode);
	ok(modules_find(m, 0) == NULL && modules_find(m, exe->start - 1) != exe, "%s: no module below", t->mode);
	ok(strcmp(exe->path, t->path) == 0, "%s: main module path %s", t->mode, exe->path);
	is_u64(exe->e_type, t->pie ? ET_DYN : ET_EXEC, "e_type");
	if (t->pie)
		ok(exe->bias != 0 && (exe->bias & 4095) == 0, "%s: bias %#llx is non-zero and page-aligned",
		   t->mode, (unsigned long long) exe->bias);
	else
		is_u64(exe->bias, 0, "bias of a non-PIE executable");
	if (t->is_static)
		is_u64(m->n, 1, "a static executable is the only module");
	else
		ok(m->n >= 3 && modules_by_path(m, exe->path) == exe, "%s: %zu modules, found by path",
		   t->mode, m->n);
}

static void
test_mem(const struct target *t, const struct child *c, const struct jt_module *exe)
{
	uint64_t f1 = exe->bias + sym_addr(t, "f1");
	uint8_t b[16], orig, flip;
	int rc, err;

	ok(mem_read(c->tid, c->regs.rip - 1, b, sizeof(b)) == 0 && b[0] == 0xcc,
	   "%s: mem_read sees the int3 before rip", t->mode);
	ok(mem_read(c->pid, f1, &orig, 1) == 0, "%s: mem_read f1's first byte", t->mode);
	flip = orig ^ 0xff;
	ok(mem_write(c->pid, f1, &flip, 1) == 0, "%s: mem_write into read-only text", t->mode);
	ok(mem_read(c->pid, f1, b, 1) == 0 && b[0] == flip, "%s: the write reads back", t->mode);
	ok(mem_write(c->pid, f1, &orig, 1) == 0 && mem_read(c->pid, f1, b, 1) == 0 && b[0] == orig,
	   "%s: the original byte is restored", t->mode);
	rc = mem_read(c->pid, 8, b, 8);
	err = errno;
	ok(rc == -1 && (err == EIO || err == EFAULT), "%s: mem_read of an unmapped page fails (%s)",
	   t->mode, strerror(err));
}

/* Overrides the slot holding the return address to f7 and checks the unwinder sees the new value. */
static void
test_override(struct jt_unwind *u, const char *be, const struct child *c, const uint64_t *pcs, int depth)
{
	uint64_t stack[64], again[MAX_FRAMES];
	int i, n;

	if (depth < 4 || mem_read(c->tid, c->regs.rsp, stack, sizeof(stack)) != 0) {
		ok(0, "%s override: cannot read the stack", be);
		return;
	}
	for (i = 0; i < 64 && stack[i] != pcs[1]; i++)
		;
	ok(i < 64, "%s override: f8's return address is on the stack at rsp+%d", be, 8 * i);
	if (i == 64)
		return;
	unwind_override(u, c->regs.rsp + 8 * i, pcs[3]);
	n = unwind_stack(u, c->tid, &c->regs, again, MAX_FRAMES);
	ok(n >= 2 && again[1] == pcs[3], "%s override: frame 1 reads the replaced return address", be);
	n = unwind_stack(u, c->tid, &c->regs, again, MAX_FRAMES);
	ok(n == depth && memcmp(again, pcs, n * sizeof(*pcs)) == 0, "%s override: cleared after one call", be);
}

/* Link-time address of the first .plt entry after PLT0, or 0 without a .plt. */
static uint64_t
plt_entry(const struct target *t)
{
	char cmd[PATH_MAX + 32], line[256], name[64];
	unsigned long addr, size;
	uint64_t found = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -SW '%s'", t->path);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, " [%*d] %63s %*s %lx %*s %lx", name, &addr, &size) == 3
		    && strcmp(name, ".plt") == 0 && size >= 32)
			found = addr + 16;
	pclose(p);
	return found;
}

/*
 * The thread as if f8 had just called into a PLT entry: rip there, the
 * return address into f8 pushed (an override stands in for the push). The
 * PLT's CFI is an expression on rip that the dw backend leaves to
 * libunwind; either way the entry comes first, then the whole real stack.
 */
static void
test_plt(const struct target *t, const char *be, struct jt_unwind *u, const struct child *c, uint64_t plt,
	 const uint64_t *pcs, int depth)
{
	struct user_regs_struct regs = c->regs;
	uint64_t got[MAX_FRAMES];
	int n, want = depth < MAX_FRAMES ? depth + 1 : MAX_FRAMES;

	regs.rip = plt;
	regs.rsp -= 8;
	unwind_override(u, regs.rsp, c->regs.rip);
	n = unwind_stack(u, c->tid, &regs, got, MAX_FRAMES);
	ok(n == want && got[0] == plt && memcmp(got + 1, pcs, (size_t) (n - 1) * sizeof(*pcs)) == 0,
	   "%s/%s: stopped in the PLT at %#llx: the entry, then the %d real frames (%d frames)", be, t->mode,
	   (unsigned long long) plt, depth, n);
}

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void
bench(const struct target *t, const char *be, struct jt_unwind *u, const struct child *c, int depth)
{
	uint64_t pcs[MAX_FRAMES];
	int i, same = 1;
	double t0 = now_us();

	for (i = 0; i < BENCH_CALLS; i++)
		same &= unwind_stack(u, c->tid, &c->regs, pcs, MAX_FRAMES) == depth;
	printf("# %s/%s: %.2f us per unwind_stack of %d frames (%d calls)\n",
	       be, t->mode, (now_us() - t0) / BENCH_CALLS, depth, BENCH_CALLS);
	ok(same, "%s/%s: %d repeated unwinds give the same depth", be, t->mode, BENCH_CALLS);
}

/* Whether two backends' unwinds agree; prints the first difference when they do not. */
static int
same_pcs(const uint64_t *a, int na, const uint64_t *b, int nb)
{
	int i;

	for (i = 0; i < na && i < nb; i++)
		if (a[i] != b[i])
			break;
	if (i < na || i < nb)
		printf("# frame %d differs: %#llx (%d frames) vs %#llx (%d frames)\n", i,
		       i < na ? (unsigned long long) a[i] : 0ull, na, i < nb ? (unsigned long long) b[i] : 0ull, nb);
	return na == nb && i == na;
}

/* The frames (below 64) whose pc carries UNWIND_PC_SIGNAL, as a bit set. */
static uint64_t
signal_marks(const uint64_t *pcs, int depth)
{
	uint64_t set = 0;
	int i;

	for (i = 0; i < depth && i < 64; i++)
		if (pcs[i] & UNWIND_PC_SIGNAL)
			set |= 1ull << i;
	return set;
}

/*
 * The unwind checks of one backend on a stopped child, with the chain in
 * main or in a second thread. Leaves the pcs in pcs; returns their count.
 */
static int
test_backend(const struct target *t, const char *be, struct jt_modules *m, const struct jt_module *exe,
	     const struct child *c, int threaded, uint64_t *pcs)
{
	uint64_t plt = plt_entry(t);
	const char *what = threaded ? "thread" : "main";
	struct jt_unwind *u = unwind_new_backend(m, be);
	uint64_t again[MAX_FRAMES];
	int depth, n;

	ok(u != NULL, "%s/%s/%s: unwinder created", be, t->mode, what);
	if (!u)
		return 0;
	depth = unwind_stack(u, c->tid, &c->regs, pcs, MAX_FRAMES);
	printf("# %s/%s/%s: %d frames\n", be, t->mode, what, depth);
	ok(check_chain(t, exe, pcs, depth, threaded ? chain_thread : chain_main, 9),
	   "%s/%s/%s: frames are f8 f7 f6 f5 f4 f3 f2 f1 %s", be, t->mode, what, threaded ? "thread_main" : "main");
	ok(depth > 9, "%s/%s/%s: the unwind goes on past %s (%d frames)", be, t->mode, what,
	   threaded ? "thread_main" : "main", depth);
	ok(signal_marks(pcs, depth) == 0, "%s/%s/%s: no frame is marked a signal frame", be, t->mode, what);
	n = unwind_stack(u, c->tid, &c->regs, again, MAX_FRAMES);
	ok(n == depth && memcmp(again, pcs, n * sizeof(*pcs)) == 0, "%s/%s/%s: cached unwind is identical",
	   be, t->mode, what);
	unwind_flush(u);
	n = unwind_stack(u, c->tid, &c->regs, again, MAX_FRAMES);
	ok(n == depth && memcmp(again, pcs, n * sizeof(*pcs)) == 0, "%s/%s/%s: identical after unwind_flush",
	   be, t->mode, what);
	if (!threaded) {
		test_override(u, be, c, pcs, depth);
		if (plt && !t->is_static)
			test_plt(t, be, u, c, exe->bias + plt, pcs, depth);
		if (!strcmp(t->mode, "pie") || !strcmp(t->mode, "static"))
			bench(t, be, u, c, depth);
	}
	unwind_destroy(u);
	return depth;
}

/* ---- concurrent unwinds: one stopped thread, several tracer threads, one ctx each ---- */

#define MT_THREADS	2
#define MT_ROUNDS	20	/* each starts from a new module set: every cache is rebuilt under contention */
#define MT_CALLS	300	/* unwinds per thread per round */
#define MT_RATE_CALLS	20000	/* unwinds per thread when timing */
#define MT_CASES	4

/* One kind of unwind the threads repeat, with its single-threaded result. */
struct mt_case {
	struct user_regs_struct regs;
	uint64_t ov_addr, ov_value;	/* ov_addr 0: no override */
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
 * fall back to mem.c's /proc/PID/mem descriptors; and, with a PLT, one
 * stopped in it, which the dw backend hands to libunwind. Returns how
 * many; the references come from one thread.
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
test_concurrent(const struct target *t, const char *be, const struct child *c, const uint64_t *pcs, int depth)
{
	const char *env = getenv("JT_UNWIND_MT_SHARED");
	int shared = env && *env == '1', bad = 0, round, ncases;
	struct mt_case cases[MT_CASES];
	struct jt_modules m;
	struct jt_module *exe;
	struct jt_unwind *u;
	double us, us1;

	modules_init(&m);
	if (modules_refresh(&m, c->pid) <= 0 || !(exe = main_module(&m)) || !(u = unwind_new_backend(&m, be))) {
		ok(0, "%s/%s/concurrent: unwinder made", be, t->mode);
		modules_clear(&m);
		return;
	}
	ncases = mt_cases(t, u, c, exe, cases);
	ok(same_pcs(pcs, depth, cases[0].want, cases[0].nwant), "%s/%s/concurrent: a ctx of its own unwinds alike",
	   be, t->mode);
	for (round = 0; round < MT_ROUNDS; round++) {
		modules_clear(&m);	/* under exclusion, as unwind.h asks */
		modules_refresh(&m, c->pid);
		bad += mt_run(u, c->tid, cases, ncases, MT_THREADS, MT_CALLS, shared, &us);
	}
	ok(bad == 0, "%s/%s/concurrent: %d threads x %d unwinds x %d rounds of %d kinds%s: %d differ from one thread's",
	   be, t->mode, MT_THREADS, MT_CALLS, MT_ROUNDS, ncases, shared ? " (one shared ctx)" : "", bad);
	bad = mt_run(u, c->tid, cases, 1, 1, MT_THREADS * MT_RATE_CALLS, shared, &us1);
	bad += mt_run(u, c->tid, cases, 1, MT_THREADS, MT_RATE_CALLS, shared, &us);
	printf("# %s/%s: %.0f unwinds/s in 1 thread, %.0f in %d threads (x%.2f)\n", be, t->mode,
	       MT_THREADS * MT_RATE_CALLS / us1 * 1e6, MT_THREADS * MT_RATE_CALLS / us * 1e6, MT_THREADS, us1 / us);
	ok(bad == 0, "%s/%s/concurrent: timed unwinds are right too (%d differ)", be, t->mode, bad);
	unwind_destroy(u);
	modules_clear(&m);
}

/* The whole check for one link mode, with the chain in main or in a second thread. */
static void
test_target(const struct target *t, int threaded)
{
	const char *what = threaded ? "thread" : "main";
	uint64_t pcs[N_BACKENDS][MAX_FRAMES];
	int depth[N_BACKENDS];
	struct child c = { 0 };
	struct jt_modules m;
	struct jt_module *exe;
	int started;
	size_t i;

	modules_init(&m);
	started = child_start(t, what, &c) == 0;
	ok(started, "%s/%s: child stopped at the int3", t->mode, what);
	if (!started) {
		child_kill(&c);
		return;
	}
	ok(!threaded || c.tid != c.pid, "%s/%s: stopped thread %d of %d", t->mode, what, c.tid, c.pid);
	ok(modules_refresh(&m, c.pid) > 0, "%s/%s: modules_refresh adds modules", t->mode, what);
	exe = main_module(&m);
	ok(exe != NULL, "%s/%s: main module found", t->mode, what);
	if (!exe)
		goto out;
	if (!threaded)
		test_modules(t, &m, exe);
	for (i = 0; i < N_BACKENDS; i++) {
		depth[i] = test_backend(t, backends[i], &m, exe, &c, threaded, pcs[i]);
		if (!threaded && (!strcmp(t->mode, "pie") || !strcmp(t->mode, "static")))
			test_concurrent(t, backends[i], &c, pcs[i], depth[i]);
	}
	for (i = 1; i < N_BACKENDS; i++)
		ok(same_pcs(pcs[0], depth[0], pcs[i], depth[i]), "%s/%s: %s and %s give the same %d pcs",
		   t->mode, what, backends[0], backends[i], depth[i]);
	if (!threaded) {
		is_u64(modules_refresh(&m, c.pid), 0, "second modules_refresh adds nothing");
		test_mem(t, &c, exe);
	}
out:
	child_kill(&c);
	modules_clear(&m);
}

/* Index of the first frame at or after from whose call lies in function name, or -1. */
static int
find_frame(const struct target *t, const struct jt_module *exe, const uint64_t *pcs, int depth, int from,
	   const char *name)
{
	for (; from < depth; from++)
		if (strcmp(sym_owner(t, pcs[from] - 1 - exe->bias), name) == 0)
			return from;
	return -1;
}

/*
 * What jmptrace does to an allocator call that a signal handler interrupts:
 * the interrupted function (raise here) had its return address, into
 * frame k, replaced by a function's entry address. Unwound from the
 * handler, the stack must go wrong at frame k without an override, and be
 * whole again with one.
 */
static void
test_signal_override(const struct target *t, const char *be, struct jt_unwind *u, const struct child *c,
		     const struct jt_module *exe, const uint64_t *pcs, int depth, int k)
{
	static uint64_t stack[8192];
	uint64_t got[MAX_FRAMES], slot, entry = exe->bias + sym_addr(t, "sig_main");
	size_t i = 0;
	int n;

	if (mem_read(c->tid, c->regs.rsp, stack, sizeof(stack)) == 0)
		for (i = 0; i < ARRAY_SIZE(stack) && stack[i] != pcs[k]; i++)
			;
	ok(i < ARRAY_SIZE(stack), "%s/%s/signal: frame %d's return address is on the stack", be, t->mode, k);
	if (i == ARRAY_SIZE(stack))
		return;
	slot = c->regs.rsp + 8 * i;
	if (mem_write(c->pid, slot, &entry, sizeof(entry)) != 0) {
		ok(0, "%s/%s/signal: cannot replace the return address", be, t->mode);
		return;
	}
	n = unwind_stack(u, c->tid, &c->regs, got, MAX_FRAMES);
	ok(n > k && got[k] == entry, "%s/%s/signal: replaced, frame %d is sig_main's entry", be, t->mode, k);
	unwind_override(u, slot, pcs[k]);
	n = unwind_stack(u, c->tid, &c->regs, got, MAX_FRAMES);
	ok(same_pcs(pcs, depth, got, n), "%s/%s/signal: with the override, the %d frames are whole again",
	   be, t->mode, depth);
	mem_write(c->pid, slot, &pcs[k], sizeof(pcs[k]));
}

/*
 * The chain in a signal handler: through the kernel's signal frame, an
 * exact pc in raise, then sig_main's frame of 100 KB, to main.
 */
static void
test_signal(const struct target *t)
{
	uint64_t pcs[N_BACKENDS][MAX_FRAMES];
	int depth[N_BACKENDS], k;
	struct child c = { 0 };
	struct jt_modules m;
	struct jt_module *exe;
	struct jt_unwind *u;
	size_t i;

	modules_init(&m);
	if (child_start(t, "signal", &c) != 0 || modules_refresh(&m, c.pid) <= 0 || !(exe = main_module(&m))) {
		ok(0, "%s/signal: child stopped in the handler", t->mode);
		goto out;
	}
	for (i = 0; i < N_BACKENDS; i++) {
		u = unwind_new_backend(&m, backends[i]);
		depth[i] = u ? unwind_stack(u, c.tid, &c.regs, pcs[i], MAX_FRAMES) : 0;
		printf("# %s/%s/signal: %d frames\n", backends[i], t->mode, depth[i]);
		ok(check_chain(t, exe, pcs[i], depth[i], chain_signal, 9), "%s/%s/signal: frames are f8..f1 on_signal",
		   backends[i], t->mode);
		ok(signal_marks(pcs[i], depth[i]) == 1ull << 9, "%s/%s/signal: frame 9 alone is marked a signal frame",
		   backends[i], t->mode);
		k = find_frame(t, exe, pcs[i], depth[i], 10, "sig_main");
		ok(k > 10 && find_frame(t, exe, pcs[i], depth[i], k + 1, "main") == k + 1,
		   "%s/%s/signal: then, past the signal frame, sig_main and main (frame %d)", backends[i], t->mode, k);
		if (u && k > 10)
			test_signal_override(t, backends[i], u, &c, exe, pcs[i], depth[i], k);
		unwind_destroy(u);
	}
	for (i = 1; i < N_BACKENDS; i++)
		ok(same_pcs(pcs[0], depth[0], pcs[i], depth[i]), "%s/signal: %s and %s give the same %d pcs",
		   t->mode, backends[0], backends[i], depth[i]);
out:
	child_kill(&c);
	modules_clear(&m);
}

/*
 * A library upgraded under a running program shows in maps as
 * "PATH (deleted)"; both the module and its unwind index must still be
 * found through the mapping. The executable here stands in for it.
 */
static void
test_deleted(const struct target *orig)
{
	struct target t = *orig;
	struct child c = { 0 };
	struct jt_modules m;
	struct jt_module *exe;
	struct jt_unwind *u;
	uint64_t pcs[MAX_FRAMES];
	char cmd[3 * PATH_MAX];
	int depth, good;
	size_t i;

	modules_init(&m);
	snprintf(t.path, sizeof(t.path), "%.*s-deleted", PATH_MAX - 16, orig->path);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", orig->path, t.path);
	good = system(cmd) == 0 && child_start(&t, "main", &c) == 0 && unlink(t.path) == 0;
	ok(good, "%s: child of a deleted executable stopped", t.mode);
	if (good && modules_refresh(&m, c.pid) > 0 && (exe = main_module(&m))) {
		ok(strstr(exe->path, " (deleted)") != NULL, "%s: module path %s", t.mode, exe->path);
		is_u64(exe->bias, orig->pie ? exe->bias : 0, "bias of the deleted executable");
		for (i = 0; i < N_BACKENDS; i++) {
			u = unwind_new_backend(&m, backends[i]);
			depth = u ? unwind_stack(u, c.tid, &c.regs, pcs, MAX_FRAMES) : 0;
			ok(check_chain(&t, exe, pcs, depth, chain_main, 9),
			   "%s/%s (deleted): frames f8..f1 main (%d frames)", backends[i], t.mode, depth);
			unwind_destroy(u);
		}
	} else {
		ok(0, "%s (deleted): main module found", t.mode);
	}
	child_kill(&c);
	modules_clear(&m);
}

int
main(void)
{
	struct target targets[] = {
		{ .mode = "pie", .flags = "-fPIE -pie", .pie = 1 },
		{ .mode = "no-pie", .flags = "-fno-PIE -no-pie" },
		{ .mode = "static", .flags = "-fno-PIE -static", .is_static = 1 },
		{ .mode = "static-pie", .flags = "-fPIE -static-pie", .pie = 1, .is_static = 1 },
	};
	char dir[] = "/tmp/jt-unwind-XXXXXX", src[PATH_MAX], cmd[PATH_MAX + 16];
	struct child dead = { 0 };
	uint8_t b;
	size_t i;
	int good;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGALRM, on_alarm);
	good = find_source(src, sizeof(src)) == 0 && mkdtemp(dir);
	ok(good, "found %s, made %s", src, dir);
	if (!good)
		return tap_done();
	for (i = 0; i < ARRAY_SIZE(targets); i++) {
		good = build_target(&targets[i], dir, src) == 0;
		ok(good, "built %s target", targets[i].mode);
		if (!good)
			continue;
		test_target(&targets[i], 0);
		test_target(&targets[i], 1);
		test_signal(&targets[i]);
		if (targets[i].is_static)
			test_deleted(&targets[i]);
	}
	ok(unwind_new_backend(NULL, "no-such-backend") == NULL, "an unknown backend name is refused");
	/* A process that is gone reads as ESRCH, not as a bad address. */
	if (child_start(&targets[0], "main", &dead) == 0) {
		child_kill(&dead);
		good = mem_read(dead.pid, dead.regs.rsp, &b, 1) == -1 && errno == ESRCH;
		ok(good, "mem_read of a reaped process fails with ESRCH (%s)", strerror(errno));
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	return tap_done();
}
