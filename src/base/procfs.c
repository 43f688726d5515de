/* procfs.c - reads single facts about a process or thread from /proc. */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"
#include "util.h"

/* How much of a command line is kept: ps without -ww shows less. */
#define PROCFS_CMDLINE_MAX 4096

int
procfs_status_field(pid_t pid, const char *key, char *buf, size_t size)
{
	char path[64], line[512];
	size_t klen = strlen(key);
	FILE *f;
	int ret = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (!(f = fopen(path, "re")))
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		snprintf(buf, size, "%s", line + klen + 1 + strspn(line + klen + 1, " \t"));
		buf[strcspn(buf, "\n")] = 0;
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

int
procfs_stat_field(pid_t pid, int field, unsigned long long *val)
{
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	/* Field 2, the command, is in parentheses and may hold blanks and ')': count from the last ')'. */
	if (field < 3 || !(p = strrchr(buf, ')')))
		return -1;
	p++;
	for (int f = 3; f <= field; f++) {
		char *end;

		p += strspn(p, " ");
		if (f == field) {
			*val = strtoull(p, &end, 10);
			return end == p ? -1 : 0;
		}
		p += strcspn(p, " ");
		if (!*p)
			return -1;
	}
	return -1;
}

int
procfs_auxv(pid_t pid, uint64_t type, uint64_t *val)
{
	uint64_t pair[2];
	char path[64];
	int fd, ret = -1;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	while (read(fd, pair, sizeof(pair)) == sizeof(pair) && pair[0] != AT_NULL) {
		if (pair[0] == type) {
			*val = pair[1];
			ret = 0;
			break;
		}
	}
	close(fd);
	return ret;
}

char *
procfs_cmdline(pid_t pid)
{
	char path[64], *buf = xmalloc(PROCFS_CMDLINE_MAX + 4);
	ssize_t n = -1, r;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		for (n = 0; n < PROCFS_CMDLINE_MAX; n += r)
			if ((r = read(fd, buf + n, PROCFS_CMDLINE_MAX - (size_t)n)) <= 0)
				break;
		close(fd);
	}
	if (n <= 0) {
		free(buf);
		return NULL;
	}
	util_args_line(buf, (size_t)n);
	if (n == PROCFS_CMDLINE_MAX)
		strcpy(buf + n - 1, "...");
	return buf;
}

char *
procfs_exe(pid_t pid)
{
	char path[64], exe[4096];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if ((n = readlink(path, exe, sizeof(exe) - 1)) <= 0)
		return NULL;
	exe[n] = '\0';
	return xstrdup(exe);
}
