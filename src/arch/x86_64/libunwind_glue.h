/* libunwind_glue.h - what the libunwind backend needs that libunwind spells per architecture: its table search and register numbers both ways (the contract every src/arch/<arch>/libunwind_glue.h fills). */
#ifndef JT_ARCH_LIBUNWIND_GLUE_H
#define JT_ARCH_LIBUNWIND_GLUE_H

#include <libunwind.h>

#include "arch.h"

/*
 * libunwind's dwarf_search_unwind_table for this architecture: looks ip
 * up in the remote .eh_frame_hdr-style table di describes, as the
 * find_proc_info accessor must. Same contract and results as libunwind's.
 */
int arch_lu_search_table(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t *di, unw_proc_info_t *pi,
			 int need_unwind_info, void *arg);

/*
 * The access_reg accessor's read: stores register reg (libunwind's
 * numbering) of regs in *val. Returns 0, or -UNW_EBADREG for a register
 * arch_regs does not hold.
 */
int arch_lu_reg(const arch_regs *regs, unw_regnum_t reg, unw_word_t *val);

/*
 * The registers libunwind's cursor cur holds for its frame, into *regs
 * (zeroed first): the ones it cannot give, such as registers a call does
 * not keep, stay 0.
 */
void arch_lu_regs_of(unw_cursor_t *cur, arch_regs *regs);

#endif
