/* uprobes_sites.c - where the uprobe source's probes go: a site per allocator entry and return, at its file offset, on the perf path's tracefs definition. */
#include <errno.h>
#include <gelf.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "modules.h"
#include "options.h"
#include "perf_regs.h"
#include "proc.h"
#include "tracer.h"
#include "up_tracefs.h"
#include "uprobes.h"
#include "uprobes_int.h"
#include "util.h"

/* ---- probe definitions ---- */

/*
 * Why tracefs probe definitions and not the uprobe PMU: each perf event of
 * the PMU makes a probe of its own, and closing one waits for an RCU grace
 * period under the kernel's event_mutex (140 ms apiece on a 2-vCPU VM):
 * a thread's dozens of events took seconds to close. Events opened on one
 * definition (uprobe_events, then PERF_TYPE_TRACEPOINT with its id) share
 * it; closing one that is not the last costs microseconds. The last is our
 * anchor, opened on a sleeping child of ours that never runs the probed
 * code, and closed at the end (uprobes_defs_release).
 */

/* The definition of (path, offset, ret), made on first use. NULL with errno set when tracefs refuses it. */
static struct up_def *
up_def_get(struct jt_uprobes *u, const char *path, uint64_t off, int ret)
{
	char line[PATH_MAX + 96], idpath[160];
	struct up_def *d;
	int id;

	for (size_t i = 0; i < u->ndefs; i++)
		if (u->defs[i]->offset == off && u->defs[i]->ret == ret && strcmp(u->defs[i]->path, path) == 0)
			return u->defs[i];
	/* uprobe_events splits its lines at blanks. */
	if (strpbrk(path, " \t\n")) {
		errno = EINVAL;
		return NULL;
	}
	d = xcalloc(1, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%c%zu", ret ? 'r' : 'p', u->ndefs);
	snprintf(line, sizeof(line), "%c:%s/%s %s:%#llx\n", ret ? 'r' : 'p', u->group, d->name, path,
		 (unsigned long long)off);
	snprintf(idpath, sizeof(idpath), "%s/events/%s/%s/id", u->tracefs, u->group, d->name);
	if (up_tracefs_write(u->tracefs, line) < 0 || (id = up_tracefs_number(idpath)) < 0) {
		int e = errno ? errno : ENOENT;
		free(d);
		errno = e;
		return NULL;
	}
	d->id = (uint64_t)id;
	d->anchor = -1;
	d->path = xstrdup(path);
	d->offset = off;
	d->ret = ret;
	u->defs = xrealloc(u->defs, (u->ndefs + 1) * sizeof(*u->defs));
	u->defs[u->ndefs++] = d;
	return d;
}

/*
 * The end: the anchors are closed (each the last event of its definition:
 * the kernel unregisters the probe, a grace period or two apiece) and the
 * definitions removed, before jmptrace exits. Not in the background: while
 * a probe stays registered anywhere, the kernel takes every trap byte at
 * its address in any process for its own and puts the instruction back, so
 * a ptrace session started meanwhile on the same library would silently
 * lose that function's calls. Every event on a traced thread is closed
 * before: the kernel has taken the probes out of the programs by now.
 */
void
uprobes_defs_release(struct jt_uprobes *u)
{
	size_t kept = 0;

	for (size_t i = 0; i < u->ndefs; i++)
		if (u->defs[i]->anchor >= 0)
			close(u->defs[i]->anchor);
	for (size_t i = 0; i < u->ndefs; i++) {
		if (up_tracefs_remove(u->tracefs, u->group, u->defs[i]->name) < 0) {
			debug_msg("uprobe definition %s/%s: not removed: %s", u->group, u->defs[i]->name,
				  strerror(errno));
			kept++;
		}
		free(u->defs[i]->path);
		free(u->defs[i]);
	}
	if (kept)
		error_msg("%zu kernel uprobe definitions of group %s could not be removed from %s/uprobe_events; "
			  "the next jmptrace --source uprobe removes them", kept, u->group, u->tracefs);
	free(u->defs);
	u->defs = NULL;
	u->ndefs = 0;
}

/* ---- sites ---- */

/* The file offset of run-time address addr in m, through its PT_LOAD segments. Returns 0 or -1. */
static int
up_file_offset(struct jt_proc *p, const struct jt_module *m, uint64_t addr, uint64_t *off)
{
	Elf *e;
	size_t n;
	uint64_t vaddr = addr - m->bias;
	int r = -1;

	pthread_mutex_lock(&p->mods.elf_lock);
	e = module_elf(m);
	if (e && elf_getphdrnum(e, &n) == 0)
		for (size_t i = 0; i < n && r < 0; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
			    vaddr < ph.p_vaddr + ph.p_filesz) {
				*off = vaddr - ph.p_vaddr + ph.p_offset;
				r = 0;
			}
		}
	pthread_mutex_unlock(&p->mods.elf_lock);
	return r;
}

/* The perf path's definition of (path, off, ret) in *d; the BPF path's links take the offset instead, a hook's too. */
static int
up_def_for(struct jt_uprobes *u, const char *path, uint64_t off, int ret, struct up_def **d)
{
	*d = NULL;
	if (u->bpf)
		return 0;
	return (*d = up_def_get(u, path, off, ret)) ? 0 : -1;
}

/* A site of fn in p at file offset off of path, on definition d (NULL: the BPF path's, linked later). */
static struct jt_usite *
up_site_new(struct jt_uprobes *u, struct jt_proc *p, int fn, struct up_def *d, int ret, const char *path, uint64_t off)
{
	struct jt_usite *s = xcalloc(1, sizeof(*s));

	s->fn = fn;
	s->ret = ret;
	s->def = d;
	if (!d) {
		s->path = xstrdup(path);
		s->file_off = off;
	}
	s->image = p->image;
	s->pending = 1;
	s->regs_mask = ret ? ARCH_PERF_REGS_RET_MASK : alloc_fns[fn].kind == FK_FREE ? ARCH_PERF_REGS_FREE_MASK
										: ARCH_PERF_REGS_MASK;
	s->nregs = (uint32_t)__builtin_popcountll(s->regs_mask);
	s->index = (uint32_t)u->nsites;
	u->sites = xrealloc(u->sites, (u->nsites + 1) * sizeof(*u->sites));
	u->sites[u->nsites++] = s;
	p->usites = xrealloc(p->usites, (p->nusites + 1) * sizeof(*p->usites));
	p->usites[p->nusites++] = s;
	return s;
}

int
uprobes_has_return(int fn)
{
	enum jt_fn_kind k = alloc_fns[fn].kind;

	return k == FK_ALLOC || k == FK_CALLOC || k == FK_REALLOC || k == FK_MEMALIGN_PTR || alloc_fn_is_pages(fn) ||
	       alloc_fn_free_held(fn);
}

/*
 * Whether fn's entry and return in m may make one record (the BPF path's
 * join, up_bpf_abi.h): only a call that calls no probed function, since
 * the records of such calls would come before its entry's, which the
 * reader needs to see nested calls as nested. The C library's malloc
 * calls none but with --pages (mmap, sbrk); another library's, or the
 * program's own, may call anything, the C library's malloc among them.
 * Only a libc.so.N file: glibc before 2.34 (libc-2.NN.so, which
 * leak_arena.c also takes for the C library) called __malloc_hook, and a
 * hook may call anything.
 * Its probe must be at its entry (where the return address is), and the
 * thread's whole stack copied (the join needs each thread's stack top).
 */
static int
up_joinable(const struct jt_uprobes *u, const struct jt_module *m, int fn, int at_entry)
{
	const char *base = strrchr(module_file(m), '/');

	base = base ? base + 1 : module_file(m);
	return u->bpf && u->stack_whole && fn == FN_MALLOC && at_entry && !u->tr->opt->pages &&
	       strncmp(base, "libc.so", 7) == 0;
}

/*
 * Whether a free of fn at m waits for its thread's next record (up_bpf_abi.h's
 * struct up_bpf_pf): the C library's, whose record would otherwise take a
 * reservation of the ring of its own after each malloc's; on the BPF path,
 * where threads have their entry in the program's map (their stack top).
 */
static int
up_deferrable(const struct jt_uprobes *u, const struct jt_module *m, int fn)
{
	const char *base = strrchr(module_file(m), '/');

	base = base ? base + 1 : module_file(m);
	return u->bpf && u->stack_whole && fn == FN_FREE && strncmp(base, "libc.so", 7) == 0;
}

int
uprobes_place(struct jt_uprobes *u, struct jt_proc *p, const struct jt_module *m, int fn, uint64_t entry,
	      uint64_t site, uint64_t sp_delta, int emulated)
{
	uint64_t off, eoff;
	struct up_def *d, *rd = NULL;
	struct jt_usite *s, *rs;
	const char *path = module_file(m);

	/*
	 * The return probe shares the entry's site when nothing was pushed
	 * before it (the return address still at the stack pointer): one hit,
	 * emulated, serves both.
	 */
	if (up_file_offset(p, m, site, &off) < 0 || up_file_offset(p, m, sp_delta ? entry : site, &eoff) < 0) {
		errno = ENOEXEC;
		return -1;
	}
	if (up_def_for(u, path, off, 0, &d) < 0 || (uprobes_has_return(fn) && up_def_for(u, path, eoff, 1, &rd) < 0))
		return -1;
	s = up_site_new(u, p, fn, d, 0, path, off);
	s->entry = entry;
	s->site = site;
	s->sp_delta = sp_delta;
	s->emulated = emulated;
	/*
	 * A free needs its stack only when it is no live block (an invalid
	 * free, or one of the C library's own): a shorter copy, for the frames
	 * nearest, keeps the rings for the allocations.
	 */
	s->stack = alloc_fns[fn].kind == FK_FREE && u->stack_copy > UPROBES_FREE_COPY ? UPROBES_FREE_COPY
										 : u->stack_copy;
	s->defer = up_deferrable(u, m, fn);
	if (!uprobes_has_return(fn))
		return 0;
	rs = up_site_new(u, p, fn, rd, 1, path, eoff);
	rs->entry = rs->site = entry;
	/* posix_memalign's block is in its out pointer, most often a local of the caller's: copy the stack. */
	if (alloc_fns[fn].kind == FK_MEMALIGN_PTR)
		rs->stack = u->stack_copy;
	if (up_joinable(u, m, fn, site == entry && sp_delta == 0)) {
		s->join = rs->join = 1;
		s->pair = rs;
		rs->pair = s;
	}
	return 0;
}

/* A probe on fn's entry with no stack copy: a hook (a SIGTRAP) or a plain sample. */
static int
up_place_entry(struct jt_uprobes *u, struct jt_proc *p, const struct jt_module *m, int fn, uint64_t entry, int hook)
{
	uint64_t off;
	struct up_def *d;
	struct jt_usite *s;

	if (up_file_offset(p, m, entry, &off) < 0) {
		errno = ENOEXEC;
		return -1;
	}
	if (up_def_for(u, module_file(m), off, 0, &d) < 0)
		return -1;
	s = up_site_new(u, p, fn, d, 0, module_file(m), off);
	s->entry = s->site = entry;
	s->hook = hook;
	return 0;
}

int
uprobes_place_hook(struct jt_uprobes *u, struct jt_proc *p, const struct jt_module *m, int fn, uint64_t entry)
{
	return up_place_entry(u, p, m, fn, entry, 1);
}

int
uprobes_place_rendezvous(struct jt_uprobes *u, struct jt_proc *p, const struct jt_module *m, uint64_t entry)
{
	/* A launched program dies with jmptrace (PTRACE_O_EXITKILL): it may take SIGTRAPs. */
	return up_place_entry(u, p, m, FN_DL_DEBUG_STATE, entry, !u->tr->opt->attach_pid);
}
