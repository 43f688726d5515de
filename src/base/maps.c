/* maps.c - the mappings of a process: /proc/PID/maps read and parsed into address ranges, permissions and names. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "maps.h"
#include "util.h"

/* Parses one line (NUL-terminated, no newline) into e; its name points into line. Returns 0 or -1. */
static int
maps_parse_line(char *line, struct maps_entry *e)
{
	char perms[8];
	uint64_t start, end, off, ino;
	int pos = 0;

	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %" SCNu64 "%n", &start, &end, perms, &off,
		   &ino, &pos) < 5 || !pos || end < start || strlen(perms) < 4)
		return -1;
	e->start = start;
	e->end = end;
	e->off = off;
	e->ino = ino;
	e->r = perms[0] == 'r';
	e->w = perms[1] == 'w';
	e->x = perms[2] == 'x';
	e->shared = perms[3] == 's';
	/* The name is padded to a column; an anonymous mapping has none. */
	e->name = line + pos + strspn(line + pos, " ");
	return 0;
}

int
maps_parse(const char *text, struct jt_maps *out)
{
	size_t cap = 0;
	char *line, *nl;

	memset(out, 0, sizeof(*out));
	out->text = xstrdup(text);
	for (line = out->text; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (*line) {
			if (out->n == cap) {
				cap = cap ? 2 * cap : 64;
				out->v = xrealloc(out->v, cap * sizeof(*out->v));
			}
			if (maps_parse_line(line, &out->v[out->n]) < 0 ||
			    (out->n && out->v[out->n].start < out->v[out->n - 1].end)) {
				maps_clear(out);
				return -1;
			}
			out->n++;
		}
		if (!nl)
			break;
	}
	return 0;
}

int
maps_text_read(pid_t pid, char **text)
{
	char path[64], *buf = NULL;
	size_t len = 0, cap = 0;
	ssize_t r;
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? (errno = ESRCH, -1) : -1;
	/* Read to the end in one pass: the kernel formats it page by page, so a file is no snapshot, but the process is stopped. */
	do {
		if (cap - len < 4096) {
			cap = cap ? 2 * cap : 16384;
			buf = xrealloc(buf, cap + 1);
		}
		r = read(fd, buf + len, cap - len);
		if (r > 0)
			len += (size_t)r;
	} while (r > 0 || (r < 0 && errno == EINTR));
	err = errno;
	close(fd);
	if (r < 0) {
		free(buf);
		errno = err;
		return -1;
	}
	buf[len] = '\0';
	*text = buf;
	return 0;
}

int
maps_read(pid_t pid, struct jt_maps *out)
{
	char *text;
	int r;

	memset(out, 0, sizeof(*out));
	if (maps_text_read(pid, &text) < 0)
		return -1;
	r = maps_parse(text, out);
	free(text);
	if (r < 0)
		errno = EINVAL;
	return r;
}

ssize_t
maps_find(const struct jt_maps *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < m->v[mid].start)
			hi = mid;
		else if (addr >= m->v[mid].end)
			lo = mid + 1;
		else
			return (ssize_t)mid;
	}
	return -1;
}

void
maps_clear(struct jt_maps *m)
{
	free(m->v);
	free(m->text);
	memset(m, 0, sizeof(*m));
}
