/*
 * leaky.c - a tiny "key = value" parser with a leak, to try jmptrace on.
 *
 *   make leaky && ../jmptrace -- ./leaky
 *
 * set() stores each value in a small table. When a key is set again, set() overwrites
 * the old value without freeing it, so each overwrite leaks one strdup'd string. The
 * config is parsed 100 times (think: reloaded on every SIGHUP), so of the 500 values set,
 * all but the 3 still in the table at exit leak: jmptrace's report shows 494 blocks live
 * from the strdup() marked LEAK below and 3 from the first strdup() of a value.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_KEYS 16

struct entry {
	char *key;
	char *value;
};

static struct entry table[MAX_KEYS];
static int nkeys;

/* Stores a copy of value under key. The bug: an old value is not freed. */
static void
set(const char *key, const char *value)
{
	for (int i = 0; i < nkeys; i++) {
		if (strcmp(table[i].key, key) == 0) {
			table[i].value = strdup(value);	/* LEAK: the old value is lost */
			return;
		}
	}
	if (nkeys < MAX_KEYS) {
		table[nkeys].key = strdup(key);
		table[nkeys].value = strdup(value);
		nkeys++;
	}
}

/* Splits "key = value" in place and stores it; ignores lines without '='. */
static void
parse_line(char *line)
{
	char *eq = strchr(line, '=');

	if (!eq)
		return;
	*eq = '\0';
	char *key = strtok(line, " \t");
	char *value = strtok(eq + 1, " \t\n");
	if (key && value)
		set(key, value);
}

static const char *config[] = {
	"name = jmptrace",
	"color = blue",
	"size = 10",
	"color = green",	/* repeated key: leaks "blue" */
	"size = 12",		/* repeated key: leaks "10" */
};

int
main(void)
{
	char buf[128];

	for (int pass = 0; pass < 100; pass++) {
		for (size_t i = 0; i < sizeof(config) / sizeof(config[0]); i++) {
			snprintf(buf, sizeof(buf), "%s", config[i]);
			parse_line(buf);
		}
	}
	for (int i = 0; i < nkeys; i++)
		printf("%s = %s\n", table[i].key, table[i].value);
	/* Frees what the table still holds; the overwritten values are already lost. */
	for (int i = 0; i < nkeys; i++) {
		free(table[i].key);
		free(table[i].value);
	}
	return 0;
}
