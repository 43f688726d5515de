/* bpf_regs.h - where the BPF program finds perf's registers in x86-64's struct pt_regs (its UAPI layout). */
#ifndef JT_ARCH_BPF_REGS_H
#define JT_ARCH_BPF_REGS_H

/*
 * Byte offsets into the x86-64 struct pt_regs a uprobe program gets as its
 * context (asm/ptrace.h: r15 r14 r13 r12 bp bx r11 r10 r9 r8 ax cx dx si di
 * orig_ax ip cs flags sp ss), listed in perf_event_x86_regs' order of each
 * mask of perf_regs.h, so that the reader decodes a record as a perf sample
 * (arch_regs_from_perf). X(offset) is applied to each.
 */
#define ARCH_BPF_REGS_FULL(X)	X(80) X(40) X(88) X(96) X(104) X(112) X(32) X(152) X(128) X(144) \
				X(72) X(64) X(56) X(48) X(24) X(16) X(8) X(0)
#define ARCH_BPF_REGS_FULL_N	18
/* Where ARCH_BPF_REGS_FULL puts the first argument (di) and the stack pointer. */
#define ARCH_BPF_FULL_ARG0	5
#define ARCH_BPF_FULL_SP	7
/* ARCH_PERF_REGS_RET_MASK: ax, sp, ip. */
#define ARCH_BPF_REGS_RET(X)	X(80) X(152) X(128)
#define ARCH_BPF_REGS_RET_N	3
/* ARCH_PERF_REGS_FREE_MASK: si, di, bp, sp, ip. */
#define ARCH_BPF_REGS_FREE(X)	X(104) X(112) X(32) X(152) X(128)
#define ARCH_BPF_REGS_FREE_N	5

/* What a return takes off the stack: the return address (arch_sp_after_ret). */
#define ARCH_BPF_RET_POP	8

/* sizeof(struct pt_regs), the bytes the offsets above fall in. */
#define ARCH_BPF_PT_REGS_SIZE	168

/* The stack pointer's offset, where the stack copy starts; the instruction pointer's; the first argument's. */
#define ARCH_BPF_SP		152
#define ARCH_BPF_IP		128
#define ARCH_BPF_ARG0		112

#endif
