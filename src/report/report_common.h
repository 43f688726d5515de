/* report_common.h - what report.c gives the text (report_text.c, report_lists.c) and JSON (report_json.c) writers. */
#ifndef JT_REPORT_COMMON_H
#define JT_REPORT_COMMON_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "heap.h"

struct jt_snapshot;
struct jt_sym;
struct jt_frame;
struct jt_wrap;

/* Source-level frames kept for one pc: the function and what was inlined into it. */
#define REPORT_MAX_FRAMES 32

/* Calls of the snapshot's functions that are not frees (by the allocator table's kinds). */
uint64_t report_alloc_calls(const struct jt_snapshot *s);

/* Writes "SIGSEGV" (or "signal 99" for a number the C library cannot name) into buf; returns buf. */
const char *report_signame(int sig, char *buf, size_t len);

/*
 * Symbolizes frame i of st into fr[0..REPORT_MAX_FRAMES) and returns how
 * many source-level frames it is (at least 1). A return address is looked
 * up in its call, a pc above a signal frame as it is; a signal frame is one
 * frame, named as gdb names it, in the trampoline's module. Without a
 * symbolizer (sym NULL) a bare frame.
 */
int report_resolve(struct jt_sym *sym, const struct jt_stack *st, uint32_t i, struct jt_frame *fr);

/*
 * The suppression of s->supp that matches st, or NULL (none, or no
 * suppressions): matched once per stack for the run (heap_memo), since a
 * stack's frames, and so its suppression, never change, and matching each
 * frame against each rule was most of a snapshot's cost with thousands of
 * stacks, each list of the text report asking again.
 */
const char *report_supp(const struct jt_snapshot *s, const struct jt_stack *st);

/*
 * The name every writer but JSON gives frame fr: its name (a C++ function's
 * short name, sym_set_full_names), else its function, else
 * "module+0xOFFSET" (the pc less the module's load bias: the address
 * addr2line -e module takes), else "0xADDRESS" (written into buf, which
 * REPORT_LABEL_MAX bytes hold whole). Returns the name: the one spelling of
 * a frame without a symbol, in every format and in jmptrace diff.
 */
#define REPORT_LABEL_MAX 320
const char *report_frame_label(const struct jt_frame *fr, char *buf, size_t len);

/*
 * Where frame fr is, as the valgrind-style formats follow its name:
 * " (file:line)" with the file's basename, else " (in module)" for a
 * named function, else "" (written into buf, which REPORT_PLACE_MAX bytes
 * hold whole). Returns buf.
 */
#define REPORT_PLACE_MAX 1024
const char *report_frame_place(const struct jt_frame *fr, char *buf, size_t len);

/*
 * The source-level frame of st (report_resolve's frames, innermost first,
 * counted over every pc) that names the code that allocated: the first
 * that is not an allocator wrapper's (wrap.h: the built-in ones and
 * --alloc-fn's), or 0 when every frame is one or st has none. The full
 * stack keeps the wrappers' frames; only a row's name skips them.
 */
int report_site(struct jt_sym *sym, const struct jt_wrap *w, const struct jt_stack *st);

/* What a signal frame is called, in gdb's words (its function in report_resolve's frames). */
#define REPORT_SIGNAL_FRAME "<signal handler called>"

/*
 * The frames of st as the text report lists them, valgrind style, "at"
 * for the innermost and "by" for the others, one line per source-level
 * frame, then a blank line:
 *     at 0x401136: leak_here (leak.c:12)
 *     by 0x401150: helper (util.c:3) (inlined)
 *     by 0x7f12a0029d90: __libc_start_call_main (in libc.so.6)
 * A stack cut at --depth ends in "... (stack cut at --depth N)".
 */
void report_text_frames(FILE *f, struct jt_sym *sym, const struct jt_stack *st);

/* "N bytes in M blocks" (thousands separated, "block" for one) into buf; returns buf. */
const char *report_bytes_blocks(char *buf, size_t len, uint64_t bytes, uint64_t blocks);
/* Returns the singular or plural form of a noun for a count of n. */
const char *report_plural(uint64_t n, const char *one, const char *many);

/* Returns a malloc'ed array of the stack ids ranked by `by` (heap_rank_stacks); *n gets the count. */
uint32_t *report_rank(const struct jt_heap *h, enum heap_rank by, uint32_t *n);

#endif
