/*
 * main.c - plugin: leaks from a shared library linked at build time (solib.c) and from one
 * loaded with dlopen (plugin.c). In the static builds (-DSTATIC_PLUGIN) both are linked in.
 * Writes one line to stdout and exits 0; exits 1 when the plugin cannot be loaded.
 */
#include "../common/sink.h"
#ifndef STATIC_PLUGIN
#include <dlfcn.h>
#endif

void solib_leak(void);
void plugin_leak(void);

static void (*
find_plugin(void))(void)
{
#ifdef STATIC_PLUGIN
	return plugin_leak;
#else
	/* The executable's RUNPATH is $ORIGIN, and dlopen searches it. */
	void *h = dlopen("libjtplugin.so", RTLD_NOW);

	if (!h) {
		say(2, dlerror());
		say(2, "\n");
		return NULL;
	}
	return (void (*)(void))dlsym(h, "plugin_leak");
#endif
}

int
main(void)
{
	void (*leak)(void);

	solib_leak(); /* SITE:call_solib */
	leak = find_plugin();
	if (!leak)
		return 1;
	leak(); /* SITE:call_plugin */
	say(1, "plugin: done\n");
	return 0;
}
