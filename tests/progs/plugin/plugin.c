/* plugin.c - libjtplugin.so, loaded with dlopen: leaks one block of 400 bytes. */
#include <stdlib.h>

void *plugin_block;

__attribute__((noinline, noipa)) void
plugin_leak(void)
{
	plugin_block = malloc(400); /* SITE:plugin_leak */
}
