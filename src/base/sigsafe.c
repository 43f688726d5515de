/* sigsafe.c - what a signal handler may do: system calls only, no lock, no allocation, nothing of stdio. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "sigsafe.h"

pid_t
sigsafe_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

void
sigsafe_puts(const char *s)
{
	size_t len = strlen(s);

	while (len > 0) {
		ssize_t n = write(STDERR_FILENO, s, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		s += n;
		len -= (size_t)n;
	}
}

char *
sigsafe_utoa(char *end, uint64_t v)
{
	*--end = '\0';
	do
		*--end = (char)('0' + v % 10);
	while (v /= 10);
	return end;
}

void
sigsafe_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int
sigsafe_mem_open(pid_t pid)
{
	char num[24], path[48] = "/proc/";

	strcat(path, sigsafe_utoa(num + sizeof(num), (uint64_t)pid));
	strcat(path, "/mem");
	return open(path, O_RDWR | O_CLOEXEC);
}

int
sigsafe_rw(int fd, uint64_t addr, void *buf, size_t len, int wr)
{
	ssize_t n = wr ? pwrite(fd, buf, len, (off_t)addr) : pread(fd, buf, len, (off_t)addr);

	return n == (ssize_t)len ? 0 : -1;
}

int
sigsafe_byte_at(pid_t pid, uint64_t addr)
{
	uint8_t b;
	struct iovec local = { &b, 1 }, remote = { (void *)addr, 1 };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == 1 ? b : -1;
}

void
sigsafe_proc_path(char *path, pid_t a, pid_t b, const char *file)
{
	char num[24];

	strcpy(path, "/proc/");
	strcat(path, sigsafe_utoa(num + sizeof(num), (uint64_t)a));
	if (b > 0) {
		strcat(path, "/task/");
		strcat(path, sigsafe_utoa(num + sizeof(num), (uint64_t)b));
	}
	strcat(path, "/");
	strcat(path, file);
}

size_t
sigsafe_read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	return (size_t)n;
}

int
sigsafe_traced_by(pid_t pid, pid_t tid, pid_t me)
{
	char path[96], buf[2048];
	const char *s;
	long v = 0;

	sigsafe_proc_path(path, pid, tid, "status");
	if (!sigsafe_read_file(path, buf, sizeof(buf)) || !(s = strstr(buf, "TracerPid:")))
		return 0;
	for (s += strlen("TracerPid:"); *s == '\t' || *s == ' '; s++)
		;
	for (; *s >= '0' && *s <= '9'; s++)
		v = v * 10 + (*s - '0');
	return v == me;
}

int
sigsafe_list_dir(const char *path, pid_t *out, int max)
{
	char buf[4096];
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), n = 0;
	long len;

	if (fd < 0)
		return 0;
	while (n < max && (len = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
		for (long off = 0; off < len && n < max;) {
			const char *name = buf + off + 19;	/* d_ino 8, d_off 8, d_reclen 2, d_type 1 */
			unsigned short reclen;
			long v = 0;

			memcpy(&reclen, buf + off + 16, sizeof(reclen));
			off += reclen;
			for (; *name >= '0' && *name <= '9'; name++)
				v = v * 10 + (*name - '0');
			if (!*name && v > 0)
				out[n++] = (pid_t)v;
		}
	close(fd);
	return n;
}

int
sigsafe_each_line(const char *path, char *buf, size_t size, int (*fn)(char *line, void *arg), void *arg)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), stop = 0;
	size_t have = 0;

	if (fd < 0)
		return -1;
	while (!stop) {
		ssize_t n = read(fd, buf + have, size - 1 - have);
		char *line, *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		for (line = buf; !stop && (nl = strchr(line, '\n')); line = nl + 1) {
			*nl = '\0';
			stop = fn(line, arg);
		}
		/* A line longer than the buffer is dropped whole. */
		have = line == buf && have == size - 1 ? 0 : have - (size_t)(line - buf);
		memmove(buf, line, have);
	}
	close(fd);
	return 0;
}
