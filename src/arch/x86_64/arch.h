/* arch.h - the x86-64 facts the tracer needs: trap byte, argument/return registers, stack slot of the return address (the contract every src/arch/<arch>/arch.h fills). */
#ifndef JT_ARCH_H
#define JT_ARCH_H

#include <elf.h>
#include <stdint.h>
#include <string.h>
#include <sys/user.h>

/* The programs jmptrace traces: their ELF class, byte order and e_machine, and a name. */
#define ARCH_ELF_CLASS ELFCLASS64
#define ARCH_ELF_DATA ELFDATA2LSB
#define ARCH_ELF_MACHINE EM_X86_64
#define ARCH_NAME "x86-64"

#define ARCH_TRAP_BYTE 0xCC
/* After an int3 the pc points one past the trap byte. */
#define ARCH_TRAP_PC_ADJUST 1

typedef struct user_regs_struct arch_regs;

/* The arithmetic flag bits of eflags (what emulated instructions may change). */
#define X86_FL_CF	0x001
#define X86_FL_PF	0x004
#define X86_FL_AF	0x010
#define X86_FL_ZF	0x040
#define X86_FL_SF	0x080
#define X86_FL_OF	0x800
#define X86_FL_ARITH	(X86_FL_CF | X86_FL_PF | X86_FL_AF | X86_FL_ZF | X86_FL_SF | X86_FL_OF)

static inline uint64_t arch_pc(const arch_regs *r) { return r->rip; }
static inline void arch_set_pc(arch_regs *r, uint64_t pc) { r->rip = pc; }
static inline uint64_t arch_sp(const arch_regs *r) { return r->rsp; }
static inline uint64_t arch_retval(const arch_regs *r) { return r->rax; }
/* The thread pointer (TLS variant II: static TLS below it, the thread control block at it). */
static inline uint64_t arch_thread_pointer(const arch_regs *r) { return r->fs_base; }

/* The most words arch_root_words gives. */
#define ARCH_ROOT_WORDS 18

/*
 * The registers a leak check takes as root pointers, as memcheck does: the
 * general registers, and the segment bases (a thread pointer leads to TLS).
 * Fills w[0..ARCH_ROOT_WORDS) and returns the count.
 */
static inline unsigned
arch_root_words(const arch_regs *r, uint64_t *w)
{
	const uint64_t v[ARCH_ROOT_WORDS] = {
		r->rax, r->rbx, r->rcx, r->rdx, r->rsi, r->rdi, r->rbp, r->rsp, r->r8, r->r9,
		r->r10, r->r11, r->r12, r->r13, r->r14, r->r15, r->fs_base, r->gs_base,
	};

	for (unsigned i = 0; i < ARCH_ROOT_WORDS; i++)
		w[i] = v[i];
	return ARCH_ROOT_WORDS;
}

/* The integer arguments passed in registers (arch_arg's n is below it). */
#define ARCH_NARGS 6

/* SysV AMD64 integer argument n (0-based, up to 5). */
static inline uint64_t
arch_arg(const arch_regs *r, unsigned n)
{
	switch (n) {
	case 0: return r->rdi;
	case 1: return r->rsi;
	case 2: return r->rdx;
	case 3: return r->rcx;
	case 4: return r->r8;
	default: return r->r9;
	}
}

/*
 * User-space code lies in the lower canonical half, so bit 63 of a captured
 * pc is always clear and may carry a mark (unwind.h's UNWIND_PC_SIGNAL).
 */
#define ARCH_PC_MARK (1ull << 63)

/* Bytes arch_is_sigreturn looks at. */
#define ARCH_SIGRETURN_LEN 9

/*
 * Whether code is "mov $15,%rax; syscall" (rt_sigreturn): glibc's and
 * musl's __restore_rt, where a signal handler returns to the kernel's
 * signal frame.
 */
static inline int
arch_is_sigreturn(const uint8_t *code)
{
	static const uint8_t want[ARCH_SIGRETURN_LEN] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };

	return memcmp(code, want, sizeof(want)) == 0;
}

/* At a function's first instruction the return address is the word at the stack pointer. */
static inline uint64_t arch_ret_slot(const arch_regs *r) { return r->rsp; }

/* The stack pointer after a function returns whose return address was in slot (arch_ret_slot at its entry). */
static inline uint64_t arch_sp_after_ret(uint64_t slot) { return slot + 8; }

/* Setters for what the getters above read (a unit test builds a stopped thread's registers). */
static inline void arch_set_sp(arch_regs *r, uint64_t sp) { r->rsp = sp; }
static inline void arch_set_retval(arch_regs *r, uint64_t v) { r->rax = v; }
static inline void
arch_set_arg(arch_regs *r, unsigned n, uint64_t v)
{
	switch (n) {
	case 0: r->rdi = v; break;
	case 1: r->rsi = v; break;
	case 2: r->rdx = v; break;
	case 3: r->rcx = v; break;
	case 4: r->r8 = v; break;
	default: r->r9 = v; break;
	}
}

/* The kernel's struct sigaction for rt_sigaction (not the C library's): 64 signals. */
struct arch_ksigaction {
	uint64_t handler;
	uint64_t flags;
	uint64_t restorer;
	uint64_t mask;
};

#endif
