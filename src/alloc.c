/* alloc.c - the table of allocator functions jmptrace puts breakpoints on. */
#include "alloc.h"

#define NA 0xff

/*
 * Argument indexes count the integer argument registers in order (arch_arg's n).
 * Aligned operator new takes (size, align); posix_memalign (out, align, size).
 */
const struct jt_fn_desc alloc_fns[FN_COUNT] = {
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
