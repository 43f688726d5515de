/* alloc.c - the table of allocator functions jmptrace puts breakpoints on, the standard ones and those named by option. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "arch.h"
#include "util.h"

#define NA 0xff

/*
 * Argument indexes count the integer argument registers in order (arch_arg's n).
 * Aligned operator new takes (size, align); posix_memalign (out, align, size).
 */
struct jt_fn_desc alloc_fns[FN_MAX] = {
	[FN_MALLOC]        = { "malloc", "malloc", FK_ALLOC, 0, NA, NA },
	[FN_CALLOC]        = { "calloc", "calloc", FK_CALLOC, 0, 1, NA },
	[FN_REALLOC]       = { "realloc", "realloc", FK_REALLOC, 1, NA, 0 },
	[FN_REALLOCARRAY]  = { "reallocarray", "reallocarray", FK_REALLOC, 1, 2, 0 },
	[FN_POSIX_MEMALIGN] = { "posix_memalign", "posix_memalign", FK_MEMALIGN_PTR, 2, NA, 0 },
	[FN_ALIGNED_ALLOC] = { "aligned_alloc", "aligned_alloc", FK_ALLOC, 1, NA, NA },
	[FN_MEMALIGN]      = { "memalign", "memalign", FK_ALLOC, 1, NA, NA },
	[FN_VALLOC]        = { "valloc", "valloc", FK_ALLOC, 0, NA, NA },
	[FN_PVALLOC]       = { "pvalloc", "pvalloc", FK_ALLOC, 0, NA, NA },
	[FN_NEW]           = { "_Znwm", "operator new", FK_ALLOC, 0, NA, NA },
	[FN_NEW_ARR]       = { "_Znam", "operator new[]", FK_ALLOC, 0, NA, NA },
	[FN_NEW_NT]        = { "_ZnwmRKSt9nothrow_t", "operator new(nothrow)", FK_ALLOC, 0, NA, NA },
	[FN_NEW_ARR_NT]    = { "_ZnamRKSt9nothrow_t", "operator new[](nothrow)", FK_ALLOC, 0, NA, NA },
	[FN_NEW_AL]        = { "_ZnwmSt11align_val_t", "operator new(align)", FK_ALLOC, 0, NA, NA },
	[FN_NEW_ARR_AL]    = { "_ZnamSt11align_val_t", "operator new[](align)", FK_ALLOC, 0, NA, NA },
	[FN_NEW_AL_NT]     = { "_ZnwmSt11align_val_tRKSt9nothrow_t", "operator new(align, nothrow)", FK_ALLOC, 0, NA, NA },
	[FN_NEW_ARR_AL_NT] = { "_ZnamSt11align_val_tRKSt9nothrow_t", "operator new[](align, nothrow)", FK_ALLOC, 0, NA, NA },
	[FN_FREE]          = { "free", "free", FK_FREE, NA, NA, 0 },
	[FN_DEL]           = { "_ZdlPv", "operator delete", FK_FREE, NA, NA, 0 },
	[FN_DEL_ARR]       = { "_ZdaPv", "operator delete[]", FK_FREE, NA, NA, 0 },
	[FN_DEL_SZ]        = { "_ZdlPvm", "operator delete(sized)", FK_FREE, NA, NA, 0 },
	[FN_DEL_ARR_SZ]    = { "_ZdaPvm", "operator delete[](sized)", FK_FREE, NA, NA, 0 },
	[FN_DEL_NT]        = { "_ZdlPvRKSt9nothrow_t", "operator delete(nothrow)", FK_FREE, NA, NA, 0 },
	[FN_DEL_ARR_NT]    = { "_ZdaPvRKSt9nothrow_t", "operator delete[](nothrow)", FK_FREE, NA, NA, 0 },
	[FN_DEL_AL]        = { "_ZdlPvSt11align_val_t", "operator delete(align)", FK_FREE, NA, NA, 0 },
	[FN_DEL_ARR_AL]    = { "_ZdaPvSt11align_val_t", "operator delete[](align)", FK_FREE, NA, NA, 0 },
	[FN_DEL_SZ_AL]     = { "_ZdlPvmSt11align_val_t", "operator delete(sized, align)", FK_FREE, NA, NA, 0 },
	[FN_DEL_ARR_SZ_AL] = { "_ZdaPvmSt11align_val_t", "operator delete[](sized, align)", FK_FREE, NA, NA, 0 },
	[FN_DEL_AL_NT]     = { "_ZdlPvSt11align_val_tRKSt9nothrow_t", "operator delete(align, nothrow)", FK_FREE, NA, NA, 0 },
	[FN_DEL_ARR_AL_NT] = { "_ZdaPvSt11align_val_tRKSt9nothrow_t", "operator delete[](align, nothrow)", FK_FREE, NA, NA, 0 },
	[FN_UNWIND_RAISE]  = { "_Unwind_RaiseException", "_Unwind_RaiseException", FK_UNWIND, NA, NA, NA },
	[FN_UNWIND_RETHROW] = { "_Unwind_Resume_or_Rethrow", "_Unwind_Resume_or_Rethrow", FK_UNWIND, NA, NA, NA },
	[FN_UNWIND_FORCED] = { "_Unwind_ForcedUnwind", "_Unwind_ForcedUnwind", FK_UNWIND, NA, NA, NA },
	[FN_EXIT]          = { "_exit", "_exit", FK_EXIT, NA, NA, NA },
	/* --pages: the size is the length (mremap's new one), the pointer the region (brk's new break). */
	[FN_MMAP]          = { "mmap", "mmap", FK_MMAP, 1, NA, NA },
	[FN_MUNMAP]        = { "munmap", "munmap", FK_MUNMAP, 1, NA, 0 },
	[FN_MREMAP]        = { "mremap", "mremap", FK_MREMAP, 2, NA, 0 },
	[FN_SBRK]          = { "sbrk", "sbrk", FK_SBRK, 0, NA, NA },
	[FN_BRK]           = { "brk", "brk", FK_BRK, 0, NA, 0 },
	[FN_DL_DEBUG_STATE] = { "_dl_debug_state", "_dl_debug_state", FK_RTLD, NA, NA, NA },
};

/* What a kind of --alloc reads, with its arguments counted from its first (ARG shifts them all). */
struct alloc_kind {
	const char *name;
	enum jt_fn_kind kind;
	uint8_t size_arg, size_arg2, ptr_arg;
	uint8_t nargs;		/* the arguments up to the last it reads, which must be in a register */
};

static const struct alloc_kind alloc_kinds[] = {
	{ "malloc", FK_ALLOC, 0, NA, NA, 1 },
	{ "calloc", FK_CALLOC, 0, 1, NA, 2 },
	{ "realloc", FK_REALLOC, 1, NA, 0, 2 },
	{ "free", FK_FREE, NA, NA, 0, 1 },
	{ "free_sized", FK_FREE, NA, NA, 0, 1 },	/* its size is not read */
	{ "memalign", FK_ALLOC, 1, NA, NA, 2 },
	{ "aligned_alloc", FK_ALLOC, 1, NA, NA, 2 },
	{ "posix_memalign", FK_MEMALIGN_PTR, 2, NA, 0, 3 },
};
#define ALLOC_KIND_NAMES "malloc, calloc, realloc, free, free_sized, memalign, aligned_alloc or posix_memalign"

/* The named functions: how many, and for each by which option (enum alloc_named_by) and whether it was found. */
static int alloc_nnamed;
static unsigned char alloc_by[ALLOC_NAMED_MAX], alloc_found[ALLOC_NAMED_MAX];

/*
 * The presets: the exported names of each library's own API, as --alloc
 * specs. Functions that resize in place (je_xallocx, mi_expand) change no
 * block's address and are left out; so are the C++ entries.
 */
struct alloc_preset {
	const char *name;
	const char *key;	/* its malloc: a program that defines it has that allocator */
	const char *const *specs;
};

static const char *const alloc_preset_je[] = {
	"je_malloc=malloc", "je_calloc=calloc", "je_realloc=realloc", "je_free=free",
	"je_posix_memalign=posix_memalign", "je_aligned_alloc=aligned_alloc", "je_memalign=memalign",
	"je_valloc=malloc", "je_mallocx=malloc", "je_rallocx=realloc", "je_dallocx=free",
	"je_sdallocx=free_sized", "je_free_sized=free_sized", "je_free_aligned_sized=free", NULL,
};
static const char *const alloc_preset_mi[] = {
	"mi_malloc=malloc", "mi_calloc=calloc", "mi_realloc=realloc", "mi_free=free", "mi_zalloc=malloc",
	"mi_mallocn=calloc", "mi_reallocf=realloc", "mi_malloc_small=malloc", "mi_zalloc_small=malloc",
	"mi_malloc_aligned=malloc", "mi_zalloc_aligned=malloc", "mi_calloc_aligned=calloc",
	"mi_realloc_aligned=realloc", "mi_free_size=free_sized", "mi_free_aligned=free",
	"mi_free_size_aligned=free_sized", "mi_posix_memalign=posix_memalign", "mi_aligned_alloc=aligned_alloc",
	"mi_memalign=memalign", NULL,
};
static const char *const alloc_preset_tc[] = {
	"tc_malloc=malloc", "tc_calloc=calloc", "tc_realloc=realloc", "tc_free=free", "tc_cfree=free",
	"tc_free_sized=free_sized", "tc_memalign=memalign", "tc_posix_memalign=posix_memalign",
	"tc_valloc=malloc", "tc_pvalloc=malloc", "tc_malloc_skip_new_handler=malloc", NULL,
};

static const struct alloc_preset alloc_presets[ALLOC_NPRESETS] = {
	{ "jemalloc-je", "je_malloc", alloc_preset_je },
	{ "mimalloc", "mi_malloc", alloc_preset_mi },
	{ "tcmalloc", "tc_malloc", alloc_preset_tc },
};
static unsigned char alloc_presets_used[ALLOC_NPRESETS];

int
alloc_fn_end(void)
{
	return FN_COUNT + alloc_nnamed;
}

/* Non-zero when name is traced already, by the standard table or an earlier option. */
static int
alloc_name_taken(const char *name)
{
	for (int fn = 0; fn < alloc_fn_end(); fn++)
		if (alloc_fn_reported(fn))
			if (strcmp(alloc_fns[fn].symbol, name) == 0 || strcmp(alloc_fns[fn].name, name) == 0)
				return 1;
	return 0;
}

static const struct alloc_kind *
alloc_kind_find(const char *name, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(alloc_kinds); i++)
		if (strlen(alloc_kinds[i].name) == len && strncmp(alloc_kinds[i].name, name, len) == 0)
			return &alloc_kinds[i];
	return NULL;
}

/* Parses ARG for kind k: 1 up to where its last argument is still in a register. Returns it 0-based, or -1. */
static int
alloc_arg_parse(const char *s, const struct alloc_kind *k)
{
	int max = ARCH_NARGS - k->nargs + 1;
	char *end;
	long v;

	if (*s < '0' || *s > '9')
		return -1;
	v = strtol(s, &end, 10);
	return *end || v < 1 || v > max ? -1 : (int)v - 1;
}

/* Shifts argument index a by shift, keeping "none". */
static uint8_t
alloc_shift(uint8_t a, int shift)
{
	return a == NA ? NA : (uint8_t)(a + shift);
}

static int
alloc_named_add_as(const char *spec, enum alloc_named_by by, char *why, size_t len)
{
	const char *eq = strchr(spec, '='), *colon;
	const struct alloc_kind *k;
	struct jt_fn_desc *d;
	char *name;
	int shift = 0;

	if (!eq || eq == spec || !eq[1]) {
		snprintf(why, len, "give NAME=KIND[:ARG]");
		return -1;
	}
	colon = strchr(eq + 1, ':');
	if (!(k = alloc_kind_find(eq + 1, colon ? (size_t)(colon - eq - 1) : strlen(eq + 1)))) {
		snprintf(why, len, "KIND is one of " ALLOC_KIND_NAMES);
		return -1;
	}
	if (colon && (shift = alloc_arg_parse(colon + 1, k)) < 0) {
		if (k->nargs == 1)
			snprintf(why, len, "ARG, the argument that is %s's, is 1 to %d (the arguments in registers)",
				 k->name, ARCH_NARGS);
		else
			snprintf(why, len, "ARG, the first of %s's %d arguments, is 1 to %d (the last must be one "
				 "of the %d in registers)", k->name, k->nargs, ARCH_NARGS - k->nargs + 1, ARCH_NARGS);
		return -1;
	}
	if (alloc_nnamed == ALLOC_NAMED_MAX) {
		snprintf(why, len, "at most %d functions can be named", ALLOC_NAMED_MAX);
		return -1;
	}
	name = xstrdup(spec);
	name[eq - spec] = '\0';
	if (alloc_name_taken(name)) {
		snprintf(why, len, "%s is traced already", name);
		free(name);
		return -1;
	}
	alloc_by[alloc_nnamed] = (unsigned char)by;
	d = &alloc_fns[FN_COUNT + alloc_nnamed++];
	*d = (struct jt_fn_desc){ name, name, k->kind, alloc_shift(k->size_arg, shift),
				  alloc_shift(k->size_arg2, shift), alloc_shift(k->ptr_arg, shift) };
	return 0;
}

int
alloc_named_add(const char *spec, int dlopen, char *why, size_t len)
{
	return alloc_named_add_as(spec, dlopen ? ALLOC_BY_DLOPEN : ALLOC_BY_OPTION, why, len);
}

int
alloc_preset_add(const char *name)
{
	char why[160];

	for (int i = 0; i < ALLOC_NPRESETS; i++) {
		if (strcmp(alloc_presets[i].name, name) != 0)
			continue;
		/* Twice is once; a name an --alloc gave already keeps that one's kind. */
		if (!alloc_presets_used[i])
			for (const char *const *s = alloc_presets[i].specs; *s; s++)
				(void)alloc_named_add_as(*s, ALLOC_BY_PRESET, why, sizeof(why));
		alloc_presets_used[i] = 1;
		return 0;
	}
	return -1;
}

const char *
alloc_preset_name(int i)
{
	return alloc_presets[i].name;
}

const char *
alloc_preset_key(int i)
{
	return alloc_presets[i].key;
}

int
alloc_preset_used(int i)
{
	return alloc_presets_used[i];
}

void
alloc_named_found(int fn)
{
	if (fn >= FN_COUNT && fn < alloc_fn_end())
		alloc_found[fn - FN_COUNT] = 1;
}

int
alloc_named_missing(int at_start)
{
	for (int i = 0; i < alloc_nnamed; i++)
		if (!alloc_found[i] && (alloc_by[i] == ALLOC_BY_OPTION || (alloc_by[i] == ALLOC_BY_DLOPEN && !at_start)))
			return FN_COUNT + i;
	return -1;
}

const char *
alloc_named_option(int fn)
{
	static const char *const opts[] = { "--alloc", "--alloc-dlopen", "--alloc-preset" };

	return fn >= FN_COUNT && fn < alloc_fn_end() ? opts[alloc_by[fn - FN_COUNT]] : "--alloc";
}
