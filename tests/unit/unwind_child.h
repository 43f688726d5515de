/* unwind_child.h - builds unwind_target.c and runs it under ptrace until it stops at its int3, for the unwind tests (static functions: one copy per test). */
#ifndef JT_UNWIND_CHILD_H
#define JT_UNWIND_CHILD_H

#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "maps.h"
#include "modules.h"
#include "tap.h"
#include "unwind.h"
#include "util.h"

#define WAIT_SECONDS	20
#define MAX_FRAMES	64

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

/* The link modes the unwind tests build unwind_target.c in: initializers of struct target. */
#define TARGET_PIE		{ .mode = "pie", .flags = "-fPIE -pie", .pie = 1 }
#define TARGET_NO_PIE		{ .mode = "no-pie", .flags = "-fno-PIE -no-pie" }
#define TARGET_STATIC		{ .mode = "static", .flags = "-fno-PIE -static", .is_static = 1 }
#define TARGET_STATIC_PIE	{ .mode = "static-pie", .flags = "-fPIE -static-pie", .pie = 1, .is_static = 1 }

/* A stopped child: the process and the thread that hit int3. */
struct child {
	pid_t pid, tid;
	struct user_regs_struct regs;
};

static const char *const chain_main[] = { "f8", "f7", "f6", "f5", "f4", "f3", "f2", "f1", "main" };
__attribute__((unused)) static const char *const chain_thread[] = { "f8", "f7", "f6", "f5", "f4", "f3", "f2", "f1", "thread_main" };
__attribute__((unused)) static const char *const chain_signal[] = { "f8", "f7", "f6", "f5", "f4", "f3", "f2", "f1", "on_signal" };

/* Every unwind check runs with each; the first is the reference for comparing them. */
__attribute__((unused)) static const char *const backends[] = { "libunwind", "dw" };
#define N_BACKENDS ARRAY_SIZE(backends)
/* Besides the chain, load_syms wants these. */
static const char *const other_syms[] = { "thread_main", "on_signal", "sig_main" };

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

static int
build_target(struct target *t, const char *dir, const char *src)
{
	char cmd[3 * PATH_MAX];

	if (snprintf(t->path, sizeof(t->path), "%s/target-%s", dir, t->mode) >= (int) sizeof(t->path))
		return -1;
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

/*
 * Stops the main thread of a child whose chain runs in a second thread
 * (c->tid): it waits in pthread_join, which reads the thread's own block
 * at the top of the thread's stack mapping. While a test has junk there
 * (test_unwind_copy.c), a main thread still on its way into pthread_join
 * read a junk tid or joinid, returned at once, and the child exited under
 * the test (seen in CI; 9 runs in 60 with two at once on a busy host).
 * Returns 1 when it stopped it (child_release_main goes after), 0 when
 * there is none, -1 on failure.
 */
__attribute__((unused)) static int
child_hold_main(const struct child *c)
{
	int status;
	pid_t r;

	if (c->tid == c->pid)
		return 0;
	if (syscall(SYS_tgkill, c->pid, c->pid, SIGSTOP) != 0)
		return -1;
	for (;;) {
		alarm(WAIT_SECONDS);
		r = waitpid(c->pid, &status, __WALL);
		alarm(0);
		if (r != c->pid || !WIFSTOPPED(status))
			return -1;
		if (WSTOPSIG(status) == SIGSTOP)
			return 1;
		/* Another stop came first (a signal of its own): delivered, and the SIGSTOP waited for. */
		ptrace(PTRACE_CONT, c->pid, 0, WSTOPSIG(status) == SIGTRAP ? 0 : WSTOPSIG(status));
	}
}

/* Lets the main thread child_hold_main stopped go on, its SIGSTOP not delivered. */
__attribute__((unused)) static void
child_release_main(const struct child *c)
{
	ptrace(PTRACE_CONT, c->pid, 0, 0);
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

__attribute__((unused)) static struct jt_module *
main_module(const struct jt_modules *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (m->v[i]->is_main)
			return m->v[i];
	return NULL;
}

/* Link-time address of the first .plt entry after PLT0, or 0 without a .plt. */
__attribute__((unused)) static uint64_t
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

__attribute__((unused)) static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* The end of the mapping that holds the stack pointer: where a copy of the whole stack ends. */
__attribute__((unused)) static uint64_t
stack_end(pid_t pid, uint64_t sp)
{
	struct jt_maps maps;
	uint64_t end = sp;
	ssize_t i;

	if (maps_read(pid, &maps) == 0 && (i = maps_find(&maps, sp)) >= 0)
		end = maps.v[i].end;
	maps_clear(&maps);
	return end;
}

/* Whether two backends' unwinds agree; prints the first difference when they do not. */
__attribute__((unused)) static int
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


__attribute__((unused)) static uint64_t
sym_addr(const struct target *t, const char *name)
{
	int i;

	for (i = 0; i < t->nsym; i++)
		if (strcmp(t->sym[i].name, name) == 0)
			return t->sym[i].addr;
	return 0;
}

/* Name of the chain function holding link-time address a, or "?". */
__attribute__((unused)) static const char *
sym_owner(const struct target *t, uint64_t a)
{
	int i;

	for (i = 0; i < t->nsym; i++)
		if (a >= t->sym[i].addr && a < t->sym[i].addr + t->sym[i].size)
			return t->sym[i].name;
	return "?";
}

/* Checks that frames 0..n-1 belong to chain[0..n-1]; prints the frames when they do not. */
__attribute__((unused)) static int
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

/* The frames (below 64) whose pc carries UNWIND_PC_SIGNAL, as a bit set. */
__attribute__((unused)) static uint64_t
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
 * Readies a test that builds targets: line-buffered output, the timeout,
 * the target's source in src and the directory dir to build in (both
 * PATH_MAX bytes), named after name in $TMPDIR (as the .t files' are: a
 * host whose /tmp forbids exec sets it). Returns 0, or -1 when it cannot (said).
 */
static int
child_test_begin(char *src, char *dir, const char *name)
{
	const char *tmp = getenv("TMPDIR");
	int good;

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGALRM, on_alarm);
	snprintf(dir, PATH_MAX, "%s/%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", name);
	good = find_source(src, PATH_MAX) == 0 && mkdtemp(dir);
	ok(good, "found %s, made %s", src, dir);
	return good ? 0 : -1;
}

/* Removes what child_test_begin made. */
static void
child_test_end(const char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
}

/*
 * A test's main: builds unwind_target.c in each link mode, in a directory
 * named after name, and hands each target built to each. Returns
 * tap_done()'s.
 */
__attribute__((unused)) static int
child_test_run(const char *name, void (*each)(const struct target *t))
{
	struct target targets[] = { TARGET_PIE, TARGET_NO_PIE, TARGET_STATIC, TARGET_STATIC_PIE };
	char dir[PATH_MAX], src[PATH_MAX];
	size_t i;
	int good;

	if (child_test_begin(src, dir, name) != 0)
		return tap_done();
	for (i = 0; i < ARRAY_SIZE(targets); i++) {
		good = build_target(&targets[i], dir, src) == 0;
		ok(good, "built %s target", targets[i].mode);
		if (good)
			each(&targets[i]);
	}
	child_test_end(dir);
	return tap_done();
}

#endif
