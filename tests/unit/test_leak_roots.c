/* test_leak_roots.c - unit test of leak_roots_plan: which parts of a process's mappings are roots of a leak check. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leak_roots.h"
#include "tap.h"

/* The shape of a dynamic program's /proc/PID/maps on this machine, with a thread, an arena and a device. */
static const char dyn_maps[] =
	"555555554000-555555556000 r--p 00000000 fe:00 11051085                   /tmp/prog\n"
	"555555556000-555555557000 r-xp 00002000 fe:00 11051085                   /tmp/prog\n"
	"555555557000-555555558000 rw-p 00003000 fe:00 11051085                   /tmp/prog\n"
	"555555560000-555555581000 rw-p 00000000 00:00 0                          [heap]\n"
	"7ffff0000000-7ffff0021000 rw-p 00000000 00:00 0 \n"
	"7ffff0021000-7ffff4000000 ---p 00000000 00:00 0 \n"
	"7ffff7000000-7ffff7001000 ---p 00000000 00:00 0 \n"
	"7ffff7001000-7ffff7801000 rw-p 00000000 00:00 0 \n"
	"7ffff7a00000-7ffff7a10000 rw-s 00000000 00:05 1234                       /dev/fb0\n"
	"7ffff7c00000-7ffff7c26000 r--p 00000000 fe:00 332835                     /usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7ffff7c26000-7ffff7d7c000 r-xp 00026000 fe:00 332835                     /usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7ffff7d7c000-7ffff7dcf000 r--p 0017c000 fe:00 332835                     /usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7ffff7dcf000-7ffff7dd3000 r--p 001cf000 fe:00 332835                     /usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7ffff7dd3000-7ffff7dd5000 rw-p 001d3000 fe:00 332835                     /usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7ffff7dd5000-7ffff7de2000 rw-p 00000000 00:00 0 \n"
	"7ffff7fc0000-7ffff7fc4000 r--p 00000000 00:00 0                          [vvar]\n"
	"7ffff7fc4000-7ffff7fc6000 r-xp 00000000 00:00 0                          [vdso]\n"
	"7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0                          [stack]\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n";

/* A static program: its TLS at the start of [heap]. */
static const char static_maps[] =
	"00400000-00401000 r--p 00000000 fe:00 11051084                           /tmp/prog-static\n"
	"00401000-00479000 r-xp 00001000 fe:00 11051084                           /tmp/prog-static\n"
	"004a4000-004a7000 rw-p 000a4000 fe:00 11051084                           /tmp/prog-static\n"
	"004a7000-004ac000 rw-p 00000000 00:00 0 \n"
	"34f3e000-34f60000 rw-p 00000000 00:00 0                                  [heap]\n"
	"7ffc549f5000-7ffc54a16000 rw-p 00000000 00:00 0                          [stack]\n";

static int
has(const struct leak_roots *r, uint64_t s, uint64_t e)
{
	for (size_t i = 0; i < r->nregions; i++)
		if (r->regions[i].start == s && r->regions[i].end == e)
			return 1;
	return 0;
}

static void
dump(const struct leak_roots *r)
{
	for (size_t i = 0; i < r->nregions; i++)
		printf("# %#llx-%#llx\n", (unsigned long long)r->regions[i].start, (unsigned long long)r->regions[i].end);
}

static void
test_dynamic(int attached)
{
	struct leak_thread_regs th[2] = { 0 };
	struct leak_block b[3] = { { .addr = 0x5555555602a0, .size = 32 }, { .addr = 0x7ffff00008d0, .size = 64 },
				   { .addr = 0x7ffff0010000, .size = 16 } };
	struct leak_roots r;

	th[0].sp = 0x7fffffffe000; th[0].tp = 0x7ffff7de1740;
	th[0].words[0] = 0x5555555602a0; th[0].nwords = 1;
	th[1].sp = 0x7ffff77f0000; th[1].tp = 0x7ffff78006c0;
	th[1].words[0] = 1; th[1].words[1] = 2; th[1].nwords = 2;
	ok(leak_roots_plan(dyn_maps, th, 2, b, 3, 0x90, attached, &r) == 0, "plan (attached %d)", attached);
	dump(&r);
	is_u64(r.nregions, attached ? 6 : 4, "regions");
	ok(has(&r, 0x555555557000, 0x555555558000), "the program's .data");
	ok(has(&r, 0x7ffff7dd3000, 0x7ffff7de2000), "libc's .data and bss joined");
	ok(has(&r, 0x7ffff77f0000 - 128, 0x7ffff7801000), "thread stack from sp-128, TLS at its top; dead part left out");
	ok(has(&r, 0x7fffffffe000 - 128, 0x7ffffffff000), "main stack from sp-128");
	is_u64(has(&r, 0x555555560000, 0x555555581000), attached, "[heap] a root only when attached");
	is_u64(has(&r, 0x7ffff0000000, 0x7ffff0021000), attached, "an arena a root only when attached");
	is_u64(r.nwords, 3, "register words");
	is_u64(r.nthreads, 2, "threads");
	is_u64(r.nvtables, 2, "vtable ranges (the program's, libc's)");
	ok(r.nvtables == 2 && r.vtables[1].start == 0x7ffff7c00000 && r.vtables[1].end == 0x7ffff7dd3000,
	   "libc's read-only mappings joined");
	leak_roots_clear(&r);
}

static void
test_static(void)
{
	struct leak_thread_regs th = { .sp = 0x7ffc54a14000, .tp = 0x34f3e3c0 };
	struct leak_block b = { .addr = 0x34f3f8f0, .size = 16 };
	struct leak_roots r;

	ok(leak_roots_plan(static_maps, &th, 1, &b, 1, 0x80, 0, &r) == 0, "plan (static)");
	dump(&r);
	is_u64(r.nregions, 3, "regions");
	ok(has(&r, 0x4a4000, 0x4ac000), ".data and bss");
	ok(has(&r, 0x34f3e000, 0x34f3e3c0 + 4096), "TLS and TCB at the start of [heap]");
	ok(has(&r, 0x7ffc54a14000 - 128, 0x7ffc54a16000), "stack");
	leak_roots_clear(&r);
}

/* A stack glibc keeps for an ended thread: only its TLS and TCB are roots, not its dead frames. */
static void
test_ended(void)
{
	struct leak_thread_regs th[2] = { 0 };
	struct leak_roots r;

	th[0].sp = 0x7fffffffe000; th[0].tp = 0x7ffff7de1740;
	th[1].tp = 0x7ffff78006c0; th[1].ended = 1;
	ok(leak_roots_plan(dyn_maps, th, 2, NULL, 0, 0x90, 0, &r) == 0, "plan (an ended thread)");
	dump(&r);
	ok(!has(&r, 0x7ffff7001000, 0x7ffff7801000), "the ended thread's stack is no root whole");
	ok(has(&r, 0x7ffff78006c0 - 0x90 - 1024, 0x7ffff7801000), "its static TLS (and less than glibc's surplus) and TCB are");
	is_u64(r.nthreads, 1, "threads: the live one");
	leak_roots_clear(&r);
}

/* leak_roots_cut: ranges taken out of the regions (glibc's arenas), in any order, overlapping. */
static void
test_cut(void)
{
	struct leak_roots r = { 0 };
	const struct leak_region cut[] = {
		{ 0x7ffff7dd3c70, 0x7ffff7dd44e0 },	/* inside libc's data */
		{ 0x555555556f00, 0x555555557100 },	/* across the start of the program's data */
		{ 0x7ffff7dd3c80, 0x7ffff7dd3d00 },	/* inside the first cut */
		{ 0x7ffff0000040, 0x7ffff00008b0 },	/* in no region */
	};

	r.regions = calloc(3, sizeof(*r.regions));
	r.nregions = 3;
	r.regions[0] = (struct leak_region) { 0x555555557000, 0x555555558000 };
	r.regions[1] = (struct leak_region) { 0x7ffff7dd3000, 0x7ffff7de2000 };
	r.regions[2] = (struct leak_region) { 0x7fffffffdf80, 0x7ffffffff000 };
	leak_roots_cut(&r, cut, 4);
	dump(&r);
	is_u64(r.nregions, 4, "cut: regions");
	ok(has(&r, 0x555555557100, 0x555555558000), "cut: the program's data less its first 256 bytes");
	ok(has(&r, 0x7ffff7dd3000, 0x7ffff7dd3c70) && has(&r, 0x7ffff7dd44e0, 0x7ffff7de2000),
	   "cut: libc's data split around the arena");
	ok(has(&r, 0x7fffffffdf80, 0x7ffffffff000), "cut: the stack untouched");
	leak_roots_clear(&r);
}

int
main(void)
{
	test_cut();
	test_ended();
	test_dynamic(0);
	test_dynamic(1);
	test_static();
	ok(leak_roots_plan("garbage\n", NULL, 0, NULL, 0, 0, 0, &(struct leak_roots){ 0 }) == -1, "bad maps");
	return tap_done();
}
