/* test_modules.c - unit tests for modules: each module owns its file (module_elf, module_file) and its consumers' data. */
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "modules.h"
#include "tap.h"
#include "util.h"

static int freed[3];

static void
count_free(void *p)
{
	freed[(int *)p - freed]++;
}

/* Our own process: every module has its file open, by its own name, as libelf reads it. */
static void
test_self(void)
{
	struct jt_modules m;
	size_t i, named = 0, elf_ok = 0, mains = 0;

	modules_init(&m);
	ok(modules_refresh(&m, getpid()) >= 2, "modules_refresh on ourselves adds modules");
	for (i = 0; i < m.n; i++) {
		GElf_Ehdr eh;

		named += strcmp(module_file(m.v[i]), m.v[i]->path) == 0;
		elf_ok += module_elf(m.v[i]) && gelf_getehdr(module_elf(m.v[i]), &eh)
			  && eh.e_type == m.v[i]->e_type;
		mains += m.v[i]->is_main;
	}
	is_u64(named, m.n, "module_file is the maps path of every module (none is deleted)");
	is_u64(elf_ok, m.n, "module_elf reads the ELF header of every module");
	is_u64(mains, 1, "one main module");
	modules_clear(&m);
}

/* module_data: found by key, set once (a concurrent reader may hold it), freed exactly once with the module. */
static void
test_data(void)
{
	static const char key_a, key_b;
	struct jt_modules m;
	struct jt_module *mod;

	modules_init(&m);
	if (modules_refresh(&m, getpid()) < 1) {
		ok(0, "modules to attach data to");
		return;
	}
	mod = m.v[0];
	ok(module_data(mod, &key_a) == NULL, "no data before any is set");
	ok(module_set_data(mod, &key_a, &freed[0], count_free) == 0 &&
	   module_set_data(mod, &key_b, &freed[1], count_free) == 0, "two consumers attach data");
	ok(module_data(mod, &key_a) == &freed[0] && module_data(mod, &key_b) == &freed[1],
	   "each consumer finds its own data by its key");
	ok(module_set_data(mod, &key_a, &freed[2], count_free) == -1, "setting a key again is refused");
	ok(module_data(mod, &key_a) == &freed[0] && freed[0] == 0, "and leaves the first data in place");
	module_set_data(m.v[m.n - 1], &key_b, NULL, NULL);
	modules_clear(&m);
	ok(freed[0] == 1 && freed[1] == 1 && freed[2] == 0, "modules_clear frees each attached data once");
}

int
main(void)
{
	test_self();
	test_data();
	return tap_done();
}
