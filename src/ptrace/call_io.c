/* call_io.c - how call matching reaches the target: the thread's own memory and unwinder, held-back writes, the emulated instruction. */
#include <string.h>

#include "call.h"
#include "call_io.h"
#include "emu.h"
#include "kops.h"
#include "mem.h"
#include "options.h"
#include "proc.h"
#include "tthread.h"
#include "unwind.h"

/* The traced process itself as call matching's jt_call_io (arg is the thread). */
static int
call_proc_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	return kops->read(((struct jt_thread *)arg)->tid, addr, buf, len);
}

static int
call_proc_write(void *arg, uint64_t addr, const void *buf, size_t len)
{
	return kops->write(((struct jt_thread *)arg)->tid, addr, buf, len);
}

/* The calling tracer thread's unwind scratch: overrides and the unwind go to the same one. */
static struct jt_unwind_ctx *
call_proc_ctx(struct jt_tthread *tt)
{
	if (!tt->uctx)
		tt->uctx = unwind_ctx_new();
	return tt->uctx;
}

static int
call_proc_unwind(void *arg, const arch_regs *regs, uint64_t *pcs, int max)
{
	struct jt_tthread *tt = tthread_self();
	int unlock = tt->unwind_unlock;

	/* One unwind per dispatched stop may release the lock: its own event's. */
	tt->unwind_unlock = 0;
	return proc_unwind(tt->tr, arg, call_proc_ctx(tt), regs, pcs, max, unlock);
}

static void
call_proc_override(void *arg, uint64_t slot, uint64_t ret_addr)
{
	unwind_ctx_override(call_proc_ctx(tthread_self()), slot, ret_addr);
}

const struct jt_call_io *
call_proc_io(struct jt_thread *t, struct call_proc *cp)
{
	cp->mem = (struct jt_mem_ops){ call_proc_read, call_proc_write, t };
	cp->io = (struct jt_call_io){ &cp->mem, call_proc_unwind, call_proc_override, t };
	return &cp->io;
}

int
call_write_back(struct jt_thread *t, const struct jt_call_io *io)
{
	int ret = 0;

	if (t->wb_len)
		ret = io->mem->write(io->mem->arg, t->wb_addr, t->wb_buf, t->wb_len);
	t->wb_len = 0;
	return ret;
}

int
call_write_held(struct jt_thread *t, const struct jt_call_io *io, uint64_t addr, const void *buf, size_t len)
{
	if (t->wb_len && addr + len == t->wb_addr && t->wb_len + len <= sizeof(t->wb_buf)) {
		memmove(t->wb_buf + len, t->wb_buf, t->wb_len);
		memcpy(t->wb_buf, buf, len);
		t->wb_addr = addr;
		t->wb_len += len;
		return 0;
	}
	if (t->wb_len && t->wb_addr + t->wb_len == addr && t->wb_len + len <= sizeof(t->wb_buf)) {
		memcpy(t->wb_buf + t->wb_len, buf, len);
		t->wb_len += len;
		return 0;
	}
	if (call_write_back(t, io) < 0 || len > sizeof(t->wb_buf))
		return len > sizeof(t->wb_buf) ? io->mem->write(io->mem->arg, addr, buf, len) : -1;
	memcpy(t->wb_buf, buf, len);
	t->wb_addr = addr;
	t->wb_len = len;
	return 0;
}

/* The emulator's view of memory: io's, with writes held back (call_write_held). */
struct call_held {
	struct jt_thread *t;
	const struct jt_call_io *io;
};

static int
call_held_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct call_held *h = arg;

	/* A read must see what we wrote before it. */
	if (call_write_back(h->t, h->io) < 0)
		return -1;
	return h->io->mem->read(h->io->mem->arg, addr, buf, len);
}

static int
call_held_write(void *arg, uint64_t addr, const void *buf, size_t len)
{
	struct call_held *h = arg;

	return call_write_held(h->t, h->io, addr, buf, len);
}

enum call_action
call_emulate(struct jt_thread *t, const struct jt_call_io *io, struct jt_bp *bp, arch_regs *regs,
	     const struct jt_options *opt)
{
	struct call_held held = { t, io };
	struct jt_mem_ops ops = { call_held_read, call_held_write, &held };

	if (bp->insn.supported && !opt->no_emulate && emu_exec(&bp->insn, regs, &ops) == 0 &&
	    call_write_back(t, io) == 0)
		return CALL_RESUME;
	call_write_back(t, io);
	return CALL_STEP;
}

