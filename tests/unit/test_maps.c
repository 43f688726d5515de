/* test_maps.c - unit tests for maps, the one parser of /proc/PID/maps: lines longer than 512 bytes, for itself, modules and hand-overs. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "park_pc.h"
#include "maps.h"
#include "modules.h"
#include "park.h"
#include "proc.h"
#include "tap.h"
#include "util.h"

#define LONG_PATH 600

/* Where the files with long paths go: /tmp/jt-maps-PID. */
static char base[64];

/* A path of exactly LONG_PATH bytes: "BASE/a...a/b...b/...". */
static void
long_path(char *buf)
{
	size_t n = (size_t)snprintf(buf, LONG_PATH + 1, "%s", base);

	while (n < LONG_PATH) {
		size_t seg = LONG_PATH - n - 1 < 200 ? LONG_PATH - n - 1 : 200;

		buf[n++] = '/';
		memset(buf + n, 'a' + (char)(n % 26), seg);
		n += seg;
	}
	buf[n] = '\0';
}

/* maps_parse on text: a 600-byte path is one name, the lines around it are whole. */
static void
test_parse_long(void)
{
	char path[LONG_PATH + 1], *text;
	struct jt_maps m;

	long_path(path);
	if (asprintf(&text, "00400000-00401000 r-xp 00000000 08:01 42                                 /bin/x\n"
		     "7f0000000000-7f0000002000 r-xp 00001000 08:01 4242                       %s\n"
		     "7ffc00000000-7ffc00002000 r-xp 00000000 00:00 0                          [vdso]\n", path) < 0)
		abort();
	ok(maps_parse(text, &m) == 0, "maps_parse: a line with a 600-byte path parses");
	is_u64(m.n, 3, "three mappings, the long line one of them");
	ok(m.n == 3 && strcmp(m.v[1].name, path) == 0, "its name is the whole path");
	ok(m.n == 3 && m.v[1].start == 0x7f0000000000 && m.v[1].end == 0x7f0000002000 && m.v[1].off == 0x1000 &&
	   m.v[1].ino == 4242 && m.v[1].x && !m.v[1].w, "its range, offset, inode and permissions");
	ok(m.n == 3 && strcmp(m.v[2].name, "[vdso]") == 0 && m.v[2].start == 0x7ffc00000000,
	   "the line after it is whole");
	maps_clear(&m);
	free(text);
}

/* Makes the directories of path (a file's), one by one. */
static int
mkdirs(const char *path)
{
	char *p = xstrdup(path), *s;
	int r = 0;

	for (s = strchr(p + 1, '/'); s && r == 0; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			r = -1;
		*s = '/';
	}
	free(p);
	return r;
}

/* Removes the file at path and its directories up to base. */
static void
rm_path(const char *path)
{
	char *p = xstrdup(path), *s;

	unlink(p);
	while ((s = strrchr(p, '/')) && (size_t)(s - p) >= strlen(base)) {
		*s = '\0';
		rmdir(p);
	}
	free(p);
}

/* Copies our own executable to path and maps its first page executable. Returns the address or NULL. */
static void *
map_copy_of_self(const char *path, size_t *len)
{
	char buf[65536];
	int in = open("/proc/self/exe", O_RDONLY), out;
	ssize_t n;
	void *a;

	if (in < 0 || mkdirs(path) < 0 || (out = open(path, O_RDWR | O_CREAT | O_TRUNC, 0700)) < 0)
		return NULL;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			break;
	close(in);
	*len = (size_t)lseek(out, 0, SEEK_END);
	a = mmap(NULL, *len, PROT_READ | PROT_EXEC, MAP_PRIVATE, out, 0);
	close(out);
	return a == MAP_FAILED ? NULL : a;
}

/* A file mapped from a 600-byte path: maps_read and modules_refresh name it whole. */
static void
test_live_long(void)
{
	char path[LONG_PATH + 1];
	struct jt_modules mods;
	struct jt_maps m;
	size_t len, found = 0, i;
	void *a;

	long_path(path);
	if (!(a = map_copy_of_self(path, &len))) {
		ok(0, "a copy of ourselves mapped from a 600-byte path");
		return;
	}
	ok(maps_read(getpid(), &m) == 0, "maps_read on ourselves");
	for (i = 0; i < m.n; i++)
		found += m.v[i].start == (uintptr_t)a && m.v[i].x && strcmp(m.v[i].name, path) == 0;
	is_u64(found, 1, "maps_read: the mapping, named by its whole 600-byte path");
	maps_clear(&m);
	modules_init(&mods);
	ok(modules_refresh(&mods, getpid()) >= 2, "modules_refresh on ourselves");
	for (i = 0, found = 0; i < mods.n; i++)
		found += mods.v[i]->start == (uintptr_t)a && strcmp(mods.v[i]->path, path) == 0 && module_elf(mods.v[i]);
	is_u64(found, 1, "modules_refresh: a module at the mapping, by its whole path, its ELF open");
	modules_clear(&mods);
	munmap(a, len);
	rm_path(path);
}

/*
 * Renames the mapped file at *path, in its directory, so that its maps line
 * has tail at byte 511: where a 512-byte fgets split the line, the rest
 * read as a line of its own. Returns 0, with *path the new name.
 */
static int
rename_for_tail(char *path, uintptr_t at, const char *tail)
{
	char *text, *line, *nl, *dir_end = strrchr(path, '/'), newp[1024];
	size_t prefix = 0, pad;
	int r = -1;

	if (maps_text_read(getpid(), &text) < 0)
		return -1;
	for (line = text; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (strtoull(line, NULL, 16) == at && strstr(line, path)) {
			prefix = (size_t)(strstr(line, path) - line);
			break;
		}
	}
	free(text);
	pad = 511 - prefix - (size_t)(dir_end - path) - 1;
	if (!prefix || pad > 200)
		return -1;
	snprintf(newp, sizeof(newp), "%.*s/%.*s%s", (int)(dir_end - path), path, (int)pad,
		 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", tail);
	if (rename(path, newp) == 0) {
		strcpy(path, newp);
		r = 0;
	}
	return r;
}

/*
 * park_pc_syscall looks for a system call instruction in the vDSO first.
 * A mapped file whose name, past byte 511 of its line, reads as a line of
 * the vDSO with the range of a buffer that holds that instruction but may
 * not run it: a 512-byte fgets took the buffer for the vDSO and parked
 * threads there. With the one parser the name is only a name.
 */
static void
test_handover_long(void)
{
	char path[1024], tail[160];
	struct jt_proc p = { 0 };
	struct jt_maps m;
	uint8_t *buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t len;
	ssize_t k;
	void *a;

	snprintf(path, sizeof(path), "%s/%0200d/%0150d/f", base, 0, 0);
	if (buf == MAP_FAILED || !(a = map_copy_of_self(path, &len))) {
		ok(0, "a copy of ourselves mapped from a long path");
		return;
	}
	memcpy(buf + 100, arch_park_bytes(ARCH_PARK_SYSCALL), ARCH_PARK_CODE_LEN);
	snprintf(tail, sizeof(tail), "%" PRIxPTR "-%" PRIxPTR " r-xp 00000000 00:00 0 [vdso]",
		 (uintptr_t)buf, (uintptr_t)buf + 4096);
	ok(rename_for_tail(path, (uintptr_t)a, tail) == 0, "the file renamed so that its line holds a vDSO line at byte 511");
	p.pid = getpid();
	p.park_pc = park_pc_syscall(&p);
	ok(p.park_pc && (p.park_pc < (uintptr_t)buf || p.park_pc >= (uintptr_t)buf + 4096),
	   "park_pc_syscall: not in the buffer the file's name points at");
	ok(maps_read(getpid(), &m) == 0 && (k = maps_find(&m, p.park_pc)) >= 0 && m.v[k].x &&
	   strcmp(m.v[k].name, "[vdso]") == 0, "but in the real vDSO, which may run it");
	maps_clear(&m);
	munmap(a, len);
	munmap(buf, 4096);
	rm_path(path);
}

int
main(void)
{
	snprintf(base, sizeof(base), "/tmp/jt-maps-%d", (int)getpid());
	test_parse_long();
	test_live_long();
	test_handover_long();
	return tap_done();
}
