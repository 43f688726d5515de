/* test_maps.c - unit tests for maps, the one parser of /proc/PID/maps: every kind of line, lines longer than 512 bytes, for itself, modules and hand-overs. */
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
#include "options.h"
#include "proc.h"
#include "tracer.h"
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

/* The kinds of line the kernel writes, each parsed into its fields. */
static const char tricky_text[] =
	"00400000-00401000 r-xp 00000000 fd:01 1234567890                         /usr/bin/my prog\n"
	"00600000-00601000 rw-p 00000000 00:00 0 \n"
	"00601000-00602000 rw-p 00000000 00:00 0\n"
	"01000000-01021000 rw-p 00000000 00:00 0                                  [heap]\n"
	"7f0000000000-7f0000001000 r--p 00002000 08:01 77                         /tmp/a b/lib c.so (deleted)\n"
	"7f0000001000-7f0000002000 rw-s 00000000 00:05 88                         /dev/shm/seg\n"
	"7f0000002000-7f0000003000 rw-p 00000000 00:00 0                          [anon:my arena]\n"
	"7f0000003000-7f0000004000 r--p 00000000 08:01 99                         /tmp/new\\012line\n"
	"7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                          [stack]\n"
	"7ffc00100000-7ffc00104000 r--p 00000000 00:00 0                          [vvar]\n"
	"7ffc00104000-7ffc00106000 r-xp 00000000 00:00 0                          [vdso]\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]";

/* Checks entry i of m: its range and name. */
static void
tricky_is(const struct jt_maps *m, size_t i, uint64_t start, uint64_t end, const char *name)
{
	ok(i < m->n && m->v[i].start == start && m->v[i].end == end && strcmp(m->v[i].name, name) == 0,
	   "entry %zu: %#" PRIx64 "-%#" PRIx64 " named '%s'", i, start, end, name);
}

/* maps_parse on the kinds of line there are: names with blanks, (deleted), none, [special]. */
static void
test_parse_tricky(void)
{
	struct jt_maps m;

	ok(maps_parse(tricky_text, &m) == 0, "maps_parse: every kind of line");
	is_u64(m.n, 12, "twelve mappings, the last one without a newline");
	tricky_is(&m, 0, 0x400000, 0x401000, "/usr/bin/my prog");
	ok(m.n > 0 && m.v[0].ino == 1234567890 && m.v[0].r && !m.v[0].w && m.v[0].x && !m.v[0].shared,
	   "a file's inode (device fd:01) and r-xp");
	tricky_is(&m, 1, 0x600000, 0x601000, "");
	tricky_is(&m, 2, 0x601000, 0x602000, "");
	ok(m.n > 2 && m.v[1].ino == 0 && m.v[2].ino == 0 && m.v[2].w, "anonymous, with a blank after the inode or none");
	tricky_is(&m, 3, 0x1000000, 0x1021000, "[heap]");
	tricky_is(&m, 4, 0x7f0000000000, 0x7f0000001000, "/tmp/a b/lib c.so (deleted)");
	ok(m.n > 4 && m.v[4].off == 0x2000, "the offset of a deleted file's mapping");
	tricky_is(&m, 5, 0x7f0000001000, 0x7f0000002000, "/dev/shm/seg");
	ok(m.n > 5 && m.v[5].shared && m.v[5].w, "rw-s is shared");
	tricky_is(&m, 6, 0x7f0000002000, 0x7f0000003000, "[anon:my arena]");
	tricky_is(&m, 7, 0x7f0000003000, 0x7f0000004000, "/tmp/new\\012line");
	tricky_is(&m, 8, 0x7ffc00000000, 0x7ffc00021000, "[stack]");
	tricky_is(&m, 9, 0x7ffc00100000, 0x7ffc00104000, "[vvar]");
	tricky_is(&m, 10, 0x7ffc00104000, 0x7ffc00106000, "[vdso]");
	tricky_is(&m, 11, 0xffffffffff600000, 0xffffffffff601000, "[vsyscall]");
	ok(m.n > 11 && !m.v[11].r && m.v[11].x, "--xp");
	ok(maps_find(&m, 0x400000) == 0 && maps_find(&m, 0x400fff) == 0 && maps_find(&m, 0x401000) == -1,
	   "maps_find: the start is in, the end is not");
	ok(maps_find(&m, 0x1020fff) == 3 && maps_find(&m, 0x3fffff) == -1 && maps_find(&m, 0xffffffffff600000) == 11,
	   "maps_find: in a mapping, in a gap, the last");
	maps_clear(&m);
	ok(maps_parse("", &m) == 0 && m.n == 0, "maps_parse: no text, no mappings");
	maps_clear(&m);
}

/* maps_parse refuses what the callers could not search by address, and leaves out empty. */
static void
test_parse_bad(void)
{
	static const char *const bad[] = {
		"garbage\n",
		"00400000-00401000 r-xp 00000000 08:01\n",
		"00401000-00400000 r-xp 00000000 08:01 1 /x\n",
		"00400000-00401000 r-x 00000000 08:01 1 /x\n",
		"00500000-00501000 r-xp 00000000 08:01 1 /x\n00400000-00401000 r-xp 00000000 08:01 1 /y\n",
		"00400000-00402000 r-xp 00000000 08:01 1 /x\n00401000-00403000 r-xp 00000000 08:01 1 /y\n",
	};
	static const char *const why[] = {
		"not a range", "no inode", "end before start", "three permission letters", "out of order", "overlapping",
	};
	struct jt_maps m;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&m, 0xff, sizeof(m));
		ok(maps_parse(bad[i], &m) < 0 && m.n == 0 && !m.v && !m.text, "maps_parse refuses a line: %s", why[i]);
	}
}

/* A file with blanks in its path, mapped and deleted: maps_read names it as the kernel does. */
static void
test_live_deleted(void)
{
	char path[128], want[160];
	struct jt_maps m;
	size_t found = 0;
	void *a = MAP_FAILED;
	int fd;

	snprintf(path, sizeof(path), "%s/a dir/f g", base);
	if (mkdirs(path) == 0 && (fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600)) >= 0) {
		if (ftruncate(fd, 4096) == 0)
			a = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
		close(fd);
	}
	if (a == MAP_FAILED) {
		ok(0, "a file with blanks in its path mapped");
		return;
	}
	rm_path(path);
	snprintf(want, sizeof(want), "%s (deleted)", path);
	ok(maps_read(getpid(), &m) == 0, "maps_read on ourselves");
	for (size_t i = 0; i < m.n; i++)
		found += m.v[i].start == (uintptr_t)a && m.v[i].end == (uintptr_t)a + 4096 && strcmp(m.v[i].name, want) == 0;
	is_u64(found, 1, "maps_read: the deleted file's mapping, its blanks and \" (deleted)\" in its name");
	maps_clear(&m);
	munmap(a, 4096);
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
	test_parse_tricky();
	test_parse_bad();
	test_live_deleted();
	test_live_long();
	test_handover_long();
	return tap_done();
}
