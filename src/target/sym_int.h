/* sym_int.h - what sym.c, sym_names.c and sym_dwarf.c share: the libdwfl session, its modules and the string pool (private to them). */
#ifndef JT_SYM_INT_H
#define JT_SYM_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "sym.h"
#include "table.h"

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
	int debug_checked;	/* a frame fell in it: whether it has DWARF was asked (sym_note_debug) */
};

/* The symbolization of one pc, as the per-pc cache keeps it. */
struct sym_cached {
	int n;
	struct jt_frame *frames;
};

/* One target image: its libdwfl session, the modules reported to it, and the caches. */
struct jt_sym {
	Dwfl *dwfl;
	struct sym_module *mods;
	size_t nmods;
	struct sym_cached *cache;	/* in the order they were made */
	size_t cache_cap, cache_n;
	struct jt_table cache_index;	/* (pc << 1 | is_ret) + 1 -> position in cache; made on first use */
	char **strs;		/* interned strings: module, function and file names */
	size_t strs_cap, strs_n;
	struct jt_index strs_index;	/* made on first use */
	const char **nodebug;	/* interned names of the modules met without debug information */
	size_t nnodebug;
	int full_names;		/* sym_set_full_names: frames are named by their full function name */
	/*
	 * Held by every sym_* call of sym.h: a snapshot's writers symbolize on
	 * their own thread while a tracer thread reports a module dlopen
	 * brought (snapshot.c). Taken last: a caller may hold the session lock.
	 */
	pthread_mutex_t lock;
};

/* The lock of s, as every sym.h call takes it (logically mutable in a const s). */
static inline void
sym_lock(const struct jt_sym *s)
{
	pthread_mutex_lock((pthread_mutex_t *)&s->lock);
}

static inline void
sym_unlock(const struct jt_sym *s)
{
	pthread_mutex_unlock((pthread_mutex_t *)&s->lock);
}

/* Returns the pooled copy of str, adding it if new; the pool lives until sym_destroy. */
const char *sym_intern(struct jt_sym *s, const char *str);

/* Interns name, demangled first when it is a C++ (Itanium ABI) name. */
const char *sym_intern_function(struct jt_sym *s, const char *name);

/* Interns a source file name, joined to comp_dir (may be NULL) when it is relative. */
const char *sym_intern_file(struct jt_sym *s, const char *comp_dir, const char *file);

/* Returns the module most recently reported from path, or NULL. */
struct sym_module *sym_module_by_path(struct jt_sym *s, const char *path);

/*
 * sym_dwarf.c: fills f[] from the DWARF scopes at lpc in mod, inlined
 * frames innermost first, then the containing function. Returns the number
 * of frames, 0 when there is no debug info for lpc.
 */
int sym_scopes(struct jt_sym *s, Dwfl_Module *mod, uint64_t lpc, struct jt_frame *f, int max);

#endif
