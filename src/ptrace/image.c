/* image.c - resolves allocator symbols in link-map order and keeps their breakpoints in place. */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "arch.h"
#include "heap.h"
#include "image.h"
#include "image_int.h"
#include "mem.h"
#include "named.h"
#include "proc.h"
#include "procfs.h"
#include "prologue.h"
#include "sym.h"
#include "tracer.h"
#include "uprobes.h"
#include "util.h"

#define MAX_LINK_MAP 1024

/* The layout of the start of glibc's struct link_map and struct r_debug on an LP64 target. */
struct remote_link_map {
	uint64_t l_addr, l_name, l_ld, l_next, l_prev;
};
struct remote_r_debug {
	int32_t r_version;
	uint64_t r_map, r_brk;
	int32_t r_state;
	uint64_t r_ldbase;
};

/* The key of image.c's mark in a module (module_data): non-NULL once it is reported. */
static const char image_reported;

/* Reports modules added since the last call (the module list only grows) to libdwfl. */
static void
image_report_modules(struct jt_proc *p)
{
	for (size_t i = 0; i < p->mods.n; i++) {
		const char *err = NULL;
		struct jt_module *m = p->mods.v[i];

		if (module_data(m, &image_reported))
			continue;
		module_set_data(m, &image_reported, (void *)&image_reported, NULL);
		if (sym_add_file(p->sym, m->path, module_file(m), m->bias, &err) < 0)
			debug_msg("cannot report %s: %s", m->path, err ? err : "?");
		alias_scan_module(&p->aliases, m);
		own_scan_module(&p->own, p->sym, m);
	}
}

static struct jt_module *
image_main_module(const struct jt_proc *p)
{
	for (size_t i = 0; i < p->mods.n; i++)
		if (p->mods.v[i]->is_main)
			return p->mods.v[i];
	return p->mods.n ? p->mods.v[0] : NULL;
}

static struct jt_module *
image_module_by_bias(const struct jt_proc *p, uint64_t bias)
{
	for (size_t i = 0; i < p->mods.n; i++)
		if (p->mods.v[i]->bias == bias && !p->mods.v[i]->is_main)
			return p->mods.v[i];
	return NULL;
}

/*
 * Lists the modules in the order the dynamic linker searches them: the link
 * map, executable first. Without a dynamic linker, the executable alone,
 * followed by anything else mapped.
 */
static size_t
image_link_order(const struct jt_proc *p, struct jt_module **order, size_t max)
{
	struct remote_r_debug rd;
	size_t n = 0;

	if (p->r_debug && mem_read(p->pid, p->r_debug, &rd, sizeof(rd)) == 0) {
		uint64_t lm = rd.r_map;

		for (size_t i = 0; lm && i < MAX_LINK_MAP && n < max; i++) {
			struct remote_link_map l;
			struct jt_module *m;

			if (mem_read(p->pid, lm, &l, sizeof(l)) < 0)
				break;
			m = i == 0 ? image_main_module(p) : image_module_by_bias(p, l.l_addr);
			if (m)
				order[n++] = m;
			lm = l.l_next;
		}
		if (n)
			return n;
	}
	if ((order[0] = image_main_module(p)))
		n = 1;
	for (size_t i = 0; i < p->mods.n && n < max; i++)
		if (p->mods.v[i] != order[0])
			order[n++] = p->mods.v[i];
	return n;
}

/* The longest function image_place_moved reads from its file to look for jumps into it. */
#define IMAGE_MAX_FN (1 << 20)

/*
 * The entry of fn at addr in m cannot hold our breakpoint: it holds a trap
 * byte that is not ours, most likely a kernel uprobe (cause is
 * IMAGE_FOREIGN_BP), or the kernel took ours back (IMAGE_TAKEN_BP). Ours
 * cannot share a uprobe's instruction: the kernel takes every hit there
 * for its uprobe, and we would never see one. The file still has the first
 * instruction (a uprobe changes only the process's copy): when a
 * breakpoint after it provably sees the same arguments and return address
 * (prologue_move), the breakpoint goes there. Returns NULL, or why fn
 * cannot be traced (static storage).
 */
const char *
image_place_moved(struct jt_proc *p, struct jt_module *m, int fn, uint64_t addr, const char *cause)
{
	static char why[512];
	struct prologue_move mv;
	uint8_t mem[16], *code;
	uint64_t lo, hi;
	const char *fail = NULL;
	int r = -1;

	if (sym_lookup_range(p->sym, m->path, alloc_fns[fn].symbol, &lo, &hi) < 0 || lo != addr ||
	    hi - lo > IMAGE_MAX_FN) {
		snprintf(why, sizeof(why), "%s, and the function's extent is unknown", cause);
		return why;
	}
	code = xmalloc(hi - lo);
	pthread_mutex_lock(&p->mods.elf_lock);
	if (module_read_code(m, lo, code, hi - lo) < 0)
		fail = "its code cannot be read from its file";
	pthread_mutex_unlock(&p->mods.elf_lock);
	if (!fail && code[0] == ARCH_TRAP_BYTE)
		fail = "its file has a breakpoint instruction there";
	else if (!fail && prologue_move(code, hi - lo, addr, alloc_fn_args((enum jt_fn)fn), &mv, &fail) == 0) {
		/* Past the trap byte, the process's first instruction must be the file's. */
		size_t len = mv.site - addr;
		if (len > sizeof(mem) || mem_read(p->pid, addr, mem, len) < 0 || memcmp(mem + 1, code + 1, len - 1))
			fail = "its code in the process differs from its file";
		else if ((r = bp_insert_moved(&p->bps, p->pid, addr, mv.site, fn, mv.sp_delta)) < 0)
			fail = errno == EEXIST ? "its second instruction holds one too" : strerror(errno);
	}
	free(code);
	if (r == 0) {
		debug_msg("breakpoint on %s in %s moved past its first instruction (%s) to %#lx: %s",
			  alloc_fns[fn].symbol, m->path, mv.skipped, (unsigned long)mv.site, cause);
		return NULL;
	}
	snprintf(why, sizeof(why), "%s, and %s", cause, fail);
	return why;
}

/* Non-zero when fn at addr has its breakpoint or uprobe already. */
static int
image_placed(const struct jt_proc *p, uint64_t addr)
{
	/* One function under two names (memalign, aligned_alloc) is probed once, as the first. */
	for (size_t i = 0; i < p->nusites; i++)
		if (p->usites[i]->entry == addr)
			return 1;
	return bp_find_entry(&p->bps, addr) != NULL;
}

/* Non-zero when fn at addr is already known to be untraceable (a rendezvous tries every function again). */
static int
image_untraced_known(const struct jt_proc *p, int fn, uint64_t addr)
{
	for (size_t i = 0; i < p->nuntraced; i++)
		if ((int)p->untraced[i].fn == fn && p->untraced[i].addr == addr)
			return 1;
	return 0;
}

void
image_untraced_add(struct jt_proc *p, const struct jt_module *m, int fn, uint64_t addr, const char *why)
{
	struct jt_untraced *u;

	p->untraced = xrealloc(p->untraced, (p->nuntraced + 1) * sizeof(*p->untraced));
	u = &p->untraced[p->nuntraced++];
	u->fn = (enum jt_fn)fn;
	u->addr = addr;
	u->module = xstrdup(m->path);
	u->reason = xstrdup(why);
	u->missed_until_ms = 0;
}

/*
 * Where fn's uprobe goes: it may be past a harmless early-return test, on
 * an instruction the kernel emulates (prologue_probe_site); a function with
 * a return probe only where nothing was pushed yet, since its return
 * address must be the word at the stack pointer.
 */
static void
image_probe_site(struct jt_proc *p, struct jt_module *m, int fn, uint64_t addr, struct prologue_site *ps)
{
	uint64_t lo, hi;
	uint8_t *code;
	int ok;

	ps->site = addr;
	snprintf(ps->why, sizeof(ps->why), "entry");
	if (sym_lookup_range(p->sym, m->path, alloc_fns[fn].symbol, &lo, &hi) < 0 || lo != addr ||
	    hi - lo > IMAGE_MAX_FN || hi <= lo)
		return;
	code = xmalloc(hi - lo);
	pthread_mutex_lock(&p->mods.elf_lock);
	ok = module_read_code(m, lo, code, hi - lo) == 0;
	pthread_mutex_unlock(&p->mods.elf_lock);
	if (ok)
		prologue_probe_site(code, hi - lo, addr, alloc_fn_args((enum jt_fn)fn), ps);
	if (ps->sp_delta != 0 && uprobes_has_return(fn)) {
		/*
		 * The kernel's uretprobe takes the return address from the
		 * stack pointer: only where it still points at it (jemalloc's
		 * malloc: cmp; ja, both before any push).
		 */
		ps->site = addr;
		ps->sp_delta = 0;
		ps->emulated = 0;
		snprintf(ps->why, sizeof(ps->why), "entry (its uretprobe needs it there), stepped");
	}
	free(code);
}

/* Non-zero when fn's calls are probed by the uprobe source rather than a breakpoint of ours. */
static int
image_by_uprobe(const struct jt_proc *p, int fn)
{
	enum jt_fn_kind k = alloc_fns[fn].kind;

	return p->uprobes && k != FK_EXIT;
}

/*
 * --source uprobe: a kernel uprobe on fn at addr, where the kernel emulates
 * the instruction if a site with the same effect allows it (prologue.h).
 * Returns NULL, or why it cannot be (static storage).
 */
static const char *
image_place_uprobe(struct jt_proc *p, struct jt_module *m, int fn, uint64_t addr)
{
	static char why[160];
	struct prologue_site ps = { .site = addr };

	image_probe_site(p, m, fn, addr, &ps);
	if (uprobes_place(p->uprobes, p, m, fn, addr, ps.site, ps.sp_delta, ps.emulated) == 0) {
		debug_msg("uprobe on %s at %#lx in %s: %s", alloc_fns[fn].symbol, (unsigned long)ps.site, m->path,
			  ps.why[0] ? ps.why : "entry");
		return NULL;
	}
	snprintf(why, sizeof(why), "the kernel refused its uprobe: %s", util_strerror(errno));
	return why;
}

/* uprobes_open_pending's word on a site the kernel would not probe. */
static void
image_refused(void *arg, const struct jt_usite *s, int err)
{
	struct jt_proc *p = arg;
	const struct jt_module *m = modules_find(&p->mods, s->entry);
	char why[160];

	if (!m || image_untraced_known(p, s->fn, s->entry))
		return;	/* (a return probe, after its entry's) */
	snprintf(why, sizeof(why), "the kernel refused its uprobe: %s", util_strerror(err));
	image_untraced_add(p, m, s->fn, s->entry, why);
}

/* Puts the breakpoint of fn on its definition at addr in m, or records why it cannot be. */
static void
image_place(struct jt_proc *p, struct jt_module *m, int fn, uint64_t addr)
{
	const char *why;

	if (image_by_uprobe(p, fn) && alloc_fns[fn].kind == FK_UNWIND) {
		if (uprobes_place_hook(p->uprobes, p, m, fn, addr) < 0)
			image_untraced_add(p, m, fn, addr, strerror(errno));
		return;
	}
	if (image_by_uprobe(p, fn)) {
		if ((why = image_place_uprobe(p, m, fn, addr)))
			image_untraced_add(p, m, fn, addr, why);
		return;
	}
	if (bp_insert(&p->bps, p->pid, addr, fn) == 0) {
		debug_msg("breakpoint on %s at %#lx in %s", alloc_fns[fn].symbol, (unsigned long)addr, m->path);
		return;
	}
	why = errno == EEXIST ? image_place_moved(p, m, fn, addr, IMAGE_FOREIGN_BP) : strerror(errno);
	if (why)
		image_untraced_add(p, m, fn, addr, why);
}

/* Says, one line each, why the traced functions from the from-th on have no breakpoint. */
static void
image_untraced_say(const struct jt_proc *p, size_t from, const char *then)
{
	for (size_t i = from; i < p->nuntraced; i++)
		error_msg("cannot trace %s in %s: %s%s", alloc_fns[p->untraced[i].fn].name, p->untraced[i].module,
			  p->untraced[i].reason, then);
}

/*
 * Puts the breakpoint of fn on its first definition in order[0..n). A
 * function named by --alloc may be a LOCAL one in any program: the user
 * named it, and a program's own pool is often static to its file.
 */
static void
image_resolve_fn(struct jt_proc *p, struct jt_module **order, size_t n, int fn)
{
	int named = fn >= FN_COUNT;

	for (size_t i = 0; i < n; i++) {
		uint64_t addr;

		if ((p->is_static || named ? sym_lookup_static(p->sym, order[i]->path, alloc_fns[fn].symbol, &addr)
					   : sym_lookup(p->sym, order[i]->path, alloc_fns[fn].symbol, &addr)) < 0)
			continue;
		if (named)
			alloc_named_found(fn);
		if (!image_placed(p, addr) && !image_untraced_known(p, fn, addr))
			image_place(p, order[i], fn, addr);
		return;
	}
}

/* Notes the first preset not asked for whose allocator a module defines (named_end offers it). */
static void
image_detect_preset(struct jt_proc *p, struct jt_module **order, size_t n)
{
	for (int k = 0; k < ALLOC_NPRESETS && !p->preset_seen; k++) {
		uint64_t addr;

		if (alloc_preset_used(k))
			continue;
		for (size_t i = 0; i < n && !p->preset_seen; i++)
			if (sym_lookup_static(p->sym, order[i]->path, alloc_preset_key(k), &addr) == 0)
				p->preset_seen = k + 1;
	}
}

/* Puts a breakpoint on the first definition of every traced function, in link-map order. */
static void
image_resolve(struct jt_proc *p)
{
	struct jt_module *order[MAX_LINK_MAP];
	size_t n = image_link_order(p, order, ARRAY_SIZE(order));

	for (int fn = 0; fn < alloc_fn_end(); fn++) {
		if (fn >= FN_DL_DEBUG_STATE && fn < FN_COUNT)
			continue;
		if ((fn == FN_EXIT && !p->leak_check) || (alloc_fn_is_pages(fn) && !p->pages))
			continue;
		image_resolve_fn(p, order, n, fn);
	}
	if (p->uprobes)
		uprobes_open_pending(p->uprobes, p, image_refused, p);
	image_detect_preset(p, order, n);
	p->mods_gen = p->mods.generation;
}

/* Finds the dynamic linker among the modules by the symbols only it defines. */
static void
image_find_rtld(struct jt_proc *p)
{
	for (size_t i = 0; i < p->mods.n; i++) {
		struct jt_module *m = p->mods.v[i];
		uint64_t state, rdebug, entry;

		if (sym_lookup(p->sym, m->path, "_dl_debug_state", &state) < 0 ||
		    sym_lookup_any(p->sym, m->path, "_r_debug", &rdebug) < 0)
			continue;
		p->r_debug = rdebug;
		if (p->uprobes ? uprobes_place_rendezvous(p->uprobes, p, m, state)
			       : bp_insert(&p->bps, p->pid, state, FN_DL_DEBUG_STATE)) {
			if (errno == EEXIST)
				error_msg("cannot put a breakpoint on the dynamic linker's rendezvous in %s: %s; %s",
					  m->path, IMAGE_FOREIGN_BP,
					  p->attached ? "a library the process loads from now on is not traced"
						      : "the libraries it loads at the start are read at the program's "
							"entry, one it loads later is not traced");
			else
				perror_msg("cannot put a breakpoint on the dynamic linker");
		}
		/*
		 * And one on the program's entry, a rendezvous too, for an image
		 * that has not run: where the linker's was taken back before its
		 * first hit (image_on_taken), the libraries were never read and
		 * the whole run went untraced, exit status 0 (a launch under
		 * bpftrace, right after a jmptrace --source uprobe ended). At the
		 * entry they are all loaded; only their constructors ran untraced.
		 * Taken out once the linker's reports (image_update): it costs
		 * a stop only where it is needed.
		 */
		if (!p->uprobes && !p->attached && procfs_auxv(p->pid, AT_ENTRY, &entry) == 0 && entry) {
			if (bp_insert(&p->bps, p->pid, entry, FN_DL_DEBUG_STATE) == 0)
				p->entry_bp = entry;
			else
				debug_msg("process %d: no breakpoint on the program's entry %#lx: %s", p->pid,
					  (unsigned long)entry, strerror(errno));
		}
		return;
	}
}

/* Non-zero when fn is malloc or free, or any function named by --alloc with named set. */
static int
image_is_core(int fn, int named)
{
	return fn == FN_MALLOC || fn == FN_FREE || (named && fn >= FN_COUNT);
}

/* Non-zero when one of the functions image_is_core(named) accepts has its breakpoint or uprobe. */
static int
image_has_core(const struct jt_proc *p, int named)
{
	for (size_t i = 0; i < p->bps.n; i++) {
		const struct jt_bp *bp = p->bps.v[i];
		if (image_is_core(bp->fn, named))
			return 1;
	}
	for (size_t i = 0; i < p->nusites; i++)
		if (image_is_core(p->usites[i]->fn, named))
			return 1;
	return 0;
}

int
image_ready(const struct jt_proc *p)
{
	return image_has_core(p, 0);
}

int
image_setup(struct jt_proc *p)
{
	struct jt_module *exe;
	size_t untraced = p->nuntraced;

	p->entry_bp = 0;
	if (procfs_auxv(p->pid, AT_RANDOM, &p->image_random) < 0)
		p->image_random = 0;
	if (modules_refresh(&p->mods, p->pid) < 0) {
		perror_msg("cannot read the memory map of process %d", p->pid);
		return -1;
	}
	/* At the exec stop a dynamic program has its interpreter mapped too; a static one is alone. */
	p->is_static = p->mods.n == 1;
	image_report_modules(p);
	image_find_rtld(p);
	image_resolve(p);
	if (p->nuntraced > untraced) {
		/* Still before the program runs (or at the attach): refuse rather than count wrong. */
		image_untraced_say(p, untraced, "");
		return -1;
	}
	if (p->r_debug || image_has_core(p, 1))
		return 0;
	exe = image_main_module(p);
	if (exe && !sym_module_has_symbols(p->sym, exe->path))
		error_msg("%s: no allocator symbols: the program is statically linked and stripped, "
			  "so malloc and free cannot be found", exe->path);
	else if (p->preset_seen)
		error_msg("%s: no allocator symbols (malloc, free) found in the program, but %s: "
			  "run again with --alloc-preset %s", exe ? exe->path : p->command,
			  alloc_preset_key(p->preset_seen - 1), alloc_preset_name(p->preset_seen - 1));
	else
		error_msg("%s: no allocator symbols (malloc, free) found in the program",
			  exe ? exe->path : p->command);
	return -1;
}

/*
 * At the first consistent link map of the launched program (names_due):
 * the libraries it is linked with are in and resolved, its code has not
 * run (even when it defines malloc itself, which image_update's startup
 * does not see). Returns IMAGE_BAD_NAME after saying a name none of them
 * defines, else 0.
 */
static int
image_names_check(struct jt_proc *p)
{
	if (!p->names_due)
		return 0;
	p->names_due = 0;
	return named_missing_say(p, NAMED_START) ? IMAGE_BAD_NAME : 0;
}

int
image_update(struct jt_proc *p, int may_refuse)
{
	struct remote_r_debug rd;
	size_t untraced;
	int added, startup;

	if (!p->r_debug || mem_read(p->pid, p->r_debug, &rd, sizeof(rd)) < 0)
		return -1;
	if (rd.r_state != RT_CONSISTENT)
		return 0;
	/* The linker has a link map to tell of: the entry's rendezvous is needed no more. */
	if (p->entry_bp && rd.r_map) {
		struct jt_bp *bp = bp_find(&p->bps, p->entry_bp);

		if (bp)
			(void)bp_disarm(bp, p->pid);
		p->entry_bp = 0;
	}
	added = modules_refresh(&p->mods, p->pid);
	if (added < 0)
		return -1;
	if (added == 0 && p->mods_gen == p->mods.generation)
		return image_names_check(p);
	image_report_modules(p);
	untraced = p->nuntraced;
	startup = may_refuse && !p->attached && !image_ready(p);
	image_resolve(p);
	if (startup && p->nuntraced > untraced) {
		image_untraced_say(p, untraced, "");
		return IMAGE_REFUSED;
	}
	/* The program runs already: it goes on, and its reports say what was not counted. */
	image_untraced_say(p, untraced, "; its calls are not counted (see NOT TRACED in the report)");
	return image_names_check(p);
}
