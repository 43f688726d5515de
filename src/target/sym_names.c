/* sym_names.c - finds a module's symbols by name (allocator entries, the dynamic linker's hooks) through one hash per module. */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "sym.h"
#include "sym_int.h"
#include "util.h"

/*
 * How much a definition is preferred when a name is defined more than once:
 * the default version ("name" or "name@@V") over an old one ("name@V"),
 * then GLOBAL over WEAK. Returns 0 for symbols lookups must ignore.
 */
static int
sym_rank(const char *name, const GElf_Sym *sym, GElf_Word shndx)
{
	const char *at = strchr(name, '@');
	int bind = GELF_ST_BIND(sym->st_info);
	int type = GELF_ST_TYPE(sym->st_info);

	/* libdwfl gives shndx -1 for a symbol in a section that is not loaded. */
	if (shndx == SHN_UNDEF || shndx == SHN_ABS || shndx == (GElf_Word)-1 || type == STT_TLS)
		return 0;
	if (type == STT_SECTION || type == STT_FILE)
		return 0;
	if (bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_GNU_UNIQUE)
		return 0;
	return 1 + (!at || at[1] == '@') * 2 + (bind != STB_WEAK);
}

/* Returns the slot for name[0..len) in m's hash: its entry, or the empty slot for it. */
static struct sym_name *
sym_names_slot(struct sym_module *m, const char *name, size_t len)
{
	size_t mask = m->names_cap - 1;
	size_t i = table_hash_bytes(name, len) & mask;

	while (m->names[i].name && (m->names[i].len != len || memcmp(m->names[i].name, name, len) != 0))
		i = (i + 1) & mask;
	return &m->names[i];
}

static void
sym_names_add(struct sym_module *m, const char *name, const GElf_Sym *sym, uint64_t addr, int rank)
{
	size_t len = strcspn(name, "@");
	struct sym_name *e = sym_names_slot(m, name, len);
	int type = GELF_ST_TYPE(sym->st_info);

	e->name = name;
	e->len = len;
	if (rank > e->any_rank) {
		e->any_rank = rank;
		e->any_addr = addr;
	}
	if ((type == STT_FUNC || type == STT_GNU_IFUNC) && rank > e->func_rank) {
		e->func_rank = rank;
		e->func_addr = addr;
		e->func_size = sym->st_size;
	}
}

static int
sym_is_local_func(const GElf_Sym *sym, GElf_Word shndx)
{
	return GELF_ST_BIND(sym->st_info) == STB_LOCAL && GELF_ST_TYPE(sym->st_info) == STT_FUNC &&
	       shndx != SHN_UNDEF && shndx != SHN_ABS;
}

/*
 * A static-pie links malloc and friends as LOCAL symbols; keep the first
 * local definition of each name for sym_lookup_static.
 */
static void
sym_names_add_local(struct sym_module *m, const char *name, uint64_t addr, uint64_t size)
{
	size_t len = strcspn(name, "@");
	struct sym_name *e = sym_names_slot(m, name, len);

	e->name = name;
	e->len = len;
	if (!e->has_local) {
		e->has_local = 1;
		e->local_addr = addr;
		e->local_size = size;
	}
}

/*
 * Builds m's name hash from its symbol table (.symtab if libdwfl finds one,
 * in the file or its debuginfo, else .dynsym). Setup looks up dozens of
 * names per module, and one pass here beats one table scan per name.
 */
static void
sym_names_build(struct sym_module *m)
{
	int n = dwfl_module_getsymtab(m->mod), i;

	if (n < 0)
		debug_msg("no symbol table in %s: %s", m->path, dwfl_errmsg(-1));
	m->names_cap = 16;
	while (n > 0 && m->names_cap < 2 * (size_t)n)
		m->names_cap *= 2;
	m->names = xcalloc(m->names_cap, sizeof(*m->names));
	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf;
		Dwarf_Addr bias;
		const char *name;
		int rank;

		name = dwfl_module_getsym_info(m->mod, i, &sym, &addr, &shndx, &elf, &bias);
		if (!name || !*name || *name == '@')
			continue;
		rank = sym_rank(name, &sym, shndx);
		if (rank)
			sym_names_add(m, name, &sym, addr, rank);
		else if (sym_is_local_func(&sym, shndx))
			sym_names_add_local(m, name, addr, sym.st_size);
	}
}

/* What a lookup by name accepts (sym.h's sym_lookup*). */
enum sym_how {
	SYM_FUNC,	/* a GLOBAL or WEAK function */
	SYM_ANY,	/* ... or data object */
	SYM_STATIC,	/* a GLOBAL or WEAK function, else a LOCAL one */
	SYM_RANGE,	/* as SYM_STATIC, with its size: *hi is its end */
};

/* The lookup of name in the module reported from path, as how says; s locked. */
static int
sym_find_held(struct jt_sym *s, const char *path, const char *name, enum sym_how how, uint64_t *lo, uint64_t *hi)
{
	struct sym_module *m = sym_module_by_path(s, path);
	struct sym_name *e;
	uint64_t size = 0;

	if (!m)
		return -1;
	if (!m->names)
		sym_names_build(m);
	e = sym_names_slot(m, name, strcspn(name, "@"));
	if (!e->name)
		return -1;
	if (how == SYM_ANY ? e->any_rank : e->func_rank) {
		*lo = how == SYM_ANY ? e->any_addr : e->func_addr;
		size = e->func_size;
	} else if (how >= SYM_STATIC && e->has_local) {
		*lo = e->local_addr;
		size = e->local_size;
	} else {
		return -1;
	}
	if (how != SYM_RANGE)
		return 0;
	*hi = *lo + size;
	return size ? 0 : -1;
}

static int
sym_find(struct jt_sym *s, const char *path, const char *name, enum sym_how how, uint64_t *lo, uint64_t *hi)
{
	int ret;

	sym_lock(s);
	ret = sym_find_held(s, path, name, how, lo, hi);
	sym_unlock(s);
	return ret;
}

int
sym_lookup(struct jt_sym *s, const char *path, const char *name, uint64_t *addr)
{
	return sym_find(s, path, name, SYM_FUNC, addr, NULL);
}

int
sym_lookup_any(struct jt_sym *s, const char *path, const char *name, uint64_t *addr)
{
	return sym_find(s, path, name, SYM_ANY, addr, NULL);
}

int
sym_lookup_static(struct jt_sym *s, const char *path, const char *name, uint64_t *addr)
{
	return sym_find(s, path, name, SYM_STATIC, addr, NULL);
}

int
sym_lookup_range(struct jt_sym *s, const char *path, const char *name, uint64_t *lo, uint64_t *hi)
{
	return sym_find(s, path, name, SYM_RANGE, lo, hi);
}

int
sym_module_has_symbols(struct jt_sym *s, const char *path)
{
	struct sym_module *m;
	int has;

	sym_lock(s);
	m = sym_module_by_path(s, path);
	/* Entry 0 of every ELF symbol table is the null symbol. */
	has = m && dwfl_module_getsymtab(m->mod) > 1;
	sym_unlock(s);
	return has;
}
