/* modules.c - the set of ELF files mapped in a process, read from /proc/PID/maps; each module owns its opened file. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arch.h"
#include "modules.h"
#include "procfs.h"
#include "util.h"

#define MOD_PAGE_MASK	((uint64_t) 4095)
#define DELETED_SUFFIX	" (deleted)"

/* One line of /proc/PID/maps that names a file. */
struct maps_line {
	uint64_t start, end, off;
	uint64_t ino;		/* the mapped file's inode number */
	int exec;
	char *path;
};

/* Consecutive mappings of one file: one candidate module. */
struct maps_group {
	const char *path;
	uint64_t start, end;
	uint64_t low_start, low_end, low_off;	/* the mapping with the lowest file offset */
	uint64_t ino;
	int exec;
};

void
modules_init(struct jt_modules *m)
{
	m->v = NULL;
	m->n = 0;
	m->generation = 0;
	pthread_mutex_init(&m->elf_lock, NULL);
}

/* Frees the consumers' data first: it may hold references into the file. */
static void
module_free(struct jt_module *mod)
{
	size_t i;

	for (i = 0; i < mod->ndata; i++)
		if (mod->data[i].free_fn)
			mod->data[i].free_fn(mod->data[i].data);
	elf_end(mod->elf);
	free(mod->file);
	free(mod->path);
	free(mod);
}

Elf *
module_elf(const struct jt_module *m)
{
	return m->elf;
}

const char *
module_file(const struct jt_module *m)
{
	return m->file;
}

void *
module_data(const struct jt_module *m, const void *key)
{
	size_t i, n = __atomic_load_n(&m->ndata, __ATOMIC_ACQUIRE);

	for (i = 0; i < n; i++)
		if (m->data[i].key == key)
			return m->data[i].data;
	return NULL;
}

int
module_set_data(struct jt_module *m, const void *key, void *data, void (*free_fn)(void *))
{
	size_t n = m->ndata;

	if (n == MODULE_DATA_MAX || module_data(m, key))
		return -1;
	m->data[n] = (struct module_data) { key, data, free_fn };
	/* Published after the slot is filled: module_data reads without a lock. */
	__atomic_store_n(&m->ndata, n + 1, __ATOMIC_RELEASE);
	return 0;
}

void
modules_clear(struct jt_modules *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		module_free(m->v[i]);
	free(m->v);
	if (m->n)
		m->generation++;
	m->v = NULL;
	m->n = 0;
}

/* Parses one maps line; returns 0 when it names a file, -1 otherwise. */
static int
maps_parse_line(char *line, struct maps_line *ml)
{
	char perms[8];
	unsigned long start, end, off, ino;
	int pos = 0;
	size_t len;

	if (sscanf(line, "%lx-%lx %7s %lx %*s %lu %n", &start, &end, perms, &off, &ino, &pos) < 5 || !pos)
		return -1;
	/* Anonymous mappings and [heap], [stack], [vdso], [vvar] start otherwise. */
	if (line[pos] != '/')
		return -1;
	len = strlen(line + pos);
	if (len && line[pos + len - 1] == '\n')
		line[pos + len - 1] = '\0';
	ml->start = start;
	ml->end = end;
	ml->off = off;
	ml->ino = ino;
	ml->exec = perms[2] == 'x';
	ml->path = xstrdup(line + pos);
	return 0;
}

/* Reads the file-backed lines of /proc/PID/maps. Returns 0 or -1 with errno set. */
static int
maps_read(pid_t pid, struct maps_line **out, size_t *n_out)
{
	struct maps_line *v = NULL;
	size_t n = 0, cap = 0, linecap = 0;
	char path[64], *line = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int) pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? (errno = ESRCH, -1) : -1;
	while (getline(&line, &linecap, f) > 0) {
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			v = xrealloc(v, cap * sizeof(*v));
		}
		if (maps_parse_line(line, &v[n]) == 0)
			n++;
	}
	free(line);
	fclose(f);
	*out = v;
	*n_out = n;
	return 0;
}

/* Widens g by one more mapping of its file. */
static void
maps_group_extend(struct maps_group *g, const struct maps_line *ml)
{
	if (ml->start < g->start)
		g->start = ml->start;
	if (ml->end > g->end)
		g->end = ml->end;
	if (ml->off < g->low_off) {
		g->low_start = ml->start;
		g->low_end = ml->end;
		g->low_off = ml->off;
	}
	g->exec |= ml->exec;
}

/*
 * Groups the lines by file. A line joins the latest group of the same path,
 * except that file offset 0 always opens a new group: the same library can
 * be mapped twice (dlmopen), and each copy starts with its ELF header.
 */
static size_t
maps_group(const struct maps_line *ml, size_t n, struct maps_group *g)
{
	size_t i, k, ng = 0;

	for (i = 0; i < n; i++) {
		for (k = ng; k > 0; k--)
			if (strcmp(g[k - 1].path, ml[i].path) == 0)
				break;
		if (k > 0 && ml[i].off != 0) {
			maps_group_extend(&g[k - 1], &ml[i]);
			continue;
		}
		g[ng++] = (struct maps_group) { ml[i].path, ml[i].start, ml[i].end,
			ml[i].start, ml[i].end, ml[i].off, ml[i].ino, ml[i].exec };
	}
	return ng;
}

static int
path_is_deleted(const char *path)
{
	size_t n = strlen(path), k = strlen(DELETED_SUFFIX);

	return n > k && strcmp(path + n - k, DELETED_SUFFIX) == 0;
}

/* Opens path read-only; with ino, only when path is still that inode. Returns an fd or -1. */
static int
module_open_as(const char *path, uint64_t ino)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || !ino || (fstat(fd, &st) == 0 && st.st_ino == ino))
		return fd;
	close(fd);
	return -1;
}

/*
 * Opens the file behind a group; the one place that decides how. A file
 * deleted or replaced since it was mapped (a library upgraded while the
 * target runs) no longer has its name, which may even belong to the new
 * version by now, so it is opened through /proc/PID/map_files, which leads
 * to the mapping itself. Stores the path used in *file.
 */
static int
module_open_file(pid_t pid, const struct maps_group *g, char **file)
{
	char mf[96];
	int fd = -1;

	if (!path_is_deleted(g->path) && (fd = module_open_as(g->path, g->ino)) >= 0) {
		*file = xstrdup(g->path);
		return fd;
	}
	snprintf(mf, sizeof(mf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
		 (int) pid, g->low_start, g->low_end);
	if ((fd = open(mf, O_RDONLY | O_CLOEXEC)) >= 0) {
		*file = xstrdup(mf);
		return fd;
	}
	/* map_files refused (an inode number that differs on an overlay): the name, as it is. */
	if (path_is_deleted(g->path) || (fd = module_open_as(g->path, 0)) < 0)
		return -1;
	*file = xstrdup(g->path);
	return fd;
}

/*
 * The load bias: where the group's lowest mapping starts, minus the
 * link-time address of that file offset in the PT_LOAD that holds it.
 */
static int
elf_bias(Elf *elf, const struct maps_group *g, uint64_t *bias)
{
	GElf_Phdr ph, first;
	size_t i, nph;
	int have_first = 0;

	if (elf_getphdrnum(elf, &nph) != 0)
		return -1;
	for (i = 0; i < nph; i++) {
		if (!gelf_getphdr(elf, (int) i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (!have_first) {
			first = ph;
			have_first = 1;
		}
		if (g->low_off >= (ph.p_offset & ~MOD_PAGE_MASK)
		    && g->low_off < ph.p_offset + ph.p_filesz) {
			*bias = g->low_start - ((ph.p_vaddr - ph.p_offset + g->low_off) & ~MOD_PAGE_MASK);
			return 0;
		}
	}
	if (!have_first)
		return -1;
	*bias = g->low_start - (first.p_vaddr & ~MOD_PAGE_MASK);
	return 0;
}

/*
 * Opens the group's file into mod (file, elf, e_type, bias). Returns 0 when
 * it is an executable or shared object of the traced architecture, -1
 * otherwise (mod then holds nothing to free but what module_free frees).
 */
static int
module_open(struct jt_module *mod, pid_t pid, const struct maps_group *g)
{
	GElf_Ehdr eh;
	int fd;

	fd = module_open_file(pid, g, &mod->file);
	if (fd < 0)
		return -1;
	mod->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	/* Mapped or read whole, the file needs its descriptor no more. */
	if (mod->elf && elf_cntl(mod->elf, ELF_C_FDREAD) != 0) {
		elf_end(mod->elf);
		mod->elf = NULL;
	}
	close(fd);
	if (!mod->elf || elf_kind(mod->elf) != ELF_K_ELF || !gelf_getehdr(mod->elf, &eh)
	    || eh.e_machine != ARCH_ELF_MACHINE || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
		return -1;
	mod->e_type = eh.e_type;
	return elf_bias(mod->elf, g, &mod->bias);
}

/* Returns AT_ENTRY of pid, or 0 when unknown. */
static uint64_t
auxv_entry(pid_t pid)
{
	uint64_t entry = 0;

	procfs_auxv(pid, AT_ENTRY, &entry);
	return entry;
}

/* Index of the first module whose start is >= addr. */
static size_t
modules_lower_bound(const struct jt_modules *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (m->v[mid]->start < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct jt_module *
modules_find(const struct jt_modules *m, uint64_t addr)
{
	size_t i = modules_lower_bound(m, addr + 1);	/* first with start > addr */
	struct jt_module *mod;

	if (i == 0)
		return NULL;
	mod = m->v[i - 1];
	return addr < mod->end ? mod : NULL;
}

struct jt_module *
modules_by_path(const struct jt_modules *m, const char *path)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (strcmp(m->v[i]->path, path) == 0)
			return m->v[i];
	return NULL;
}

/* Removes (and frees) every module overlapping [start, end). */
static void
modules_drop_overlap(struct jt_modules *m, uint64_t start, uint64_t end)
{
	size_t i, k = 0;

	for (i = 0; i < m->n; i++) {
		if (m->v[i]->start < end && start < m->v[i]->end)
			module_free(m->v[i]);
		else
			m->v[k++] = m->v[i];
	}
	m->n = k;
}

/* Inserts mod in start order, replacing modules it overlaps. */
static void
modules_insert(struct jt_modules *m, struct jt_module *mod)
{
	size_t i;

	modules_drop_overlap(m, mod->start, mod->end);
	i = modules_lower_bound(m, mod->start);
	m->v = xrealloc(m->v, (m->n + 1) * sizeof(*m->v));
	memmove(m->v + i + 1, m->v + i, (m->n - i) * sizeof(*m->v));
	m->v[i] = mod;
	m->n++;
}

/*
 * Adds the group unless it is known. Returns 1 when added, 0 otherwise.
 * A known module whose mappings grew (seen in the middle of a dlopen, when
 * only part of the library was mapped) has its end updated in place.
 */
static int
modules_add_group(struct jt_modules *m, pid_t pid, const struct maps_group *g, uint64_t *entry)
{
	struct jt_module *mod = modules_find(m, g->start);

	if (mod && mod->start == g->start && strcmp(mod->path, g->path) == 0) {
		if (mod->end != g->end) {
			modules_drop_overlap(m, mod->end, g->end);
			mod->end = g->end;
			m->generation++;
		}
		return 0;
	}
	mod = xcalloc(1, sizeof(*mod));
	if (module_open(mod, pid, g) != 0) {
		module_free(mod);
		return 0;
	}
	if (*entry == UINT64_MAX)
		*entry = auxv_entry(pid);
	mod->path = xstrdup(g->path);
	mod->start = g->start;
	mod->end = g->end;
	mod->is_main = *entry >= g->start && *entry < g->end;
	modules_insert(m, mod);
	m->generation++;
	return 1;
}

int
modules_refresh(struct jt_modules *m, pid_t pid)
{
	struct maps_line *ml;
	struct maps_group *g;
	uint64_t entry = UINT64_MAX;	/* read from auxv only when needed */
	size_t i, n, ng;
	int added = 0;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = ENOSYS;
		return -1;
	}
	if (maps_read(pid, &ml, &n) != 0)
		return -1;
	g = xmalloc((n ? n : 1) * sizeof(*g));
	ng = maps_group(ml, n, g);
	/* Mappings with no code hold no pcs: ELF files mapped as data, say. */
	for (i = 0; i < ng; i++)
		if (g[i].exec)
			added += modules_add_group(m, pid, &g[i], &entry);
	for (i = 0; i < n; i++)
		free(ml[i].path);
	free(ml);
	free(g);
	return added;
}
