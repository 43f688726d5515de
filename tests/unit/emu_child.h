/* emu_child.h - the traced child whose CPU is the reference for the test_emu_*.c tests: the arena it shares with us, its registers, single-stepping it (static inline functions: one copy per test). */
#ifndef JT_EMU_CHILD_H
#define JT_EMU_CHILD_H

#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arch.h"
#include "emu.h"
#include "rng.h"

#define WAIT_SECONDS	10
#define PG		4096
/*
 * The arena, mapped before fork so the child has it at the same address:
 * page 0 data (reached with negative rip-relative displacements), page 1
 * code, page 2 data, pages 3-4 stack.
 */
#define ARENA_SIZE	(5 * PG)
#define AT		(arena + PG + 0x800)	/* where test instructions are placed */
#define D0		(arena)
#define D1		(arena + 2 * PG)
#define STACK_TOP	(arena + 4 * PG)
#define NOP_AT		(arena + PG + 0x100)	/* a nop, for telling a refused start from a fault */

#define FL_BASE		0x202	/* IF and the always-one bit */

/* The traced child whose CPU is the reference. */
static struct {
	pid_t pid;
	int memfd;
	struct user_regs_struct base;	/* its registers at the first stop: segments, fs_base */
} kid;

static uint64_t arena;
static uint8_t image[ARENA_SIZE];	/* what the arena holds before each run */
static int arena_dirty = 1;		/* the child's arena may differ from image */

/* Operand values that sit on carry, overflow, sign and parity boundaries. */
static const uint64_t vals[] = {
	0, 1, 2, 3, 0xf, 0x10, 0x7f, 0x80, 0x96, 0xff, 0x100, 0x7fff, 0x8000, 0xffff,
	0x10000, 0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ULL,
	0x7fffffffffffffffULL, 0x8000000000000000ULL, 0x8000000000000001ULL,
	0xfffffffffffffffeULL, 0xffffffffffffffffULL, 0x5555555555555555ULL,
	0xaaaaaaaaaaaaaaaaULL, 0x0123456789abcdefULL, 0xfedcba9876543210ULL,
};
#define NVALS (sizeof(vals) / sizeof(vals[0]))

/* Half interesting values, half noise. */
static inline uint64_t
rng_val(void)
{
	uint64_t r = rng_next();

	return r & 1 ? vals[(r >> 8) % NVALS] : rng_next();
}

/* ---- the child ---- */

static inline void
on_alarm(int sig)
{
	static const char msg[] = "Bail out! timeout waiting for the child\n";

	if (kid.pid > 0)
		kill(kid.pid, SIGKILL);
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(1);
}

static inline int
child_wait(int *status)
{
	/*
	 * Re-arming the one timer is enough: cases come microseconds apart, so it
	 * only fires when a wait hangs. main() disarms it at the end.
	 */
	alarm(WAIT_SECONDS);
	return waitpid(kid.pid, status, __WALL) == kid.pid ? 0 : -1;
}

/* Forks a child that stops at once, traced by us, and dies with us. */
static inline int
child_start(void)
{
	char path[64];
	int st;

	fflush(stdout);
	kid.pid = fork();
	if (kid.pid < 0)
		return -1;
	if (kid.pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		for (;;)
			pause();
	}
	if (child_wait(&st) < 0 || !WIFSTOPPED(st))
		return -1;
	ptrace(PTRACE_SETOPTIONS, kid.pid, NULL, (void *)(long)PTRACE_O_EXITKILL);
	if (ptrace(PTRACE_GETREGS, kid.pid, NULL, &kid.base) < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/mem", kid.pid);
	kid.memfd = open(path, O_RDWR);
	return kid.memfd < 0 ? -1 : 0;
}

static inline void
child_stop(void)
{
	int st;

	if (kid.pid <= 0)
		return;
	kill(kid.pid, SIGKILL);
	child_wait(&st);
	close(kid.memfd);
	kid.pid = 0;
}

static inline int
child_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	return pread(kid.memfd, buf, len, (off_t)addr) == (ssize_t)len ? 0 : -1;
}

static inline int
child_write(void *arg, uint64_t addr, const void *buf, size_t len)
{
	return pwrite(kid.memfd, buf, len, (off_t)addr) == (ssize_t)len ? 0 : -1;
}

static const struct jt_mem_ops child_ops = { child_read, child_write, NULL };

static inline void
arena_reset(void)
{
	if (child_write(NULL, arena, image, ARENA_SIZE) < 0)
		perror("# arena reset");
	arena_dirty = 0;
}

/* Reads the arena into snap; a run that changed it makes the next one start with a reset. */
static inline void
arena_snapshot(uint8_t *snap)
{
	if (child_read(NULL, arena, snap, ARENA_SIZE) < 0)
		perror("# arena snapshot");
	if (memcmp(snap, image, ARENA_SIZE) != 0)
		arena_dirty = 1;
}

/* Single-steps the child from start; returns 0 when it stopped with the trace trap. */
static inline int
cpu_step(const struct user_regs_struct *start, struct user_regs_struct *out, int *sig)
{
	int st;

	*sig = 0;
	if (ptrace(PTRACE_SETREGS, kid.pid, NULL, start) < 0 ||
	    ptrace(PTRACE_SINGLESTEP, kid.pid, NULL, NULL) < 0 || child_wait(&st) < 0)
		return -1;
	if (!WIFSTOPPED(st))
		return -1;
	*sig = WSTOPSIG(st);
	if (ptrace(PTRACE_GETREGS, kid.pid, NULL, out) < 0)
		return -1;
	return *sig == SIGTRAP ? 0 : -1;
}

/* ---- registers ---- */

/*
 * Whether a is canonical with 48-bit linear addresses: bits 63-47 all equal.
 * Such an address is canonical with 57-bit ones (LA57) too, so on every
 * x86-64 CPU and paging mode.
 */
static inline int
addr_canonical(uint64_t a)
{
	return (uint64_t)((int64_t)(a << 16) >> 16) == a;
}

/* v made canonical: its low 48 bits kept, bit 47 copied into bits 63-48. */
static inline uint64_t
addr_canon(uint64_t v)
{
	return (uint64_t)((int64_t)(v << 16) >> 16);
}

static inline unsigned long long *
reg_ptr(struct user_regs_struct *r, int n)
{
	switch (n & 15) {
	case 0:  return &r->rax;
	case 1:  return &r->rcx;
	case 2:  return &r->rdx;
	case 3:  return &r->rbx;
	case 4:  return &r->rsp;
	case 5:  return &r->rbp;
	case 6:  return &r->rsi;
	case 7:  return &r->rdi;
	case 8:  return &r->r8;
	case 9:  return &r->r9;
	case 10: return &r->r10;
	case 11: return &r->r11;
	case 12: return &r->r12;
	case 13: return &r->r13;
	case 14: return &r->r14;
	default: return &r->r15;
	}
}

static inline uint64_t
size_mask(int size)
{
	return size >= 8 ? ~0ULL : (1ULL << (8 * size)) - 1;
}

/*
 * Sets the low size bytes of register n (16-19: ah..bh), keeping the noise
 * above them. rsp stays canonical: some hosts (an AMD EPYC) will not resume
 * a thread whose rsp is not, others (an Intel Xeon) will, so such a start
 * state would test the host rather than the emulator. The low 48 bits, and
 * so all that an operand of up to 32 bits sees, stay as asked.
 */
static inline void
reg_set(struct user_regs_struct *r, int n, int size, uint64_t v)
{
	unsigned long long *p;

	if (n >= 16) {
		p = reg_ptr(r, n - 16);
		*p = (*p & ~0xff00ULL) | ((v & 0xff) << 8);
		return;
	}
	p = reg_ptr(r, n);
	*p = (*p & ~size_mask(size)) | (v & size_mask(size));
	if (n == 4)
		*p = addr_canon(*p);
}

/* Random registers, a valid stack and random arithmetic flags. */
static inline struct user_regs_struct
regs_random(void)
{
	struct user_regs_struct r = kid.base;

	for (int i = 0; i < 16; i++)
		*reg_ptr(&r, i) = rng_val();
	r.rsp = STACK_TOP - 0x100;
	r.eflags = FL_BASE | (rng_next() & X86_FL_ARITH);
	r.orig_rax = -1;	/* never let the kernel think a syscall is to be restarted */
	return r;
}

/*
 * Why not every x86-64 CPU and kernel would resume a thread from s, or NULL.
 * rip and rsp must be canonical: an iretq to a non-canonical rip faults on
 * every CPU, to a non-canonical rsp on some (an AMD EPYC: SIGSEGV, rip
 * unchanged) but not on others (an Intel Xeon). Of eflags,
 * only the arithmetic flags vary: TF and RF change how the step ends, AC
 * makes misaligned accesses fault (Linux sets CR0.AM), and PTRACE_SETREGS
 * drops the bits it does not let a tracer set, so they would not be tested.
 * The rest (segments, fs and gs base) stays as the kernel gave it, which
 * PTRACE_SETREGS would check.
 */
static inline const char *
start_invalid(const struct user_regs_struct *s)
{
	struct user_regs_struct a = *s, b = kid.base;

	if (!addr_canonical(s->rip))
		return "rip is not canonical";
	if (!addr_canonical(s->rsp))
		return "rsp is not canonical";
	if ((s->eflags & ~(unsigned long long)X86_FL_ARITH) != FL_BASE)
		return "eflags has bits other than IF, bit 1 and the arithmetic flags";
	/* Compare what is left: the 16 registers, rip, eflags and orig_rax are the case's own. */
	for (int i = 0; i < 16; i++)
		*reg_ptr(&a, i) = *reg_ptr(&b, i);
	a.rip = b.rip, a.eflags = b.eflags, a.orig_rax = b.orig_rax;
	if (memcmp(&a, &b, sizeof(a)) != 0)
		return "segment registers or fs/gs base differ from the kernel's";
	return NULL;
}

enum step { STEP_DONE, STEP_FAULT, STEP_REFUSED };

/*
 * Single-steps the child from start into out. STEP_DONE: it ran and stopped
 * with the trace trap. Otherwise it stopped with signal *sig (0: ptrace
 * failed), and when rip did not move, a nop (which cannot fault) from the
 * same registers tells a kernel or CPU that refused to resume the state at
 * all (STEP_REFUSED) from an instruction that faulted (STEP_FAULT).
 */
static inline enum step
cpu_try(const struct user_regs_struct *start, struct user_regs_struct *out, int *sig)
{
	struct user_regs_struct probe = *start, junk;
	int probe_sig;

	if (cpu_step(start, out, sig) == 0)
		return STEP_DONE;
	if (*sig != 0 && out->rip != start->rip)
		return STEP_FAULT;
	probe.rip = NOP_AT;
	return cpu_step(&probe, &junk, &probe_sig) < 0 ? STEP_REFUSED : STEP_FAULT;
}

/*
 * Maps the arena (before the fork, so the child has it at the same address),
 * fills its image with noise and a nop at NOP_AT, and starts the traced
 * child. What the child must hold too (a library) is loaded before.
 */
static inline int
emu_setup(void)
{
	void *p;

	signal(SIGALRM, on_alarm);
	p = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || mprotect((char *)p + PG, PG, PROT_READ | PROT_EXEC) < 0)
		return -1;
	arena = (uint64_t)(uintptr_t)p;
	for (size_t i = 0; i < ARENA_SIZE; i += 8) {
		uint64_t v = rng_next();

		memcpy(image + i, &v, 8);
	}
	image[NOP_AT - arena] = 0x90;
	return child_start();
}

#endif
