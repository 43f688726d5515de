/* sym.h - the target's modules as libdwfl sees them: symbol lookup at setup, symbolization at report time. */
#ifndef JT_SYM_H
#define JT_SYM_H

#include <stdint.h>

struct jt_sym;

/* One source-level frame of a pc. Strings are owned by the jt_sym cache. */
struct jt_frame {
	uint64_t address;	/* the raw pc as captured */
	const char *module;	/* file name of the module (basename), or NULL if unknown */
	uint64_t offset;	/* pc minus module load bias (for "module+0x..." when no symbol) */
	const char *function;	/* demangled function name, or NULL */
	const char *name;	/* what reports show for function: cxxname_short's form, or function itself (sym_set_full_names); NULL with function */
	const char *file;	/* source file, or NULL */
	int line;		/* source line, or 0 */
	int inlined;		/* 1 for a frame that was inlined into the next one */
	int signal_frame;	/* 1 for the kernel's signal frame (function names it as gdb does) */
};

/* Returns a new, empty symbolizer; never NULL. */
struct jt_sym *sym_new(void);
void sym_destroy(struct jt_sym *s);

/*
 * Reports the ELF file at path, loaded with the given load bias (0 for
 * ET_EXEC). Reporting the same path and bias again is a no-op. Returns 0, or
 * -1 with a message in *err (static storage) when libdwfl rejects it.
 */
int sym_add_module(struct jt_sym *s, const char *path, uint64_t bias, const char **err);

/*
 * Like sym_add_module, but libdwfl reads the file from file (e.g. a
 * /proc/PID/map_files path for a deleted file, see module_file) while the
 * module keeps path as its name: lookups and the frames' module name use it.
 */
int sym_add_file(struct jt_sym *s, const char *path, const char *file, uint64_t bias, const char **err);

/*
 * Finds a defined function symbol (GLOBAL or WEAK, not UNDEF) called name in
 * the module reported from path, and stores its run-time address. Returns 0,
 * or -1 when the module or symbol is not there.
 */
int sym_lookup(struct jt_sym *s, const char *path, const char *name, uint64_t *addr);

/*
 * Like sym_lookup, but falls back to a LOCAL function of that name: in a
 * statically linked program (static-pie binds malloc locally) nothing else
 * can define it, so the local definition is the one every call reaches.
 */
int sym_lookup_static(struct jt_sym *s, const char *path, const char *name, uint64_t *addr);

/*
 * Finds the code range [*lo, *hi) of the function called name in the module
 * reported from path: a GLOBAL or WEAK definition, else a LOCAL one. Returns
 * 0, or -1 when it is not there or its symbol gives no size.
 */
int sym_lookup_range(struct jt_sym *s, const char *path, const char *name, uint64_t *lo, uint64_t *hi);

/* Like sym_lookup for data objects too (e.g. _r_debug). */
int sym_lookup_any(struct jt_sym *s, const char *path, const char *name, uint64_t *addr);

/*
 * Non-zero when the module at path has any symbol table at all (.symtab or
 * .dynsym), so "stripped" can be told apart from "does not define malloc".
 */
int sym_module_has_symbols(struct jt_sym *s, const char *path);

/*
 * Chooses the names sym_resolve gives frames as jt_frame.name: the short
 * C++ names (cxxname.h) by default, the full demangled ones when full is
 * non-zero (--full-names).
 */
void sym_set_full_names(struct jt_sym *s, int full);

/*
 * Symbolizes pc. When is_return_address is set, file:line and inline scopes
 * are looked up at pc - 1 so they land inside the call instruction. Fills
 * out[0..n) innermost first: the inlined frames (inlined = 1) and last the
 * function that really contains the code. Returns n >= 1 (a bare address
 * frame when nothing is known), never more than max.
 */
int sym_resolve(struct jt_sym *s, uint64_t pc, int is_return_address, struct jt_frame *out, int max);

/*
 * The modules that frames resolved so far fell in and that have no debug
 * information at all (no DWARF in the file, in a separate debug file, or
 * from a debuginfod server when DEBUGINFOD_URLS is set): their frames have
 * no file:line. Names as jt_frame's module, each once, in the order first
 * met; *n gets the count. Valid until the next sym call.
 */
const char *const *sym_nodebug_modules(const struct jt_sym *s, size_t *n);

/*
 * One executable segment of a reported module, as a profile's mapping
 * table (pprof) gives it. Strings are owned by the jt_sym.
 */
struct jt_sym_mapping {
	uint64_t start, limit;	/* run-time [start, limit), in whole pages as /proc/PID/maps has it */
	uint64_t file_offset;	/* the file offset mapped at start */
	const char *path;	/* the module's path as reported (sym_add_module) */
	const char *build_id;	/* its GNU build id in lower-case hex, or NULL when it has none */
};

/*
 * Lists the executable segments of the modules reported so far, sorted by
 * start. Returns a malloc'ed array the caller frees (NULL when there are
 * none) and stores the count in *n.
 */
struct jt_sym_mapping *sym_mappings(struct jt_sym *s, size_t *n);

#endif
