/* test_report_sym.c - unit tests for sym: lookup, symbolization, inlining, demangling, in the test binary, libc and libstdc++. */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "report_test.h"
#include "sym.h"
#include "tap.h"

TR_EXPORTED int tr_global_var = 42;

TR_NOIPA TR_EXPORTED int
tr_global_fn(void)
{
	return tr_global_var + 1;
}

static int
tr_streq(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/* Checks one frame's function, file basename, line and inlined flag. */
static void
tr_check_frame(const struct jt_frame *f, const char *fn, int line, int inlined, const char *what)
{
	ok(tr_streq(f->function, fn), "%s: function is %s (got %s)", what, fn,
	   f->function ? f->function : "(null)");
	ok(tr_streq(tr_base(f->file), TR_SRC), "%s: file is " TR_SRC " (got %s)", what,
	   f->file ? f->file : "(null)");
	is_u64(f->line, line, "line");
	is_u64(f->inlined, inlined, "inlined flag");
	ok(tr_streq(f->module, self_name), "%s: module is %s", what, self_name);
}

static void
test_self(struct jt_sym *s, const struct tr_obj *self)
{
	struct jt_frame f[8];
	uint64_t addr = 0;
	const char *err = NULL;
	int n;

	memset(f, 0, sizeof(f));

	ok(sym_add_module(s, self->path, self->bias, &err) == 0, "report the test binary (%s)",
	   err ? err : "ok");
	ok(sym_add_module(s, self->path, self->bias, &err) == 0, "reporting it again is a no-op");
	ok(sym_module_has_symbols(s, self->path), "the test binary has symbols");
	ok(sym_lookup(s, self->path, "tr_global_fn", &addr) == 0, "lookup tr_global_fn");
	is_u64(addr, (uint64_t)(uintptr_t)&tr_global_fn, "tr_global_fn address");
	ok(sym_lookup(s, self->path, "tr_global_fn@VERS_1", &addr) == 0, "a version suffix is ignored");
	ok(sym_lookup(s, self->path, "tr_global_var", &addr) != 0, "sym_lookup skips data objects");
	ok(sym_lookup_any(s, self->path, "tr_global_var", &addr) == 0, "sym_lookup_any finds them");
	is_u64(addr, (uint64_t)(uintptr_t)&tr_global_var, "tr_global_var address");
	ok(sym_lookup(s, self->path, "tr_leaf", &addr) != 0, "local symbols are not looked up");

	tr_mid();
	n = sym_resolve(s, leaf_stack[0], 1, f, 8);
	is_u64(n, 1, "return address in tr_leaf: one frame");
	tr_check_frame(&f[0], "tr_leaf", line_leaf, 0, "leaf");
	is_u64(f[0].address, leaf_stack[0], "frame keeps the raw pc");
	is_u64(f[0].offset, leaf_stack[0] - self->bias, "offset is pc minus bias");
	n = sym_resolve(s, leaf_stack[1], 1, f, 8);
	is_u64(n, 1, "return address in tr_mid: one frame");
	tr_check_frame(&f[0], "tr_mid", line_mid, 0, "mid");

	tr_outer();
	n = sym_resolve(s, inl_ret, 1, f, 8);
	is_u64(n, 2, "inlined call: two frames");
	tr_check_frame(&f[0], "tr_inline_helper", line_inl, 1, "inlined helper");
	tr_check_frame(&f[1], "tr_outer", line_outer, 0, "outer");
	is_u64(f[1].address, inl_ret, "both frames carry the same pc");
	n = sym_resolve(s, inl_ret, 1, f, 1);
	is_u64(n, 1, "sym_resolve never returns more than max");

	n = sym_resolve(s, (uint64_t)(uintptr_t)&tr_global_fn, 0, f, 8);
	ok(n == 1 && tr_streq(f[0].function, "tr_global_fn"), "a function's entry (not a return address)");
}

static void
test_errors(struct jt_sym *s)
{
	struct jt_frame f[4];
	const char *err = NULL;
	uint64_t addr;

	ok(sym_add_module(s, "/nonexistent/libnope.so", 0x50000000, &err) == -1, "missing file fails");
	ok(err && strstr(err, "/nonexistent/libnope.so"), "with a message naming it (%s)",
	   err ? err : "(null)");
	ok(sym_lookup(s, "/nonexistent/libnope.so", "malloc", &addr) == -1, "lookup in unknown module");
	ok(!sym_module_has_symbols(s, "/nonexistent/libnope.so"), "unknown module has no symbols");
	is_u64(sym_resolve(s, 0x10, 1, f, 4), 1, "unmapped pc: one frame");
	ok(f[0].address == 0x10 && !f[0].module && !f[0].function && !f[0].file && f[0].line == 0,
	   "unmapped pc: a bare address");
}

/*
 * A module reported over the range of an older one (dlclose, then dlopen at
 * the same place) replaces it: libc at 0x40000000, then libstdc++ 1 MiB
 * higher over libc's tail. libc's malloc, in its first MiB, is then unknown.
 */
static void
test_overlap(const char *libc_path)
{
	struct jt_sym *s = sym_new();
	struct jt_frame f[4];
	uint64_t malloc_addr = 0, addr;

	ok(sym_add_module(s, libc_path, 0x40000000, NULL) == 0, "overlap: report libc");
	ok(sym_lookup(s, libc_path, "malloc", &malloc_addr) == 0, "overlap: malloc in libc");
	ok(malloc_addr < 0x40100000, "overlap: malloc lies in libc's first MiB");
	sym_resolve(s, malloc_addr, 0, f, 4);
	ok(tr_streq(f[0].module, "libc.so.6"), "overlap: malloc resolves in libc");
	ok(sym_add_module(s, STDCXX, 0x40100000, NULL) == 0, "overlap: report libstdc++ over it");
	ok(sym_lookup(s, libc_path, "malloc", &addr) == -1, "overlap: libc is forgotten");
	sym_resolve(s, malloc_addr, 0, f, 4);
	ok(!f[0].module && !f[0].function, "overlap: its old range is unknown (got %s)",
	   f[0].module ? f[0].module : "nothing");
	ok(sym_lookup(s, STDCXX, "_Znwm", &addr) == 0 && addr > 0x40100000, "overlap: libstdc++ works");
	sym_destroy(s);
}

static void
test_libc(struct jt_sym *s)
{
	void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *real = h ? dlsym(h, "malloc") : NULL;
	struct jt_frame f[4];
	struct tr_obj libc;
	uint64_t addr = 0;
	const char *err = NULL;

	/* dlsym through libc's handle finds libc's malloc even when ASan interposes one. */
	ok(real && tr_find_obj((uint64_t)(uintptr_t)real, &libc) == 0, "libc is loaded");
	if (!real)
		return;
	ok(sym_add_module(s, libc.path, libc.bias, &err) == 0, "report %s", libc.path);
	ok(sym_lookup(s, libc.path, "malloc", &addr) == 0, "lookup malloc in libc");
	is_u64(addr, (uint64_t)(uintptr_t)real, "malloc address equals dlsym's");
	ok(sym_lookup(s, libc.path, "jt_no_such_function", &addr) == -1, "a missing name fails");
	ok(sym_lookup(s, libc.path, "memcpy", &addr) == 0, "an IFUNC counts as a function");
	ok(sym_lookup(s, libc.path, "stdout", &addr) == -1, "stdout is not a function");
	ok(sym_lookup_any(s, libc.path, "stdout", &addr) == 0, "but sym_lookup_any finds it");
	sym_resolve(s, (uint64_t)(uintptr_t)real, 0, f, 4);
	ok(tr_streq(f[0].module, "libc.so.6"), "malloc's frame names libc.so.6");
	is_u64(f[0].offset, (uint64_t)(uintptr_t)real - libc.bias, "module offset");
	dlclose(h);
	test_overlap(libc.path);
}

/* libstdc++ reported at STDCXX_BIAS: operator new(unsigned long) found, demangled, shown short or in full. */
static void
test_cxx(struct jt_sym *s)
{
	struct jt_frame f[4];
	const char *err = NULL, *first;
	uint64_t addr = 0;

	ok(sym_add_module(s, STDCXX, STDCXX_BIAS, &err) == 0, "report libstdc++ (%s)", err ? err : "ok");
	ok(sym_lookup(s, STDCXX, "_Znwm", &addr) == 0, "lookup _Znwm");
	ok(addr > STDCXX_BIAS && addr < STDCXX_BIAS + 0x1000000, "_Znwm lies in the made-up range");
	sym_resolve(s, addr, 0, f, 4);
	ok(tr_streq(f[0].function, "operator new(unsigned long)"), "demangled: %s",
	   f[0].function ? f[0].function : "(null)");
	ok(tr_streq(f[0].name, "operator new"), "shown short: %s", f[0].name ? f[0].name : "(null)");
	ok(tr_streq(f[0].module, "libstdc++.so.6"), "module libstdc++.so.6");
	sym_set_full_names(s, 1);
	sym_resolve(s, addr, 0, f, 4);
	ok(tr_streq(f[0].name, "operator new(unsigned long)"), "--full-names: shown in full: %s",
	   f[0].name ? f[0].name : "(null)");
	sym_set_full_names(s, 0);
	sym_resolve(s, addr, 0, f, 4);
	first = f[0].function;
	sym_resolve(s, addr, 0, f, 4);
	ok(first == f[0].function, "a second resolve comes from the cache");
	sym_resolve(s, STDCXX_BIAS + 0x11, 1, f, 4);
	ok(!f[0].function && f[0].offset == 0x11 && tr_streq(f[0].module, "libstdc++.so.6"),
	   "no symbol: module and offset only");
}

int
main(void)
{
	struct jt_sym *s = sym_new();
	struct tr_obj self;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (tr_find_obj((uint64_t)(uintptr_t)&tr_leaf, &self) != 0) {
		ok(0, "cannot find the test binary among the loaded objects");
		return tap_done();
	}
	ok(1, "the test binary is %s, load bias 0x%" PRIx64, self.path, self.bias);
	self_name = tr_base(self.path);
	self_bias = self.bias;
	test_self(s, &self);
	test_errors(s);
	test_libc(s);
	test_cxx(s);
	sym_destroy(s);
	return tap_done();
}
