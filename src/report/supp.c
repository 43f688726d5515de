/* supp.c - suppressions: stacks left out of the live section (LeakSanitizer's leak:PATTERN lines, and built-in ones). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap.h"
#include "report_common.h"
#include "supp.h"
#include "sym.h"
#include "util.h"

enum supp_kind {
	SUPP_PATTERN,		/* LeakSanitizer's: the pattern matches a frame's function, file or module */
	SUPP_CXX_INIT,		/* an allocation made by libstdc++'s own initializer (see supp_cxx_init) */
};

struct supp_rule {
	enum supp_kind kind;
	char *pattern;		/* what supp_match returns: the pattern, or the built-in's name */
	int runtime;		/* one of supp_runtime's: the report groups it under "runtime" */
	int inner;		/* matched against the allocator's caller (stack frame 0) only */
};

struct jt_supp {
	struct supp_rule *rules;	/* the file's, in its order, then the built-in ones */
	size_t n, cap;
};

/*
 * What the C and C++ runtimes allocate once and keep on purpose, so that
 * every run would report it as live:
 *  - libstdc++'s emergency exception pool (eh_alloc.cc), made by its
 *    initializer: named in a static program ("_GLOBAL__sub_I_eh_alloc.cc"),
 *    with debug info ("(anonymous namespace)::pool::pool"), and in a
 *    stripped libstdc++.so only by who calls it (SUPP_CXX_INIT);
 *  - glibc's start-up blocks in a static program: the link map, search paths
 *    and object table _dl_non_dynamic_init makes before main;
 *  - thread-local storage: the dtv and the blocks of dynamic TLS.
 */
static const char *const supp_builtin[] = {
	"eh_alloc.cc",
	"(anonymous namespace)::pool::pool",
	"^_dl_non_dynamic_init$",
	"^_dl_allocate_tls$",
	"^_dl_allocate_tls_init$",
	"^__tls_get_addr$",
	"^_dl_update_slotinfo$",
	"^_dl_resize_dtv$",
	"^__libc_setup_tls$",
};

/*
 * What the C library and the dynamic loader allocate for any program,
 * which the text report counts on one "runtime" line rather than as the
 * program's stacks (unless --show-runtime): stdio's buffers (a stream's
 * first write or read allocates one: the 4 KiB of stdout), the locale's
 * data and names (setlocale, gettext's catalogs and domain bindings,
 * iconv's converters), the time zone's rules, the name service's modules
 * and configuration (NSS: getpwuid and the like load them once) and the
 * static result buffer of the non-reentrant lookups (getpwuid,
 * gethostbyname, ...: getXXbyYY.c).
 * Their functions call no code of the program's.
 */
static const char *const supp_runtime_any[] = {
	"^_IO_file_doallocate$",
	"^setlocale$",
	"^_nl_*",
	"^set_binding_values$",
	"^__textdomain$",
	"^__gconv*",
	"^__tzfile_read$",
	"^tzset_internal$",
	"^__nss_",
	"getXXbyYY.c$",
};

/*
 * The dynamic loader's own blocks (link maps, search paths, TLS), known by
 * the allocator's caller being in ld.so: one further out would also take
 * what a library's constructor allocates, which the loader only calls.
 */
static const char *const supp_runtime_inner[] = {
	"^ld-linux-x86-64.so.2$",
};

/* The name supp_match gives the SUPP_CXX_INIT rule. */
#define SUPP_CXX_INIT_NAME "libstdc++ initializer (emergency exception pool)"

/* Where the next segment of a pattern, seg[0..k), matches in text: the end of the match, or NULL. */
static const char *
supp_find(const char *text, const char *seg, size_t k, int at_start)
{
	const char *hit;

	if (at_start)
		return strncmp(text, seg, k) == 0 ? text + k : NULL;
	hit = memmem(text, strlen(text), seg, k);
	return hit ? hit + k : NULL;
}

int
supp_pattern_match(const char *pattern, const char *text)
{
	const char *p = pattern, *end, *star, *t = text;
	int at_start = 0, at_end = 0;
	size_t k, rest;

	if (!pattern || !text || !*text)
		return 0;
	if (*p == '^') {
		at_start = 1;
		p++;
	}
	end = p + strlen(p);
	if (end > p && end[-1] == '$') {
		at_end = 1;
		end--;
	}
	/* The segments between stars, each matched leftmost after the one before. */
	for (;;) {
		star = memchr(p, '*', (size_t)(end - p));
		k = (size_t)((star ? star : end) - p);
		if (!star && at_end) {
			/* The last segment must end the text (and, with no star at all, be all of it). */
			rest = strlen(t);
			return rest >= k && memcmp(t + rest - k, p, k) == 0 && (!at_start || rest == k);
		}
		if (!(t = supp_find(t, p, k, at_start)))
			return 0;
		if (!star)
			return 1;
		p = star + 1;
		at_start = 0;
	}
}

static struct supp_rule *
supp_add(struct jt_supp *sp, enum supp_kind kind, const char *pattern, size_t len)
{
	if (sp->n == sp->cap) {
		sp->cap = sp->cap ? 2 * sp->cap : 16;
		sp->rules = xrealloc(sp->rules, sp->cap * sizeof(*sp->rules));
	}
	sp->rules[sp->n].kind = kind;
	sp->rules[sp->n].pattern = xmalloc(len + 1);
	memcpy(sp->rules[sp->n].pattern, pattern, len);
	sp->rules[sp->n].pattern[len] = '\0';
	sp->rules[sp->n].runtime = 0;
	sp->rules[sp->n].inner = 0;
	return &sp->rules[sp->n++];
}

/*
 * One line of a suppressions file: blank, a '#' comment, or leak:PATTERN
 * (blanks around it ignored, as LeakSanitizer does). Returns 0, or -1 after
 * one line on stderr for anything else.
 */
static int
supp_parse_line(struct jt_supp *sp, const char *path, unsigned lineno, char *line)
{
	char *end = line + strlen(line);

	while (isspace((unsigned char)*line))
		line++;
	while (end > line && isspace((unsigned char)end[-1]))
		*--end = '\0';
	if (!*line || *line == '#')
		return 0;
	if (strncmp(line, "leak:", 5) != 0) {
		error_msg("%s:%u: not a leak: suppression (jmptrace knows only LeakSanitizer's leak:PATTERN): %s",
			  path, lineno, line);
		return -1;
	}
	line += 5;
	while (isspace((unsigned char)*line))
		line++;
	if (!*line) {
		error_msg("%s:%u: leak: with no pattern", path, lineno);
		return -1;
	}
	supp_add(sp, SUPP_PATTERN, line, strlen(line));
	return 0;
}

static int
supp_read_file(struct jt_supp *sp, const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	int r = 0;

	if (!f) {
		perror_msg("%s", path);
		return -1;
	}
	while (r == 0 && getline(&line, &cap, f) >= 0)
		r = supp_parse_line(sp, path, ++lineno, line);
	if (r == 0 && ferror(f)) {
		perror_msg("%s", path);	/* e.g. a directory: fopen succeeds, reading fails */
		r = -1;
	}
	free(line);
	fclose(f);
	return r;
}

struct jt_supp *
supp_load(const char *path, int no_defaults)
{
	struct jt_supp *sp = xcalloc(1, sizeof(*sp));
	size_t i;

	if (path && supp_read_file(sp, path) < 0) {
		supp_free(sp);
		return NULL;
	}
	if (!no_defaults) {
		for (i = 0; i < ARRAY_SIZE(supp_builtin); i++)
			supp_add(sp, SUPP_PATTERN, supp_builtin[i], strlen(supp_builtin[i]));
		supp_add(sp, SUPP_CXX_INIT, SUPP_CXX_INIT_NAME, strlen(SUPP_CXX_INIT_NAME));
	}
	return sp;
}

void
supp_add_runtime(struct jt_supp *sp)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(supp_runtime_any); i++)
		supp_add(sp, SUPP_PATTERN, supp_runtime_any[i], strlen(supp_runtime_any[i]))->runtime = 1;
	for (i = 0; i < ARRAY_SIZE(supp_runtime_inner); i++) {
		struct supp_rule *r = supp_add(sp, SUPP_PATTERN, supp_runtime_inner[i], strlen(supp_runtime_inner[i]));

		r->runtime = r->inner = 1;
	}
}

int
supp_is_runtime(const struct jt_supp *sp, const char *match)
{
	for (size_t i = 0; sp && match && i < sp->n; i++)
		if (sp->rules[i].pattern == match)
			return sp->rules[i].runtime;
	return 0;
}

void
supp_free(struct jt_supp *sp)
{
	size_t i;

	if (!sp)
		return;
	for (i = 0; i < sp->n; i++)
		free(sp->rules[i].pattern);
	free(sp->rules);
	free(sp);
}

/*
 * The first pattern rule that matches frame fr's function (full or as shown,
 * cxxname.h), file or module, or NULL; outer says that fr is not of the
 * stack's frame 0.
 */
static const char *
supp_match_frame(const struct jt_supp *sp, const struct jt_frame *fr, int outer)
{
	size_t i;

	for (i = 0; i < sp->n; i++) {
		const char *pat = sp->rules[i].pattern;

		if (sp->rules[i].kind == SUPP_PATTERN && !(outer && sp->rules[i].inner)
		    && (supp_pattern_match(pat, fr->function) || supp_pattern_match(pat, fr->name)
			|| supp_pattern_match(pat, fr->file)
			|| supp_pattern_match(pat, fr->module)))
			return pat;
	}
	return NULL;
}

/*
 * A block that libstdc++.so allocated in its own initializer: the innermost
 * frame is in libstdc++ and its caller is the dynamic loader running the
 * initializers (call_init, _dl_init). That is the emergency exception pool
 * when libstdc++ has no symbols to name it by.
 */
static int
supp_cxx_init(struct jt_sym *sym, const struct jt_stack *st)
{
	struct jt_frame fr[REPORT_MAX_FRAMES];
	int n, k;

	if (st->depth < 2)
		return 0;
	n = report_resolve(sym, st, 0, fr);
	if (!fr[n - 1].module || strncmp(fr[n - 1].module, "libstdc++.so", 12) != 0)
		return 0;
	n = report_resolve(sym, st, 1, fr);
	for (k = 0; k < n; k++)
		if (fr[k].function && (strcmp(fr[k].function, "call_init") == 0
				       || strcmp(fr[k].function, "_dl_init") == 0))
			return 1;
	return 0;
}

const char *
supp_match(const struct jt_supp *sp, struct jt_sym *sym, const struct jt_stack *st)
{
	struct jt_frame fr[REPORT_MAX_FRAMES];
	const char *pat;
	uint32_t i;
	size_t r;
	int n, k;

	if (!sp || !sp->n || st->filtered)
		return NULL;
	/* Frame by frame, each symbolized once for every rule. */
	for (i = 0; i < st->depth; i++) {
		n = report_resolve(sym, st, i, fr);
		for (k = 0; k < n; k++)
			if ((pat = supp_match_frame(sp, &fr[k], i > 0)))
				return pat;
	}
	for (r = 0; r < sp->n; r++)
		if (sp->rules[r].kind == SUPP_CXX_INIT && supp_cxx_init(sym, st))
			return sp->rules[r].pattern;
	return NULL;
}
