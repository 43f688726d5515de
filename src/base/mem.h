/* mem.h - reads and writes another process's memory in bulk. */
#ifndef JT_MEM_H
#define JT_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Access to a target's memory given by a caller, so that code which reads
 * and writes the target (the instruction emulator, call matching) can be
 * driven by a fake memory map in a unit test. Both return 0 or -1.
 */
struct jt_mem_ops {
	/* Reads len bytes at addr into buf. */
	int (*read)(void *arg, uint64_t addr, void *buf, size_t len);
	/* Writes len bytes from buf at addr. */
	int (*write)(void *arg, uint64_t addr, const void *buf, size_t len);
	void *arg;		/* passed to both */
};

/*
 * Reads len bytes at addr in process pid with process_vm_readv, falling back
 * to pread of /proc/PID/mem. Returns 0 when all bytes were read, -1 with
 * errno set otherwise (ESRCH when the process is gone).
 */
int mem_read(pid_t pid, uint64_t addr, void *buf, size_t len);

/*
 * Writes len bytes at addr, also into read-only text (through /proc/PID/mem,
 * which the kernel lets a tracer do). Returns 0 or -1 with errno set.
 */
int mem_write(pid_t pid, uint64_t addr, const void *buf, size_t len);

/*
 * Forgets any cached descriptor of pid's memory. Call it when pid execs: a
 * descriptor opened before still reads the old image and fails with EIO.
 */
void mem_forget(pid_t pid);

#endif
