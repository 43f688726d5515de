/* sym.c - symbol lookup and pc symbolization over one libdwfl session per target image. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "sym.h"
#include "util.h"

/* From libstdc++ (we link -lstdc++); declared here to keep this file C. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* Deepest inline chain we keep for one pc; real code rarely nests past 10. */
#define SYM_MAX_FRAMES 32

/* One defined GLOBAL/WEAK name of a module, as the lookup hash keeps it. */
struct sym_name {
	const char *name;	/* points into the module's ELF string table; NULL = empty slot */
	size_t len;		/* length without any "@VERSION" suffix */
	uint64_t func_addr;	/* best FUNC/IFUNC definition, valid when func_rank */
	uint64_t func_size;	/* its st_size (0 when the symbol has none) */
	uint64_t any_addr;	/* best definition of any type, valid when any_rank */
	int func_rank, any_rank;	/* 0 = none; higher is preferred, see sym_rank */
	int has_local;		/* a LOCAL function of that name exists, at local_addr */
	uint64_t local_addr;
	uint64_t local_size;
};

/* The code range of one CU, for modules without .debug_aranges. */
struct sym_cu_range {
	Dwarf_Addr start, end;	/* DWARF addresses: run-time ones minus the bias */
	Dwarf_Die *cu;		/* owned by libdwfl, lives as long as the module */
};

/* One reported ELF file. */
struct sym_module {
	char *path;
	uint64_t bias;
	Dwfl_Module *mod;
	struct sym_name *names;	/* open-addressing hash, built on the first lookup */
	size_t names_cap;	/* power of two; 0 until built */
	struct sym_cu_range *cus;	/* sorted by start; built on the first CU miss */
	size_t ncus;
	int cus_built;
	Dwarf_Addr dwbias;	/* run-time minus DWARF addresses */
};

/* The symbolization of one pc, as the per-pc cache keeps it. */
struct sym_cached {
	uint64_t pc;
	int is_ret;
	int n;
	struct jt_frame *frames;	/* NULL = empty slot */
};

struct jt_sym {
	Dwfl *dwfl;
	struct sym_module *mods;
	size_t nmods;
	struct sym_cached *cache;	/* open-addressing hash on (pc, is_ret) */
	size_t cache_cap, cache_n;
	char **strs;		/* interned strings: module, function and file names */
	size_t strs_cap, strs_n;
};

/* libdwfl keeps a pointer to these, so they live as long as the program. */
static char *sym_debuginfo_path;
static const Dwfl_Callbacks sym_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &sym_debuginfo_path,
};

/* sym_add_module hands out *err pointing here, so it must outlive the call. */
static char sym_errbuf[512];

static uint64_t
sym_hash_bytes(const char *p, size_t len)
{
	uint64_t h = 14695981039346656037ULL;	/* FNV-1a */

	while (len--)
		h = (h ^ (unsigned char)*p++) * 1099511628211ULL;
	return h;
}

static uint64_t
sym_hash_pc(uint64_t pc, int is_ret)
{
	uint64_t h = (pc ^ (uint64_t)is_ret) * 0x9e3779b97f4a7c15ULL;

	return h ^ (h >> 29);
}

/* Returns the pool slot for str: the slot holding it, or the empty slot for it. */
static char **
sym_str_slot(struct jt_sym *s, const char *str)
{
	size_t mask = s->strs_cap - 1;
	size_t i = sym_hash_bytes(str, strlen(str)) & mask;

	while (s->strs[i] && strcmp(s->strs[i], str) != 0)
		i = (i + 1) & mask;
	return &s->strs[i];
}

/* Returns the pooled copy of str, adding it if new; the pool lives until sym_destroy. */
static const char *
sym_intern(struct jt_sym *s, const char *str)
{
	char **slot, **old = s->strs;
	size_t oldcap = s->strs_cap, i;

	if (2 * (s->strs_n + 1) > s->strs_cap) {
		s->strs_cap = oldcap ? 2 * oldcap : 256;
		s->strs = xcalloc(s->strs_cap, sizeof(*s->strs));
		for (i = 0; i < oldcap; i++)
			if (old[i])
				*sym_str_slot(s, old[i]) = old[i];
		free(old);
	}
	slot = sym_str_slot(s, str);
	if (!*slot) {
		*slot = xstrdup(str);
		s->strs_n++;
	}
	return *slot;
}

/* Interns name, demangled first when it is a C++ (Itanium ABI) name. */
static const char *
sym_intern_function(struct jt_sym *s, const char *name)
{
	const char *r;
	char *d;
	int status = -1;

	if (strncmp(name, "_Z", 2) != 0)
		return sym_intern(s, name);
	d = __cxa_demangle(name, NULL, NULL, &status);
	r = sym_intern(s, status == 0 && d ? d : name);
	free(d);
	return r;
}

/*
 * Interns a source file name. Compilers record it relative to the
 * compilation directory when they were given a relative path; joining the
 * two lets report readers open the file from anywhere.
 */
static const char *
sym_intern_file(struct jt_sym *s, const char *comp_dir, const char *file)
{
	const char *r;
	char *full;

	if (file[0] == '/' || !comp_dir || !*comp_dir)
		return sym_intern(s, file);
	full = xmalloc(strlen(comp_dir) + strlen(file) + 2);
	sprintf(full, "%s/%s", comp_dir, file);
	r = sym_intern(s, full);
	free(full);
	return r;
}

struct jt_sym *
sym_new(void)
{
	struct jt_sym *s = xcalloc(1, sizeof(*s));

	s->dwfl = dwfl_begin(&sym_callbacks);
	if (!s->dwfl) {
		/* dwfl_begin fails only when memory is exhausted, like xmalloc. */
		error_msg("dwfl_begin: %s", dwfl_errmsg(-1));
		abort();
	}
	return s;
}

static void
sym_cache_drop(struct jt_sym *s)
{
	size_t i;

	for (i = 0; i < s->cache_cap; i++)
		free(s->cache[i].frames);
	free(s->cache);
	s->cache = NULL;
	s->cache_cap = s->cache_n = 0;
}

static void
sym_module_free(struct sym_module *m)
{
	free(m->path);
	free(m->names);
	free(m->cus);
}

void
sym_destroy(struct jt_sym *s)
{
	size_t i;

	if (!s)
		return;
	sym_cache_drop(s);
	for (i = 0; i < s->nmods; i++)
		sym_module_free(&s->mods[i]);
	free(s->mods);
	for (i = 0; i < s->strs_cap; i++)
		free(s->strs[i]);
	free(s->strs);
	dwfl_end(s->dwfl);
	free(s);
}

/* Returns the module most recently reported from path, or NULL. */
static struct sym_module *
sym_module_by_path(struct jt_sym *s, const char *path)
{
	size_t i;

	for (i = s->nmods; i-- > 0;)
		if (strcmp(s->mods[i].path, path) == 0)
			return &s->mods[i];
	return NULL;
}

static int
sym_fail(const char **err, const char *what, const char *path)
{
	snprintf(sym_errbuf, sizeof(sym_errbuf), "%s %s: %s", what, path, dwfl_errmsg(-1));
	if (err)
		*err = sym_errbuf;
	return -1;
}

/* Non-zero when module m's address range meets [start, end). */
static int
sym_overlaps(Dwfl_Module *m, Dwarf_Addr start, Dwarf_Addr end)
{
	Dwarf_Addr ms, me;

	dwfl_module_info(m, NULL, &ms, &me, NULL, NULL, NULL, NULL);
	return ms < end && start < me;
}

/*
 * Forgets the modules whose range meets that of the one just added (the
 * last): a dlclose left the range to a new mapping, and libdwfl must not
 * answer for it with the old file. libdwfl drops every module that is not
 * reported again between dwfl_report_begin and dwfl_report_end.
 */
static int
sym_evict_overlaps(struct jt_sym *s)
{
	Dwfl_Module *added = s->mods[s->nmods - 1].mod;
	Dwarf_Addr start, end, ms, me;
	size_t i, kept = 0;

	dwfl_module_info(added, NULL, &start, &end, NULL, NULL, NULL, NULL);
	for (i = 0; i + 1 < s->nmods && !sym_overlaps(s->mods[i].mod, start, end); i++)
		;
	if (i + 1 >= s->nmods)
		return 0;
	dwfl_report_begin(s->dwfl);
	for (i = 0; i < s->nmods; i++) {
		struct sym_module *m = &s->mods[i];
		const char *name = dwfl_module_info(m->mod, NULL, &ms, &me, NULL, NULL, NULL, NULL);

		/* Same name and range: libdwfl keeps the module as it is. */
		if ((m->mod == added || !sym_overlaps(m->mod, start, end))
		    && dwfl_report_module(s->dwfl, name, ms, me) == m->mod) {
			s->mods[kept++] = *m;
			continue;
		}
		sym_module_free(m);
	}
	s->nmods = kept;
	return dwfl_report_end(s->dwfl, NULL, NULL) == 0 ? 0 : -1;
}

int
sym_add_module(struct jt_sym *s, const char *path, uint64_t bias, const char **err)
{
	return sym_add_file(s, path, path, bias, err);
}

int
sym_add_file(struct jt_sym *s, const char *path, const char *file, uint64_t bias, const char **err)
{
	struct sym_module *m = sym_module_by_path(s, path);
	const char *base = strrchr(path, '/');
	Dwfl_Module *mod;

	if (m && m->bias == bias)
		return 0;
	base = base ? base + 1 : path;
	/* begin_add keeps every module reported so far; report_end commits. */
	dwfl_report_begin_add(s->dwfl);
	mod = dwfl_report_elf(s->dwfl, base, file, -1, bias, true);
	if (dwfl_report_end(s->dwfl, NULL, NULL) != 0)
		return sym_fail(err, "dwfl_report_end for", path);
	if (!mod)
		return sym_fail(err, "cannot report", path);
	s->mods = xrealloc(s->mods, (s->nmods + 1) * sizeof(*s->mods));
	m = &s->mods[s->nmods++];
	memset(m, 0, sizeof(*m));
	m->path = xstrdup(path);
	m->bias = bias;
	m->mod = mod;
	if (sym_evict_overlaps(s) != 0)
		return sym_fail(err, "dwfl_report_end after", path);
	/*
	 * A pc that was unknown, or fell in a module now unmapped (dlclose),
	 * may resolve differently from now on. Interned strings stay valid.
	 */
	sym_cache_drop(s);
	return 0;
}

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
	size_t i = sym_hash_bytes(name, len) & mask;

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

static int
sym_lookup_kind(struct jt_sym *s, const char *path, const char *name, uint64_t *addr, int func_only)
{
	struct sym_module *m = sym_module_by_path(s, path);
	struct sym_name *e;

	if (!m)
		return -1;
	if (!m->names)
		sym_names_build(m);
	e = sym_names_slot(m, name, strcspn(name, "@"));
	if (!e->name || !(func_only ? e->func_rank : e->any_rank))
		return -1;
	*addr = func_only ? e->func_addr : e->any_addr;
	return 0;
}

int
sym_lookup(struct jt_sym *s, const char *path, const char *name, uint64_t *addr)
{
	return sym_lookup_kind(s, path, name, addr, 1);
}

int
sym_lookup_any(struct jt_sym *s, const char *path, const char *name, uint64_t *addr)
{
	return sym_lookup_kind(s, path, name, addr, 0);
}

int
sym_lookup_static(struct jt_sym *s, const char *path, const char *name, uint64_t *addr)
{
	struct sym_module *m = sym_module_by_path(s, path);
	struct sym_name *e;

	if (sym_lookup_kind(s, path, name, addr, 1) == 0)
		return 0;
	if (!m)
		return -1;
	e = sym_names_slot(m, name, strcspn(name, "@"));
	if (!e->name || !e->has_local)
		return -1;
	*addr = e->local_addr;
	return 0;
}

int
sym_lookup_range(struct jt_sym *s, const char *path, const char *name, uint64_t *lo, uint64_t *hi)
{
	struct sym_module *m = sym_module_by_path(s, path);
	struct sym_name *e;
	uint64_t size;

	if (!m)
		return -1;
	if (!m->names)
		sym_names_build(m);
	e = sym_names_slot(m, name, strcspn(name, "@"));
	if (!e->name)
		return -1;
	if (e->func_rank) {
		*lo = e->func_addr;
		size = e->func_size;
	} else if (e->has_local) {
		*lo = e->local_addr;
		size = e->local_size;
	} else {
		return -1;
	}
	*hi = *lo + size;
	return size ? 0 : -1;
}

int
sym_module_has_symbols(struct jt_sym *s, const char *path)
{
	struct sym_module *m = sym_module_by_path(s, path);

	/* Entry 0 of every ELF symbol table is the null symbol. */
	return m && dwfl_module_getsymtab(m->mod) > 1;
}

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
static int
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

/* Computes the frames of pc into f[0..max); returns how many (>= 1). */
static int
sym_symbolize(struct jt_sym *s, uint64_t pc, int is_ret, struct jt_frame *f, int max)
{
	/* A return address is one past the call; pc - 1 lies in the call itself. */
	uint64_t lpc = is_ret && pc ? pc - 1 : pc;
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, lpc);
	const char *name;
	GElf_Addr bias = 0;
	GElf_Off off;
	GElf_Sym sym;
	int n, i;

	memset(f, 0, max * sizeof(*f));
	f[0].address = pc;
	f[0].offset = pc;
	if (!mod)
		return 1;
	name = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	if (dwfl_module_getelf(mod, &bias) == NULL)
		bias = 0;
	n = sym_scopes(s, mod, lpc, f, max);
	if (n == 0 || !f[n - 1].function) {
		/* No DWARF for lpc (or a nameless scope): the symbol table still knows. */
		const char *symname = dwfl_module_addrinfo(mod, lpc, &off, &sym, NULL, NULL, NULL);

		if (n == 0)
			n = 1;
		if (symname)
			f[n - 1].function = sym_intern_function(s, symname);
	}
	for (i = 0; i < n; i++) {
		f[i].address = pc;
		f[i].offset = pc - bias;
		f[i].module = name ? sym_intern(s, name) : NULL;
	}
	return n;
}

/* Returns the cache slot for (pc, is_ret): its entry, or the empty slot for it. */
static struct sym_cached *
sym_cache_slot(struct jt_sym *s, uint64_t pc, int is_ret)
{
	size_t mask = s->cache_cap - 1;
	size_t i = sym_hash_pc(pc, is_ret) & mask;

	while (s->cache[i].frames && (s->cache[i].pc != pc || s->cache[i].is_ret != is_ret))
		i = (i + 1) & mask;
	return &s->cache[i];
}

static void
sym_cache_grow(struct jt_sym *s)
{
	struct sym_cached *old = s->cache;
	size_t oldcap = s->cache_cap, i;

	s->cache_cap = oldcap ? 2 * oldcap : 1024;
	s->cache = xcalloc(s->cache_cap, sizeof(*s->cache));
	for (i = 0; i < oldcap; i++)
		if (old[i].frames)
			*sym_cache_slot(s, old[i].pc, old[i].is_ret) = old[i];
	free(old);
}

int
sym_resolve(struct jt_sym *s, uint64_t pc, int is_return_address, struct jt_frame *out, int max)
{
	struct jt_frame buf[SYM_MAX_FRAMES];
	struct sym_cached *c;
	int is_ret = !!is_return_address;

	if (max < 1)
		return 0;
	if (2 * (s->cache_n + 1) > s->cache_cap)
		sym_cache_grow(s);
	c = sym_cache_slot(s, pc, is_ret);
	if (!c->frames) {
		c->n = sym_symbolize(s, pc, is_ret, buf, SYM_MAX_FRAMES);
		c->frames = xmalloc(c->n * sizeof(*c->frames));
		memcpy(c->frames, buf, c->n * sizeof(*c->frames));
		c->pc = pc;
		c->is_ret = is_ret;
		s->cache_n++;
	}
	memcpy(out, c->frames, (c->n < max ? c->n : max) * sizeof(*out));
	return c->n < max ? c->n : max;
}
