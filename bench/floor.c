/* floor.c - the cheapest tracer of jmptrace's design: the same stops, and no work at them, as a benchmark floor. */
/*
 * usage: floor [-v] -- PROGRAM [ARGS...]
 *
 * Traps exactly where jmptrace traps for a malloc/free workload: malloc's entry,
 * malloc's return (the return address on the stack is swapped for malloc's own
 * entry, so the return lands on the same int3) and free's entry. At each stop
 * it does only what is needed to let the thread go on: PTRACE_GETREGS, emulate
 * the displaced instruction (or redirect the return), PTRACE_SETREGS,
 * PTRACE_CONT. No unwinding, no tables, no report, so jmptrace's time over
 * this tool's is what jmptrace's own bookkeeping costs.
 *
 * It places itself on the CPUs the way jmptrace does, with jmptrace's own
 * src/tracer/cpu.c (follow the tracee's CPU every 64 stops, SCHED_IDLE while a CPU
 * is spare): without that a floor measures cross-CPU wake-ups, which cost
 * several times a same-CPU stop, rather than the ptrace round trip itself.
 * Like jmptrace with --tracer-threads 1 it is one tracer thread.
 *
 * Only a dynamically linked program with glibc 2.36's malloc and free is
 * supported: the displaced instructions emulated here are the two exact
 * encodings glibc 2.36 starts them with, and floor refuses to run otherwise.
 * -v prints the number of events at the end.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cpu.h"

/* glibc 2.36: malloc begins `push %r12`, free begins `test %rdi,%rdi`. */
static const uint8_t MALLOC_HEAD[] = { 0x41, 0x54 };
static const uint8_t FREE_HEAD[] = { 0x48, 0x85, 0xff };

#define X86_CF (1u << 0)
#define X86_PF (1u << 2)
#define X86_AF (1u << 4)
#define X86_ZF (1u << 6)
#define X86_SF (1u << 7)
#define X86_OF (1u << 11)

/* Per traced thread: the one malloc call whose return we hijacked, if any. */
struct fl_thread {
	pid_t tid;		/* 0: free slot, -1: removed */
	int pending;		/* malloc's return address on the stack is ours */
	int started;		/* its first stop (the SIGSTOP of a new clone) was seen */
	uint64_t saved_rsp;	/* rsp at malloc's entry */
	uint64_t saved_ret;	/* the real return address that was at [saved_rsp] */
};

struct fl_tracer {
	pid_t pid;		/* the launched process (thread group leader) */
	int exit_status;	/* wait status of pid when it ended */
	uint64_t entry;		/* AT_ENTRY; its breakpoint is removed once hit */
	long entry_word;	/* original word at entry */
	uint64_t malloc_at, free_at;
	unsigned long mallocs, frees;
	struct fl_thread *threads;
	size_t cap;		/* slots in threads, a power of two */
	size_t used;		/* slots not 0 (live or removed) */
};

static void
fl_die(const char *what)
{
	perror(what);
	exit(2);
}

/* Open addressing, linear probe; removed slots stay as -1 until the table is rebuilt. */
static struct fl_thread *
fl_thread_slot(struct fl_tracer *tr, pid_t tid, int create)
{
	size_t i = (size_t)tid * 2654435761u & (tr->cap - 1);

	for (;; i = (i + 1) & (tr->cap - 1)) {
		struct fl_thread *t = &tr->threads[i];

		if (t->tid == tid)
			return t;
		if (t->tid == 0) {
			if (!create)
				return NULL;
			t->tid = tid;
			tr->used++;
			return t;
		}
	}
}

static void
fl_thread_grow(struct fl_tracer *tr)
{
	struct fl_thread *old = tr->threads;
	size_t n = tr->cap;

	tr->cap = n ? n * 2 : 64;
	tr->threads = calloc(tr->cap, sizeof(*tr->threads));
	if (!tr->threads)
		fl_die("calloc");
	tr->used = 0;
	for (size_t i = 0; i < n; i++)
		if (old[i].tid > 0)
			*fl_thread_slot(tr, old[i].tid, 1) = old[i];
	free(old);
}

/* Returns the thread's state, creating it (and *is_new = 1) when the tid is unknown. */
static struct fl_thread *
fl_thread_get(struct fl_tracer *tr, pid_t tid, int *is_new)
{
	struct fl_thread *t = fl_thread_slot(tr, tid, 0);

	*is_new = !t;
	if (t)
		return t;
	if ((tr->used + 1) * 2 > tr->cap)
		fl_thread_grow(tr);
	return fl_thread_slot(tr, tid, 1);
}

static void
fl_thread_drop(struct fl_tracer *tr, pid_t tid)
{
	struct fl_thread *t = fl_thread_slot(tr, tid, 0);

	if (t)
		*t = (struct fl_thread){ .tid = -1 };
}

/* Reads AT_ENTRY from /proc/PID/auxv; returns 0 when there is none. */
static uint64_t
fl_auxv_entry(pid_t pid)
{
	char path[64];
	uint64_t av[2], entry = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		fl_die(path);
	while (read(fd, av, sizeof(av)) == sizeof(av) && av[0] != AT_NULL)
		if (av[0] == AT_ENTRY)
			entry = av[1];
	close(fd);
	return entry;
}

/* Finds the mapping of libc.so.6 at file offset 0: its path and start address. */
static int
fl_find_libc(pid_t pid, char *path, size_t size, uint64_t *start)
{
	char maps[64], line[4096], file[4096];
	unsigned long lo, off;
	FILE *f;
	int found = -1;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	f = fopen(maps, "r");
	if (!f)
		fl_die(maps);
	while (found < 0 && fgets(line, sizeof(line), f)) {
		const char *base;

		if (sscanf(line, "%lx-%*x %*s %lx %*s %*s %4095s", &lo, &off, file) != 3 || off)
			continue;
		base = strrchr(file, '/');
		if (base && !strcmp(base + 1, "libc.so.6")) {
			snprintf(path, size, "%s", file);
			*start = lo;
			found = 0;
		}
	}
	fclose(f);
	return found;
}

/* The load bias: where the first PT_LOAD's page actually is, minus where it says it is. */
static uint64_t
fl_elf_bias(Elf *e, uint64_t map_start)
{
	size_t n;
	GElf_Phdr ph;

	if (elf_getphdrnum(e, &n) != 0)
		return map_start;
	for (size_t i = 0; i < n; i++)
		if (gelf_getphdr(e, i, &ph) && ph.p_type == PT_LOAD)
			return map_start - (ph.p_vaddr & ~(uint64_t)0xfff);
	return map_start;
}

/* Looks malloc and free up in the .dynsym of the ELF file at path. */
static int
fl_dynsym_lookup(const char *path, uint64_t map_start, uint64_t *m, uint64_t *fr)
{
	int fd = open(path, O_RDONLY);
	Elf *e;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	uint64_t bias;

	if (fd < 0)
		fl_die(path);
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e)
		return -1;
	bias = fl_elf_bias(e, map_start);
	*m = *fr = 0;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *name;

			if (!gelf_getsym(d, (int)i, &s) || !s.st_value ||
			    GELF_ST_TYPE(s.st_info) != STT_FUNC)
				continue;
			name = elf_strptr(e, sh.sh_link, s.st_name);
			if (name && !strcmp(name, "malloc"))
				*m = bias + s.st_value;
			else if (name && !strcmp(name, "free"))
				*fr = bias + s.st_value;
		}
	}
	elf_end(e);
	close(fd);
	return *m && *fr ? 0 : -1;
}

static long
fl_peek(pid_t tid, uint64_t addr)
{
	long w;

	errno = 0;
	w = ptrace(PTRACE_PEEKTEXT, tid, (void *)addr, NULL);
	if (errno)
		fl_die("PTRACE_PEEKTEXT");
	return w;
}

/* Writes the trap byte at addr after checking that the code there starts with head. */
static void
fl_bp_insert(pid_t pid, uint64_t addr, const uint8_t *head, size_t len, const char *name)
{
	long w = fl_peek(pid, addr);

	if (head && memcmp(&w, head, len) != 0) {
		fprintf(stderr, "floor: %s does not start with the glibc 2.36 instruction "
			"floor emulates; refusing to run\n", name);
		kill(pid, SIGKILL);
		exit(2);
	}
	if (ptrace(PTRACE_POKETEXT, pid, (void *)addr, (void *)((w & ~0xffL) | 0xcc)) < 0)
		fl_die("PTRACE_POKETEXT");
}

/* The program reached its entry point: libc is mapped, so arm malloc and free. */
static void
fl_on_entry(struct fl_tracer *tr, pid_t tid, struct user_regs_struct *r)
{
	char path[4096];
	uint64_t start;

	if (ptrace(PTRACE_POKETEXT, tid, (void *)tr->entry, (void *)tr->entry_word) < 0)
		fl_die("PTRACE_POKETEXT");
	r->rip = tr->entry;
	tr->entry = 0;
	if (fl_find_libc(tr->pid, path, sizeof(path), &start) < 0 ||
	    fl_dynsym_lookup(path, start, &tr->malloc_at, &tr->free_at) < 0) {
		fprintf(stderr, "floor: no libc.so.6 with malloc and free in the target "
			"(only dynamic programs are supported)\n");
		kill(tr->pid, SIGKILL);
		exit(2);
	}
	fl_bp_insert(tr->pid, tr->malloc_at, MALLOC_HEAD, sizeof(MALLOC_HEAD), "malloc");
	fl_bp_insert(tr->pid, tr->free_at, FREE_HEAD, sizeof(FREE_HEAD), "free");
}

/* Writes len bytes into the thread's memory (its stack) in one system call. */
static void
fl_write(pid_t tid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = { (void *)buf, len };
	struct iovec remote = { (void *)addr, len };

	if (process_vm_writev(tid, &local, 1, &remote, 1, 0) != (ssize_t)len)
		fl_die("process_vm_writev");
}

/*
 * malloc's int3: either a call returning through our swapped return address
 * (rsp one word above where it was at entry), or a new call. A new outermost
 * call gets its return address swapped for malloc's entry; then `push %r12`
 * is emulated: the pushed value and the swapped address are adjacent words,
 * so one write stores both.
 */
static void
fl_on_malloc(struct fl_thread *t, struct user_regs_struct *r, uint64_t malloc_at)
{
	uint64_t words[2];

	if (t->pending && r->rsp == t->saved_rsp + 8) {
		r->rip = t->saved_ret;
		t->pending = 0;
		return;
	}
	words[0] = r->r12;
	words[1] = malloc_at;
	if (!t->pending) {
		t->saved_ret = (uint64_t)fl_peek(t->tid, r->rsp);
		t->saved_rsp = r->rsp;
		t->pending = 1;
		fl_write(t->tid, r->rsp - 8, words, sizeof(words));
	} else {
		fl_write(t->tid, r->rsp - 8, words, 8);
	}
	r->rsp -= 8;
	r->rip = malloc_at + sizeof(MALLOC_HEAD);
}

/* free's int3: emulate `test %rdi,%rdi` (CF=OF=0; ZF, SF, PF from rdi; AF cleared). */
static void
fl_on_free(struct user_regs_struct *r, uint64_t free_at)
{
	uint64_t v = r->rdi;
	unsigned long fl = r->eflags & ~(unsigned long)(X86_CF | X86_PF | X86_AF | X86_ZF |
							 X86_SF | X86_OF);

	if (v == 0)
		fl |= X86_ZF;
	if (v >> 63)
		fl |= X86_SF;
	if (!(__builtin_popcount((unsigned)(v & 0xff)) & 1))
		fl |= X86_PF;
	r->eflags = fl;
	r->rip = free_at + sizeof(FREE_HEAD);
}

/* A SIGTRAP stop. Returns 0 when it was one of our breakpoints, -1 to deliver it. */
static int
fl_on_trap(struct fl_tracer *tr, struct fl_thread *t)
{
	struct user_regs_struct r;
	uint64_t at;

	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &r) < 0) {
		if (errno == ESRCH)
			return 0;	/* killed while stopped: nothing to restart */
		fl_die("PTRACE_GETREGS");
	}
	at = r.rip - 1;
	if (at == tr->malloc_at) {
		fl_on_malloc(t, &r, at);
		tr->mallocs++;
	} else if (at == tr->free_at) {
		fl_on_free(&r, at);
		tr->frees++;
	} else if (tr->entry && at == tr->entry) {
		fl_on_entry(tr, t->tid, &r);
	} else {
		return -1;
	}
	if (ptrace(PTRACE_SETREGS, t->tid, NULL, &r) < 0 && errno != ESRCH)
		fl_die("PTRACE_SETREGS");
	return 0;
}

/* Forks the program stopped at its exec, arms its entry point and returns its pid. */
static pid_t
fl_launch(struct fl_tracer *tr, char **argv)
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		fl_die("fork");
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			fl_die("PTRACE_TRACEME");
		execvp(argv[0], argv);
		fprintf(stderr, "floor: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		fl_die("waitpid");
	if (!WIFSTOPPED(st))
		exit(WIFEXITED(st) ? WEXITSTATUS(st) : 2);
	if (ptrace(PTRACE_SETOPTIONS, pid, NULL,
		   (void *)(long)(PTRACE_O_TRACECLONE | PTRACE_O_EXITKILL)) < 0)
		fl_die("PTRACE_SETOPTIONS");
	tr->pid = pid;
	tr->entry = fl_auxv_entry(pid);
	if (!tr->entry) {
		fprintf(stderr, "floor: no AT_ENTRY in the target's auxv\n");
		exit(2);
	}
	tr->entry_word = fl_peek(pid, tr->entry);
	fl_bp_insert(pid, tr->entry, NULL, 0, "entry");
	return pid;
}

/* Handles one stopped thread; returns the signal to restart it with. */
static int
fl_on_stop(struct fl_tracer *tr, pid_t tid, int st)
{
	int is_new, sig = WSTOPSIG(st);
	struct fl_thread *t = fl_thread_get(tr, tid, &is_new);

	if (st >> 16) {
		/* PTRACE_EVENT_CLONE: the child reports its own SIGSTOP, handled below. */
		t->started = 1;
		return 0;
	}
	if (!t->started) {
		t->started = 1;
		if (sig == SIGSTOP && tid != tr->pid)
			return 0;	/* a new thread's initial stop */
	}
	if (sig == SIGTRAP && fl_on_trap(tr, t) == 0)
		return 0;
	return sig;
}

static void
fl_loop(struct fl_tracer *tr, struct jt_cpu *cpu)
{
	cpu_init(cpu);
	for (;;) {
		int st;
		pid_t tid = waitpid(-1, &st, __WALL);

		/* What jmptrace's loop does at each stop: sample, follow, adapt the policy. */
		if (tid > 0 && WIFSTOPPED(st))
			cpu_on_stop(cpu, tid, 1);

		if (tid < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ECHILD)
				break;
			fl_die("waitpid");
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			if (tid == tr->pid)
				tr->exit_status = st;
			fl_thread_drop(tr, tid);
			continue;
		}
		if (ptrace(PTRACE_CONT, tid, NULL, (void *)(long)fl_on_stop(tr, tid, st)) < 0 &&
		    errno != ESRCH)
			fl_die("PTRACE_CONT");
	}
	cpu_release(cpu);
}

int
main(int argc, char **argv)
{
	struct fl_tracer tr = { 0 };
	struct jt_cpu cpu;
	int verbose = 0, i = 1;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		if (strcmp(argv[i], "-v")) {
			fprintf(stderr, "usage: floor [-v] -- PROGRAM [ARGS...]\n");
			return 2;
		}
		verbose = 1;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: floor [-v] -- PROGRAM [ARGS...]\n");
		return 2;
	}
	fl_thread_grow(&tr);
	/* The first thread is the leader, stopped at exec; it never sends a SIGSTOP of its own. */
	fl_thread_slot(&tr, fl_launch(&tr, argv + i), 1)->started = 1;
	if (ptrace(PTRACE_CONT, tr.pid, NULL, NULL) < 0)
		fl_die("PTRACE_CONT");
	fl_loop(&tr, &cpu);
	if (verbose) {
		fprintf(stderr, "floor: cross-CPU stops: %lu of %lu sampled (every %dth stop), %.1f%%\n",
			cpu.cross, cpu.samples, CPU_SAMPLE_EVERY,
			cpu.samples ? 100.0 * (double)cpu.cross / (double)cpu.samples : 0.0);
		fprintf(stderr, "floor: %lu malloc stops (entries and returns), %lu free stops\n",
			tr.mallocs, tr.frees);
	}
	if (WIFSIGNALED(tr.exit_status))
		return 128 + WTERMSIG(tr.exit_status);
	return WEXITSTATUS(tr.exit_status);
}
