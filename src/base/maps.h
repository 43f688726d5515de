/* maps.h - the mappings of a process: /proc/PID/maps read and parsed into address ranges, permissions and names. */
#ifndef JT_MAPS_H
#define JT_MAPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One line of /proc/PID/maps. */
struct maps_entry {
	uint64_t start, end;	/* [start, end) */
	uint64_t off;		/* file offset */
	uint64_t ino;		/* 0 for an anonymous mapping */
	unsigned r:1, w:1, x:1, shared:1;
	const char *name;	/* path or "[heap]", "[stack]"...; "" when anonymous */
};

/* All the mappings of one process, in the order of the file (by start address). */
struct jt_maps {
	struct maps_entry *v;
	size_t n;
	char *text;		/* a copy of the text, which the names point into */
};

/*
 * Parses the text of /proc/PID/maps into out (malloc'ed; free it with
 * maps_clear). Returns 0, or -1 (out empty) when a line is malformed or
 * the lines are not in address order: the callers search by address.
 */
int maps_parse(const char *text, struct jt_maps *out);

/*
 * Reads /proc/PID/maps whole into *text (malloc'ed, NUL-terminated).
 * Returns 0, or -1 with errno set (ESRCH when the process is gone).
 */
int maps_text_read(pid_t pid, char **text);

/*
 * maps_text_read and maps_parse in one: the mappings of pid into out (free
 * it with maps_clear). Returns 0, or -1 with errno set (ESRCH when the
 * process is gone, EINVAL when the text does not parse).
 */
int maps_read(pid_t pid, struct jt_maps *out);

/* The index of the mapping that holds addr, or -1. */
ssize_t maps_find(const struct jt_maps *m, uint64_t addr);

/* Frees what m holds and zeroes it. */
void maps_clear(struct jt_maps *m);

#endif
