/*
 * nested.h - nested: an allocator over malloc with a header, sqlite3's shape (Debian's
 * libsqlite3: sqlite3_malloc(n) is malloc(n + 8) returning p + 8, sqlite3_free(p + 8) is
 * free(p)), traced with --alloc my_malloc=malloc --alloc my_free=free. my_malloc also keeps
 * a block of its own from malloc that my_free never frees, and longjmps out when asked for
 * more than NX_HUGE bytes; my_raw_malloc makes the same blocks unnamed, as sqlite3's internal
 * allocations do, and my_free releases them too. Each nx_*.c file does one thing (figures below); main does them all.
 */
#ifndef NESTED_H
#define NESTED_H

#include <setjmp.h>
#include <stddef.h>

void *my_malloc(size_t n);
void my_free(void *p);
/* The same block as my_malloc's, made by a function not named (sqlite3's own sqlite3Malloc). */
void *my_raw_malloc(size_t n);
/* Frees refused by my_free: no header in front of the pointer (one inside a block). */
unsigned long my_refused(void);
/* my_malloc of more than NX_HUGE bytes longjmps here (when set) before allocating anything. */
extern jmp_buf *my_oom;
#define NX_HUGE (1ul << 20)

/* NX_CHURN pairs of my_malloc(NX_CHURN_SIZE) and my_free, in main and in one thread each. */
#define NX_CHURN 100
#define NX_CHURN_SIZE 40
void nx_churn(void);
/* Leaks one my_malloc(NX_LEAK_SIZE) block, kept in a global. */
#define NX_LEAK_SIZE 300
void nx_leak(void);
/* my_malloc(NX_INSIDE_SIZE), then my_free of a pointer 16 bytes inside it, then my_free of it. */
#define NX_INSIDE_SIZE 64
void nx_inside(void);
/* my_raw_malloc(NX_RAW_SIZE), then my_free of it: malloc's block released by my_free's free. */
#define NX_RAW_SIZE 24
void nx_raw(void);
/* my_malloc(NX_HUGE + 1) longjmps out; then a plain malloc(NX_DEEP_SIZE), made deeper, is kept. */
#define NX_DEEP_SIZE 16
void nx_jump(void);

#endif
