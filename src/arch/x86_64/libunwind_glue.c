/* libunwind_glue.c - the x86-64 spelling of libunwind's table search, and its register numbers mapped onto arch_regs. */
#include <string.h>

#include "dwarf_regs.h"
#include "libunwind_glue.h"

/* Not in libunwind's headers, but exported by libunwind-x86_64 (1.6.2). */
extern int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t as, unw_word_t ip,
	unw_dyn_info_t *di, unw_proc_info_t *pi, int need_unwind_info, void *arg);

/* libunwind numbers UNW_X86_64_RAX..UNW_X86_64_RIP as DWARF does. */
_Static_assert(UNW_X86_64_RIP + 1 == ARCH_DWARF_NREGS, "libunwind register order");
_Static_assert(UNW_X86_64_RSP == ARCH_DWARF_SP && UNW_X86_64_RBX == 3, "libunwind register order");

int
arch_lu_search_table(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t *di, unw_proc_info_t *pi,
		     int need_unwind_info, void *arg)
{
	return _Ux86_64_dwarf_search_unwind_table(as, ip, di, pi, need_unwind_info, arg);
}

int
arch_lu_reg(const arch_regs *regs, unw_regnum_t reg, unw_word_t *val)
{
	if (reg < 0 || reg > UNW_X86_64_RIP)
		return -UNW_EBADREG;
	*val = arch_dwarf_reg(regs, reg);
	return 0;
}

void
arch_lu_regs_of(unw_cursor_t *cur, arch_regs *regs)
{
	unw_word_t v;

	memset(regs, 0, sizeof(*regs));
	for (int i = 0; i < ARCH_DWARF_NREGS; i++)
		if (unw_get_reg(cur, i, &v) == 0)
			memcpy((char *) regs + arch_dwarf_offset[i], &v, sizeof(v));
}
