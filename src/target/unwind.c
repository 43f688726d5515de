/* unwind.c - the unwinder interface: choosing a backend, and the per-unwind contexts callers own. */
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "modules.h"
#include "unwind.h"
#include "unwind_backend.h"
#include "util.h"

struct jt_unwind {
	const struct uw_backend *be;
	void *state;
	struct jt_unwind_ctx *dflt;	/* for unwind_stack and unwind_override */
};

/* Indexed by uw_backend.id; the first is the default: 2-3 us per unwind against 9-13 for libunwind (test_unwind). */
static const struct uw_backend *const uw_backends[UW_NBACKENDS] = {
	[UW_BACKEND_DW] = &uw_backend_dw,
	[UW_BACKEND_LIBUNWIND] = &uw_backend_libunwind,
};

/* The backend called name (NULL or "" for the default), or NULL. */
static const struct uw_backend *
unwind_backend_find(const char *name)
{
	if (!name || !*name)
		return uw_backends[0];
	for (size_t i = 0; i < ARRAY_SIZE(uw_backends); i++)
		if (strcmp(name, uw_backends[i]->name) == 0)
			return uw_backends[i];
	return NULL;
}

int
unwind_backend_known(const char *name)
{
	return unwind_backend_find(name) != NULL;
}

struct jt_unwind *
unwind_new_backend(struct jt_modules *mods, const char *name)
{
	const struct uw_backend *be = unwind_backend_find(name);
	struct jt_unwind *u;

	if (!be)
		return NULL;
	u = xmalloc(sizeof(*u));
	u->be = be;
	u->state = u->be->new(mods);
	if (!u->state) {
		free(u);
		return NULL;
	}
	u->dflt = unwind_ctx_new();
	debug_msg("unwind: %s backend", u->be->name);
	return u;
}

struct jt_unwind *
unwind_new(struct jt_modules *mods)
{
	return unwind_new_backend(mods, NULL);
}

void
unwind_destroy(struct jt_unwind *u)
{
	if (!u)
		return;
	u->be->destroy(u->state);
	unwind_ctx_free(u->dflt);
	free(u);
}


/* ---- per-unwind contexts ---- */

struct jt_unwind_ctx *
unwind_ctx_new(void)
{
	return xcalloc(1, sizeof(struct jt_unwind_ctx));
}

void
unwind_ctx_free(struct jt_unwind_ctx *ctx)
{
	if (!ctx)
		return;
	for (int i = 0; i < UW_NBACKENDS; i++)
		if (ctx->scratch[i])
			uw_backends[i]->ctx_free(ctx->scratch[i]);
	free(ctx);
}

void *
uw_ctx_scratch(struct jt_unwind_ctx *ctx, const struct uw_backend *be)
{
	if (!ctx->scratch[be->id])
		ctx->scratch[be->id] = be->ctx_new();
	return ctx->scratch[be->id];
}

void
uw_overrides_add(struct uw_overrides *ov, uint64_t addr, uint64_t value)
{
	if (ov->n == UW_MAX_OVERRIDES) {
		error_msg("unwind: more than %d return address overrides", UW_MAX_OVERRIDES);
		return;
	}
	ov->addr[ov->n] = addr;
	ov->value[ov->n++] = value;
}

void
unwind_ctx_override(struct jt_unwind_ctx *ctx, uint64_t addr, uint64_t value)
{
	uw_overrides_add(&ctx->ov, addr, value);
}

void
unwind_ctx_trampoline(struct jt_unwind_ctx *ctx, uint64_t start, uint64_t len)
{
	ctx->tramp = start;
	ctx->tramp_len = len;
}

void
unwind_ctx_returned(struct jt_unwind_ctx *ctx, uint64_t slot, uint64_t ret)
{
	if (ctx->nret < UNWIND_MAX_RETURNED) {
		ctx->ret_slot[ctx->nret] = slot;
		ctx->ret_addr[ctx->nret++] = ret;
	}
}

/*
 * How far below the stack pointer a return leaves the trampoline may take
 * it: x86's pushes three registers before its syscall, and the kernel
 * leaves them there for it to pop after.
 */
#define UW_TRAMP_DEPTH 64

int
unwind_trampoline_near(uint64_t slot, uint64_t sp)
{
	uint64_t after = arch_sp_after_ret(slot);

	return sp <= after && after - sp <= UW_TRAMP_DEPTH;
}

int
uw_trampoline_exit(const struct jt_unwind_ctx *ctx, uint64_t pc, uint64_t sp,
		   int (*read)(void *arg, uint64_t addr, uint64_t *v), void *arg, uint64_t *ret, uint64_t *ret_sp)
{
	int best = -1;
	uint64_t v;

	if (!uw_in_trampoline(ctx, pc))
		return 0;
	/* In flight: the kernel has its return to make still. The innermost call that fits. */
	for (int i = 0; i < ctx->ov.n; i++)
		if (unwind_trampoline_near(ctx->ov.addr[i], sp) && (best < 0 || ctx->ov.addr[i] < ctx->ov.addr[best]))
			best = i;
	if (best >= 0) {
		*ret = ctx->ov.value[best];
		*ret_sp = arch_sp_after_ret(ctx->ov.addr[best]);
		return 1;
	}
	/* Returned: the kernel wrote the return address back into its slot, for the trampoline's last ret. */
	for (int i = 0; i < ctx->nret; i++)
		if (unwind_trampoline_near(ctx->ret_slot[i], sp) && read(arg, ctx->ret_slot[i], &v) == 0 && v == ctx->ret_addr[i]) {
			*ret = v;
			*ret_sp = arch_sp_after_ret(ctx->ret_slot[i]);
			return 1;
		}
	return 0;
}

void
unwind_ctx_stack(struct jt_unwind_ctx *ctx, uint64_t base, const void *data, size_t len)
{
	ctx->stack = (struct uw_stack_copy) { 1, base, data, len };
}

int
unwind_ctx_copy_ended(const struct jt_unwind_ctx *ctx)
{
	return ctx->copy_ended;
}

void
unwind_ctx_memo(struct jt_unwind_ctx *ctx, struct jt_unwind_memo **memo)
{
	ctx->memo = memo;
}

int
unwind_ctx_memo_joined(const struct jt_unwind_ctx *ctx)
{
	return ctx->memo_joined;
}

int
uw_stack_read(struct jt_unwind_ctx *ctx, const struct jt_modules *mods, uint64_t addr, void *out, size_t len)
{
	const struct uw_stack_copy *s = &ctx->stack;
	const struct jt_module *mod;

	if (uw_stack_holds(s, addr, len)) {
		memcpy(out, s->data + (addr - s->base), len);
		return 0;
	}
	mod = modules_find(mods, addr);
	if (mod && len <= mod->end - addr)
		return 1;
	/* The stack grows down: a frame above the copy is one the copy was too short for. */
	if (addr + len > s->base + s->len && addr >= s->base)
		ctx->copy_ended = 1;
	return -1;
}

int
unwind_stack_ctx(struct jt_unwind *u, struct jt_unwind_ctx *ctx, pid_t tid, const arch_regs *regs,
		 uint64_t *pcs, int max)
{
	int n;

	ctx->copy_ended = 0;
	ctx->memo_joined = -1;
	n = u->be->stack(u->state, ctx, tid, regs, pcs, max);
	ctx->ov.n = 0;
	ctx->nret = 0;
	ctx->tramp_len = 0;
	ctx->stack = (struct uw_stack_copy) { 0 };
	ctx->memo = NULL;
	return n;
}

/* ---- the single-caller forms, on the unwinder's own context ---- */

void
unwind_override(struct jt_unwind *u, uint64_t addr, uint64_t value)
{
	unwind_ctx_override(u->dflt, addr, value);
}

int
unwind_stack(struct jt_unwind *u, pid_t tid, const arch_regs *regs, uint64_t *pcs, int max)
{
	return unwind_stack_ctx(u, u->dflt, tid, regs, pcs, max);
}
