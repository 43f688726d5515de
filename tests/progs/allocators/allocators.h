/*
 * allocators.h - one function per C allocator entry, each in its own file.
 * Every function takes its sizes and pointers as arguments from main.c, so the compiler can
 * neither fold them nor turn one allocator into another.
 */
#ifndef JT_PROGS_ALLOCATORS_H
#define JT_PROGS_ALLOCATORS_H

#include <stddef.h>

void *a_src(size_t n);				/* malloc(n), to be handed to another function */
void *a_malloc(size_t n);			/* malloc(n), kept */
void *a_malloc_fail(size_t n);			/* malloc(n) that fails: n is huge */
void *a_calloc(size_t n, size_t size);		/* calloc, kept */
void *a_realloc_grow(void *p, size_t n);	/* realloc to a larger size, kept */
void *a_realloc_shrink(void *p, size_t n);	/* realloc to a smaller size, kept */
void *a_realloc_null(void *p, size_t n);	/* realloc(NULL, n), kept */
void *a_realloc_zero(void *p);			/* realloc(p, 0): frees p, returns NULL */
void *a_reallocarray(size_t n1, size_t n2, size_t size); /* NULL -> n1*size -> n2*size, kept */
void *a_posix_memalign(size_t align, size_t n);	/* posix_memalign, kept */
void *a_aligned_alloc(size_t align, size_t n);	/* aligned_alloc, kept */
void *a_memalign(size_t align, size_t n);	/* memalign, kept */
void *a_valloc(size_t n);			/* valloc, kept */
void *a_pvalloc(size_t n);			/* pvalloc, kept */
void a_free(void *p, void *null);		/* free(p) and free(NULL) */
void a_peak(size_t n);				/* malloc(n) then free */

#endif
