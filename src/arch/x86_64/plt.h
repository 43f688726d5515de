/* plt.h - which GOT slot a call went through, read from the code before its return address (the contract every src/arch/<arch>/plt.h fills). */
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

#endif
