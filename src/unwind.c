/* unwind.c - the unwinder interface and its backend choice, and the libunwind backend over our own accessors. */
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <libunwind.h>

#include "mem.h"
#include "modules.h"
#include "unwind.h"
#include "unwind_backend.h"
#include "util.h"

/* Not in libunwind's headers, but exported by libunwind-x86_64 (1.6.2). */
extern int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t as, unw_word_t ip,
	unw_dyn_info_t *di, unw_proc_info_t *pi, int need_unwind_info, void *arg);

#define UW_PAGE		4096u
#define UW_PAGE_MASK	((uint64_t) UW_PAGE - 1)
#define UW_STACK_PAGES	16	/* pages cached for one call (stack, data) */
#define UW_PREFETCH	2	/* pages read at once on a miss there */
#define UW_CODE_BITS	8
#define UW_CODE_PAGES	(1u << UW_CODE_BITS)	/* read-only pages kept across calls */
#define UW_MAX_RO	8	/* read-only PT_LOAD ranges remembered per module */
#define UW_NO_PAGE	UINT64_MAX

/*
 * Where libunwind "reads" our synthetic .eh_frame_hdr-style tables: the
 * kernel half of the address space, which no user mapping can occupy.
 * Module i's table lives at UW_TABLE_BASE + (i << 32); i is the module's
 * position in the sorted set, which cannot change during one unwind_stack
 * (and libunwind keeps no table address beyond one lookup).
 */
#define UW_TABLE_BASE	0xffff900000000000ull

/* One row of a binary search table, as in .eh_frame_hdr; both relative to segbase. */
struct uw_entry {
	int32_t start_ip_offset;
	int32_t fde_offset;
};

/* The unwind index of one module; everything in it is link-time, so it survives a reload. */
struct jt_unwind_index {
	uint64_t eh_addr;		/* link-time address of .eh_frame: segbase - bias */
	struct uw_entry *tab;		/* sorted by start_ip_offset */
	size_t n;			/* 0: no usable .eh_frame */
	uint64_t ro_lo[UW_MAX_RO], ro_hi[UW_MAX_RO];	/* non-writable PT_LOADs */
	int n_ro;
};

struct uw_page {
	uint64_t addr;		/* page address, UW_NO_PAGE when empty */
	int ok;			/* 0: the page could not be read */
	uint8_t data[UW_PAGE];
};

struct uw_libunwind {
	unw_addr_space_t as;
	struct jt_modules *mods;
	uint64_t mods_generation;	/* of mods when the caches were last valid */

	/* State of the unwind_stack call in progress. */
	pid_t tid;
	const struct user_regs_struct *regs;
	struct uw_page *last;		/* page of the previous access_mem */
	unsigned int stack_next;	/* round-robin victim in stack[] */
	struct uw_page stack[UW_STACK_PAGES];
	struct uw_page *code;		/* UW_CODE_PAGES, direct-mapped by page number */
	struct uw_overrides ov;
};

/* A CIE's section offset and FDE pointer encoding (-1: unusable), for its FDEs. */
struct uw_cie {
	Dwarf_Off off;
	int enc;
};

/* ---- building the index of one module ---- */

void
unwind_index_free(struct jt_unwind_index *ix)
{
	if (!ix)
		return;
	free(ix->tab);
	free(ix);
}

/*
 * Bytes taken by each DW_EH_PE value format; 0 for the LEB128 forms, which
 * no x86-64 toolchain uses for pointers, and for undefined formats.
 */
static const uint8_t uw_enc_bytes[16] = {
	[DW_EH_PE_absptr] = 8, [DW_EH_PE_udata2] = 2, [DW_EH_PE_udata4] = 4, [DW_EH_PE_udata8] = 8,
	[DW_EH_PE_sdata2] = 2, [DW_EH_PE_sdata4] = 4, [DW_EH_PE_sdata8] = 8,
};

/*
 * Decodes the pointer of encoding enc at p, whose link-time address is
 * p_addr. Returns the bytes it took, or -1 for forms other than absolute
 * and pc-relative (textrel, datarel and aligned do not occur in x86-64 FDEs).
 */
static int
uw_decode(uint8_t enc, const uint8_t *p, const uint8_t *end, uint64_t p_addr, uint64_t *out)
{
	int n = uw_enc_bytes[enc & 0x0f], sh = 64 - 8 * n;
	uint64_t v = 0;

	if (n == 0 || end - p < n)
		return -1;
	memcpy(&v, p, n);	/* the file and we are both little-endian */
	if ((enc & DW_EH_PE_signed) && sh)
		v = (uint64_t) ((int64_t) (v << sh) >> sh);
	if ((enc & 0x70) == DW_EH_PE_pcrel)
		v += p_addr;
	else if ((enc & 0x70) != DW_EH_PE_absptr)
		return -1;
	*out = v;
	return n;
}

/*
 * The FDE pointer encoding a CIE declares with 'R', or -1 when it cannot be
 * found. 'P' (an encoding byte and a pointer) and 'L' (one byte) come first.
 */
static int
uw_cie_encoding(const Dwarf_CIE *cie)
{
	const uint8_t *p = cie->augmentation_data;
	const uint8_t *end = p + cie->augmentation_data_size;
	const char *a = cie->augmentation;

	if (a[0] != 'z')	/* unsized: unknown letters hide where the data is */
		return a[0] ? -1 : DW_EH_PE_absptr;
	for (a++; *a && p < end; a++) {
		if (*a == 'R')
			return *p;
		if (*a == 'L')
			p++;
		else if (*a == 'P' && uw_enc_bytes[*p & 0x0f] && (*p & 0x70) != DW_EH_PE_aligned)
			p += 1 + uw_enc_bytes[*p & 0x0f];
		else if (*a != 'S' && *a != 'B' && *a != 'G')
			return -1;
	}
	return DW_EH_PE_absptr;
}

/* The FDE encoding of the CIE at off, or -1. */
static int
uw_cie_find(const struct uw_cie *v, size_t n, Dwarf_Off off)
{
	size_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (v[mid].off == off)
			return v[mid].enc;
		if (v[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* Appends the FDE at off to the table if its start decodes and fits. */
static void
uw_add_fde(struct jt_unwind_index *ix, size_t *cap, Elf_Data *d, Dwarf_Off off,
	   const Dwarf_FDE *fde, int enc)
{
	uint64_t at = ix->eh_addr + (uint64_t) (fde->start - (const uint8_t *) d->d_buf);
	uint64_t start, range;
	int64_t rel;
	int n;

	if (enc < 0 || (n = uw_decode((uint8_t) enc, fde->start, fde->end, at, &start)) < 0
	    || uw_decode(enc & 0x0f, fde->start + n, fde->end, 0, &range) < 0)
		return;
	rel = (int64_t) (start - ix->eh_addr);
	/* Zero ranges are FDEs of code the linker discarded. */
	if (range == 0 || rel != (int32_t) rel || off > INT32_MAX)
		return;
	if (ix->n == *cap) {
		*cap = *cap ? 2 * *cap : 256;
		ix->tab = xrealloc(ix->tab, *cap * sizeof(*ix->tab));
	}
	ix->tab[ix->n++] = (struct uw_entry) { (int32_t) rel, (int32_t) off };
}

static int
uw_entry_cmp(const void *a, const void *b)
{
	const struct uw_entry *x = a, *y = b;

	return (x->start_ip_offset > y->start_ip_offset) - (x->start_ip_offset < y->start_ip_offset);
}

/*
 * Fills ix->tab from the .eh_frame bytes in d, in one pass: an FDE points
 * back to its CIE, so every CIE is met before the FDEs that use it.
 */
static void
uw_index_eh_frame(struct jt_unwind_index *ix, const unsigned char *ident, Elf_Data *d)
{
	struct uw_cie *cies = NULL;
	size_t ncie = 0, cap = 0, i, k;
	Dwarf_Off off, next;
	Dwarf_CFI_Entry e;
	int rc;

	for (off = 0; off != (Dwarf_Off) -1; off = next) {
		next = (Dwarf_Off) -1;
		rc = dwarf_next_cfi(ident, d, true, off, &next, &e);
		if (rc > 0 || (rc < 0 && next == (Dwarf_Off) -1))
			break;	/* the end, or an entry we cannot step over */
		if (rc < 0)
			continue;
		if (!dwarf_cfi_cie_p(&e)) {
			uw_add_fde(ix, &cap, d, off, &e.fde, uw_cie_find(cies, ncie, e.fde.CIE_pointer));
			continue;
		}
		if (ncie % 64 == 0)
			cies = xrealloc(cies, (ncie + 64) * sizeof(*cies));
		cies[ncie++] = (struct uw_cie) { off, uw_cie_encoding(&e.cie) };
	}
	free(cies);
	qsort(ix->tab, ix->n, sizeof(*ix->tab), uw_entry_cmp);
	/* Keep one row per start so the binary search has a single answer. */
	for (i = k = 0; i < ix->n; i++)
		if (k == 0 || ix->tab[k - 1].start_ip_offset != ix->tab[i].start_ip_offset)
			ix->tab[k++] = ix->tab[i];
	ix->n = k;
}

/* Finds .eh_frame and the non-writable PT_LOADs of elf. */
static void
uw_index_elf(struct jt_unwind_index *ix, Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Phdr ph;
	Elf_Data *d;
	size_t shstrndx, nph, i;
	const char *name;

	if (elf_getphdrnum(elf, &nph) == 0)
		for (i = 0; i < nph && ix->n_ro < UW_MAX_RO; i++)
			if (gelf_getphdr(elf, (int) i, &ph) && ph.p_type == PT_LOAD && !(ph.p_flags & PF_W)) {
				ix->ro_lo[ix->n_ro] = ph.p_vaddr;
				ix->ro_hi[ix->n_ro++] = ph.p_vaddr + ph.p_memsz;
			}
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".eh_frame") != 0)
			continue;
		d = elf_getdata(scn, NULL);
		if (d && d->d_buf && d->d_size) {
			ix->eh_addr = sh.sh_addr;
			uw_index_eh_frame(ix, (const unsigned char *) elf_getident(elf, NULL), d);
		}
		return;
	}
}

/* The key of a module's index in its module_data. */
static const char uw_index_key;

static void
uw_index_free_data(void *ix)
{
	unwind_index_free(ix);
}

/* Builds mod's index; an empty one when the file is unusable, so it is tried once. */
static struct jt_unwind_index *
uw_index_build(struct jt_module *mod)
{
	struct jt_unwind_index *ix = xcalloc(1, sizeof(*ix));

	module_set_data(mod, &uw_index_key, ix, uw_index_free_data);
	if (module_elf(mod))
		uw_index_elf(ix, module_elf(mod));
	debug_msg("unwind: %s: %zu FDEs", mod->path, ix->n);
	return ix;
}

/* ---- memory: page cache, overrides and synthetic tables ---- */

/* Whether addr lies in a non-writable segment of a module, so its page may stay cached. */
static int
uw_addr_is_ro(const struct uw_libunwind *u, uint64_t addr)
{
	const struct jt_module *mod = modules_find(u->mods, addr);
	const struct jt_unwind_index *ix = mod ? module_data(mod, &uw_index_key) : NULL;
	int i;

	if (!ix)
		return 0;
	for (i = 0; i < ix->n_ro; i++)
		if (addr - mod->bias >= ix->ro_lo[i] && addr - mod->bias < ix->ro_hi[i])
			return 1;
	return 0;
}

static void
uw_page_fill(struct uw_libunwind *u, struct uw_page *p, uint64_t page)
{
	p->addr = page;
	p->ok = mem_read(u->tid, page, p->data, UW_PAGE) == 0;
}

/*
 * Reads page and the one above it into two per-call slots with a single
 * process_vm_readv: a stack is unwound upward, and each system call costs
 * far more than copying another page (1.9 us for 4 KiB, 2.2 us for 8 KiB).
 * Pages past the first fault are left unloaded, not marked unreadable.
 */
static struct uw_page *
uw_stack_fill(struct uw_libunwind *u, uint64_t page)
{
	struct uw_page *p[UW_PREFETCH];
	struct iovec local[UW_PREFETCH], remote;
	ssize_t n;
	int i;

	for (i = 0; i < UW_PREFETCH; i++) {
		p[i] = &u->stack[u->stack_next++ % UW_STACK_PAGES];
		p[i]->addr = UW_NO_PAGE;
		local[i] = (struct iovec) { p[i]->data, UW_PAGE };
	}
	remote = (struct iovec) { (void *) (uintptr_t) page, sizeof(p[0]->data) * UW_PREFETCH };
	n = process_vm_readv(u->tid, local, UW_PREFETCH, &remote, 1, 0);
	for (i = 0; i < UW_PREFETCH && n >= (ssize_t) ((i + 1) * UW_PAGE); i++) {
		p[i]->addr = page + (uint64_t) i * UW_PAGE;
		p[i]->ok = 1;
	}
	if (n < (ssize_t) UW_PAGE)
		uw_page_fill(u, p[0], page);	/* mem_read's fallback decides */
	return p[0];
}

/*
 * Returns the cached page at page (filling it on first touch). Pages that
 * cannot be read are remembered too, so a bad address costs one read.
 */
static struct uw_page *
uw_page_get(struct uw_libunwind *u, uint64_t page)
{
	struct uw_page *p;
	unsigned int i, slot;

	for (i = 0; i < UW_STACK_PAGES; i++)
		if (u->stack[i].addr == page)
			return &u->stack[i];
	slot = (unsigned int) (((page >> 12) * 0x9e3779b97f4a7c15ull) >> (64 - UW_CODE_BITS));
	p = &u->code[slot];
	if (p->addr == page)
		return p;
	if (uw_addr_is_ro(u, page)) {
		uw_page_fill(u, p, page);
		if (p->ok)
			return p;
		p->addr = UW_NO_PAGE;	/* only good pages stay across calls */
	}
	return uw_stack_fill(u, page);
}

/* Copies len bytes at addr out of the page cache; -1 when unreadable. */
static int
uw_copy(struct uw_libunwind *u, uint64_t addr, uint8_t *out, size_t len)
{
	uint64_t page, off;
	size_t n;

	while (len) {
		page = addr & ~UW_PAGE_MASK;
		off = addr - page;
		if (!u->last || u->last->addr != page)
			u->last = uw_page_get(u, page);
		if (!u->last->ok)
			return -1;
		n = UW_PAGE - off < len ? UW_PAGE - off : len;
		memcpy(out, u->last->data + off, n);
		out += n;
		addr += n;
		len -= n;
	}
	return 0;
}

/* Serves a word of module idx's synthetic table. */
static int
uw_table_read(struct uw_libunwind *u, uint64_t addr, unw_word_t *valp)
{
	uint64_t idx = (addr - UW_TABLE_BASE) >> 32, off = addr & 0xffffffffu;
	const struct jt_unwind_index *ix;
	size_t bytes, n;

	if (idx >= u->mods->n || !(ix = module_data(u->mods->v[idx], &uw_index_key)))
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
	struct uw_libunwind *u = arg;
	int i;

	if (write)
		return -UNW_EINVAL;	/* we never change the target's stack */
	if (addr >= UW_TABLE_BASE)
		return uw_table_read(u, addr, valp);
	/* libunwind reads a saved return address as the whole aligned slot. */
	for (i = 0; i < u->ov.n; i++)
		if (addr == u->ov.addr[i]) {
			*valp = u->ov.value[i];
			return 0;
		}
	return uw_copy(u, addr, (uint8_t *) valp, sizeof(*valp)) < 0 ? -UNW_EINVAL : 0;
}

/* ---- registers and procedure info ---- */

/* libunwind numbers UNW_X86_64_RAX..UNW_X86_64_RIP as DWARF does. */
#define UW_REG(r) offsetof(struct user_regs_struct, r)
const size_t uw_user_offset[17] = {
	UW_REG(rax), UW_REG(rdx), UW_REG(rcx), UW_REG(rbx), UW_REG(rsi), UW_REG(rdi),
	UW_REG(rbp), UW_REG(rsp), UW_REG(r8), UW_REG(r9), UW_REG(r10), UW_REG(r11),
	UW_REG(r12), UW_REG(r13), UW_REG(r14), UW_REG(r15), UW_REG(rip),
};
_Static_assert(ARRAY_SIZE(uw_user_offset) == UNW_X86_64_RIP + 1, "libunwind register order");

static int
uw_access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *valp, int write, void *arg)
{
	const struct user_regs_struct *r = ((struct uw_libunwind *) arg)->regs;

	if (write)
		return -UNW_EREADONLYREG;
	if (reg < 0 || reg > UNW_X86_64_RIP)
		return -UNW_EBADREG;
	memcpy(valp, (const char *) r + uw_user_offset[reg], sizeof(*valp));
	return 0;
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
	struct uw_libunwind *u = arg;
	struct jt_module *mod = modules_find(u->mods, ip);
	struct jt_unwind_index *ix;
	unw_dyn_info_t di;
	size_t i = 0;

	if (!mod)
		return -UNW_ENOINFO;
	while (u->mods->v[i] != mod)	/* only on a libunwind cache miss */
		i++;
	if (!(ix = module_data(mod, &uw_index_key)))
		ix = uw_index_build(mod);
	if (ix->n == 0)
		return -UNW_ENOINFO;
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = mod->start;
	di.end_ip = mod->end;
	di.u.rti.segbase = mod->bias + ix->eh_addr;
	/* In words, as libunwind multiplies by sizeof(unw_word_t) to get bytes. */
	di.u.rti.table_len = ix->n * sizeof(struct uw_entry) / sizeof(unw_word_t);
	di.u.rti.table_data = UW_TABLE_BASE + ((uint64_t) i << 32);
	return _Ux86_64_dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, arg);
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
	u->code = xmalloc(UW_CODE_PAGES * sizeof(*u->code));
	uw_pages_reset(u->code, UW_CODE_PAGES);
	uw_pages_reset(u->stack, UW_STACK_PAGES);
	return u;
}

static void
uwl_destroy(void *state)
{
	struct uw_libunwind *u = state;

	unw_destroy_addr_space(u->as);
	free(u->code);
	free(u);
}

static void
uwl_flush(void *state)
{
	struct uw_libunwind *u = state;

	unw_flush_cache(u->as, 0, 0);
	uw_pages_reset(u->code, UW_CODE_PAGES);
	u->mods_generation = u->mods->generation;
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

static void
uwl_override(void *state, uint64_t addr, uint64_t value)
{
	uw_overrides_add(&((struct uw_libunwind *) state)->ov, addr, value);
}

/*
 * Whether the frame at ip is the sigreturn trampoline, known by its code as
 * unwind_dw.c knows it: unw_is_signal_frame describes the frame libunwind
 * stepped from, which is one frame too late here. The trampoline is module
 * code (a JIT's pc is not worth a read), and libunwind has usually read
 * the page of ip already.
 */
static int
uwl_is_sigreturn(struct uw_libunwind *u, uint64_t ip)
{
	uint8_t b[ARCH_SIGRETURN_LEN];

	return modules_find(u->mods, ip) && uw_copy(u, ip, b, sizeof(b)) == 0 && arch_is_sigreturn(b);
}

static int
uwl_stack(void *state, pid_t tid, const struct user_regs_struct *regs, uint64_t *pcs, int max)
{
	struct uw_libunwind *u = state;
	unw_cursor_t c;
	unw_word_t ip;
	int n = 0;

	if (max < 1) {
		u->ov.n = 0;
		return -1;
	}
	/* A module set that changed may have put other code at cached addresses. */
	if (u->mods_generation != u->mods->generation)
		uwl_flush(u);
	u->tid = tid;
	u->regs = regs;
	u->last = NULL;
	uw_pages_reset(u->stack, UW_STACK_PAGES);	/* the stack moved on since last time */
	pcs[n++] = regs->rip;
	if (unw_init_remote(&c, u->as, u) == 0) {
		while (n < max && unw_step(&c) > 0) {
			if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || ip == 0)
				break;
			pcs[n++] = ip | (uwl_is_sigreturn(u, ip) ? UNWIND_PC_SIGNAL : 0);
		}
	}
	u->ov.n = 0;
	u->regs = NULL;
	return n;
}

const struct uw_backend uw_backend_libunwind = {
	.name = "libunwind",
	.new = uwl_new,
	.destroy = uwl_destroy,
	.stack = uwl_stack,
	.override = uwl_override,
	.flush = uwl_flush,
};

/* ---- public interface: a backend and its state ---- */

struct jt_unwind {
	const struct uw_backend *be;
	void *state;
};

/* The first is the default: 2-3 us per unwind against 9-13 for libunwind (test_unwind). */
static const struct uw_backend *const uw_backends[] = { &uw_backend_dw, &uw_backend_libunwind };

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
	free(u);
}

void
unwind_flush(struct jt_unwind *u)
{
	u->be->flush(u->state);
}

void
unwind_override(struct jt_unwind *u, uint64_t addr, uint64_t value)
{
	u->be->override(u->state, addr, value);
}

int
unwind_stack(struct jt_unwind *u, pid_t tid, const struct user_regs_struct *regs, uint64_t *pcs, int max)
{
	return u->be->stack(u->state, tid, regs, pcs, max);
}
