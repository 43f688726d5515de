/* up_tracefs.c - the kernel's uprobe definitions in tracefs (uprobe_events): made, removed, and never left behind. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "sigsafe.h"
#include "up_tracefs.h"
#include "util.h"

/* How long a removal is tried again while the kernel releases the probe's last event. */
#define UP_TRACEFS_BUSY_MS 2000

int
up_tracefs_number(const char *path)
{
	char buf[64], *p;
	FILE *f = fopen(path, "re");
	int v = -1;

	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f)) {
		p = strchr(buf, ':');
		p = p ? p + 1 : buf;
		if (*p >= '0' && *p <= '9')
			v = atoi(p);
	}
	fclose(f);
	return v;
}

int
up_tracefs_find(char *dir, size_t size)
{
	static const char *const where[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[96];

	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < ARRAY_SIZE(where); i++) {
			snprintf(path, sizeof(path), "%s/uprobe_events", where[i]);
			if (access(path, W_OK) == 0) {
				snprintf(dir, size, "%s", where[i]);
				return 0;
			}
		}
		/* Not mounted (a container, a minimal host): root may mount it. */
		if (pass == 0 && mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) < 0)
			break;
	}
	return -1;
}

/* Async-signal-safe: open, write and close only. */
static int
up_tracefs_write_len(const char *dir, const char *line, size_t len)
{
	char path[96];
	size_t n = strlen(dir);
	int fd, r, e;

	if (n + sizeof("/uprobe_events") > sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(path, dir, n);
	memcpy(path + n, "/uprobe_events", sizeof("/uprobe_events"));
	if ((fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)) < 0)
		return -1;
	r = write(fd, line, len) == (ssize_t)len ? 0 : -1;
	e = errno;
	close(fd);
	errno = e;
	return r;
}

int
up_tracefs_write(const char *dir, const char *line)
{
	return up_tracefs_write_len(dir, line, strlen(line));
}

int
up_tracefs_remove(const char *dir, const char *group, const char *name)
{
	char del[128];
	int waited = 0;

	snprintf(del, sizeof(del), "-:%s/%s\n", group, name);
	while (up_tracefs_write(dir, del) < 0) {
		if (errno != EBUSY || waited >= UP_TRACEFS_BUSY_MS)
			return -1;
		sigsafe_sleep_ms(10);
		waited += 10;
	}
	if (waited)
		debug_msg("uprobe definition %s/%s: removed after %d ms busy", group, name, waited);
	return 0;
}

void
up_tracefs_clean_stale(const char *dir)
{
	char path[96], line[512], group[32], ev[64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/uprobe_events", dir);
	if (!(f = fopen(path, "re")))
		return;
	while (fgets(line, sizeof(line), f)) {
		int pid;

		if (sscanf(line, "%*c:jmptrace_%d/%63s", &pid, ev) != 2 || pid <= 0 || kill(pid, 0) == 0 ||
		    errno != ESRCH)
			continue;
		snprintf(group, sizeof(group), "jmptrace_%d", pid);
		if (up_tracefs_remove(dir, group, ev) < 0)
			debug_msg("the uprobe definition %s/%s of a jmptrace run that is gone: not removed: %s", group,
				  ev, strerror(errno));
	}
	fclose(f);
}

/* One pass of up_tracefs_remove_group_sigsafe: what it looks for and what it found. */
struct up_tracefs_pass {
	const char *dir, *group;
	size_t glen;
	int found, left;
};

static int
up_tracefs_remove_line(char *line, void *arg)
{
	struct up_tracefs_pass *ps = arg;
	char del[128];
	size_t n;

	/* "p:GROUP/NAME PATH:OFFSET": the type letter, then ours or not. */
	if (!line[0] || line[1] != ':' || strncmp(line + 2, ps->group, ps->glen) != 0 || line[2 + ps->glen] != '/')
		return 0;
	ps->found++;
	line += 2;
	n = strcspn(line, " \t");
	if (n + 4 > sizeof(del))
		return 0;
	del[0] = '-';
	del[1] = ':';
	memcpy(del + 2, line, n);
	del[2 + n] = '\n';
	if (up_tracefs_write_len(ps->dir, del, n + 3) < 0)
		ps->left++;
	return 0;
}

int
up_tracefs_remove_group_sigsafe(const char *dir, const char *group, long wait_ms)
{
	static char buf[8192];	/* the way out runs once: no stack of ours is spent on it */
	char path[96];
	size_t n = strlen(dir);
	struct up_tracefs_pass ps = { .dir = dir, .group = group, .glen = strlen(group) };

	if (n + sizeof("/uprobe_events") > sizeof(path))
		return 0;
	memcpy(path, dir, n);
	memcpy(path + n, "/uprobe_events", sizeof("/uprobe_events"));
	/* Passes: a line removed while the file is read may hide the next one from that read. */
	for (long waited = 0;;) {
		ps.found = ps.left = 0;
		if (sigsafe_each_line(path, buf, sizeof(buf), up_tracefs_remove_line, &ps) < 0 || !ps.found ||
		    waited >= wait_ms)
			return ps.left;
		if (ps.left) {
			sigsafe_sleep_ms(20);
			waited += 20;
		}
	}
}
