/*
 * main.cpp - cxx: usage `cxx [ROUNDS [THROWS]]` (defaults 1 and 1).
 * Each round leaks one block through every operator new, allocates and releases one block
 * through every operator delete, and leaks a std::vector and a std::string. Then THROWS times
 * it calls new char[huge], catches the std::bad_alloc and leaks two blocks from
 * cx_after_throw(). Writes one line to stdout with write(2) and exits 0.
 */
#include "cxx.h"
#include "../common/sink.h"

static void
round_once()
{
	sink(cx_new(), 1);
	sink(cx_new_arr(), 1);
	sink(cx_new_nt(), 1);
	sink(cx_new_arr_nt(), 1);
	sink(cx_new_al(), 1);
	sink(cx_new_arr_al(), 1);
	sink(cx_new_al_nt(), 1);
	sink(cx_new_arr_al_nt(), 1);
	cx_del();
	cx_del_arr();
	cx_del_sz();
	cx_del_arr_sz();
	cx_del_nt();
	cx_del_arr_nt();
	cx_del_al();
	cx_del_arr_al();
	cx_del_sz_al();
	cx_del_arr_sz_al();
	cx_del_al_nt();
	cx_del_arr_al_nt();
	cx_vector_leak();
	cx_string_leak();
}

int
main(int argc, char **argv)
{
	unsigned long rounds = arg_num(argc > 1 ? argv[1] : nullptr, 1);
	unsigned long throws = arg_num(argc > 2 ? argv[2] : nullptr, 1);
	unsigned long caught = 0;

	for (unsigned long r = 0; r < rounds; r++)
		round_once();
	for (unsigned long t = 0; t < throws; t++) {
		try {
			cx_throw();
		} catch (const std::bad_alloc &) {
			caught++;
			cx_after_throw();
		}
	}
	say(1, "cxx: rounds ");
	say_num(1, rounds);
	say(1, " caught ");
	say_num(1, caught);
	say(1, "\n");
	return caught == throws ? 0 : 1;
}
