/* up_tracefs.h - the kernel's uprobe definitions in tracefs (uprobe_events): made, removed, and never left behind. */
#ifndef JT_UP_TRACEFS_H
#define JT_UP_TRACEFS_H
#include <stddef.h>

/*
 * A definition is a line of uprobe_events ("p:GROUP/NAME PATH:OFFSET");
 * jmptrace's group is jmptrace_PID. The kernel keeps a definition until it
 * is removed ("-:GROUP/NAME"), whoever made it and whatever became of them,
 * and refuses (EBUSY) while a perf event is open on it: so a run removes its
 * own at its end, the way out of a dying one removes them too
 * (up_tracefs_remove_group_sigsafe), and each run removes those of runs that
 * were killed (up_tracefs_clean_stale).
 */

/* Finds (or mounts) tracefs; stores the directory that has uprobe_events. Returns 0 or -1. */
int up_tracefs_find(char *dir, size_t size);
/* Appends line (ending in a newline) to dir's uprobe_events. Returns 0 or -1 with errno. */
int up_tracefs_write(const char *dir, const char *line);
/*
 * Removes GROUP/NAME, trying again for a while when the kernel says it is
 * busy (the last perf event on it is still being released). Returns 0 or
 * -1 with errno.
 */
int up_tracefs_remove(const char *dir, const char *group, const char *name);
/* Removes the definitions of jmptrace runs that are gone without removing theirs (SIGKILL). */
void up_tracefs_clean_stale(const char *dir);
/*
 * Async-signal-safe: removes every definition of group, in passes until
 * none is left or about wait_ms have gone by (one stays busy while an event
 * on it is open). Returns how many are left.
 */
int up_tracefs_remove_group_sigsafe(const char *dir, const char *group, long wait_ms);
/* The first number in file path (after "config:" in a format file), or -1. */
int up_tracefs_number(const char *path);
#endif
