/* sigsafe.h - what a signal handler may do: system calls only, no lock, no allocation, nothing of stdio. */
#ifndef JT_SIGSAFE_H
#define JT_SIGSAFE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The way out (emerg.c) runs in a signal handler while another thread of
 * ours may hold any lock and the allocator may be broken: it reads and
 * writes with these alone. Every one is async-signal-safe.
 */
pid_t sigsafe_gettid(void);
/* Writes s to stderr whole (retried on EINTR and short writes). */
void sigsafe_puts(const char *s);
/* Writes v in decimal at the end of buf (end is one past its last byte, at least 21 bytes); returns where it starts. */
char *sigsafe_utoa(char *end, uint64_t v);
void sigsafe_sleep_ms(long ms);
/* pid's /proc/PID/mem, opened read-write here: mem.c's cache takes a lock. -1 on failure. */
int sigsafe_mem_open(pid_t pid);
/* Reads (wr 0) or writes len bytes at addr of the mem file fd; 0, or -1 when short. */
int sigsafe_rw(int fd, uint64_t addr, void *buf, size_t len, int wr);
/* The byte at addr in pid's memory now, or -1. */
int sigsafe_byte_at(pid_t pid, uint64_t addr);
/* "/proc/A/task/B/FILE" into path (at least 96 bytes); with b 0, "/proc/A/FILE". */
void sigsafe_proc_path(char *path, pid_t a, pid_t b, const char *file);
/* The first len - 1 bytes of a /proc file, NUL-terminated; how many, 0 when it could not be read. */
size_t sigsafe_read_file(const char *path, char *buf, size_t len);
/* Whether task tid of process pid is traced by the kernel thread me (its TracerPid). */
int sigsafe_traced_by(pid_t pid, pid_t tid, pid_t me);
/* The numeric entries of directory path (pids, tids), at most max of them into out; how many. */
int sigsafe_list_dir(const char *path, pid_t *out, int max);

/*
 * Calls fn with each line of path (its newline cut), read through buf
 * (size bytes, the longest line it can hold) until fn returns non-zero.
 * Returns 0, or -1 when path cannot be opened.
 */
int sigsafe_each_line(const char *path, char *buf, size_t size, int (*fn)(char *line, void *arg), void *arg);
#endif
