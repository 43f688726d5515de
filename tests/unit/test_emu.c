/* test_emu.c - checks the instruction emulator against the real CPU by single-stepping a traced child. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <link.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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
#include "tap.h"

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

/* One outcome: what the emulator or the CPU made of the same start. */
struct result {
	struct user_regs_struct regs;
	uint8_t mem[ARENA_SIZE];
};
static struct result emu_res, cpu_res;

/*
 * A group of cases that ends in one TAP line; the first mismatch is kept for
 * diagnosis. Start states that not every x86-64 CPU would resume (invalid,
 * never run) and those this CPU would not resume (refused) are test defects,
 * not emulator mismatches: they are counted and shown apart, and fail too.
 */
struct tally {
	int cases, bad, invalid, refused;
};
static struct {
	struct tally n;
	char first[2048], first_invalid[512], first_refused[512];
} grp;
static struct tally total;	/* over all groups, for the closing check */

/* Operand values that sit on carry, overflow, sign and parity boundaries. */
static const uint64_t vals[] = {
	0, 1, 2, 3, 0xf, 0x10, 0x7f, 0x80, 0x96, 0xff, 0x100, 0x7fff, 0x8000, 0xffff,
	0x10000, 0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ULL,
	0x7fffffffffffffffULL, 0x8000000000000000ULL, 0x8000000000000001ULL,
	0xfffffffffffffffeULL, 0xffffffffffffffffULL, 0x5555555555555555ULL,
	0xaaaaaaaaaaaaaaaaULL, 0x0123456789abcdefULL, 0xfedcba9876543210ULL,
};
#define NVALS (sizeof(vals) / sizeof(vals[0]))

static const char *const reg_names[20] = {
	"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "ah", "ch", "dh", "bh",
};


/* Half interesting values, half noise. */
static uint64_t
rng_val(void)
{
	uint64_t r = rng_next();

	return r & 1 ? vals[(r >> 8) % NVALS] : rng_next();
}

/* ---- the child ---- */

static void
on_alarm(int sig)
{
	static const char msg[] = "Bail out! timeout waiting for the child\n";

	if (kid.pid > 0)
		kill(kid.pid, SIGKILL);
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(1);
}

static int
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
static int
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

static void
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

static int
child_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	return pread(kid.memfd, buf, len, (off_t)addr) == (ssize_t)len ? 0 : -1;
}

static int
child_write(void *arg, uint64_t addr, const void *buf, size_t len)
{
	return pwrite(kid.memfd, buf, len, (off_t)addr) == (ssize_t)len ? 0 : -1;
}

static const struct jt_mem_ops child_ops = { child_read, child_write, NULL };

/* Counts calls, so the unsupported cases can show they touched no memory; optionally fails. */
static int ops_calls, ops_fail_read, ops_fail_write;

static int
probe_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	ops_calls++;
	return ops_fail_read ? -1 : child_read(arg, addr, buf, len);
}

static int
probe_write(void *arg, uint64_t addr, const void *buf, size_t len)
{
	ops_calls++;
	return ops_fail_write ? -1 : child_write(arg, addr, buf, len);
}

static const struct jt_mem_ops probe_ops = { probe_read, probe_write, NULL };

static void
arena_reset(void)
{
	if (child_write(NULL, arena, image, ARENA_SIZE) < 0)
		perror("# arena reset");
	arena_dirty = 0;
}

/* Reads the arena into snap; a run that changed it makes the next one start with a reset. */
static void
arena_snapshot(uint8_t *snap)
{
	if (child_read(NULL, arena, snap, ARENA_SIZE) < 0)
		perror("# arena snapshot");
	if (memcmp(snap, image, ARENA_SIZE) != 0)
		arena_dirty = 1;
}

/* Single-steps the child from start; returns 0 when it stopped with the trace trap. */
static int
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
static int
addr_canonical(uint64_t a)
{
	return (uint64_t)((int64_t)(a << 16) >> 16) == a;
}

/* v made canonical: its low 48 bits kept, bit 47 copied into bits 63-48. */
static uint64_t
addr_canon(uint64_t v)
{
	return (uint64_t)((int64_t)(v << 16) >> 16);
}

static unsigned long long *
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

static uint64_t
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
static void
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
static struct user_regs_struct
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
static const char *
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
static enum step
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

/* ---- groups and the differential check ---- */

/* Counts one case in *count and keeps the text of the group's first one in first. */
static void __attribute__((format(printf, 4, 5)))
grp_note(int *count, char *first, size_t size, const char *fmt, ...)
{
	va_list ap;

	if ((*count)++ > 0)
		return;
	va_start(ap, fmt);
	vsnprintf(first, size, fmt, ap);
	va_end(ap);
}

#define grp_fail(...)	 grp_note(&grp.n.bad, grp.first, sizeof(grp.first), __VA_ARGS__)
#define grp_invalid(...) grp_note(&grp.n.invalid, grp.first_invalid, sizeof(grp.first_invalid), __VA_ARGS__)
#define grp_refused(...) grp_note(&grp.n.refused, grp.first_refused, sizeof(grp.first_refused), __VA_ARGS__)

static void __attribute__((format(printf, 1, 2)))
grp_end(const char *fmt, ...)
{
	char name[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	ok(grp.n.bad == 0 && grp.n.invalid == 0 && grp.n.refused == 0 && grp.n.cases > 0,
	   "%s: %d cases match the CPU", name, grp.n.cases);
	if (grp.n.bad)
		printf("# %d mismatches; first:\n%s", grp.n.bad, grp.first);
	if (grp.n.invalid)
		printf("# %d start states not valid on every x86-64 CPU, not run (a test defect); first:\n%s",
		       grp.n.invalid, grp.first_invalid);
	if (grp.n.refused)
		printf("# %d start states refused by this CPU or kernel, not an emulator mismatch; first:\n%s",
		       grp.n.refused, grp.first_refused);
	total.cases += grp.n.cases, total.invalid += grp.n.invalid, total.refused += grp.n.refused;
	memset(&grp, 0, sizeof(grp));
}

static const char *
insn_text(const struct jt_insn *in, char *buf, size_t size)
{
	char d[128];
	size_t n = 0;

	for (int i = 0; i < in->len && n + 4 < size; i++)
		n += snprintf(buf + n, size - n, "%02x ", in->bytes[i]);
	snprintf(buf + n, size - n, "(%s)", emu_describe(in, d, sizeof(d)));
	return buf;
}

/*
 * Describes where emu and cpu differ into buf; returns the number of
 * differences. eflags is compared whole, AF included even after the logical
 * ops, where the architecture leaves it undefined: emu.c clears it as Intel
 * and AMD CPUs do, and a CPU that did otherwise would fail here, not pass.
 */
static int
result_diff(const struct user_regs_struct *start, char *buf, size_t size)
{
	struct user_regs_struct e = emu_res.regs, c = cpu_res.regs;
	size_t n = 0;
	int diffs = 0;

	for (int i = 0; i < 16; i++) {
		if (*reg_ptr(&e, i) == *reg_ptr(&c, i))
			continue;
		diffs++;
		n += snprintf(buf + n, size - n, "#   %s: start %#llx emu %#llx cpu %#llx\n", reg_names[i],
			      *reg_ptr((struct user_regs_struct *)start, i), *reg_ptr(&e, i), *reg_ptr(&c, i));
	}
	if (e.rip != c.rip || e.eflags != c.eflags) {
		diffs++;
		n += snprintf(buf + n, size - n, "#   rip emu %#llx cpu %#llx; eflags start %#llx emu %#llx cpu %#llx\n",
			      e.rip, c.rip, start->eflags, e.eflags, c.eflags);
	}
	/* The rest (segments, fs_base, orig_rax) must match too; no one should touch them. */
	e.rip = c.rip, e.eflags = c.eflags;
	for (int i = 0; i < 16; i++)
		*reg_ptr(&e, i) = *reg_ptr(&c, i);
	if (memcmp(&e, &c, sizeof(e)) != 0 && size > n)
		diffs++, n += snprintf(buf + n, size - n, "#   other user_regs_struct fields differ\n");
	for (size_t i = 0; i < ARENA_SIZE; i++)
		if (emu_res.mem[i] != cpu_res.mem[i]) {
			if (size > n)
				snprintf(buf + n, size - n, "#   memory differs first at arena+%#zx: emu %02x cpu %02x\n",
					 i, emu_res.mem[i], cpu_res.mem[i]);
			diffs++;
			break;
		}
	return diffs;
}

/* Puts code at at, padded with int3s, writing to the child only what changed. */
static void
code_place(uint64_t at, const uint8_t *code, size_t n)
{
	uint8_t b[16];

	memset(b, 0xcc, sizeof(b));
	memcpy(b, code, n);
	if (memcmp(image + (at - arena), b, sizeof(b)) == 0)
		return;
	memcpy(image + (at - arena), b, sizeof(b));
	if (!arena_dirty && child_write(NULL, at, b, sizeof(b)) < 0)
		arena_dirty = 1;
}

/* Decodes what the child will run at at; image mirrors its arena once arena_dirty is clear. */
static int
check_decode(uint64_t at, const uint8_t *code, size_t n, struct jt_insn *in, char *text, size_t size)
{
	uint8_t bytes[16];

	if (code)
		memcpy(bytes, image + (at - arena), sizeof(bytes));
	else if (child_read(NULL, at, bytes, sizeof(bytes)) < 0)
		bytes[0] = 0x06;	/* invalid: fails below */
	if (emu_decode(in, at, bytes, sizeof(bytes)) < 0) {
		grp_fail("#   cannot read or decode the code at %#llx\n", (unsigned long long)at);
		return -1;
	}
	insn_text(in, text, size);
	if (!in->supported || (code && in->len != n)) {
		grp_fail("#   %s: supported %d len %d (want %zu)\n", text, in->supported, in->len, n);
		return -1;
	}
	return 0;
}

/*
 * The heart of the test: runs the instruction at at (placing code there first
 * unless it is NULL) from start, once through emu_decode/emu_exec and once on
 * the CPU, each from the same memory image, and compares everything.
 */
static void
check_at(uint64_t at, const uint8_t *code, size_t n, struct user_regs_struct start)
{
	char text[256], diff[1536];
	struct jt_insn in;
	const char *why;
	enum step step;
	int sig;

	grp.n.cases++;
	if (code)
		code_place(at, code, n);
	if (arena_dirty)
		arena_reset();
	if (check_decode(at, code, n, &in, text, sizeof(text)) < 0)
		return;
	start.rip = at;
	start.orig_rax = -1;
	why = start_invalid(&start);
	if (why) {
		grp_invalid("#   %s: %s (rsp %#llx, eflags %#llx)\n", text, why, start.rsp, start.eflags);
		return;
	}
	emu_res.regs = start;
	if (emu_exec(&in, &emu_res.regs, &child_ops) < 0) {
		grp_fail("#   %s: emu_exec failed\n", text);
		return;
	}
	arena_snapshot(emu_res.mem);
	if (arena_dirty)
		arena_reset();
	step = cpu_try(&start, &cpu_res.regs, &sig);
	if (step != STEP_DONE) {
		if (step == STEP_REFUSED)
			grp_refused("#   %s: stopped with signal %d before it ran, as a nop did from the same "
				    "registers (rsp %#llx, eflags %#llx)\n", text, sig, start.rsp, start.eflags);
		else
			grp_fail("#   %s: the CPU stopped with signal %d\n", text, sig);
		return;
	}
	arena_snapshot(cpu_res.mem);
	if (result_diff(&start, diff, sizeof(diff)) > 0)
		grp_fail("#   %s\n%s", text, diff);
}

static void
check(const uint8_t *code, size_t n, struct user_regs_struct start)
{
	check_at(AT, code, n, start);
}

/* ---- an encoder, just big enough for the forms under test ---- */

struct code {
	uint8_t b[16];
	size_t n;
};

enum { RM_REG, RM_MEM, RM_RIP };

/* The r/m operand: a register, [base + index * scale + disp] (-1: none), or [rip + target - end]. */
struct rm {
	int kind, reg, base, index, scale;
	int64_t disp;
};

#define RMREG(r)		((struct rm){ RM_REG, (r), -1, -1, 1, 0 })
#define RMMEM(b, i, s, d)	((struct rm){ RM_MEM, -1, (b), (i), (s), (d) })
#define RMRIP(target)		((struct rm){ RM_RIP, -1, -1, -1, 1, (int64_t)(target) })
#define DIGIT(n)		(0x100 | (n))	/* an opcode extension in modrm.reg */

/* A register's 3-bit field, noting the REX bits it needs. Registers 16-19 are ah..bh. */
static int
enc_reg(int r, int size, int *rex, int bit, int *need_rex, int *high)
{
	if (r >= 16) {
		*high = 1;
		return r - 16 + 4;
	}
	if (r & 8)
		*rex |= bit;
	if (size == 1 && r >= 4 && r < 8)
		*need_rex = 1;	/* spl, bpl, sil, dil */
	return r & 7;
}

/* modrm, sib and displacement for a memory operand; returns their length. */
static size_t
enc_mem(uint8_t *t, int regv, struct rm m, int *rex)
{
	int sib = m.index >= 0 || m.base < 0 || (m.base & 7) == 4;
	int32_t disp = (int32_t)m.disp;
	int mod = m.base < 0 || (disp == 0 && (m.base & 7) != 5) ? 0 : disp >= -128 && disp < 128 ? 1 : 2;
	size_t n = 0;

	t[n++] = (uint8_t)(mod << 6 | regv << 3 | (sib ? 4 : m.base & 7));
	if (sib) {
		int sc = m.scale == 8 ? 3 : m.scale == 4 ? 2 : m.scale == 2 ? 1 : 0;
		t[n++] = (uint8_t)(sc << 6 | (m.index < 0 ? 4 : m.index & 7) << 3 | (m.base < 0 ? 5 : m.base & 7));
	}
	if (m.index >= 0 && (m.index & 8))
		*rex |= 2;
	if (m.base >= 0 && (m.base & 8))
		*rex |= 1;
	if (mod == 1) {
		t[n++] = (uint8_t)disp;
	} else if (mod == 2 || m.base < 0) {
		memcpy(t + n, &disp, 4);
		n += 4;
	}
	return n;
}

/*
 * Encodes [66] [REX] opc modrm... imm for an instruction placed at at.
 * opc above 0xff is two bytes (0x0fxx). Returns -1 for combinations x86
 * cannot express (ah with a REX prefix) or a rip target out of reach.
 */
static int
enc(struct code *c, uint64_t at, int size, unsigned int opc, int reg, struct rm rm, int immsize, uint64_t imm)
{
	int rex = size == 8 ? 8 : 0, need_rex = 0, high = 0, regv, rip_off = -1;
	uint8_t t[8];
	size_t nt = 0;

	regv = reg & 0x100 ? reg & 7 : enc_reg(reg, size, &rex, 4, &need_rex, &high);
	if (rm.kind == RM_REG) {
		t[nt++] = (uint8_t)(0xc0 | regv << 3 | enc_reg(rm.reg, size, &rex, 1, &need_rex, &high));
	} else if (rm.kind == RM_RIP) {
		t[nt++] = (uint8_t)(0x05 | regv << 3);
		rip_off = (int)nt;
		nt += 4;
	} else {
		nt = enc_mem(t, regv, rm, &rex);
	}
	if (high && (rex || need_rex))
		return -1;
	c->n = 0;
	if (size == 2)
		c->b[c->n++] = 0x66;
	if (rex || need_rex)
		c->b[c->n++] = (uint8_t)(0x40 | rex);
	if (opc > 0xff)
		c->b[c->n++] = (uint8_t)(opc >> 8);
	c->b[c->n++] = (uint8_t)opc;
	if (rip_off >= 0)
		rip_off += (int)c->n;
	memcpy(c->b + c->n, t, nt);
	c->n += nt;
	memcpy(c->b + c->n, &imm, (size_t)immsize);
	c->n += (size_t)immsize;
	if (rip_off >= 0) {
		int64_t d = rm.disp - (int64_t)(at + c->n);
		int32_t d32 = (int32_t)d;

		if (d != d32)
			return -1;
		memcpy(c->b + rip_off, &d32, 4);
	}
	return 0;
}

/* Encodes and checks one case at AT; silently skips what x86 cannot encode. */
static void
check_enc(int size, unsigned int opc, int reg, struct rm rm, int immsize, uint64_t imm,
	  struct user_regs_struct start)
{
	struct code c;

	if (enc(&c, AT, size, opc, reg, rm, immsize, imm) == 0)
		check(c.b, c.n, start);
}

/* Puts a size-byte value into the memory image at addr. */
static void
image_put(uint64_t addr, const void *v, size_t size)
{
	memcpy(image + (addr - arena), v, size);
	arena_dirty = 1;
}

/* ---- the cases ---- */

static void
test_nops(void)
{
	static const struct { const char *name; uint8_t b[12]; size_t n; } nops[] = {
		{ "nop", { 0x90 }, 1 },
		{ "xchg ax,ax", { 0x66, 0x90 }, 2 },
		{ "rex.w nop", { 0x48, 0x90 }, 2 },
		{ "nopl (%rax)", { 0x0f, 0x1f, 0x00 }, 3 },
		{ "nopl 0(%rax)", { 0x0f, 0x1f, 0x40, 0x00 }, 4 },
		{ "nopl 0(%rax,%rax)", { 0x0f, 0x1f, 0x44, 0x00, 0x00 }, 5 },
		{ "nopw 0(%rax,%rax)", { 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 }, 6 },
		{ "nopl 0L(%rax)", { 0x0f, 0x1f, 0x80, 0, 0, 0, 0 }, 7 },
		{ "nopl 0L(%rax,%rax)", { 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0 }, 8 },
		{ "nopw 0L(%rax,%rax)", { 0x66, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0 }, 9 },
		{ "cs nopw", { 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0 }, 10 },
		{ "data16 cs nopw", { 0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0 }, 11 },
		{ "nopl with r8 base", { 0x41, 0x0f, 0x1f, 0x40, 0x00 }, 5 },
		{ "endbr64", { 0xf3, 0x0f, 0x1e, 0xfa }, 4 },
		/* Prefixes the CPU ignores on these instructions; capstone drops them too. */
		{ "rep add eax,ecx", { 0xf3, 0x01, 0xc8 }, 3 },
		{ "cs add rax,rcx", { 0x2e, 0x48, 0x01, 0xc8 }, 4 },
		{ "ds je (branch hint)", { 0x3e, 0x74, 0x10 }, 3 },
		{ "cs jne (branch hint)", { 0x2e, 0x75, 0x10 }, 3 },
	};

	for (size_t i = 0; i < sizeof(nops) / sizeof(nops[0]); i++) {
		for (int k = 0; k < 16; k++)
			check(nops[i].b, nops[i].n, regs_random());
		grp_end("%s", nops[i].name);
	}
}

static void
test_push_pop(void)
{
	struct user_regs_struct r;
	uint8_t b[3];

	for (int op = 0x50; op <= 0x58; op += 8) {
		for (int reg = 0; reg < 16; reg++)
			for (int k = 0; k < 8; k++) {
				size_t n = 0;

				r = regs_random();
				if (reg >= 8)
					b[n++] = 0x41;
				b[n++] = (uint8_t)(op + (reg & 7));
				check(b, n, r);
			}
		grp_end("%s r64, all 16 registers", op == 0x50 ? "push" : "pop");
	}
	for (size_t i = 0; i < NVALS; i++) {
		uint8_t p[5] = { 0x68 };
		uint32_t v = (uint32_t)vals[i];

		r = regs_random();
		b[0] = 0x6a, b[1] = (uint8_t)vals[i];
		check(b, 2, r);
		memcpy(p + 1, &v, 4);
		check(p, 5, r);
	}
	grp_end("push imm8, push imm32");
	for (int k = 0; k < 64; k++) {
		uint64_t v = rng_val();

		r = regs_random();
		image_put(D1 + 0x40, &v, 8);
		reg_set(&r, 3, 8, D1);
		check_enc(0, 0xff, DIGIT(6), RMMEM(3, -1, 1, 0x40), 0, 0, r);
		check_enc(0, 0xff, DIGIT(6), RMRIP(D1 + 0x40), 0, 0, r);
		check_enc(0, 0xff, DIGIT(6), RMMEM(4, -1, 1, 0x10), 0, 0, r);	/* push [rsp+16] */
	}
	grp_end("push qword [mem], push qword [rip+disp], push [rsp+disp]");
}

/* mov between all register pairs, both directions, at one size. */
static void
test_mov_rr(int size)
{
	int nregs = size == 1 ? 20 : 16;

	for (int d = 0; d < nregs; d++)
		for (int s = 0; s < nregs; s++) {
			check_enc(size, size == 1 ? 0x88 : 0x89, s, RMREG(d), 0, 0, regs_random());
			check_enc(size, size == 1 ? 0x8a : 0x8b, d, RMREG(s), 0, 0, regs_random());
		}
	grp_end("mov r%d, r%d: all register pairs, both encodings", size * 8, size * 8);
}

static void
test_mov_imm(void)
{
	for (int reg = 0; reg < 20; reg++)
		for (size_t i = 0; i < NVALS; i++) {
			struct user_regs_struct r = regs_random();
			uint64_t v = vals[i];
			uint8_t b[11];
			size_t n = 0;

			if (reg >= 16) {
				b[n++] = (uint8_t)(0xb4 + reg - 16), b[n++] = (uint8_t)v;	/* mov ah, imm8 */
				check(b, n, r);
				continue;
			}
			if (reg >= 8 || (reg >= 4 && reg < 8))
				b[n++] = reg >= 8 ? 0x41 : 0x40;
			b[n++] = (uint8_t)(0xb0 + (reg & 7)), b[n++] = (uint8_t)v;
			check(b, n, r);						/* mov r8, imm8 */
			n = 0;
			if (reg >= 8)
				b[n++] = 0x41;
			b[n++] = (uint8_t)(0xb8 + (reg & 7));
			memcpy(b + n, &v, 4);
			check(b, n + 4, r);					/* mov r32, imm32 */
			b[0] = reg >= 8 ? 0x49 : 0x48, b[1] = (uint8_t)(0xb8 + (reg & 7));
			memcpy(b + 2, &v, 8);
			check(b, 10, r);					/* movabs r64, imm64 */
			check_enc(8, 0xc7, DIGIT(0), RMREG(reg), 4, v, r);	/* mov r64, simm32 */
			check_enc(4, 0xc7, DIGIT(0), RMREG(reg), 4, v, r);
			check_enc(2, 0xc7, DIGIT(0), RMREG(reg), 2, v, r);
			check_enc(1, 0xc6, DIGIT(0), RMREG(reg), 1, v, r);
		}
	grp_end("mov r, imm: b0/b8/movabs/c6/c7 forms, 8-64 bit");
}

/*
 * Registers for [base + index * scale + disp] to land near D1 + 0x200: the
 * base points there and the index is small, or with no base, the index
 * (at scale 1) points there.
 */
static struct user_regs_struct
regs_mem(int base, int index)
{
	struct user_regs_struct r = regs_random();

	if (index >= 0)
		reg_set(&r, index, 8, base < 0 ? D1 + 0x200 : rng_next() % 16);
	if (base >= 0)
		reg_set(&r, base, 8, D1 + 0x200);
	return r;
}

/* mov loads, stores and immediate stores through every base and random indexes. */
static void
test_mov_mem(void)
{
	static const int64_t disps[] = { 0, 8, -8, 0x7f, -0x80, 0x100, -0x1f8 };

	for (int size = 1; size <= 8; size *= 2)
		for (int base = -1; base < 16; base++)
			for (int k = 0; k < 14; k++) {
				int index = k & 1 && base >= 0 ? -1 : (int)(rng_next() % 16);
				int scale = base < 0 ? 1 : 1 << (rng_next() % 4);
				int reg = (int)(rng_next() % (size == 1 ? 20 : 16)), r16 = reg - 16;
				struct rm m;

				if (index == 4 || index == base)
					index = base < 0 ? 0 : -1;
				if (reg == base || reg == index || r16 == base || r16 == index)
					continue;	/* keep the address registers intact for the CPU */
				m = RMMEM(base, index, scale, disps[k % 7]);
				check_enc(size, size == 1 ? 0x8a : 0x8b, reg, m, 0, 0, regs_mem(base, index));
				check_enc(size, size == 1 ? 0x88 : 0x89, reg, m, 0, 0, regs_mem(base, index));
				check_enc(size, size == 1 ? 0xc6 : 0xc7, DIGIT(0), m, size > 4 ? 4 : size, rng_val(),
					  regs_mem(base, index));
			}
	grp_end("mov loads and stores, [base+index*scale+disp], 8-64 bit");
}

/* mov with rip-relative, fs:, gs: and 64-bit absolute (moffs) operands. */
static void
test_mov_special(void)
{
	for (int k = 0; k < 64; k++) {
		struct user_regs_struct r = regs_random();
		uint64_t neg = D0 + 0x10 + (uint64_t)k * 8, pos = D1 + 0x300 + (uint64_t)k * 8;

		check_enc(8, 0x8b, k % 16, RMRIP(neg), 0, 0, r);
		check_enc(4, 0x8b, k % 16, RMRIP(pos), 0, 0, r);
		check_enc(8, 0x89, k % 16, RMRIP(pos), 0, 0, r);
		check_enc(1, 0xc6, DIGIT(0), RMRIP(neg), 1, rng_val(), r);
	}
	grp_end("mov with [rip+disp], both signs of disp");
	for (int k = 0; k < 16; k++) {
		static const uint8_t fs0[] = { 0x64, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0 };	/* mov rax, fs:[0] */
		static const uint8_t fs10[] = { 0x64, 0x8b, 0x0c, 0x25, 0x10, 0, 0, 0 };	/* mov ecx, fs:[0x10] */
		static const uint8_t gsrbx[] = { 0x65, 0x48, 0x8b, 0x03 };			/* mov rax, gs:[rbx] */
		static const uint8_t moffs_ops[][2] = { { 0x48, 0xa1 }, { 0x48, 0xa3 }, { 0x90, 0xa0 } };
		uint64_t a = D1 + (uint64_t)k * 8;
		struct user_regs_struct r = regs_random();

		check(fs0, sizeof(fs0), r);
		check(fs10, sizeof(fs10), r);
		reg_set(&r, 3, 8, a);
		if (kid.base.gs_base == 0)	/* then gs:[rbx] is plain [rbx] */
			check(gsrbx, sizeof(gsrbx), r);
		/* movabs rax, [a]; movabs [a], rax; movabs al, [a] (without REX, after a 0x90 we skip) */
		for (int i = 0; i < 3; i++) {
			uint8_t b[10];

			memcpy(b, moffs_ops[i], 2);
			memcpy(b + 2, &a, 8);
			check(b + (b[0] == 0x90), 10 - (b[0] == 0x90), r);
		}
	}
	grp_end("mov with fs:, gs: and moffs64 operands");
}

static void
test_lea(void)
{
	static const int64_t disps[] = { 0, 1, -1, 0x7f, -0x80, 0x1000, -0x12345678, 0x7fffffff };

	for (int size = 2; size <= 8; size *= 2) {
		for (int base = -1; base < 16; base++)
			for (int index = -1; index < 16; index++) {
				if (index == 4)
					continue;
				for (int k = 0; k < 3; k++) {
					int scale = 1 << (rng_next() % 4);
					int64_t disp = disps[rng_next() % 8];

					check_enc(size, 0x8d, (int)(rng_next() % 16), RMMEM(base, index, scale, disp), 0, 0,
						  regs_random());
				}
			}
		for (int k = 0; k < 32; k++) {
			int64_t off = (int64_t)(rng_next() % 0x7fff0000) - 0x3fff0000;

			check_enc(size, 0x8d, k % 16, RMRIP(AT + (uint64_t)off), 0, 0, regs_random());
		}
		grp_end("lea r%d, [base+index*scale+disp] and [rip+disp]", size * 8);
	}
	for (int k = 0; k < 16; k++) {
		/* A segment override does not reach lea: it yields the offset alone. */
		static const uint8_t fs[] = { 0x64, 0x48, 0x8d, 0x04, 0x25, 0x10, 0, 0, 0 };	/* lea rax, fs:[0x10] */
		static const uint8_t gs[] = { 0x65, 0x48, 0x8d, 0x43, 0x08 };		/* lea rax, gs:[rbx+8] */

		check(fs, sizeof(fs), regs_random());
		check(gs, sizeof(gs), regs_random());
	}
	grp_end("lea with fs: and gs: overrides");
}

/* The two-operand arithmetic ops: the r/m,r opcode (8-bit), the /digit of the immediate forms, al,imm8. */
static const struct aluop {
	const char *name;
	uint8_t op8;
	int digit;
	uint8_t acc8;
} aluops[] = {
	{ "add", 0x00, 0, 0x04 }, { "or", 0x08, 1, 0x0c }, { "and", 0x20, 4, 0x24 },
	{ "sub", 0x28, 5, 0x2c }, { "xor", 0x30, 6, 0x34 }, { "cmp", 0x38, 7, 0x3c },
	{ "test", 0x84, 0, 0xa8 },
};
#define NALU (sizeof(aluops) / sizeof(aluops[0]))

static int
is_test(const struct aluop *a)
{
	return a->op8 == 0x84;
}

/* op r, r: every pair of interesting values, then every pair of registers. */
static void
test_alu_rr(const struct aluop *a, int size)
{
	unsigned int opc = a->op8 + (size > 1);
	int nregs = size == 1 ? 20 : 16;

	for (size_t i = 0; i < NVALS; i++)
		for (size_t j = 0; j < NVALS; j++) {
			struct user_regs_struct r = regs_random();

			reg_set(&r, 3, size, vals[i]);
			reg_set(&r, 9, size, vals[j]);
			check_enc(size, opc, 9, RMREG(3), 0, 0, r);
			if (!is_test(a) && (i + j) % 3 == 0)
				check_enc(size, opc + 2, 3, RMREG(9), 0, 0, r);	/* the reg, r/m direction */
		}
	for (int d = 0; d < nregs; d++)
		for (int s = 0; s < nregs; s++)
			check_enc(size, opc, s, RMREG(d), 0, 0, regs_random());
	grp_end("%s r%d, r%d", a->name, size * 8, size * 8);
}

static const uint64_t imm8s[] = { 0, 1, 2, 0x0f, 0x10, 0x7f, 0x80, 0x81, 0xf0, 0xfe, 0xff };
static const uint64_t imm32s[] = { 0, 1, 0x7f, 0x80, 0xffff, 0x8000, 0x7fffffff, 0x80000000,
				   0xffffffff, 0x12345678, 0xfffffff0 };
#define NIMM (sizeof(imm8s) / sizeof(imm8s[0]))

/* One value pair through every immediate encoding of op at one register. */
static void
check_alu_imm(const struct aluop *a, int reg, uint64_t v, size_t k)
{
	struct user_regs_struct r = regs_random();
	int d = is_test(a) ? DIGIT(0) : DIGIT(a->digit);
	unsigned int op81 = is_test(a) ? 0xf7 : 0x81, op80 = is_test(a) ? 0xf6 : 0x80;

	for (int size = 1; size <= 8; size *= 2)
		reg_set(&r, reg, size, v);
	check_enc(1, op80, d, RMREG(reg), 1, imm8s[k], r);
	check_enc(2, op81, d, RMREG(reg), 2, imm32s[k], r);
	check_enc(4, op81, d, RMREG(reg), 4, imm32s[k], r);
	check_enc(8, op81, d, RMREG(reg), 4, imm32s[k], r);
	if (is_test(a))
		return;
	for (int size = 2; size <= 8; size *= 2)
		check_enc(size, 0x83, d, RMREG(reg), 1, imm8s[k], r);
}

static void
test_alu_imm(const struct aluop *a)
{
	static const int regs[] = { 0, 1, 3, 4, 5, 7, 8, 12, 15, 16, 19 };

	/* Every value against every immediate, rotating through the registers. */
	for (size_t i = 0; i < NVALS; i++)
		for (size_t k = 0; k < NIMM; k++)
			check_alu_imm(a, regs[(i * NIMM + k) % (sizeof(regs) / sizeof(regs[0]))], vals[i], k);
	grp_end("%s r, imm: 80/81/83 (or f6/f7) forms, 8-64 bit", a->name);
	for (size_t i = 0; i < NVALS; i++)
		for (size_t k = 0; k < NIMM; k++) {
			struct user_regs_struct r = regs_random();
			uint8_t b[8];

			r.rax = vals[i] ^ (rng_next() & ~0xffffffffULL);
			b[0] = a->acc8, b[1] = (uint8_t)imm8s[k];
			check(b, 2, r);
			b[0] = 0x66, b[1] = a->acc8 + 1;
			memcpy(b + 2, &imm32s[k], 2);
			check(b, 4, r);
			b[0] = 0x48;
			memcpy(b + 2, &imm32s[k], 4);
			check(b, 6, r);
			check(b + 1, 5, r);
		}
	grp_end("%s al/ax/eax/rax, imm (short forms)", a->name);
}

/* Arithmetic with a memory operand: op r, [mem] for all; op [mem], r and op [mem], imm for cmp/test. */
static void
test_alu_mem(const struct aluop *a)
{
	int d = is_test(a) ? DIGIT(0) : DIGIT(a->digit);
	unsigned int op81 = is_test(a) ? 0xf7 : 0x81, op80 = is_test(a) ? 0xf6 : 0x80;
	int ro = !is_test(a) && a->op8 != 0x38;	/* writes its destination */

	for (size_t i = 0; i < NVALS; i++)
		for (size_t j = i & 1; j < NVALS; j += 2) {
			struct user_regs_struct r = regs_mem(3, 6);
			uint64_t addr = D1 + 0x200 + *reg_ptr(&r, 6) * 4 + 0x10, v = vals[j];

			image_put(addr, &v, 8);
			for (int size = 1; size <= 8; size *= 2) {
				reg_set(&r, 9, size, vals[i]);
				if (!is_test(a))
					check_enc(size, a->op8 + 2 + (size > 1), 9, RMMEM(3, 6, 4, 0x10), 0, 0, r);
				if (ro)
					continue;
				check_enc(size, a->op8 + (size > 1), 9, RMMEM(3, 6, 4, 0x10), 0, 0, r);
				check_enc(size, size == 1 ? op80 : op81, d, RMMEM(3, 6, 4, 0x10),
					  size == 8 ? 4 : size, imm32s[j % NIMM], r);
				check_enc(size, size == 1 ? op80 : op81, d, RMRIP(addr), size == 8 ? 4 : size,
					  imm32s[i % NIMM], r);
				if (!is_test(a) && size > 1)
					check_enc(size, 0x83, d, RMRIP(addr), 1, imm8s[i % NIMM], r);
			}
		}
	grp_end("%s with memory operands (rip-relative and base+index*scale+disp)", a->name);
}

/* glibc's `cmpb $0x0,disp(%rip)` and friends, with negative displacements too. */
static void
test_cmp_rip(void)
{
	for (int size = 1; size <= 8; size *= 2)
		for (size_t i = 0; i < NVALS; i++)
			for (size_t k = 0; k < NIMM; k++) {
				uint64_t addr = k & 1 ? D0 + 0x88 : D1 + 0x488;

				image_put(addr, &vals[i], 8);
				check_enc(size, size == 1 ? 0x80 : 0x81, DIGIT(7), RMRIP(addr),
					  size == 8 ? 4 : size, size == 1 ? imm8s[k] : imm32s[k], regs_random());
				if (size > 1)
					check_enc(size, 0x83, DIGIT(7), RMRIP(addr), 1, imm8s[k], regs_random());
			}
	grp_end("cmp byte/word/dword/qword [rip+disp], imm");
}

/* A canonical user address for indirect branch targets (others fault on the CPU, see emu.c). */
static uint64_t
rng_target(void)
{
	return rng_next() & 0x7ffffffff000ULL;
}

/*
 * rel, or -rel when a branch of up to 6 bytes at AT would land on a
 * non-canonical address: that happens when the arena lies within 2 GiB of
 * the top of user space (with ASLR off, setarch -R), and then Intel faults
 * at the branch, AMD at the target, and a CPU with 57-bit addresses not at
 * all.
 */
static int32_t
rel_canonical(int32_t rel)
{
	return addr_canonical(AT + 6 + (uint64_t)(int64_t)rel) ? rel : -rel;
}

static void
test_branches(void)
{
	static const int32_t rels[] = { 0, 1, -2, 0x7f, -0x80, 0x1000, -0x1000, 0x7ffff000, -0x7ffff000 };

	for (size_t i = 0; i < sizeof(rels) / sizeof(rels[0]); i++) {
		int32_t rel = rel_canonical(rels[i]);
		uint8_t b[6];

		b[0] = 0xeb, b[1] = (uint8_t)rel;
		check(b, 2, regs_random());
		b[0] = 0xe9, memcpy(b + 1, &rel, 4);
		check(b, 5, regs_random());
		b[0] = 0xe8;
		check(b, 5, regs_random());
		b[0] = 0xf2, b[1] = 0xe9, memcpy(b + 2, &rel, 4);	/* bnd jmp */
		check(b, 6, regs_random());
	}
	grp_end("jmp rel8/rel32, call rel32, bnd jmp");
	for (int k = 0; k < 64; k++) {
		static const uint8_t ret[] = { 0xc3 }, rep_ret[] = { 0xf3, 0xc3 }, bnd_ret[] = { 0xf2, 0xc3 };
		static const uint8_t notrack[] = { 0x3e, 0xff, 0xe0 };	/* notrack jmp rax */
		uint8_t reti[3] = { 0xc2, (uint8_t)(k * 8), (uint8_t)(k & 1 ? 0xff : 0) };
		uint64_t t = rng_target();
		struct user_regs_struct r = regs_random();

		image_put(r.rsp, &t, 8);
		image_put(D1 + 0x40, &t, 8);
		check(ret, 1, r);
		check(rep_ret, 2, r);
		check(bnd_ret, 2, r);
		check(reti, 3, r);
		reg_set(&r, 0, 8, t);
		if (k % 16 != 4) {
			reg_set(&r, k % 16, 8, t);
			check_enc(0, 0xff, DIGIT(4), RMREG(k % 16), 0, 0, r);	/* jmp r */
			check_enc(0, 0xff, DIGIT(2), RMREG(k % 16), 0, 0, r);	/* call r */
		}
		check(notrack, 3, r);
		check_enc(0, 0xff, DIGIT(4), RMRIP(D1 + 0x40), 0, 0, r);	/* jmp [rip] */
		check_enc(0, 0xff, DIGIT(2), RMRIP(D1 + 0x40), 0, 0, r);	/* call [rip] */
		check_enc(0, 0xff, DIGIT(2), RMMEM(4, -1, 1, 0), 0, 0, r);	/* call [rsp] */
	}
	grp_end("ret, ret imm16, jmp/call via register and memory");
}

/* Every condition against all 64 combinations of the arithmetic flags. */
static void
test_jcc(void)
{
	static const unsigned long long flag[6] = { X86_FL_CF, X86_FL_PF, X86_FL_AF, X86_FL_ZF, X86_FL_SF, X86_FL_OF };
	static const char *const names[16] = { "jo", "jno", "jb", "jae", "je", "jne", "jbe", "ja",
					       "js", "jns", "jp", "jnp", "jl", "jge", "jle", "jg" };

	for (int cc = 0; cc < 16; cc++) {
		for (int f = 0; f < 64; f++) {
			struct user_regs_struct r = regs_random();
			uint8_t b8[2] = { (uint8_t)(0x70 + cc), (uint8_t)(f & 1 ? 0x10 : 0xe0) };
			uint8_t b32[6] = { 0x0f, (uint8_t)(0x80 + cc) };
			int32_t rel = f & 2 ? 0x12345 : -0x1000;

			r.eflags = FL_BASE;
			for (int i = 0; i < 6; i++)
				if (f & (1 << i))
					r.eflags |= flag[i];
			memcpy(b32 + 2, &rel, 4);
			check(b8, 2, r);
			check(b32, 6, r);
		}
		grp_end("%s rel8/rel32 under all flag combinations", names[cc]);
	}
}

/* ---- what must not be emulated ---- */

static void
test_unsupported(void)
{
	static const struct { const char *name; uint8_t b[8]; size_t n; } u[] = {
		{ "syscall", { 0x0f, 0x05 }, 2 }, { "div rcx", { 0x48, 0xf7, 0xf1 }, 3 },
		{ "imul rax,rcx", { 0x48, 0x0f, 0xaf, 0xc1 }, 4 }, { "adc rax,rcx", { 0x48, 0x11, 0xc8 }, 3 },
		{ "sbb rax,rcx", { 0x48, 0x19, 0xc8 }, 3 }, { "cpuid", { 0x0f, 0xa2 }, 2 },
		{ "lock add [rbx],rax", { 0xf0, 0x48, 0x01, 0x03 }, 4 }, { "add [rbx],rax", { 0x48, 0x01, 0x03 }, 3 },
		{ "rep stosb", { 0xf3, 0xaa }, 2 }, { "movzx eax,cl", { 0x0f, 0xb6, 0xc1 }, 3 },
		{ "xchg rax,rcx", { 0x48, 0x87, 0xc8 }, 3 }, { "cmove rax,rcx", { 0x48, 0x0f, 0x44, 0xc1 }, 4 },
		{ "sete al", { 0x0f, 0x94, 0xc0 }, 3 }, { "inc rax", { 0x48, 0xff, 0xc0 }, 3 },
		{ "push ax", { 0x66, 0x50 }, 2 }, { "push imm16", { 0x66, 0x6a, 0xff }, 3 },
		{ "lea rax,[eax+ebx]", { 0x67, 0x48, 0x8d, 0x04, 0x18 }, 5 }, { "mov eax,ds", { 0x8c, 0xd8 }, 2 },
		{ "pause", { 0xf3, 0x90 }, 2 }, { "pushf", { 0x9c }, 1 }, { "leave", { 0xc9 }, 1 },
		{ "shl rax,4", { 0x48, 0xc1, 0xe0, 0x04 }, 4 }, { "pop [rax]", { 0x8f, 0x00 }, 2 },
		{ "jrcxz", { 0xe3, 0x10 }, 2 }, { "loop", { 0xe2, 0x10 }, 2 }, { "int3", { 0xcc }, 1 },
		{ "ljmp [rax]", { 0xff, 0x28 }, 2 }, { "mov rax,cr0", { 0x0f, 0x20, 0xc0 }, 3 },
		{ "jmp [eax]", { 0x67, 0xff, 0x20 }, 3 },
	};
	struct user_regs_struct r = regs_random(), r2;
	struct jt_insn in;

	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		uint8_t b[16];
		int rc;

		memset(b, 0x90, sizeof(b));
		memcpy(b, u[i].b, u[i].n);
		rc = emu_decode(&in, AT, b, sizeof(b));
		r2 = r;
		ops_calls = 0;
		ok(rc == 0 && !in.supported && in.len == u[i].n && emu_exec(&in, &r2, &probe_ops) == -1 &&
		   memcmp(&r, &r2, sizeof(r)) == 0 && ops_calls == 0,
		   "%s: decoded (len %d), not emulated, emu_exec -1 leaves regs alone", u[i].name, in.len);
	}
}

static void
test_undecodable(void)
{
	static const uint8_t trunc_call[] = { 0xe8, 0x00 }, esc[] = { 0x0f }, bad[] = { 0x06 };
	struct jt_insn in;

	ok(emu_decode(&in, AT, trunc_call, sizeof(trunc_call)) == -1, "truncated call: emu_decode -1");
	ok(emu_decode(&in, AT, esc, sizeof(esc)) == -1, "lone 0x0f: emu_decode -1");
	ok(emu_decode(&in, AT, bad, sizeof(bad)) == -1, "push es (invalid in 64-bit mode): emu_decode -1");
}

/* A failed memory access leaves the registers exactly as they were. */
static void
test_mem_failure(void)
{
	static const struct { const char *name; uint8_t b[8]; size_t n; int wr; } f[] = {
		{ "cmp byte [rip],0", { 0x80, 0x3d, 0, 0, 0, 0, 0 }, 7, 0 },
		{ "push rbx", { 0x53 }, 1, 1 }, { "pop rbx", { 0x5b }, 1, 0 },
		{ "call rel32", { 0xe8, 0, 0, 0, 0 }, 5, 1 }, { "ret", { 0xc3 }, 1, 0 },
		{ "mov [rbx],rax", { 0x48, 0x89, 0x03 }, 3, 1 }, { "mov rax,[rbx]", { 0x48, 0x8b, 0x03 }, 3, 0 },
		{ "jmp [rip]", { 0xff, 0x25, 0, 0, 0, 0 }, 6, 0 }, { "add rax,[rbx]", { 0x48, 0x03, 0x03 }, 3, 0 },
		{ "call [rbx]", { 0xff, 0x13 }, 2, 0 }, { "call [rbx] (push fails)", { 0xff, 0x13 }, 2, 1 },
	};
	struct user_regs_struct r = regs_mem(3, -1), r2;
	struct jt_insn in;

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		r2 = r;
		ops_fail_read = !f[i].wr, ops_fail_write = f[i].wr;
		ok(emu_decode(&in, AT, f[i].b, f[i].n) == 0 && in.supported &&
		   emu_exec(&in, &r2, &probe_ops) == -1 && memcmp(&r, &r2, sizeof(r)) == 0,
		   "%s: failing %s gives -1, regs unchanged", f[i].name, f[i].wr ? "write" : "read");
	}
	ops_fail_read = ops_fail_write = 0;
}

static void
test_misc(void)
{
	static const uint8_t nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 }, push[] = { 0x41, 0x54 };
	struct user_regs_struct r = regs_random();
	struct jt_insn in;
	char buf[96];

	/* The tracer calls emu_exec with rip just past the int3; only insn->addr counts. */
	r.rip = AT + 1;
	ok(emu_decode(&in, AT, nop5, sizeof(nop5)) == 0 && emu_exec(&in, &r, &child_ops) == 0 && r.rip == AT + 5,
	   "emu_exec takes the address from the insn, not from regs->rip");
	ok(emu_decode(&in, 0x1234, push, sizeof(push)) == 0 && memcmp(in.bytes, push, 2) == 0 && in.addr == 0x1234,
	   "emu_decode keeps the original bytes and address");
	emu_describe(&in, buf, sizeof(buf));
	ok(strstr(buf, "push") && strstr(buf, "r12"), "emu_describe: %s", buf);
	emu_describe(&in, buf, 4);
	ok(strlen(buf) == 3, "emu_describe truncates to the buffer");
}

/*
 * The harness itself, since this host may resume any state: a start state
 * not every CPU resumes is caught before it runs, and one the kernel will
 * not resume is told apart from an instruction that faults.
 */
static void
test_harness(void)
{
	static const uint8_t nop[] = { 0x90 }, load[] = { 0x48, 0x8b, 0x03 };	/* mov rax, [rbx] */
	struct user_regs_struct r = regs_random(), bad, out;
	enum step step;
	int sig;

	r.rip = AT;
	ok(start_invalid(&r) == NULL, "a random start state is valid on any x86-64 CPU");
	bad = r, bad.rsp = 0x8000000000000000ULL;
	ok(start_invalid(&bad) != NULL, "one with a non-canonical rsp is not: %s", start_invalid(&bad));
	reg_set(&bad, 4, 8, 0x7fffffffffffffffULL);
	ok(bad.rsp == ~0ULL && start_invalid(&bad) == NULL, "reg_set keeps rsp canonical (%#llx)", bad.rsp);
	bad = r, bad.rip = 0x0000800000000000ULL;
	ok(start_invalid(&bad) != NULL, "nor one with a non-canonical rip: %s", start_invalid(&bad));
	bad = r, bad.eflags |= 0x100;
	ok(start_invalid(&bad) != NULL, "nor one with TF set: %s", start_invalid(&bad));
	bad = r, bad.eflags |= 0x40000;
	ok(start_invalid(&bad) != NULL, "nor one with AC set: %s", start_invalid(&bad));
	bad = r, bad.fs_base = 1ULL << 63;
	ok(start_invalid(&bad) != NULL, "nor one with another fs base: %s", start_invalid(&bad));

	code_place(AT, nop, sizeof(nop));
	if (arena_dirty)
		arena_reset();
	ok(cpu_try(&r, &out, &sig) == STEP_DONE && out.rip == AT + 1, "a nop steps");
	ok(cpu_try(&bad, &out, &sig) == STEP_REFUSED, "a state PTRACE_SETREGS refuses counts as refused");
	code_place(AT, load, sizeof(load));
	r.rbx = 8;
	step = cpu_try(&r, &out, &sig);
	ok(step == STEP_FAULT && sig == SIGSEGV && out.rip == AT,
	   "an instruction that faults counts as a fault, not as refused (signal %d)", sig);
}

/* ---- the allocators' real first instructions ---- */

/* Looks name up in path's .dynsym and copies the first 16 bytes of its code; returns its address or 0. */
static uint64_t
elf_sym_code(const char *path, const char *name, uint8_t code[16])
{
	uint64_t value = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf *e;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && !value && (scn = elf_nextscn(e, scn)) != NULL) {
		Elf_Data *d = elf_getdata(scn, NULL);
		GElf_Sym s;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !d)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize && !value; i++) {
			const char *n;

			if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF || GELF_ST_TYPE(s.st_info) != STT_FUNC)
				continue;
			n = elf_strptr(e, sh.sh_link, s.st_name);
			if (n && strcmp(n, name) == 0)
				value = s.st_value;
		}
	}
	scn = NULL;
	while (e && value && (scn = elf_nextscn(e, scn)) != NULL) {
		Elf_Data *d = elf_getdata(scn, NULL);

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS && d && d->d_buf &&
		    value >= sh.sh_addr && value + 16 <= sh.sh_addr + d->d_size) {
			memcpy(code, (uint8_t *)d->d_buf + (value - sh.sh_addr), 16);
			break;
		}
	}
	if (!scn)
		value = 0;
	elf_end(e);
	close(fd);
	return value;
}

/* Where soname is loaded in us, and so in the child forked from us. */
static uint64_t
lib_base(const char *soname)
{
	struct link_map *lm = NULL;
	void *h = dlopen(soname, RTLD_NOW);

	if (!h || dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || !lm)
		return 0;
	return lm->l_addr;
}

static void
test_real(const char *path, uint64_t base, const char *name)
{
	uint8_t file[16], live[16];
	uint64_t value = elf_sym_code(path, name, file), at = base + value;
	struct jt_insn in;
	char text[256];

	if (!value || !base) {
		ok(0, "%s: found in %s's .dynsym and loaded", name, path);
		return;
	}
	if (child_read(NULL, at, live, 16) < 0 || memcmp(file, live, 16) != 0 || emu_decode(&in, at, file, 16) < 0) {
		ok(0, "%s: the file's bytes are the loaded bytes, and decode", name);
		return;
	}
	ok(in.supported, "%s: first instruction %s is emulated", name, insn_text(&in, text, sizeof(text)));
	for (int k = 0; k < 64; k++) {
		struct user_regs_struct r = regs_random();

		if (k < 8)
			r.rdi = (uint64_t)k - 4;	/* free(NULL), small sizes, -1 */
		check_at(at, NULL, 0, r);
	}
	grp_end("%s: first instruction in place in the child", name);
}

static void
test_allocators(void)
{
	static const char libc[] = "/lib/x86_64-linux-gnu/libc.so.6";
	static const char libstdcxx[] = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";
	static const char *const cfns[] = { "malloc", "calloc", "realloc", "free", "posix_memalign", "valloc",
					    "memalign", "pvalloc", "aligned_alloc", "reallocarray" };
	static const char *const cxxfns[] = { "_Znwm", "_Znam", "_ZdlPv", "_ZdaPv", "_ZdlPvm",
					      "_ZnwmRKSt9nothrow_t", "_ZnwmSt11align_val_t" };
	uint64_t cbase = lib_base("libc.so.6"), cxxbase = lib_base("libstdc++.so.6");

	for (size_t i = 0; i < sizeof(cfns) / sizeof(cfns[0]); i++)
		test_real(libc, cbase, cfns[i]);
	for (size_t i = 0; i < sizeof(cxxfns) / sizeof(cxxfns[0]); i++)
		test_real(libstdcxx, cxxbase, cxxfns[i]);
}

static int
setup(void)
{
	void *p;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	signal(SIGALRM, on_alarm);
	/* libstdc++ must be in the child too, so its operator new can run in place. */
	if (!dlopen("libstdc++.so.6", RTLD_NOW))
		return -1;
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

int
main(void)
{
	if (setup() < 0) {
		printf("Bail out! cannot start the traced child: %s\n", strerror(errno));
		child_stop();
		return 1;
	}
	test_nops();
	test_push_pop();
	for (int size = 1; size <= 8; size *= 2)
		test_mov_rr(size);
	test_mov_imm();
	test_mov_mem();
	test_mov_special();
	test_lea();
	for (size_t i = 0; i < NALU; i++) {
		for (int size = 1; size <= 8; size *= 2)
			test_alu_rr(&aluops[i], size);
		test_alu_imm(&aluops[i]);
		test_alu_mem(&aluops[i]);
	}
	test_cmp_rip();
	test_branches();
	test_jcc();
	test_unsupported();
	test_undecodable();
	test_mem_failure();
	test_misc();
	test_allocators();
	test_harness();
	ok(total.invalid == 0 && total.refused == 0,
	   "all %d start states valid on any x86-64 CPU (%d were not), and this one resumed each (%d refused)",
	   total.cases, total.invalid, total.refused);
	alarm(0);
	child_stop();
	return tap_done();
}
