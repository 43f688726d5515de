/* unwind_lu_index.c - the libunwind backend's index of a module: its .eh_frame FDEs as an .eh_frame_hdr-style table, and its read-only segments. */
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dwarf.h>
#include <elfutils/libdw.h>

#include "modules.h"
#include "unwind.h"
#include "unwind_backend.h"
#include "util.h"

/* A CIE's section offset and FDE pointer encoding (-1: unusable), for its FDEs. */
struct uw_cie {
	Dwarf_Off off;
	int enc;
};

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
 * no toolchain we support uses for pointers, and for undefined formats.
 */
static const uint8_t uw_enc_bytes[16] = {
	[DW_EH_PE_absptr] = 8, [DW_EH_PE_udata2] = 2, [DW_EH_PE_udata4] = 4, [DW_EH_PE_udata8] = 8,
	[DW_EH_PE_sdata2] = 2, [DW_EH_PE_sdata4] = 4, [DW_EH_PE_sdata8] = 8,
};

/*
 * Decodes the pointer of encoding enc at p, whose link-time address is
 * p_addr. Returns the bytes it took, or -1 for forms other than absolute
 * and pc-relative (textrel, datarel and aligned do not occur in the FDEs
 * of the toolchains we support).
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

const struct jt_unwind_index *
uw_index_peek(const struct jt_module *mod)
{
	return module_data(mod, &uw_index_key);
}

/* Builds mod's index; an empty one when the file is unusable, so it is tried once. */
const struct jt_unwind_index *
uw_index_build(struct jt_module *mod)
{
	struct jt_unwind_index *ix = xcalloc(1, sizeof(*ix));

	if (module_elf(mod))
		uw_index_elf(ix, module_elf(mod));
	debug_msg("unwind: %s: %zu FDEs", mod->path, ix->n);
	if (module_set_data(mod, &uw_index_key, ix, uw_index_free_data) < 0) {
		/* No slot left: an empty index still says "tried", but leaks nothing. */
		unwind_index_free(ix);
		return NULL;
	}
	return ix;
}
