/* sym_dwarf.c - a pc's source frames from DWARF: the inline scopes that hold it, their call sites, and the line table. */
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "sym.h"
#include "sym_int.h"
#include "util.h"

/*
 * Returns the function name a DWARF scope DIE carries, demangled and
 * interned, or NULL. The linkage name is used only when it is a C++ one:
 * in C it is an asm label, such as glibc's "__GI___libc_malloc" for
 * __libc_malloc, and the source name reads better.
 */
static const char *
sym_die_function(struct jt_sym *s, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *linkage = NULL, *name;

	/* _integrate follows DW_AT_abstract_origin and DW_AT_specification. */
	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr)
	    || dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
		linkage = dwarf_formstring(&attr);
	name = dwarf_diename(die);
	if (linkage && (strncmp(linkage, "_Z", 2) == 0 || !name))
		return sym_intern_function(s, linkage);
	return name ? sym_intern(s, name) : NULL;
}

/* Stores the DW_AT_call_file/DW_AT_call_line of an inlined scope in f. */
static void
sym_call_site(struct jt_sym *s, Dwarf_Die *inl, Dwarf_Files *files, const char *comp_dir,
	      struct jt_frame *f)
{
	Dwarf_Attribute attr;
	Dwarf_Word file_idx, line;
	const char *file;

	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_line, &attr), &line) == 0)
		f->line = (int)line;
	if (!files || dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &attr), &file_idx) != 0)
		return;
	file = dwarf_filesrc(files, file_idx, NULL, NULL);
	if (file)
		f->file = sym_intern_file(s, comp_dir, file);
}

/*
 * Walks down from parent to the innermost function scope holding pc and
 * appends each subprogram and inlined subroutine on the way to path[],
 * outermost first. Returns the new length of path.
 *
 * We walk ourselves instead of calling dwarf_getscopes: with LTO, an
 * inlined instance's abstract origin lives in another CU, and
 * dwarf_getscopes (elfutils 0.188) then finds no scope at all.
 */
static int
sym_scope_path(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *path, int n, int max)
{
	Dwarf_Die child;
	int deeper;

	if (n >= max || dwarf_child(parent, &child) != 0)
		return n;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
		case DW_TAG_inlined_subroutine:
			if (dwarf_haspc(&child, pc) != 1)
				break;
			path[n] = child;
			return sym_scope_path(&path[n], pc, path, n + 1, max);
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
			if (dwarf_haspc(&child, pc) == 1)
				return sym_scope_path(&child, pc, path, n, max);
			break;
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			/* These hold no code ranges, but may hold function definitions. */
			deeper = sym_scope_path(&child, pc, path, n, max);
			if (deeper > n)
				return deeper;
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return n;
}

static int
sym_cu_cmp(const void *a, const void *b)
{
	const struct sym_cu_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Collects the code ranges of every CU of m, sorted by start address. */
static void
sym_cus_build(struct sym_module *m)
{
	Dwarf_Die *cu = NULL;
	Dwarf_Addr bias, base, start, end;
	size_t cap = 0;
	ptrdiff_t off;

	m->cus_built = 1;
	while ((cu = dwfl_module_nextcu(m->mod, cu, &bias)) != NULL) {
		m->dwbias = bias;
		for (off = 0; (off = dwarf_ranges(cu, off, &base, &start, &end)) > 0;) {
			if (m->ncus == cap) {
				cap = cap ? 2 * cap : 64;
				m->cus = xrealloc(m->cus, cap * sizeof(*m->cus));
			}
			m->cus[m->ncus++] = (struct sym_cu_range){ start, end, cu };
		}
	}
	if (m->ncus)
		qsort(m->cus, m->ncus, sizeof(*m->cus), sym_cu_cmp);
}

/*
 * Returns the CU DIE whose code holds lpc and sets *dwbias, or NULL.
 * libdwfl finds CUs through .debug_aranges, which clang does not emit, and
 * libdw 0.188 has no fallback; then we search the CUs' own ranges.
 */
static Dwarf_Die *
sym_cu_at(struct jt_sym *s, Dwfl_Module *mod, uint64_t lpc, Dwarf_Addr *dwbias)
{
	Dwarf_Die *cu = dwfl_module_addrdie(mod, lpc, dwbias);
	struct sym_module *m = NULL;
	size_t i, lo = 0, hi;

	for (i = 0; !cu && i < s->nmods; i++)
		if (s->mods[i].mod == mod)
			m = &s->mods[i];
	if (cu || !m)
		return cu;
	if (!m->cus_built)
		sym_cus_build(m);
	/* Find the last range starting at or below the address. */
	for (hi = m->ncus; lo < hi;) {
		i = lo + (hi - lo) / 2;
		if (m->cus[i].start <= lpc - m->dwbias)
			lo = i + 1;
		else
			hi = i;
	}
	if (lo == 0 || lpc - m->dwbias >= m->cus[lo - 1].end)
		return NULL;
	*dwbias = m->dwbias;
	return m->cus[lo - 1].cu;
}

/* Stores the line table's file:line for addr (a DWARF address in cu) in f. */
static void
sym_line(struct jt_sym *s, Dwarf_Die *cu, Dwarf_Addr addr, struct jt_frame *f)
{
	Dwarf_Line *line = dwarf_getsrc_die(cu, addr);
	Dwarf_Attribute attr;
	const char *file = line ? dwarf_linesrc(line, NULL, NULL) : NULL;
	int lineno = 0;

	if (!file || dwarf_lineno(line, &lineno) != 0)
		return;
	f->file = sym_intern_file(s, dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr)), file);
	f->line = lineno;
}

/*
 * Fills f[] from the DWARF scopes at lpc: one frame per inlined subroutine,
 * innermost first, then the containing function. An inlined scope's call
 * site is where the next outer frame stands; the innermost frame's location
 * comes from the line table. Returns the number of frames, 0 when there is
 * no debug info for lpc.
 */
int
sym_scopes(struct jt_sym *s, Dwfl_Module *mod, uint64_t lpc, struct jt_frame *f, int max)
{
	Dwarf_Addr dwbias;
	Dwarf_Die *cudie = sym_cu_at(s, mod, lpc, &dwbias);
	Dwarf_Die path[SYM_MAX_FRAMES];
	Dwarf_Files *files = NULL;
	Dwarf_Attribute attr;
	const char *comp_dir;
	int n, i, k = 0;

	if (!cudie)
		return 0;
	sym_line(s, cudie, lpc - dwbias, &f[0]);
	n = sym_scope_path(cudie, lpc - dwbias, path, 0, SYM_MAX_FRAMES);
	if (dwarf_getsrcfiles(cudie, &files, NULL) != 0)
		files = NULL;
	comp_dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &attr));
	for (i = n - 1; i >= 0 && k < max; i--, k++) {
		int tag = dwarf_tag(&path[i]);

		f[k].function = sym_die_function(s, &path[i]);
		f[k].inlined = tag == DW_TAG_inlined_subroutine;
		if (tag == DW_TAG_subprogram) {
			k++;
			break;	/* a nested function's (GNU C) parents are not its callers */
		}
		if (k + 1 < max)
			sym_call_site(s, &path[i], files, comp_dir, &f[k + 1]);
	}
	return k;
}
