/* test_report_json.c - unit tests for the JSON report of a hand-made heap: its figures, two snapshots in one file read back by python's json, escaping, and the writers' UTF-8 check. */
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heap.h"
#include "report.h"
#include "report_test.h"
#include "sym.h"
#include "tap.h"
#include "util.h"

/* Writes a Python checker for the JSON file; returns 0 when it could be written. */
static int
tr_write_checker(const char *path, uint64_t newaddr)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fprintf(f,
		"import json, os, sys\n"
		"d = json.load(open(sys.argv[1], encoding='utf-8'))\n"
		"assert list(d) == ['format', 'snapshots'] and d['format'] == 2, list(d)\n"
		"snaps = d['snapshots']\n"
		"assert len(snaps) == int(sys.argv[2]), len(snaps)\n"
		"if not snaps: sys.exit(0)\n"
		"a = snaps[0]\n"
		"assert a['reason'] == 'exit' and a['pid'] == 4242 and a['command'] == './leaky --fast'\n"
		"assert a['exe'] == '/usr/bin/leaky', a['exe']\n"
		"assert a['exited'] is True and a['exit_status'] == 3 and a['killed_by'] is None\n"
		"assert a['attached'] is False\n"
		"assert a['totals'] == {'calls': {'malloc': 6, 'calloc': 0, 'realloc': 1, 'free': 3,"
		" 'operator new': 1, 'operator delete': 0}, 'alloc_calls': 8, 'bytes_allocated': 1007810,"
		" 'frees': 2, 'unknown_frees': 1, 'live_bytes': 7310, 'live_blocks': 7,"
		" 'peak_live_bytes': 1007300, 'temporary': 0, 'source': 'ptrace', 'lost_events': 0,"
		" 'suppressed': {'live_bytes': 0, 'live_blocks': 0, 'stacks': 0}}, a['totals']\n"
		"assert a['seq'] == 1 and a['time_ms'] == 1234, (a['seq'], a['time_ms'])\n"
		"assert a['peak'] == {'live_bytes': 1007300, 'live_blocks': 7, 'time_ms': 42}, a['peak']\n"
		"assert a['timeline'] and all(list(p) == ['time_ms', 'live_bytes', 'live_blocks', 'stacks']"
		" and all(type(p[k]) is int for k in list(p)[:3])"
		" and all(len(c) == 2 and type(c[0]) is int and type(c[1]) is int for c in p['stacks'])"
		" for p in a['timeline']), a['timeline']\n"
		"assert all(list(s)[0] == 'id' and type(s['id']) is int for s in a['stacks']), a['stacks']\n"
		"assert type(a['no_debug_info']) is list, a['no_debug_info']\n"
		"# Frames by their number in the file's table, each frame once in it.\n"
		"tab = a['new_frames']\n"
		"assert len(set(json.dumps(f, sort_keys=True) for f in tab)) == len(tab), tab\n"
		"assert all(type(k) is int for s in a['stacks'] for k in s['frames']), a['stacks']\n"
		"st = [dict(s, frames=[tab[k] for k in s['frames']]) for s in a['stacks']]\n"
		"# The live stacks by live bytes, then the freed one: every stack that allocated.\n"
		"assert [(s['live_bytes'], s['live_blocks'], s['alloc_calls'], s['alloc_bytes']) for s in st]"
		" == [(4000, 1, 1, 4000), (3000, 2, 3, 3500), (300, 3, 3, 300), (10, 1, 1, 10),"
		" (0, 0, 1, 1000000)], st\n"
		"assert [(s['frees'], s['temporary'], s['peak_bytes'], s['peak_blocks']) for s in st]"
		" == [(0, 0, 4000, 1), (1, 0, 3000, 2), (0, 0, 300, 3), (0, 0, 0, 0), (1, 0, 1000000, 1)], st\n"
		"assert [list(s['histogram'].items()) for s in st] == [[('4096', 1)],"
		" [('512', 1), ('1024', 1), ('2048', 1)], [('128', 3)], [('16', 1)], [('1048576', 1)]], st\n"
		"assert not any('suppressed' in s for s in st) and 'filtered' not in a['totals']\n"
		"assert [f['address'] for f in st[4]['frames']] == ['0x1234'], st[4]\n"
		"fr = [{k: v for k, v in dict(f, file=os.path.basename(f['file'] or '')).items() if k != 'offset'}"
		" for f in st[0]['frames']]\n"
		"assert fr == [{'address': '0x%" PRIx64 "', 'module': sys.argv[3], 'function': 'tr_inline_helper',"
		" 'file': '" TR_SRC "', 'line': %d, 'inlined': True}, {'address': '0x%" PRIx64 "',"
		" 'module': sys.argv[3], 'function': 'tr_outer', 'file': '" TR_SRC "', 'line': %d,"
		" 'inlined': False}], fr\n"
		"assert [f['function'] for f in st[1]['frames']] == ['tr_leaf', 'tr_mid']\n"
		"assert [f['offset'] for f in st[2]['frames']][1:] == ['0x11', None], st[2]['frames']\n"
		"assert [{k: v for k, v in f.items() if k != 'offset'} for f in st[2]['frames']]"
		" == [{'address': '0x%" PRIx64 "', 'module': 'libstdc++.so.6',"
		" 'function': 'operator new(unsigned long)', 'file': None, 'line': 0, 'inlined': False},"
		" {'address': '0x%" PRIx64 "', 'module': 'libstdc++.so.6', 'function': None, 'file': None,"
		" 'line': 0, 'inlined': False}, {'address': '0x10', 'module': None, 'function': None,"
		" 'file': None, 'line': 0, 'inlined': False}], st[2]['frames']\n"
		"assert st[3]['frames'] == []\n"
		"inv = a['invalid_frees']\n"
		"assert [(i['count'], [f['function'] for f in i['frames']]) for i in inv]"
		" == [(1, ['tr_leaf', 'tr_mid'])], inv\n"
		"assert inv[0]['frames'] == st[1]['frames'], inv\n"
		"if len(snaps) > 1:\n"
		"    b = snaps[1]\n"
		"    assert b['command'] == 'q\"b\\\\s\\nn\\x01c\\ufffd\\u00e9', repr(b['command'])\n"
		"    assert b['exited'] is True and b['exit_status'] is None and b['killed_by'] == 'SIGSEGV'\n"
		"    assert b['attached'] is True and b['reason'] == 'signal'\n"
		"    # The first's process had exited: a later snapshot of its pid is another image's, given whole.\n"
		"    assert a['heap'] == 1 and b['heap'] == 2 and b['stacks_listed'] == 'changed', (b['heap'], a['heap'])\n"
		"    assert len(b['stacks']) == len(a['stacks']) and all('frames' in s for s in b['stacks']), b['stacks']\n",
		inl_ret, line_inl, inl_ret, line_outer, newaddr + 1, STDCXX_BIAS + 0x11);
	return fclose(f) == 0 ? 0 : -1;
}

static int
tr_python_check(const char *checker, const char *json, int nsnapshots)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "python3 %s %s %d '%s' >&2", checker, json, nsnapshots, self_name);
	return system(cmd);
}

/*
 * The JSON file once report_json_add's snapshot is in: the writer thread
 * appends it after the call returns (outwriter.h), so the file is read
 * again until it differs from prev and ends with its tail (2 s at most).
 */
static char *
tr_slurp_after(const char *path, const char *prev)
{
	char *text = tr_slurp(path);
	size_t n;

	for (int i = 0; i < 2000; i++) {
		n = strlen(text);
		if (strcmp(text, prev) != 0 && n > 4 && strcmp(text + n - 4, "\n]}\n") == 0)
			break;
		free(text);
		usleep(1000);
		text = tr_slurp(path);
	}
	return text;
}

static void
test_json(struct jt_snapshot *snap, uint64_t newaddr)
{
	char json[] = "/tmp/jt_test_report_XXXXXX", checker[64], *text, *prev;
	int fd = mkstemp(json), python = system("command -v python3 >/dev/null 2>&1") == 0;
	struct jt_json_out *j;

	ok(fd >= 0, "temporary JSON file");
	close(fd);
	snprintf(checker, sizeof(checker), "%s.py", json);
	ok(tr_write_checker(checker, newaddr) == 0, "write the checker");
	j = report_json_open(json);
	ok(j != NULL, "report_json_open");
	if (!j)
		return;
	text = tr_slurp(json);
	ok(strcmp(text, "{\"format\": 2, \"snapshots\": [\n]}\n") == 0, "a fresh file is an empty valid report");
	/* The blocks were made at 42 ms: 250 ms old at the snapshot's view. */
	heap_view_begin((struct jt_heap *)snap->heap, tr_now_ms + 250, 0);
	ok(report_json_add(j, snap) == 0, "first report_json_add");
	heap_view_end((struct jt_heap *)snap->heap);
	prev = text;
	text = tr_slurp_after(json, prev);
	free(prev);
	ok(strstr(text, "\"alloc_calls\": 8, \"bytes_allocated\": 1007810, \"frees\": 2,"
		  " \"unknown_frees\": 1, \"live_bytes\": 7310, \"live_blocks\": 7,"
		  " \"peak_live_bytes\": 1007300,") != NULL, "JSON totals figures");
	/* Format 2 gives the time the blocks were made, not their age: time_ms 1234 less 250 ms. */
	ok(strstr(text, "{\"id\": 1, \"live_bytes\": 4000, \"live_blocks\": 1, \"oldest_ms\": 984,"
		  " \"newest_ms\": 984, \"alloc_calls\": 1, \"alloc_bytes\": 4000,") != NULL,
	   "JSON stack figures: the id first, the allocation times after the live figures");
	ok(strstr(text, "\"stacks\": [\n  {\"id\": ") != NULL, "JSON: a stack's first key is its id");
	if (python)
		ok(tr_python_check(checker, json, 1) == 0, "one snapshot: python's json accepts it");
	else
		ok(1, "# SKIP python3 not found");

	snap->reason = "signal";
	snap->command = "q\"b\\s\nn\001c\377\303\251";
	snap->killed_by = SIGSEGV;
	snap->attached = 1;
	ok(report_json_add(j, snap) == 0, "second report_json_add");
	prev = text;
	text = tr_slurp_after(json, prev);
	free(prev);
	ok(strstr(text, "\"command\": \"q\\\"b\\\\s\\nn\\u0001c\\ufffd\303\251\"") != NULL,
	   "strings are escaped");
	ok(strstr(text, "\"exit_status\": null, \"killed_by\": \"SIGSEGV\", \"attached\": true") != NULL,
	   "killed snapshot fields");
	ok(strlen(text) > 4 && strcmp(text + strlen(text) - 4, "\n]}\n") == 0, "file ends with ]}");
	free(text);
	if (python)
		ok(tr_python_check(checker, json, 2) == 0, "two snapshots: still valid JSON");
	else
		ok(1, "# SKIP python3 not found");
	ok(report_json_close(j) == 0, "report_json_close");
	unlink(checker);
	unlink(json);
}

/* util_utf8_len, the one check of the JSON and flame graph writers: what a strict parser accepts. */
static void
test_utf8(void)
{
	static const struct { const char *bytes; int len; const char *what; } cases[] = {
		{ "a", 0, "ASCII is no sequence" },
		{ "\xc3\xa9", 2, "U+00E9" },
		{ "\xe2\x82\xac", 3, "U+20AC" },
		{ "\xf0\x9f\x98\x80", 4, "U+1F600" },
		{ "\xc0\xaf", 0, "overlong 2-byte" },
		{ "\xe0\x80\xaf", 0, "overlong 3-byte" },
		{ "\xf0\x80\x80\xaf", 0, "overlong 4-byte" },
		{ "\xed\xa0\x80", 0, "a surrogate (U+D800)" },
		{ "\xf4\x90\x80\x80", 0, "past U+10FFFF" },
		{ "\xe2\x82", 0, "truncated" },
		{ "\x80", 0, "a stray continuation byte" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int n = util_utf8_len((const unsigned char *)cases[i].bytes);

		ok(n == cases[i].len, "util_utf8_len: %s: %d (got %d)", cases[i].what, cases[i].len, n);
	}
}

int
main(void)
{
	struct jt_sym *s = sym_new();
	struct jt_snapshot snap;
	struct jt_heap *h;
	struct tr_obj self;
	uint64_t newaddr;

	if (tr_start(s, &self, &newaddr, &h, &snap) != 0)
		return tap_done();
	test_json(&snap, newaddr);
	test_utf8();
	heap_destroy(h);
	sym_destroy(s);
	return tap_done();
}
