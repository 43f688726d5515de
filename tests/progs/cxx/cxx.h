/*
 * cxx.h - the C++ test program: one function per operator new / delete variant, each in its
 * own file, plus a std::vector and a std::string leak and a std::bad_alloc thrown out of new.
 */
#ifndef JT_PROGS_CXX_H
#define JT_PROGS_CXX_H

#include <cstddef>
#include <new>

struct Obj {			/* 40 bytes, trivially destructible */
	long v[5];
};

struct alignas(64) Over {	/* over-aligned: new uses the align_val_t operators */
	char c[128];
};

struct WithDtor {		/* a destructor makes new[] store a cookie and delete[] sized */
	int x;
	~WithDtor();
};

/* Leaks one block through each operator new; returns it. */
Obj *cx_new();
int *cx_new_arr();
Obj *cx_new_nt();
char *cx_new_arr_nt();
Over *cx_new_al();
Over *cx_new_arr_al();
Over *cx_new_al_nt();
Over *cx_new_arr_al_nt();

/* Each allocates one block and releases it through one operator delete. */
void cx_del();
void cx_del_arr();
void cx_del_sz();
void cx_del_arr_sz();
void cx_del_nt();
void cx_del_arr_nt();
void cx_del_al();
void cx_del_arr_al();
void cx_del_sz_al();
void cx_del_arr_sz_al();
void cx_del_al_nt();
void cx_del_arr_al_nt();

void cx_vector_leak();		/* a new std::vector<int> with 50 reserved ints, leaked */
void cx_string_leak();		/* a new std::string of 100 chars, leaked */
void cx_throw();		/* new char[huge]: throws std::bad_alloc */
void cx_after_throw();		/* leaks malloc(33) and new long, after a caught throw */

#endif
