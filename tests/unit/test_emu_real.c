/* test_emu_real.c - checks the harness's own verdicts on the real CPU and runs the allocators' real first instructions in place against it. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "emu_test.h"

/*
 * The harness itself, since this host may resume any state: a start state
 * not every CPU resumes is caught before it runs, and one the kernel will
 * not resume is told apart from an instruction that faults.
 */
static void
test_harness(void)
{
	static const uint8_t nop[] = { 0x90 }, load[] = { 0x48, 0x8b, 0x03 };	/* mov rax, [rbx] */
	struct user_regs_struct r = regs_random(), bad, out;
	enum step step;
	int sig;

	r.rip = AT;
	ok(start_invalid(&r) == NULL, "a random start state is valid on any x86-64 CPU");
	bad = r, bad.rsp = 0x8000000000000000ULL;
	ok(start_invalid(&bad) != NULL, "one with a non-canonical rsp is not: %s", start_invalid(&bad));
	reg_set(&bad, 4, 8, 0x7fffffffffffffffULL);
	ok(bad.rsp == ~0ULL && start_invalid(&bad) == NULL, "reg_set keeps rsp canonical (%#llx)", bad.rsp);
	bad = r, bad.rip = 0x0000800000000000ULL;
	ok(start_invalid(&bad) != NULL, "nor one with a non-canonical rip: %s", start_invalid(&bad));
	bad = r, bad.eflags |= 0x100;
	ok(start_invalid(&bad) != NULL, "nor one with TF set: %s", start_invalid(&bad));
	bad = r, bad.eflags |= 0x40000;
	ok(start_invalid(&bad) != NULL, "nor one with AC set: %s", start_invalid(&bad));
	bad = r, bad.fs_base = 1ULL << 63;
	ok(start_invalid(&bad) != NULL, "nor one with another fs base: %s", start_invalid(&bad));

	code_place(AT, nop, sizeof(nop));
	if (arena_dirty)
		arena_reset();
	ok(cpu_try(&r, &out, &sig) == STEP_DONE && out.rip == AT + 1, "a nop steps");
	ok(cpu_try(&bad, &out, &sig) == STEP_REFUSED, "a state PTRACE_SETREGS refuses counts as refused");
	code_place(AT, load, sizeof(load));
	r.rbx = 8;
	step = cpu_try(&r, &out, &sig);
	ok(step == STEP_FAULT && sig == SIGSEGV && out.rip == AT,
	   "an instruction that faults counts as a fault, not as refused (signal %d)", sig);
}

/* ---- the allocators' real first instructions ---- */

/* Looks name up in path's .dynsym and copies the first 16 bytes of its code; returns its address or 0. */
static uint64_t
elf_sym_code(const char *path, const char *name, uint8_t code[16])
{
	uint64_t value = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf *e;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && !value && (scn = elf_nextscn(e, scn)) != NULL) {
		Elf_Data *d = elf_getdata(scn, NULL);
		GElf_Sym s;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !d)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize && !value; i++) {
			const char *n;

			if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF || GELF_ST_TYPE(s.st_info) != STT_FUNC)
				continue;
			n = elf_strptr(e, sh.sh_link, s.st_name);
			if (n && strcmp(n, name) == 0)
				value = s.st_value;
		}
	}
	scn = NULL;
	while (e && value && (scn = elf_nextscn(e, scn)) != NULL) {
		Elf_Data *d = elf_getdata(scn, NULL);

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS && d && d->d_buf &&
		    value >= sh.sh_addr && value + 16 <= sh.sh_addr + d->d_size) {
			memcpy(code, (uint8_t *)d->d_buf + (value - sh.sh_addr), 16);
			break;
		}
	}
	if (!scn)
		value = 0;
	elf_end(e);
	close(fd);
	return value;
}

/* Where soname is loaded in us, and so in the child forked from us. */
static uint64_t
lib_base(const char *soname)
{
	struct link_map *lm = NULL;
	void *h = dlopen(soname, RTLD_NOW);

	if (!h || dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || !lm)
		return 0;
	return lm->l_addr;
}

static void
test_real(const char *path, uint64_t base, const char *name)
{
	uint8_t file[16], live[16];
	uint64_t value = elf_sym_code(path, name, file), at = base + value;
	struct jt_insn in;
	char text[256];

	if (!value || !base) {
		ok(0, "%s: found in %s's .dynsym and loaded", name, path);
		return;
	}
	if (child_read(NULL, at, live, 16) < 0 || memcmp(file, live, 16) != 0 || emu_decode(&in, at, file, 16) < 0) {
		ok(0, "%s: the file's bytes are the loaded bytes, and decode", name);
		return;
	}
	ok(in.supported, "%s: first instruction %s is emulated", name, insn_text(&in, text, sizeof(text)));
	for (int k = 0; k < 64; k++) {
		struct user_regs_struct r = regs_random();

		if (k < 8)
			r.rdi = (uint64_t)k - 4;	/* free(NULL), small sizes, -1 */
		check_at(at, NULL, 0, r);
	}
	grp_end("%s: first instruction in place in the child", name);
}

static void
test_allocators(void)
{
	static const char libc[] = "/lib/x86_64-linux-gnu/libc.so.6";
	static const char libstdcxx[] = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";
	static const char *const cfns[] = { "malloc", "calloc", "realloc", "free", "posix_memalign", "valloc",
					    "memalign", "pvalloc", "aligned_alloc", "reallocarray" };
	static const char *const cxxfns[] = { "_Znwm", "_Znam", "_ZdlPv", "_ZdaPv", "_ZdlPvm",
					      "_ZnwmRKSt9nothrow_t", "_ZnwmSt11align_val_t" };
	uint64_t cbase = lib_base("libc.so.6"), cxxbase = lib_base("libstdc++.so.6");

	for (size_t i = 0; i < sizeof(cfns) / sizeof(cfns[0]); i++)
		test_real(libc, cbase, cfns[i]);
	for (size_t i = 0; i < sizeof(cxxfns) / sizeof(cxxfns[0]); i++)
		test_real(libstdcxx, cxxbase, cxxfns[i]);
}

static int
setup(void)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	/* libstdc++ must be in the child too, so its operator new can run in place. */
	if (!dlopen("libstdc++.so.6", RTLD_NOW))
		return -1;
	return emu_setup();
}

int
main(void)
{
	emu_start(setup);
	test_allocators();
	test_harness();
	return emu_done();
}
