/* leak_names.c - the names of the leak kinds and heuristics, and the parsers of their option values. */
#include <string.h>

#include "leak.h"
#include "util.h"

static const char *const kind_labels[LEAK_NKINDS] = {
	[LEAK_REACHABLE] = "still reachable",
	[LEAK_POSSIBLE] = "possibly lost",
	[LEAK_INDIRECT] = "indirectly lost",
	[LEAK_DEFINITE] = "definitely lost",
};

static const char *const kind_keys[LEAK_NKINDS] = {
	[LEAK_REACHABLE] = "still_reachable",
	[LEAK_POSSIBLE] = "possibly_lost",
	[LEAK_INDIRECT] = "indirectly_lost",
	[LEAK_DEFINITE] = "definitely_lost",
};

/* --show-leak-kinds takes valgrind's words for the kinds. */
static const char *const kind_words[LEAK_NKINDS] = {
	[LEAK_REACHABLE] = "reachable",
	[LEAK_POSSIBLE] = "possible",
	[LEAK_INDIRECT] = "indirect",
	[LEAK_DEFINITE] = "definite",
};

static const char *const heur_names[LEAK_NHEUR] = {
	"stdstring", "length64", "newarray", "multipleinheritance",
};

const char *
leak_kind_label(enum leak_kind k)
{
	return (unsigned)k < LEAK_NKINDS ? kind_labels[k] : "?";
}

const char *
leak_kind_key(enum leak_kind k)
{
	return (unsigned)k < LEAK_NKINDS ? kind_keys[k] : "?";
}

const char *
leak_heur_name(unsigned i)
{
	return i < LEAK_NHEUR ? heur_names[i] : "?";
}

/*
 * Parses a comma-separated list of names[0..n) (bit i each), "all" (every
 * bit) or "none" (0), as valgrind's set options. Returns the bits, or -1.
 */
static int
leak_parse_set(const char *s, const char *const *names, unsigned n)
{
	unsigned set = 0;

	if (strcmp(s, "all") == 0)
		return (int)((1u << n) - 1);
	if (strcmp(s, "none") == 0)
		return 0;
	while (*s) {
		size_t len = strcspn(s, ",");
		unsigned i;

		for (i = 0; i < n; i++)
			if (strlen(names[i]) == len && strncmp(s, names[i], len) == 0)
				break;
		if (i == n)
			return -1;	/* an unknown name, or an empty one (",," or a trailing comma) */
		set |= 1u << i;
		s += len;
		if (*s == ',' && !*++s)
			return -1;
	}
	return set ? (int)set : -1;
}

int
leak_heur_parse(const char *s)
{
	return leak_parse_set(s, heur_names, LEAK_NHEUR);
}

int
leak_kinds_parse(const char *s)
{
	return leak_parse_set(s, kind_words, LEAK_NKINDS);
}
