/* supp.h - suppressions: stacks left out of the live section (LeakSanitizer's leak:PATTERN lines, and built-in ones). */
#ifndef JT_SUPP_H
#define JT_SUPP_H

struct jt_supp;
struct jt_sym;
struct jt_stack;

/*
 * Loads the leak: lines of path (NULL for none) and, unless no_defaults,
 * the built-in suppressions. The file is LeakSanitizer's: "leak:PATTERN"
 * lines, '#' comments and blank lines; any other kind ("race:...") or a
 * line without one is an error. Returns NULL after one line on stderr
 * naming the file (and line) when path cannot be read or holds a bad line.
 */
struct jt_supp *supp_load(const char *path, int no_defaults);
void supp_free(struct jt_supp *sp);

/*
 * Adds the runtime rules: what the C library and the dynamic loader
 * allocate for every program (stdio buffers, locale, time zone, the
 * loader's own blocks). They suppress as the others do; supp_is_runtime
 * tells their matches apart, which the text report counts on one line.
 */
void supp_add_runtime(struct jt_supp *sp);
/* 1 when match, a string supp_match returned for sp, is a runtime rule's. */
int supp_is_runtime(const struct jt_supp *sp, const char *match);

/*
 * Returns the pattern that suppresses st (symbolized with sym), or NULL.
 * sp may be NULL. A pattern suppresses a stack when it matches the
 * function, the source file or the module of any of its frames
 * (supp_pattern_match). The string is owned by sp.
 */
const char *supp_match(const struct jt_supp *sp, struct jt_sym *sym, const struct jt_stack *st);

/*
 * LeakSanitizer's pattern match: 1 when pattern occurs in text, where '*'
 * stands for any run of characters, a leading '^' ties the pattern to the
 * start of text and a trailing '$' to its end. An empty or NULL text
 * never matches.
 */
int supp_pattern_match(const char *pattern, const char *text);

#endif
