/* cxxname.c - short C++ function names: the demangled name scanned once, its template arguments, parameters and return type left out. */
#include <ctype.h>
#include <string.h>

#include "cxxname.h"
#include "util.h"

/* The short name as it is written: out[0..n), room for len - 1 characters. */
struct cx_out {
	char *out;
	size_t len, n;
};

static void
cx_put(struct cx_out *o, const char *p, size_t k)
{
	while (k-- && o->n + 1 < o->len)
		o->out[o->n++] = *p++;
}

static int
cx_ident(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '$';
}

/* Non-zero when p starts with word as a whole identifier (the character before is at p[-1] unless p is start). */
static int
cx_word(const char *start, const char *p, const char *word)
{
	size_t k = strlen(word);

	return strncmp(p, word, k) == 0 && !cx_ident(p[k]) && (p == start || !cx_ident(p[-1]));
}

static int
cx_starts(const char *p, const char *prefix)
{
	return strncmp(p, prefix, strlen(prefix)) == 0;
}

/*
 * Returns the end of the template argument list at p ('<'): its '>' counted
 * outside parentheses only, since an expression argument such as "(1>0)"
 * may hold one of its own.
 */
static const char *
cx_skip_angles(const char *p)
{
	int depth = 0, paren = 0;

	for (; *p; p++) {
		if (*p == '(')
			paren++;
		else if (*p == ')' && paren)
			paren--;
		else if (!paren && *p == '<')
			depth++;
		else if (!paren && *p == '>' && --depth == 0)
			return p + 1;
	}
	return p;
}

/* Returns the end of the parenthesized group at p ('('). */
static const char *
cx_skip_parens(const char *p)
{
	int depth = 0;

	for (; *p; p++) {
		if (*p == '(')
			depth++;
		else if (*p == ')' && --depth == 0)
			return p + 1;
	}
	return p;
}

/* Copies the {...} entity at p ("{lambda(int)#1}", "{unnamed type#1}") with template arguments elided; returns its end. */
static const char *
cx_braces(struct cx_out *o, const char *p)
{
	int depth = 0;

	for (; *p; p++) {
		if (*p == '<') {
			p = cx_skip_angles(p) - 1;
			continue;
		}
		cx_put(o, p, 1);
		if (*p == '{')
			depth++;
		else if (*p == '}' && --depth == 0)
			return p + 1;
	}
	return p;
}

/* The operators' spellings, longer ones first so that "operator<<" is not read as "operator<". */
static const char *const cx_ops[] = {
	"()", "[]", "<=>", "<<=", ">>=", "->*", "<<", ">>", "<=", ">=", "->", "==", "!=", "&&", "||",
	"++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", ",", "<", ">", "+", "-", "*", "/",
	"%", "&", "|", "^", "~", "!", "=",
};

/*
 * Copies the operator name at p ("operator"): a symbol ("operator<<"),
 * "operator new[]", a literal operator ("operator\"\" _km") or a conversion
 * to a type ("operator bool", its template arguments elided). Returns the
 * end of the name.
 */
static const char *
cx_operator(struct cx_out *o, const char *p)
{
	p += strlen("operator");
	cx_put(o, "operator", strlen("operator"));
	for (size_t i = 0; i < ARRAY_SIZE(cx_ops); i++)
		if (cx_starts(p, cx_ops[i])) {
			cx_put(o, cx_ops[i], strlen(cx_ops[i]));
			return p + strlen(cx_ops[i]);
		}
	/* new, delete, "" _suffix, or a conversion's type: up to the parameter list. */
	while (*p && *p != '(') {
		if (*p == '<') {
			p = cx_skip_angles(p);
			continue;
		}
		cx_put(o, p++, 1);
	}
	return p;
}

/* Skips a member function's qualifiers after its parameter list (" const", " &&", ...). */
static const char *
cx_skip_quals(const char *p)
{
	static const char *const quals[] = { " const", " volatile", " &&", " &", " noexcept" };

	for (size_t i = 0; i < ARRAY_SIZE(quals); i++)
		if (cx_starts(p, quals[i]) && !cx_ident(p[strlen(quals[i])]))
			return cx_skip_quals(p + strlen(quals[i]));
	return p;
}

/*
 * One step of the scan at p: copies or skips what starts there and returns
 * where the next step starts, or NULL at the end of the name (its parameter
 * list, unless "::" follows it as in a local class's "f()::Local::g()").
 */
static const char *
cx_step(struct cx_out *o, const char *start, const char *p)
{
	if (cx_starts(p, "(anonymous namespace)")) {
		cx_put(o, p, strlen("(anonymous namespace)"));
		return p + strlen("(anonymous namespace)");
	}
	if (*p == '(') {
		p = cx_skip_quals(cx_skip_parens(p));
		return cx_starts(p, "::") ? p : NULL;
	}
	if (*p == '{')
		return cx_braces(o, p);
	if (*p == '<')
		return cx_skip_angles(p);
	if (cx_word(start, p, "operator"))
		return cx_operator(o, p);
	if (cx_word(start, p, "decltype")) {
		/* Only a return type has one: the blank after it starts the name anew. */
		p += strlen("decltype");
		p += *p == ' ';
		return *p == '(' ? cx_skip_parens(p) : p;
	}
	if (cx_starts(p, "[abi:"))
		return p + strcspn(p, "]") + (p[strcspn(p, "]")] == ']');
	if (cx_starts(p, " [clone "))
		return NULL;
	if (*p == ' ') {
		/* "operator<< <char>" keeps its blank before the template arguments; another ends a return type. */
		if (p[1] != '<')
			o->n = 0;
		return p + 1;
	}
	cx_put(o, p, 1);
	return p + 1;
}

size_t
cxxname_short(const char *name, char *out, size_t len)
{
	struct cx_out o = { out, len, 0 };
	const char *p = name;

	if (len == 0)
		return 0;
	while (p && *p)
		p = cx_step(&o, name, p);
	if (o.n == 0) {
		/* Nothing left (a function returning a function pointer): the name as it is. */
		cx_put(&o, name, strlen(name));
	}
	out[o.n] = '\0';
	return o.n;
}
