/* unwind_lu.c - the libunwind backend: libunwind's remote unwinder over our own accessors, page cache and per-module tables. */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <libunwind.h>

#include "libunwind_glue.h"
#include "mem.h"
#include "modules.h"
#include "plt.h"
#include "unwind.h"
#include "unwind_backend.h"
#include "util.h"

#define UW_PAGE		4096u
#define UW_PAGE_MASK	((uint64_t) UW_PAGE - 1)
#define UW_STACK_PAGES	16	/* pages cached for one call (stack, data) */
#define UW_PREFETCH	2	/* pages read at once on a miss there */
#define UW_CODE_BITS	8
#define UW_CODE_PAGES	(1u << UW_CODE_BITS)	/* read-only pages kept across calls */
#define UW_NO_PAGE	UINT64_MAX

/*
 * Where libunwind "reads" our synthetic .eh_frame_hdr-style tables: the
 * kernel half of the address space, which no user mapping can occupy.
 * Module i's table lives at UW_TABLE_BASE + (i << 32); i is the module's
 * position in the sorted set, which cannot change during one unwind_stack
 * (and libunwind keeps no table address beyond one lookup).
 */
#define UW_TABLE_BASE	0xffff900000000000ull

struct uw_page {
	uint64_t addr;		/* page address, UW_NO_PAGE when empty */
	int ok;			/* 0: the page could not be read */
	uint8_t data[UW_PAGE];
};

/*
 * The state every tracer thread shares. libunwind's address space is safe
 * for concurrent unwinds: its UNW_CACHE_GLOBAL cache takes its own lock,
 * and each unwind passes its own scratch as the accessors' argument.
 */
struct uw_libunwind {
	unw_addr_space_t as;
	struct jt_modules *mods;
	uint64_t mods_generation;	/* of mods when the caches were last valid; atomic */
	uint64_t epoch;			/* names the code pages valid now; atomic */
	pthread_mutex_t lock;		/* a flush for a new module set */
};

/* The scratch of one unwind: the accessors' argument. */
struct uwl_ctx {
	struct uw_libunwind *u;		/* the unwinder of the call in progress */
	struct jt_unwind_ctx *ctx;	/* its overrides and stack copy */
	pid_t tid;
	const arch_regs *regs;
	struct uw_page *last;		/* page of the previous access_mem */
	unsigned int stack_next;	/* round-robin victim in stack[] */
	struct uw_page stack[UW_STACK_PAGES];
	uint64_t code_epoch;		/* the epoch code[] was filled in; 0: none */
	struct uw_page *code;		/* UW_CODE_PAGES, direct-mapped by page number */
};

/* Epochs are unique across unwinders, so a ctx that moves to another process drops its pages. */
static uint64_t uw_epoch_last;

static uint64_t
uw_epoch_next(void)
{
	return __atomic_add_fetch(&uw_epoch_last, 1, __ATOMIC_RELAXED);
}

/* mod's index, built at its first use (under the module set's elf_lock, so once). */
static const struct jt_unwind_index *
uw_index_get(struct uw_libunwind *u, struct jt_module *mod)
{
	const struct jt_unwind_index *ix = uw_index_peek(mod);

	if (ix)
		return ix;
	pthread_mutex_lock(&u->mods->elf_lock);
	ix = uw_index_peek(mod);
	if (!ix)
		ix = uw_index_build(mod);
	pthread_mutex_unlock(&u->mods->elf_lock);
	return ix;
}

/* ---- memory: page cache, overrides and synthetic tables ---- */

/* Whether addr lies in a non-writable segment of a module, so its page may stay cached. */
static int
uw_addr_is_ro(const struct uwl_ctx *c, uint64_t addr)
{
	const struct jt_module *mod = modules_find(c->u->mods, addr);
	const struct jt_unwind_index *ix = mod ? uw_index_peek(mod) : NULL;
	int i;

	if (!ix)
		return 0;
	for (i = 0; i < ix->n_ro; i++)
		if (addr - mod->bias >= ix->ro_lo[i] && addr - mod->bias < ix->ro_hi[i])
			return 1;
	return 0;
}

static void
uw_page_fill(struct uwl_ctx *c, struct uw_page *p, uint64_t page)
{
	p->addr = page;
	p->ok = mem_read(c->tid, page, p->data, UW_PAGE) == 0;
}

/*
 * Reads page and the one above it into two per-call slots with a single
 * process_vm_readv: a stack is unwound upward, and each system call costs
 * far more than copying another page (1.9 us for 4 KiB, 2.2 us for 8 KiB).
 * Pages past the first fault are left unloaded, not marked unreadable.
 */
static struct uw_page *
uw_stack_fill(struct uwl_ctx *c, uint64_t page)
{
	struct uw_page *p[UW_PREFETCH];
	struct iovec local[UW_PREFETCH], remote;
	ssize_t n;
	int i;

	for (i = 0; i < UW_PREFETCH; i++) {
		p[i] = &c->stack[c->stack_next++ % UW_STACK_PAGES];
		p[i]->addr = UW_NO_PAGE;
		local[i] = (struct iovec) { p[i]->data, UW_PAGE };
	}
	remote = (struct iovec) { (void *) (uintptr_t) page, sizeof(p[0]->data) * UW_PREFETCH };
	n = process_vm_readv(c->tid, local, UW_PREFETCH, &remote, 1, 0);
	for (i = 0; i < UW_PREFETCH && n >= (ssize_t) ((i + 1) * UW_PAGE); i++) {
		p[i]->addr = page + (uint64_t) i * UW_PAGE;
		p[i]->ok = 1;
	}
	if (n < (ssize_t) UW_PAGE)
		uw_page_fill(c, p[0], page);	/* mem_read's fallback decides */
	return p[0];
}

/*
 * Returns the cached page at page (filling it on first touch). Pages that
 * cannot be read are remembered too, so a bad address costs one read.
 */
static struct uw_page *
uw_page_get(struct uwl_ctx *c, uint64_t page)
{
	struct uw_page *p;
	unsigned int i, slot;

	for (i = 0; i < UW_STACK_PAGES; i++)
		if (c->stack[i].addr == page)
			return &c->stack[i];
	slot = (unsigned int) (((page >> 12) * 0x9e3779b97f4a7c15ull) >> (64 - UW_CODE_BITS));
	p = &c->code[slot];
	if (p->addr == page)
		return p;
	if (uw_addr_is_ro(c, page)) {
		uw_page_fill(c, p, page);
		if (p->ok)
			return p;
		p->addr = UW_NO_PAGE;	/* only good pages stay across calls */
	}
	return uw_stack_fill(c, page);
}

/* Copies len bytes at addr out of the page cache; -1 when unreadable. */
static int
uw_copy(struct uwl_ctx *c, uint64_t addr, uint8_t *out, size_t len)
{
	uint64_t page, off;
	size_t n;

	while (len) {
		page = addr & ~UW_PAGE_MASK;
		off = addr - page;
		if (!c->last || c->last->addr != page)
			c->last = uw_page_get(c, page);
		if (!c->last->ok)
			return -1;
		n = UW_PAGE - off < len ? UW_PAGE - off : len;
		memcpy(out, c->last->data + off, n);
		out += n;
		addr += n;
		len -= n;
	}
	return 0;
}

/* Serves a word of module idx's synthetic table. */
static int
uw_table_read(struct uwl_ctx *c, uint64_t addr, unw_word_t *valp)
{
	uint64_t idx = (addr - UW_TABLE_BASE) >> 32, off = addr & 0xffffffffu;
	const struct jt_unwind_index *ix;
	size_t bytes, n;

	if (idx >= c->u->mods->n || !(ix = uw_index_peek(c->u->mods->v[idx])))
		return -UNW_EINVAL;
	bytes = ix->n * sizeof(*ix->tab);
	if (off >= bytes)
		return -UNW_EINVAL;
	n = bytes - off < sizeof(*valp) ? bytes - off : sizeof(*valp);
	*valp = 0;
	memcpy(valp, (const uint8_t *) ix->tab + off, n);
	return 0;
}

static int
uw_access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *valp, int write, void *arg)
{
	struct uwl_ctx *c = arg;
	const struct uw_overrides *ov = &c->ctx->ov;
	int i, rc;

	if (write)
		return -UNW_EINVAL;	/* we never change the target's stack */
	if (addr >= UW_TABLE_BASE)
		return uw_table_read(c, addr, valp);
	/* libunwind reads a saved return address as the whole aligned slot. */
	for (i = 0; i < ov->n; i++)
		if (addr == ov->addr[i]) {
			*valp = ov->value[i];
			return 0;
		}
	/* Checked before the page cache, which may hold a live page beside a module's. */
	if (c->ctx->stack.set && (rc = uw_stack_read(c->ctx, c->u->mods, addr, valp, sizeof(*valp))) <= 0)
		return rc < 0 ? -UNW_EINVAL : 0;
	return uw_copy(c, addr, (uint8_t *) valp, sizeof(*valp)) < 0 ? -UNW_EINVAL : 0;
}

/* ---- registers and procedure info ---- */

static int
uw_access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *valp, int write, void *arg)
{
	if (write)
		return -UNW_EREADONLYREG;
	return arch_lu_reg(((struct uwl_ctx *) arg)->regs, reg, valp);
}

static int
uw_access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write, void *arg)
{
	return -UNW_EBADREG;
}

static int
uw_resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
	return -UNW_EINVAL;
}

/*
 * Points libunwind at our table for the module holding ip, the way it would
 * use an .eh_frame_hdr, and lets it read the FDE from target memory.
 */
static int
uw_find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
		  int need_unwind_info, void *arg)
{
	struct uwl_ctx *c = arg;
	struct jt_module *mod = modules_find(c->u->mods, ip);
	const struct jt_unwind_index *ix;
	unw_dyn_info_t di;
	size_t i = 0;

	if (!mod)
		return -UNW_ENOINFO;
	while (c->u->mods->v[i] != mod)	/* only on a libunwind cache miss */
		i++;
	ix = uw_index_get(c->u, mod);
	if (!ix || ix->n == 0)
		return -UNW_ENOINFO;
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = mod->start;
	di.end_ip = mod->end;
	di.u.rti.segbase = mod->bias + ix->eh_addr;
	/* In words, as libunwind multiplies by sizeof(unw_word_t) to get bytes. */
	di.u.rti.table_len = ix->n * sizeof(struct uw_entry) / sizeof(unw_word_t);
	di.u.rti.table_data = UW_TABLE_BASE + ((uint64_t) i << 32);
	return arch_lu_search_table(as, ip, &di, pi, need_unwind_info, arg);
}

/*
 * libunwind frees what dwarf_search_unwind_table allocated (it comes from
 * its own pool and is marked UNW_INFO_FORMAT_TABLE); we allocate nothing.
 */
static void
uw_put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
}

static int
uw_get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *dilap, void *arg)
{
	return -UNW_ENOINFO;
}

static int
uw_get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len,
		 unw_word_t *offp, void *arg)
{
	return -UNW_ENOINFO;	/* symbols are resolved by sym.c when reporting */
}

static unw_accessors_t uw_accessors = {
	.find_proc_info = uw_find_proc_info,
	.put_unwind_info = uw_put_unwind_info,
	.get_dyn_info_list_addr = uw_get_dyn_info_list_addr,
	.access_mem = uw_access_mem,
	.access_reg = uw_access_reg,
	.access_fpreg = uw_access_fpreg,
	.resume = uw_resume,
	.get_proc_name = uw_get_proc_name,
};

/* ---- the libunwind backend ---- */

static void
uw_pages_reset(struct uw_page *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		v[i].addr = UW_NO_PAGE;
}

static void *
uwl_new(struct jt_modules *mods)
{
	struct uw_libunwind *u = xcalloc(1, sizeof(*u));

	u->as = unw_create_addr_space(&uw_accessors, 0);
	if (!u->as) {
		free(u);
		return NULL;
	}
	unw_set_caching_policy(u->as, UNW_CACHE_GLOBAL);
	u->mods = mods;
	u->mods_generation = mods->generation;
	u->epoch = uw_epoch_next();
	pthread_mutex_init(&u->lock, NULL);
	return u;
}

static void
uwl_destroy(void *state)
{
	struct uw_libunwind *u = state;

	unw_destroy_addr_space(u->as);
	pthread_mutex_destroy(&u->lock);
	free(u);
}

/* Drops libunwind's cache and every ctx's code pages (a new epoch). */
static void
uwl_flush(void *state)
{
	struct uw_libunwind *u = state;

	unw_flush_cache(u->as, 0, 0);
	__atomic_store_n(&u->epoch, uw_epoch_next(), __ATOMIC_RELEASE);
	__atomic_store_n(&u->mods_generation, u->mods->generation, __ATOMIC_RELEASE);
}

/*
 * A module set that changed may have put other code at cached addresses:
 * the first unwind after the change flushes, once, while the others wait.
 */
static void
uwl_sync(struct uw_libunwind *u)
{
	uint64_t gen = u->mods->generation;

	if (__atomic_load_n(&u->mods_generation, __ATOMIC_ACQUIRE) == gen)
		return;
	pthread_mutex_lock(&u->lock);
	if (u->mods_generation != gen)
		uwl_flush(u);
	pthread_mutex_unlock(&u->lock);
}

static void *
uwl_ctx_new(void)
{
	struct uwl_ctx *c = xcalloc(1, sizeof(*c));

	c->code = xmalloc(UW_CODE_PAGES * sizeof(*c->code));
	uw_pages_reset(c->code, UW_CODE_PAGES);
	uw_pages_reset(c->stack, UW_STACK_PAGES);
	return c;
}

static void
uwl_ctx_free(void *scratch)
{
	struct uwl_ctx *c = scratch;

	free(c->code);
	free(c);
}

/*
 * Whether the frame at ip is the sigreturn trampoline, known by its code as
 * unwind_dw.c knows it: unw_is_signal_frame describes the frame libunwind
 * stepped from, which is one frame too late here. The trampoline is module
 * code (a JIT's pc is not worth a read), and libunwind has usually read
 * the page of ip already.
 */
static int
uwl_is_sigreturn(struct uwl_ctx *c, uint64_t ip)
{
	uint8_t b[ARCH_SIGRETURN_LEN];

	return modules_find(c->u->mods, ip) && uw_copy(c, ip, b, sizeof(b)) == 0 && arch_is_sigreturn(b);
}

/*
 * Steps where libunwind has no rule: frame cur at exact pc ip (frame 0's,
 * or the one a signal interrupted) on a PLT stub's jump that no CFI
 * covers (plt.h). libunwind knows only a lazy-binding stub without CFI,
 * and would go on by the frame pointer into garbage; the stack there is as
 * at a function's entry. Fills *caller with the stub's caller's registers
 * (its pc as a lookup address, see uwl_stack) and *ret with the return
 * address. Returns 1, or 0 anywhere else.
 */
static int
uwl_plt_step(struct uwl_ctx *c, unw_cursor_t *cur, uint64_t ip, arch_regs *caller, uint64_t *ret)
{
	uint8_t code[PLT_STUB_JUMP_LEN];
	unw_proc_info_t pi;
	unw_word_t v;

	if (!modules_find(c->u->mods, ip) || uw_copy(c, ip, code, sizeof(code)) < 0 || !plt_is_stub_jump(code)
	    || uw_find_proc_info(c->u->as, ip, &pi, 0, c) == 0)
		return 0;
	arch_lu_regs_of(cur, caller);
	if (uw_access_mem(c->u->as, arch_ret_slot(caller), &v, 0, c) < 0 || v == 0)
		return 0;
	*ret = v;
	arch_set_sp(caller, arch_sp_after_ret(arch_ret_slot(caller)));
	/*
	 * libunwind looks a first frame's CFI up at its pc as it is, but a
	 * return address's belongs to the call before it (which may be its
	 * function's last instruction); the sigreturn trampoline is known at
	 * the trampoline itself.
	 */
	arch_set_pc(caller, uwl_is_sigreturn(c, v) ? v : v - 1);
	return 1;
}

static int
uwl_read_word(void *arg, uint64_t addr, uint64_t *v)
{
	struct uwl_ctx *c = arg;
	unw_word_t w;

	if (uw_access_mem(c->u->as, addr, &w, 0, c) < 0)
		return -1;
	*v = w;
	return 0;
}

/*
 * A frame a signal interrupted at ip in the kernel's uretprobe trampoline
 * (unwind.h): fills *caller with the registers of the return it was
 * making, pc at the return address (an interrupted pc, looked up as it
 * is). Returns 1, or 0 anywhere else.
 */
static int
uwl_tramp_step(struct uwl_ctx *c, unw_cursor_t *cur, uint64_t ip, arch_regs *caller)
{
	uint64_t ret, sp;

	if (!uw_in_trampoline(c->ctx, ip))
		return 0;
	arch_lu_regs_of(cur, caller);
	if (!uw_trampoline_exit(c->ctx, ip, arch_sp(caller), uwl_read_word, c, &ret, &sp))
		return 0;
	arch_set_pc(caller, ret);
	arch_set_sp(caller, sp);
	return 1;
}

/* Readies c for one unwind of tid by u. */
static void
uwl_ctx_begin(struct uwl_ctx *c, struct uw_libunwind *u, struct jt_unwind_ctx *ctx, pid_t tid,
	      const arch_regs *regs)
{
	uint64_t epoch = __atomic_load_n(&u->epoch, __ATOMIC_ACQUIRE);

	if (c->code_epoch != epoch) {
		uw_pages_reset(c->code, UW_CODE_PAGES);
		c->code_epoch = epoch;
	}
	c->u = u;
	c->ctx = ctx;
	c->tid = tid;
	c->regs = regs;
	c->last = NULL;
	uw_pages_reset(c->stack, UW_STACK_PAGES);	/* the stack moved on since last time */
}

static int
uwl_stack(void *state, struct jt_unwind_ctx *ctx, pid_t tid, const arch_regs *regs, uint64_t *pcs, int max)
{
	struct uw_libunwind *u = state;
	struct uwl_ctx *c = uw_ctx_scratch(ctx, &uw_backend_libunwind);
	unw_cursor_t cur;
	arch_regs caller;
	uint64_t ip;
	unw_word_t w;
	int n = 0, ok;

	if (max < 1)
		return -1;
	uwl_sync(u);
	uwl_ctx_begin(c, u, ctx, tid, regs);
	pcs[n++] = arch_pc(regs);
	ok = unw_init_remote(&cur, u->as, c) == 0;
	while (ok && n < max) {
		/* An interrupted pc in the uretprobe trampoline is replaced by the return's, and the walk starts over there. */
		if (n >= 2 && (pcs[n - 2] & UNWIND_PC_SIGNAL) && uwl_tramp_step(c, &cur, pcs[n - 1], &caller)) {
			pcs[n - 1] = arch_pc(&caller);
			c->regs = &caller;
			ok = unw_init_remote(&cur, u->as, c) == 0;
			continue;
		}
		/* Past a PLT stub libunwind cannot step, it starts over from the caller. */
		if ((n == 1 || pcs[n - 2] & UNWIND_PC_SIGNAL) && uwl_plt_step(c, &cur, pcs[n - 1], &caller, &ip)) {
			c->regs = &caller;
			ok = unw_init_remote(&cur, u->as, c) == 0;
		} else if (unw_step(&cur) > 0 && unw_get_reg(&cur, UNW_REG_IP, &w) == 0 && w != 0) {
			ip = w;
		} else {
			break;
		}
		pcs[n++] = ip | (uwl_is_sigreturn(c, ip) ? UNWIND_PC_SIGNAL : 0);
	}
	c->regs = NULL;
	return n;
}

const struct uw_backend uw_backend_libunwind = {
	.name = "libunwind",
	.id = UW_BACKEND_LIBUNWIND,
	.new = uwl_new,
	.destroy = uwl_destroy,
	.ctx_new = uwl_ctx_new,
	.ctx_free = uwl_ctx_free,
	.stack = uwl_stack,
};
