/* test_unwind.c - unwinds a child stopped in a known call chain of its main or a second thread, built in every link mode, with each backend; also tests mem and modules. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/ucontext.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <elf.h>

#include "maps.h"
#include "mem.h"
#include "modules.h"
#include "tap.h"
#include "unwind.h"
#include "unwind_child.h"
#include "util.h"

#define BENCH_CALLS	10000

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
	/* A new unwinder over the same modules starts with cold caches (what an exec gives). */
	unwind_destroy(u);
	u = unwind_new_backend(m, be);
	n = u ? unwind_stack(u, c->tid, &c->regs, again, MAX_FRAMES) : -1;
	ok(n == depth && memcmp(again, pcs, n * sizeof(*pcs)) == 0, "%s/%s/%s: identical from a new unwinder",
	   be, t->mode, what);
	if (!u)
		return depth;
	if (!threaded) {
		test_override(u, be, c, pcs, depth);
		if (plt)
			test_plt(t, be, u, c, exe->bias + plt, pcs, depth);
		if (!strcmp(t->mode, "pie") || !strcmp(t->mode, "static"))
			bench(t, be, u, c, depth);
	}
	unwind_destroy(u);
	return depth;
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
	for (i = 0; i < N_BACKENDS; i++)
		depth[i] = test_backend(t, backends[i], &m, exe, &c, threaded, pcs[i]);
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

/* Every check of one link mode; the first (pie) also those that need any one. */
static void
test_mode(const struct target *t)
{
	struct child dead = { 0 };
	uint8_t b;
	int good;

	test_target(t, 0);
	test_target(t, 1);
	if (t->is_static)
		test_deleted(t);
	if (strcmp(t->mode, "pie") != 0)
		return;
	ok(unwind_new_backend(NULL, "no-such-backend") == NULL, "an unknown backend name is refused");
	/* A process that is gone reads as ESRCH, not as a bad address. */
	if (child_start(t, "main", &dead) == 0) {
		child_kill(&dead);
		good = mem_read(dead.pid, dead.regs.rsp, &b, 1) == -1 && errno == ESRCH;
		ok(good, "mem_read of a reaped process fails with ESRCH (%s)", strerror(errno));
	}
}

int
main(void)
{
	return child_test_run("jt-unwind", test_mode);
}
