/* modules.h - the ELF files mapped in a process: each opened once, with its address range, load bias and its consumers' state. */
#ifndef JT_MODULES_H
#define JT_MODULES_H

#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <sys/types.h>
#include <libelf.h>

/* How many consumers may keep state in one module (module_set_data). */
#define MODULE_DATA_MAX 4

/* One consumer's state in a module (module_data). */
struct module_data {
	const void *key;
	void *data;
	void (*free_fn)(void *);
};

/*
 * One ELF file mapped into the target, and the only owner of that file:
 * modules.c opens it once (see module_file for a deleted or replaced file)
 * and every consumer reads it through module_elf or module_file.
 */
struct jt_module {
	char *path;		/* absolute path as in /proc/PID/maps, " (deleted)" included */
	uint64_t start, end;	/* lowest and highest address of its mappings */
	uint64_t bias;		/* load bias: run-time address minus link-time address */
	uint16_t e_type;	/* ET_EXEC or ET_DYN */
	int is_main;		/* 1 for the executable itself (AT_ENTRY lies in it) */
	char *file;		/* see module_file */
	Elf *elf;		/* see module_elf */
	struct module_data data[MODULE_DATA_MAX];	/* see module_data */
	size_t ndata;		/* slots in use; published last, so readers need no lock */
};

/* The set of modules of one process image, sorted by start address. */
struct jt_modules {
	struct jt_module **v;
	size_t n;
	uint64_t generation;	/* bumped whenever the set changes */
	/*
	 * Held by a consumer that reads a module's Elf, or attaches module
	 * data, while other threads may do the same (the unwinders, building
	 * their caches on a miss outside the tracer lock): a libelf descriptor
	 * is not safe for concurrent use. Changes to the set itself
	 * (modules_refresh, modules_clear) need the caller's own exclusion.
	 */
	pthread_mutex_t elf_lock;
};

void modules_init(struct jt_modules *m);
/* Frees every module, with the data its consumers attached to it. */
void modules_clear(struct jt_modules *m);

/*
 * Re-reads /proc/PID/maps and adds file-backed ELF mappings not known yet.
 * Modules that disappeared (dlclose) are kept, so stacks captured earlier
 * can still be symbolized, unless a new module overlaps them. Returns the
 * number of modules added, or -1 with errno set.
 */
int modules_refresh(struct jt_modules *m, pid_t pid);

/* Returns the module whose [start, end) holds addr, or NULL. */
struct jt_module *modules_find(const struct jt_modules *m, uint64_t addr);

/* Returns the module whose path equals path, or NULL. */
struct jt_module *modules_by_path(const struct jt_modules *m, const char *path);

/*
 * The module's file as libelf reads it: mapped and complete, its file
 * descriptor already closed (a process may map hundreds of files), and the
 * mapped file itself even when its name now leads elsewhere. Owned by the
 * module and valid until the module is freed. A libelf descriptor is not
 * safe for concurrent use: use it where modules_refresh cannot run at the
 * same time, or take a reference of your own (elf_begin(-1,
 * ELF_C_READ_MMAP, module_elf(m)), ended with elf_end) to keep it longer.
 */
Elf *module_elf(const struct jt_module *m);

/*
 * Copies len bytes at run-time address addr from the module's file, as its
 * PT_LOAD segments map them: the code as the file has it, whatever the
 * process's copy now holds (a debugger's or a kernel uprobe's breakpoint).
 * Reads the file itself (module_file). Caller holds the set's elf_lock. Returns 0, or -1 when the range is not
 * all in one segment's file contents.
 */
int module_read_code(const struct jt_module *m, uint64_t addr, void *buf, size_t len);

/*
 * A path that opens the mapped file, for a library that wants a name
 * (libdwfl): the maps path, or /proc/PID/map_files/START-END when that
 * name no longer leads to the mapped file (" (deleted)": a library
 * upgraded while the target runs; or another file now has that name). The
 * latter is valid only while the process maps the file.
 */
const char *module_file(const struct jt_module *m);

/*
 * State a consumer (unwinder, image.c) keeps per module, found by a key the
 * consumer owns (the address of one of its statics), so that modules.c
 * need not know what the consumers keep. Returns NULL when none was set.
 * Safe while another thread attaches data to m (under the set's elf_lock).
 */
void *module_data(const struct jt_module *m, const void *key);

/*
 * Attaches data to m under key. free_fn (may be NULL) is called on data
 * when m is freed. Data once attached stays until then (a concurrent
 * reader may hold it): returns 0, or -1 when key already has data or every
 * one of the MODULE_DATA_MAX slots is taken. Callers that may race take
 * the set's elf_lock.
 */
int module_set_data(struct jt_module *m, const void *key, void *data, void (*free_fn)(void *));

#endif
