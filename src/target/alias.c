/* alias.c - tells apart allocator names that share one address (aligned_alloc and memalign) by the caller's PLT slot. */
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "alias.h"
#include "alloc.h"
#include "modules.h"
#include "plt.h"
#include "util.h"

/* Records the GOT slots that hold aliased names in one relocation section. */
static void
alias_scan_relocs(struct jt_aliases *a, Elf *elf, Elf_Scn *scn, GElf_Shdr *sh, uint64_t bias)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	Elf_Scn *symscn = elf_getscn(elf, sh->sh_link);
	GElf_Shdr symsh;
	Elf_Data *syms;
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;

	if (!data || !symscn || !gelf_getshdr(symscn, &symsh) || !(syms = elf_getdata(symscn, NULL)))
		return;
	for (size_t i = 0; i < n; i++) {
		GElf_Rela r;
		GElf_Sym sym;
		const char *name;

		if (!gelf_getrela(data, (int)i, &r) || !gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym))
			continue;
		if (!(name = elf_strptr(elf, symsh.sh_link, sym.st_name)))
			continue;
		for (int fn = 0; fn < FN_REPORTED; fn++) {
			if (strcmp(name, alloc_fns[fn].symbol) || (fn != FN_ALIGNED_ALLOC && fn != FN_MEMALIGN))
				continue;
			a->v = xrealloc(a->v, (a->n + 1) * sizeof(*a->v));
			a->v[a->n].got = bias + r.r_offset;
			a->v[a->n].fn = fn;
			a->n++;
		}
	}
}

int
alias_scan_module(struct jt_aliases *a, const struct jt_module *m)
{
	Elf *elf = module_elf(m);
	Elf_Scn *scn = NULL;

	if (!elf)
		return -1;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_RELA && sh.sh_entsize)
			alias_scan_relocs(a, elf, scn, &sh, m->bias);
	}
	return 0;
}

void
alias_clear(struct jt_aliases *a)
{
	free(a->v);
	a->v = NULL;
	a->n = 0;
}

int
alias_resolve(const struct jt_aliases *a, const struct jt_mem_ops *mem, uint64_t ret, int fn)
{
	uint64_t got = a->n ? plt_call_slot(mem, ret) : 0;

	for (size_t i = 0; got && i < a->n; i++)
		if (a->v[i].got == got)
			return a->v[i].fn;
	return fn;
}
