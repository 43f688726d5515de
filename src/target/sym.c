/* sym.c - the libdwfl session of one target image: its reported modules, the string pool, and pc symbolization with a per-pc cache. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cxxname.h"
#include "sym.h"
#include "sym_int.h"
#include "util.h"

/* From libstdc++ (we link -lstdc++); declared here to keep this file C. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

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

/* A string being looked up in the pool. */
struct sym_str_key {
	const struct jt_sym *s;
	const char *str;
};

static int
sym_str_equal(const void *arg, uint32_t id)
{
	const struct sym_str_key *k = arg;

	return strcmp(k->s->strs[id], k->str) == 0;
}

/* Returns the pooled copy of str, adding it if new; the pool lives until sym_destroy. */
const char *
sym_intern(struct jt_sym *s, const char *str)
{
	struct sym_str_key k = { s, str };
	uint32_t hash = (uint32_t)table_hash_bytes(str, strlen(str)), id;

	if (!s->strs_index.slots)
		index_init(&s->strs_index, 256);
	id = index_find(&s->strs_index, hash, sym_str_equal, &k);
	if (id != UINT32_MAX)
		return s->strs[id];
	if (s->strs_n == s->strs_cap) {
		s->strs_cap = s->strs_cap ? 2 * s->strs_cap : 256;
		s->strs = xrealloc(s->strs, s->strs_cap * sizeof(*s->strs));
	}
	s->strs[s->strs_n] = xstrdup(str);
	index_add(&s->strs_index, hash, (uint32_t)s->strs_n);
	return s->strs[s->strs_n++];
}

/* Interns name, demangled first when it is a C++ (Itanium ABI) name. */
const char *
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

/* Interns the short form of function (cxxname_short): the name reports show. */
static const char *
sym_intern_short(struct jt_sym *s, const char *function)
{
	size_t len = strlen(function) + 1;
	char small[256], *buf = len <= sizeof(small) ? small : xmalloc(len);
	const char *r;

	cxxname_short(function, buf, len);
	r = sym_intern(s, buf);
	if (buf != small)
		free(buf);
	return r;
}

/*
 * Interns a source file name. Compilers record it relative to the
 * compilation directory when they were given a relative path; joining the
 * two lets report readers open the file from anywhere.
 */
const char *
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
	pthread_mutex_init(&s->lock, NULL);
	return s;
}

static void
sym_cache_drop(struct jt_sym *s)
{
	size_t i;

	for (i = 0; i < s->cache_n; i++)
		free(s->cache[i].frames);
	free(s->cache);
	s->cache = NULL;
	s->cache_cap = s->cache_n = 0;
	table_free(&s->cache_index);
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
	for (i = 0; i < s->strs_n; i++)
		free(s->strs[i]);
	free(s->strs);
	index_free(&s->strs_index);
	free(s->nodebug);
	dwfl_end(s->dwfl);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* Returns the module most recently reported from path, or NULL. */
struct sym_module *
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

/* sym_add_file with s locked. */
static int
sym_add_held(struct jt_sym *s, const char *path, const char *file, uint64_t bias, const char **err)
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

int
sym_add_module(struct jt_sym *s, const char *path, uint64_t bias, const char **err)
{
	return sym_add_file(s, path, path, bias, err);
}

int
sym_add_file(struct jt_sym *s, const char *path, const char *file, uint64_t bias, const char **err)
{
	int ret;

	sym_lock(s);
	ret = sym_add_held(s, path, file, bias, err);
	sym_unlock(s);
	return ret;
}

/*
 * At the first frame in mod, asks whether it has DWARF (which is where
 * libdwfl looks for a separate debug file, and asks a debuginfod server),
 * and keeps its name when it has none.
 */
static void
sym_note_debug(struct jt_sym *s, Dwfl_Module *mod, const char *name)
{
	Dwarf_Addr bias;
	size_t i;

	for (i = 0; i < s->nmods && s->mods[i].mod != mod; i++)
		;
	if (i == s->nmods || s->mods[i].debug_checked || !name)
		return;
	s->mods[i].debug_checked = 1;
	if (dwfl_module_getdwarf(mod, &bias))
		return;
	name = sym_intern(s, name);
	for (i = 0; i < s->nnodebug; i++)
		if (s->nodebug[i] == name)
			return;	/* the same file reported again (another bias, an exec) */
	s->nodebug = xrealloc(s->nodebug, (s->nnodebug + 1) * sizeof(*s->nodebug));
	s->nodebug[s->nnodebug++] = name;
}

const char *const *
sym_nodebug_modules(const struct jt_sym *s, size_t *n)
{
	const char *const *v;

	sym_lock(s);
	*n = s->nnodebug;
	v = s->nodebug;
	sym_unlock(s);
	return v;
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
	sym_note_debug(s, mod, name);
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
		f[i].name = f[i].function ? sym_intern_short(s, f[i].function) : NULL;
	}
	return n;
}

/* The symbolization of (pc, is_ret), made and cached when new. */
static const struct sym_cached *
sym_cached_get(struct jt_sym *s, uint64_t pc, int is_ret)
{
	struct jt_frame buf[SYM_MAX_FRAMES];
	struct sym_cached *c;
	struct jt_slot *slot;
	int fresh, n;

	if (!s->cache_index.slots)
		table_init(&s->cache_index, 1024, 0);
	/* User pcs are below 2^63; + 1, as the table's keys are not zero. */
	slot = table_claim(&s->cache_index, (pc << 1 | (uint64_t)is_ret) + 1, &fresh);
	if (!fresh)
		return &s->cache[slot->val];
	n = sym_symbolize(s, pc, is_ret, buf, SYM_MAX_FRAMES);
	if (s->cache_n == s->cache_cap) {
		s->cache_cap = s->cache_cap ? 2 * s->cache_cap : 1024;
		s->cache = xrealloc(s->cache, s->cache_cap * sizeof(*s->cache));
	}
	slot->val = s->cache_n;
	c = &s->cache[s->cache_n++];
	c->n = n;
	c->frames = xmalloc(n * sizeof(*c->frames));
	memcpy(c->frames, buf, n * sizeof(*c->frames));
	return c;
}

int
sym_resolve(struct jt_sym *s, uint64_t pc, int is_return_address, struct jt_frame *out, int max)
{
	const struct sym_cached *c;
	int n, i;

	if (max < 1)
		return 0;
	sym_lock(s);
	c = sym_cached_get(s, pc, !!is_return_address);
	n = c->n < max ? c->n : max;
	memcpy(out, c->frames, n * sizeof(*out));
	for (i = 0; s->full_names && i < n; i++)
		out[i].name = out[i].function;
	sym_unlock(s);
	return n;
}

void
sym_set_full_names(struct jt_sym *s, int full)
{
	sym_lock(s);
	s->full_names = full;
	sym_unlock(s);
}

/* Returns the module's build id in lower-case hex (interned), or NULL when it has none. */
static const char *
sym_build_id_hex(struct jt_sym *s, Dwfl_Module *mod)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *bits;
	GElf_Addr vaddr;
	char hex[2 * 64 + 1];
	int len = dwfl_module_build_id(mod, &bits, &vaddr), i;

	if (len <= 0)
		return NULL;
	if (len > 64)
		len = 64;	/* GNU ld writes 20 bytes (sha1); more is not a build id we know */
	for (i = 0; i < len; i++) {
		hex[2 * i] = digits[bits[i] >> 4];
		hex[2 * i + 1] = digits[bits[i] & 15];
	}
	hex[2 * len] = '\0';
	return sym_intern(s, hex);
}

/* Appends the executable PT_LOAD segments of module m to *v (of *n, room for *cap). */
static void
sym_module_mappings(struct jt_sym *s, struct sym_module *m, struct jt_sym_mapping **v, size_t *n, size_t *cap)
{
	const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(m->mod, &bias);
	const char *build_id = sym_build_id_hex(s, m->mod);
	const char *path = sym_intern(s, m->path);
	size_t nph, i;

	if (!elf || elf_getphdrnum(elf, &nph) != 0)
		return;
	for (i = 0; i < nph; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(elf, (int)i, &mem);
		struct jt_sym_mapping *out;

		if (!ph || ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (*n == *cap) {
			*cap = *cap ? 2 * *cap : 16;
			*v = xrealloc(*v, *cap * sizeof(**v));
		}
		out = &(*v)[(*n)++];
		/* The kernel maps whole pages: the range /proc/PID/maps shows. */
		out->start = (ph->p_vaddr + bias) & ~(page - 1);
		out->limit = (ph->p_vaddr + ph->p_memsz + bias + page - 1) & ~(page - 1);
		out->file_offset = ph->p_offset & ~(page - 1);
		out->path = path;
		out->build_id = build_id;
	}
}

static int
sym_mapping_cmp(const void *a, const void *b)
{
	const struct jt_sym_mapping *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

struct jt_sym_mapping *
sym_mappings(struct jt_sym *s, size_t *n)
{
	struct jt_sym_mapping *v = NULL;
	size_t cap = 0, i;

	*n = 0;
	sym_lock(s);
	for (i = 0; i < s->nmods; i++)
		sym_module_mappings(s, &s->mods[i], &v, n, &cap);
	sym_unlock(s);
	if (*n)
		qsort(v, *n, sizeof(*v), sym_mapping_cmp);
	return v;
}
