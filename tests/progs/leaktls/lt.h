/* lt.h - leaktls: blocks held only by threads that are alive and blocked when the program exits. */
#ifndef JT_PROGS_LT_H
#define JT_PROGS_LT_H

#define LT_TLS_SIZE 136		/* still reachable: only a __thread variable of a blocked thread points at it */
#define LT_REG_SIZE 152		/* still reachable: only register r12 of a blocked thread points at it */
#define LT_MAIN_TLS_SIZE 168	/* still reachable: only a __thread variable of the main thread points at it */
#define LT_DEAD_SIZE 184	/* definitely lost: only the stack of a thread that has ended points at it */

/* The block, stored only in this thread's own __thread slot (lt_tls.c). */
void lt_tls(void);
/* The block; the caller keeps it only in a register (lt_register.c). */
void *lt_register(void);
/* The block, stored only in the main thread's __thread slot (lt_main_tls.c). */
void lt_main_tls(void);
/* The block, kept in a local of the calling thread, which then ends (lt_dead.c). */
void lt_dead(void);

/*
 * Blocks the calling thread for good in a raw pause(2), with `keep` in r12, the scratch
 * registers and the red zone below the stack pointer (which a leak scan reads, as memcheck
 * does) zeroed: no stale pointer from malloc's frames is left where the scan looks, so the
 * block is found through r12 (or the __thread variable) or not at all.
 */
static inline __attribute__((noreturn, always_inline)) void
lt_park(void *keep)
{
	register void *held __asm__("r12") = keep;

	for (;;)
		__asm__ volatile("lea -128(%%rsp), %%rdi\n\txor %%eax, %%eax\n\tmov $16, %%ecx\n\t"
				 "rep stosq\n\t" /* the red zone: 16 words below rsp */
				 "xor %%edi, %%edi\n\txor %%esi, %%esi\n\txor %%edx, %%edx\n\t"
				 "xor %%r8d, %%r8d\n\txor %%r9d, %%r9d\n\txor %%r10d, %%r10d\n\t"
				 "mov $34, %%eax\n\tsyscall" /* 34: SYS_pause on x86-64 */
				 : : "r"(held)
				 : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "memory");
}

#endif
