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
#include "maps.h"
#include "modules.h"
#include "procfs.h"
#include "util.h"

#define MOD_PAGE_MASK	((uint64_t) 4095)
#define DELETED_SUFFIX	" (deleted)"

/* Consecutive mappings of one file: one candidate module. */
struct module_group {
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

int
module_read_code(const struct jt_module *m, uint64_t addr, void *buf, size_t len)
{
	uint64_t vaddr = addr - m->bias;
	size_t nph;
	GElf_Phdr ph;
	int fd, r = -1;

	if (!m->elf || elf_getphdrnum(m->elf, &nph) != 0)
		return -1;
	for (size_t i = 0; i < nph; i++) {
		if (!gelf_getphdr(m->elf, (int)i, &ph) || ph.p_type != PT_LOAD || vaddr < ph.p_vaddr ||
		    vaddr + len > ph.p_vaddr + ph.p_filesz)
			continue;
		/*
		 * Read, not libelf's mapping: the kernel puts a uprobe's trap
		 * byte into every private mapping of the file that may execute,
		 * libelf's own read-only one too.
		 */
		if ((fd = open(m->file, O_RDONLY | O_CLOEXEC)) < 0)
			return -1;
		if (pread(fd, buf, len, (off_t)(ph.p_offset + (vaddr - ph.p_vaddr))) == (ssize_t)len)
			r = 0;
		close(fd);
		return r;
	}
	return -1;
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

/* Widens g by one more mapping of its file. */
static void
module_group_extend(struct module_group *g, const struct maps_entry *e)
{
	if (e->start < g->start)
		g->start = e->start;
	if (e->end > g->end)
		g->end = e->end;
	if (e->off < g->low_off) {
		g->low_start = e->start;
		g->low_end = e->end;
		g->low_off = e->off;
	}
	g->exec |= e->x;
}

/*
 * Groups the mappings of files by file (anonymous ones and [heap], [stack],
 * [vdso], [vvar] have no path). A mapping joins the latest group of the same
 * path, except that file offset 0 always opens a new group: the same library
 * can be mapped twice (dlmopen), and each copy starts with its ELF header.
 * The groups' paths point into m.
 */
static size_t
modules_group(const struct jt_maps *m, struct module_group *g)
{
	size_t i, k, ng = 0;

	for (i = 0; i < m->n; i++) {
		const struct maps_entry *e = &m->v[i];

		if (e->name[0] != '/')
			continue;
		for (k = ng; k > 0; k--)
			if (strcmp(g[k - 1].path, e->name) == 0)
				break;
		if (k > 0 && e->off != 0) {
			module_group_extend(&g[k - 1], e);
			continue;
		}
		g[ng++] = (struct module_group) { e->name, e->start, e->end, e->start, e->end, e->off, e->ino, e->x };
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
module_open_file(pid_t pid, const struct module_group *g, char **file)
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
elf_bias(Elf *elf, const struct module_group *g, uint64_t *bias)
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
module_open(struct jt_module *mod, pid_t pid, const struct module_group *g)
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
modules_add_group(struct jt_modules *m, pid_t pid, const struct module_group *g, uint64_t *entry)
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
	struct jt_maps maps;
	struct module_group *g;
	uint64_t entry = UINT64_MAX;	/* read from auxv only when needed */
	size_t i, ng;
	int added = 0;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = ENOSYS;
		return -1;
	}
	if (maps_read(pid, &maps) < 0)
		return -1;
	g = xmalloc((maps.n ? maps.n : 1) * sizeof(*g));
	ng = modules_group(&maps, g);
	/* Mappings with no code hold no pcs: ELF files mapped as data, say. */
	for (i = 0; i < ng; i++)
		if (g[i].exec)
			added += modules_add_group(m, pid, &g[i], &entry);
	maps_clear(&maps);
	free(g);
	return added;
}
