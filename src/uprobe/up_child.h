/* up_child.h - the uprobe source's trap bytes taken out of a forked child that is not traced. */
#ifndef JT_UP_CHILD_H
#define JT_UP_CHILD_H

#include <sys/types.h>

struct jt_proc;

/*
 * child, forked from parent and stopped at its first stop, is let go (no
 * -f): puts the file's bytes back where parent's uprobe sites left the
 * kernel's trap bytes in child's copy of its memory. Returns 0, or -1 when
 * some site could not be cleaned (the child then traps there, unrecorded).
 */
int up_child_release(struct jt_proc *parent, pid_t child);

#endif
