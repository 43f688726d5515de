/* supp.h - suppressions: stacks left out of the live section (LeakSanitizer's leak:PATTERN lines, and built-in ones). */
#ifndef JT_SUPP_H
#define JT_SUPP_H

struct jt_supp;
struct jt_sym;
struct jt_stack;

/*
 * Loads the leak: lines of path (NULL for none) and, unless no_defaults,
 * the built-in suppressions. Returns NULL after one line on stderr naming
 * the file and line when path cannot be read or holds a bad line.
 */
struct jt_supp *supp_load(const char *path, int no_defaults);
void supp_free(struct jt_supp *sp);

/* Returns the pattern that suppresses st (symbolized with sym), or NULL. sp may be NULL. */
const char *supp_match(const struct jt_supp *sp, struct jt_sym *sym, const struct jt_stack *st);

#endif
