/* modules.h - the ELF files mapped in a process, with their address ranges and load bias. */
#ifndef JT_MODULES_H
#define JT_MODULES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct jt_unwind_index;	/* private to unwind.c */

/* One ELF file mapped into the target. */
struct jt_module {
	char *path;		/* absolute path as in /proc/PID/maps */
	uint64_t start, end;	/* lowest and highest address of its mappings */
	uint64_t bias;		/* load bias: run-time address minus link-time address */
	uint16_t e_type;	/* ET_EXEC or ET_DYN */
	int reported;		/* image.c has handed it to libdwfl */
	int is_main;		/* 1 for the executable itself (AT_ENTRY lies in it) */
	struct jt_unwind_index *uw;	/* built lazily by unwind.c, freed by modules */
};

/* The set of modules of one process image, sorted by start address. */
struct jt_modules {
	struct jt_module **v;
	size_t n;
	uint64_t generation;	/* bumped whenever the set changes */
};

void modules_init(struct jt_modules *m);
/* Frees every module (and its unwind index). */
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

#endif
