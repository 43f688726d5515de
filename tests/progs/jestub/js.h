/*
 * js.h - jestub: a stand-in for a program linked with a je_-prefixed jemalloc (as redis
 * builds it): je_malloc, je_calloc, je_realloc, je_free, je_mallocx, je_sdallocx and
 * je_dallocx over a private bump allocator on mmap, never calling malloc, so that the
 * standard names are never hit. Each js_*.c file makes one kind of block (sizes below).
 */
#ifndef JS_H
#define JS_H

#include <stddef.h>

void *je_malloc(size_t size);
void *je_calloc(size_t n, size_t size);
void *je_realloc(void *p, size_t size);
void je_free(void *p);
void *je_mallocx(size_t size, int flags);
void je_sdallocx(void *p, size_t size, int flags);
void je_dallocx(void *p, int flags);

/* Kept to the end in globals: JS_KEEP_N je_mallocs of JS_KEEP_SIZE, a je_calloc(JS_CALLOC_N, JS_CALLOC_SIZE). */
#define JS_KEEP_N 2
#define JS_KEEP_SIZE 200
#define JS_CALLOC_N 10
#define JS_CALLOC_SIZE 30
extern void *js_kept[JS_KEEP_N + 2];
void js_keep(void);
/* A je_malloc of JS_GROW_FROM grown by je_realloc to JS_GROW_TO, kept. */
#define JS_GROW_FROM 50
#define JS_GROW_TO 500
void js_grow(void);
/* One block of JS_LOSE_SIZE whose pointer is dropped. */
#define JS_LOSE_SIZE 64
void js_lose(void);
/* n je_malloc/je_free pairs of 16, n/2 je_mallocx/je_sdallocx of 32, n/10 je_mallocx/je_dallocx of 48. */
void js_churn(unsigned long n);

#endif
