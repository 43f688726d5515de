/* procfs.h - reads single facts about a process or thread from /proc. */
#ifndef JT_PROCFS_H
#define JT_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Copies the value of the "key:" line of /proc/PID/status (leading blanks and
 * the newline stripped) into buf. Returns 0, or -1 when the file or the line
 * is not there.
 */
int procfs_status_field(pid_t pid, const char *key, char *buf, size_t size);

/*
 * Sets *val to numeric field `field` (numbered from 1 as in proc(5), 3 or
 * more) of /proc/PID/stat. Cheaper than the status file: one open, read and
 * close, and less for the kernel to format. Returns 0, or -1.
 */
int procfs_stat_field(pid_t pid, int field, unsigned long long *val);


/* Sets *val to the auxiliary vector entry of type (AT_*) of pid. Returns 0, or -1 when it is not there. */
int procfs_auxv(pid_t pid, uint64_t type, uint64_t *val);

/*
 * The command line of pid as ps shows it: the arguments of
 * /proc/PID/cmdline joined by blanks, a control character as '?', cut
 * with "..." after about 4 KiB. Returns it malloc'ed, or NULL when there
 * is none (a zombie) or /proc cannot say.
 */
char *procfs_cmdline(pid_t pid);

/* The target of /proc/PID/exe: the executable's file, symlinks resolved. Returns it malloc'ed, or NULL. */
char *procfs_exe(pid_t pid);

#endif
