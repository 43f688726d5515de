/* mem.c - bulk reads and writes of a traced process's memory (process_vm_readv, /proc/PID/mem). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/uio.h>
#include <unistd.h>

#include "mem.h"

/*
 * A tiny cache of open /proc/PID/mem descriptors, keyed by pid. It holds no
 * per-thread state, only descriptors, so that a breakpoint insertion does not
 * cost an open() and a close() each time. Tracer threads share it:
 * mem_fds_lock covers the cache and every use of a descriptor from it, so no
 * thread closes one that another reads through (process_vm_readv, mem_read's
 * common path, takes no lock). A cached descriptor can go stale: after
 * execve it still points at the old address space, and after the pid is
 * reused it points at a dead one.
 * Both show up as end-of-file (a bad address gives EIO instead), so mem_pio()
 * then retries once with a fresh descriptor.
 */
#define MEM_FD_SLOTS 4

struct mem_fd_slot {
	pid_t pid;	/* 0: free */
	int fd;
};

static struct mem_fd_slot mem_fds[MEM_FD_SLOTS];
static pthread_mutex_t mem_fds_lock = PTHREAD_MUTEX_INITIALIZER;
static void mem_fd_drop(pid_t pid);
static unsigned int mem_fd_next;	/* round-robin victim */

void
mem_forget(pid_t pid)
{
	pthread_mutex_lock(&mem_fds_lock);
	mem_fd_drop(pid);
	pthread_mutex_unlock(&mem_fds_lock);
}

static void
mem_fd_drop(pid_t pid)
{
	size_t i;

	for (i = 0; i < MEM_FD_SLOTS; i++) {
		if (mem_fds[i].pid == pid) {
			close(mem_fds[i].fd);
			mem_fds[i].pid = 0;
		}
	}
}

/* Returns a cached or newly opened descriptor, or -1 with errno set. */
static int
mem_fd_get(pid_t pid)
{
	struct mem_fd_slot *s;
	char path[64];
	size_t i;
	int fd;

	for (i = 0; i < MEM_FD_SLOTS; i++)
		if (mem_fds[i].pid == pid)
			return mem_fds[i].fd;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int) pid);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? (errno = ESRCH, -1) : -1;
	s = &mem_fds[mem_fd_next++ % MEM_FD_SLOTS];
	if (s->pid)
		close(s->fd);
	s->pid = pid;
	s->fd = fd;
	return fd;
}

/*
 * Transfers len bytes at addr with pread or pwrite on the cached descriptor.
 * Returns the number of bytes moved before the first failure.
 */
static size_t
mem_pio_once(int fd, uint64_t addr, void *buf, size_t len, int write)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		if (write)
			n = pwrite(fd, (char *) buf + done, len - done, (off_t) (addr + done));
		else
			n = pread(fd, (char *) buf + done, len - done, (off_t) (addr + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0)
			errno = ESTALE;	/* no address space behind fd */
		if (n <= 0)
			break;
		done += n;
	}
	return done;
}

/* mem_pio with mem_fds_lock held. */
static int
mem_pio_locked(pid_t pid, uint64_t addr, void *buf, size_t len, int write)
{
	size_t done;
	int fd, attempt;

	if ((int64_t) addr < 0) {
		errno = EFAULT;	/* beyond what an off_t can name: kernel space */
		return -1;
	}
	for (attempt = 0; attempt < 2; attempt++) {
		fd = mem_fd_get(pid);
		if (fd < 0)
			return -1;
		done = mem_pio_once(fd, addr, buf, len, write);
		if (done == len)
			return 0;
		if (errno != ESTALE)
			return -1;	/* EIO: an unmapped address */
		mem_fd_drop(pid);
		addr += done;
		buf = (char *) buf + done;
		len -= done;
	}
	errno = ESRCH;	/* even a fresh descriptor sees no address space */
	return -1;
}

/* Returns 0 when all len bytes moved, -1 with errno set otherwise. */
static int
mem_pio(pid_t pid, uint64_t addr, void *buf, size_t len, int write)
{
	int ret, err;

	pthread_mutex_lock(&mem_fds_lock);
	ret = mem_pio_locked(pid, addr, buf, len, write);
	err = errno;
	pthread_mutex_unlock(&mem_fds_lock);
	errno = err;
	return ret;
}

int
mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote = { (void *) (uintptr_t) addr, len };
	ssize_t n;

	if (len == 0)
		return 0;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n == (ssize_t) len)
		return 0;
	if (n < 0 && errno == ESRCH)
		return -1;
	/*
	 * A short read stops at the first page process_vm_readv cannot touch,
	 * for example a PROT_NONE page that /proc/PID/mem may still read.
	 * EPERM and ENOSYS (seccomp, old kernels) also end up here.
	 */
	if (n < 0)
		n = 0;
	return mem_pio(pid, addr + n, (char *) buf + n, len - n, 0);
}

int
mem_write(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	if (len == 0)
		return 0;
	return mem_pio(pid, addr, (void *) buf, len, 1);
}
