/* leak_collect.c - reads what a leak check's roots are made of from a stopped process: its maps, every thread's registers, the modules' TLS sizes, the cached stacks of ended threads. */
#include <errno.h>
#include <gelf.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "leak_arena.h"
#include "leak_roots.h"
#include "maps.h"
#include "mem.h"
#include "modules.h"
#include "proc.h"
#include "regs.h"
#include "tracer.h"
#include "util.h"

/* glibc puts a thread's TCB (struct pthread, ~2.3 KiB) just below the top of its stack mapping. */
#define ENDED_TOP	16384
/* Cached stacks are thread stacks: 64 KiB or more (glibc's minimum is 16 KiB; this keeps small mappings out). */
#define ENDED_MIN	65536

/* Non-zero when a stack pointer or the thread pointer of a live thread lies in [start, end). */
static int
ended_live_in(const struct leak_thread_regs *th, size_t nth, uint64_t start, uint64_t end)
{
	for (size_t k = 0; k < nth; k++)
		if (!th[k].ended && ((th[k].sp >= start && th[k].sp < end) || (th[k].tp >= start && th[k].tp < end)))
			return 1;
	return 0;
}

/*
 * The TCB in the top ENDED_TOP bytes of [start, end), or 0: a word that
 * holds its own address (tcbhead_t.tcb) with the same two words on
 * (tcbhead_t.self). No other memory has that shape by chance.
 */
static uint64_t
ended_tcb(pid_t pid, uint64_t start, uint64_t end, uint64_t *buf)
{
	uint64_t base = end - ENDED_TOP > start ? end - ENDED_TOP : start;
	size_t nw = (size_t)(end - base) / 8;

	if (mem_read(pid, base, buf, nw * 8) < 0)
		return 0;
	for (size_t k = 0; k + 2 < nw; k++) {
		uint64_t self = base + 8 * k;

		if (buf[k] == self && buf[k + 2] == self)
			return self;
	}
	return 0;
}

size_t
leak_roots_ended(pid_t pid, const char *maps, struct leak_thread_regs **th, size_t *nth)
{
	struct jt_maps m;
	uint64_t *buf;
	size_t found = 0;

	if (maps_parse(maps, &m) < 0)
		return 0;
	buf = xmalloc(ENDED_TOP);
	for (size_t i = 0; i < m.n; i++) {
		const struct maps_entry *e = &m.v[i];
		uint64_t tcb;

		/* A thread stack: anonymous, private, readable and writable, with no live thread in it. */
		if (e->name[0] || e->shared || !e->r || !e->w || e->end - e->start < ENDED_MIN ||
		    ended_live_in(*th, *nth, e->start, e->end))
			continue;
		if (!(tcb = ended_tcb(pid, e->start, e->end, buf)))
			continue;
		*th = xrealloc(*th, (*nth + 1) * sizeof(**th));
		memset(&(*th)[*nth], 0, sizeof(**th));
		(*th)[*nth].tp = tcb;
		(*th)[*nth].ended = 1;
		(*nth)++;
		found++;
		debug_msg("leak roots of %d: the stack %#llx-%#llx of an ended thread (TCB %#llx): only its TLS is a root",
			  pid, (unsigned long long)e->start, (unsigned long long)e->end, (unsigned long long)tcb);
	}
	free(buf);
	maps_clear(&m);
	return found;
}

/*
 * The root words of one stopped thread: its general registers and its
 * thread pointers, as memcheck takes the registers (arch_root_words).
 */
static int
roots_thread_regs(pid_t tid, struct leak_thread_regs *t)
{
	arch_regs r;

	_Static_assert(ARCH_ROOT_WORDS <= ARRAY_SIZE(t->words), "leak_thread_regs.words holds every register word");
	memset(t, 0, sizeof(*t));
	if (arch_regs_get(tid, &r) < 0)
		return -1;
	t->nwords = arch_root_words(&r, t->words);
	t->sp = arch_sp(&r);
	t->tp = arch_thread_pointer(&r);
	return 0;
}

/* The PT_TLS size of one module, rounded up to its alignment, or 0. Caller holds the set's elf_lock. */
static uint64_t
roots_module_tls(const struct jt_module *mod)
{
	Elf *elf = module_elf(mod);
	size_t i, nph;
	GElf_Phdr ph;

	if (!elf || elf_getphdrnum(elf, &nph) != 0)
		return 0;
	for (i = 0; i < nph; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_TLS)
			continue;
		if (ph.p_align > 1)
			return (ph.p_memsz + ph.p_align - 1) / ph.p_align * ph.p_align;
		return ph.p_memsz;
	}
	return 0;
}

/*
 * The static TLS the modules ask for. A module loaded by dlopen gets its
 * TLS from malloc unless it is initial-exec, so this counts too much for
 * them: more scanned below the thread pointer, never less.
 */
static uint64_t
roots_tls_size(struct jt_modules *mods)
{
	uint64_t sum = 0;
	size_t i;

	pthread_mutex_lock(&mods->elf_lock);
	for (i = 0; i < mods->n; i++)
		sum += roots_module_tls(mods->v[i]);
	pthread_mutex_unlock(&mods->elf_lock);
	return sum;
}

/* Reads the registers of every thread of p; a thread that cannot be read (gone, not stopped) is left out. */
static struct leak_thread_regs *
roots_threads(struct jt_tracer *tr, struct jt_proc *p, size_t *nth, size_t *nleft)
{
	struct leak_thread_regs *th = NULL;
	size_t i, n = 0, cap = 0;
	struct jt_thread *t;

	for (i = 0; i < ARRAY_SIZE(tr->threads); i++)
		for (t = tr->threads[i]; t; t = t->hnext) {
			if (t->proc != p)
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 16;
				th = xrealloc(th, cap * sizeof(*th));
			}
			if (roots_thread_regs(t->tid, &th[n]) == 0)
				n++;
			else if (++*nleft)
				debug_msg("leak roots of %d: thread %d left out: %s", p->pid, t->tid, strerror(errno));
		}
	*nth = n;
	return th;
}

/* Under -v: each root region, named by the mapping it starts in. */
static void
roots_debug(pid_t pid, const char *text, const struct leak_roots *r)
{
	struct jt_maps m;
	size_t i;

	if (!jt_debug || maps_parse(text, &m) < 0)
		return;
	for (i = 0; i < r->nregions; i++) {
		ssize_t k = maps_find(&m, r->regions[i].start);

		debug_msg("leak roots of %d: %#llx-%#llx %llu bytes %s", pid, (unsigned long long)r->regions[i].start,
			  (unsigned long long)r->regions[i].end,
			  (unsigned long long)(r->regions[i].end - r->regions[i].start),
			  k < 0 ? "?" : m.v[k].name[0] ? m.v[k].name : "(anonymous)");
	}
	debug_msg("leak roots of %d: %zu regions, %zu register words, %zu vtable ranges", pid, r->nregions,
		  r->nwords, r->nvtables);
	maps_clear(&m);
}

int
leak_roots_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	return mem_read(*(const pid_t *)arg, addr, buf, len);
}

/* The executable's path as /proc/PID/maps names it, or NULL. */
static const char *
roots_exe(const struct jt_modules *mods)
{
	for (size_t i = 0; i < mods->n; i++)
		if (mods->v[i]->is_main)
			return mods->v[i]->path;
	return NULL;
}

/*
 * Takes glibc malloc's arenas out of the roots: main_arena lies in the C
 * library's data, a root, and points at the top chunk, whose first word
 * is the last word of the block below it (its prev_size, which that
 * block may use); its bins and fastbins point at free chunks the same
 * way. memcheck, which replaces the allocator, sees none of it.
 */
static void
roots_cut_arenas(struct jt_proc *p, const char *text, struct leak_roots *out)
{
	struct leak_region *cut = NULL;
	size_t ncut = 0, n;

	n = leak_arenas(text, roots_exe(&p->mods), leak_roots_read, &p->pid, &cut, &ncut);
	for (size_t i = 0; i < ncut; i++)
		debug_msg("leak roots of %d: malloc's arena %#llx-%#llx is no root", p->pid,
			  (unsigned long long)cut[i].start, (unsigned long long)cut[i].end);
	if (!n)
		debug_msg("leak roots of %d: no glibc malloc arena found", p->pid);
	leak_roots_cut(out, cut, ncut);
	free(cut);
}

int
leak_roots_collect(struct jt_tracer *tr, struct jt_proc *p, const struct leak_block *b, size_t n,
		   struct leak_roots *out)
{
	struct leak_thread_regs *th;
	size_t nth, nleft = 0;
	char *text;
	int r;

	memset(out, 0, sizeof(*out));
	if (maps_text_read(p->pid, &text) < 0)
		return -1;
	th = roots_threads(tr, p, &nth, &nleft);
	/*
	 * A live thread left out would look ended (a TCB, no stack pointer):
	 * its stack must stay a root whole, so then no stack is taken as ended.
	 */
	if (!nleft)
		leak_roots_ended(p->pid, text, &th, &nth);
	/* Unseen blocks (attached, or inherited at a fork) make heap memory a root, as leakcheck reports. */
	r = leak_roots_plan(text, th, nth, b, n, roots_tls_size(&p->mods), p->attached || p->unseen_blocks, out);
	if (r == 0) {
		roots_cut_arenas(p, text, out);
		roots_debug(p->pid, text, out);
	}
	free(th);
	free(text);
	return r;
}
