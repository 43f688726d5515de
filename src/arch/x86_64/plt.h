/* plt.h - which GOT slot a call went through, read from the code before its return address, and whether a pc is a PLT stub's jump (the contract every src/arch/<arch>/plt.h fills). */
#ifndef JT_PLT_H
#define JT_PLT_H

#include <stdint.h>
#include <sys/types.h>

#include "mem.h"

/*
 * Decodes the call instruction that returns to ret, its code read through
 * mem (the process's memory, or its modules' files: code does not change). When it
 * read its target from a GOT slot, directly (an indirect call through the
 * slot, as -fno-plt compiles) or through a PLT stub that jumps through the
 * slot, returns the slot's address; returns 0 for a direct call to the
 * function itself, anything else, or code that cannot be read.
 */
uint64_t plt_call_slot(const struct jt_mem_ops *mem, uint64_t ret);

/* Bytes plt_is_stub_jump looks at: "jmp *slot(%rip)" after endbr64 and a bnd prefix. */
#define PLT_STUB_JUMP_LEN 11

/*
 * Whether code, read at an exact pc (frame 0's, or the one a signal
 * interrupted), is a PLT stub's jump through its GOT slot, or an endbr64
 * before it. A stub does nothing else before that jump, so there the
 * stack is as at the entry of the function it leads to: the return
 * address on top, the registers the caller keeps as it left them. An
 * unwinder needs this where no CFI covers the stub: a static executable's
 * stubs into the ifunc-chosen memset or memcpy have none.
 */
int plt_is_stub_jump(const uint8_t code[PLT_STUB_JUMP_LEN]);

#endif
