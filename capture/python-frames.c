/* SPDX-License-Identifier: MIT */
/*
 * The calling thread's Python frames, read from CPython's memory as py-spy and Austin read it
 * from outside: without the GIL (frameworks release it around their CUDA calls, so the C API
 * is not safe then), without allocating, without calling into the interpreter.
 *
 * Finding it: a loaded object (libpython3.X.so, or a python executable that exports its
 * symbols) that defines _PyRuntime; its version from Py_Version (3.11 on) or from a function
 * only 3.10 added. Its layout: python-layouts.h, from each version's headers; for 3.13 every
 * offset _PyRuntime's _Py_DebugOffsets publishes is taken from the process instead.
 *
 * The thread's state: the GIL state's TSS key holds, in the thread's own thread-specific data,
 * the thread state bound to it (pthread_getspecific: no other thread's memory is touched). It
 * is the thread's own, so its frames live as long as this call does: the thread is inside
 * them. What could make a read fault is a wrong layout or a dead thread state (a daemon thread
 * still running after the interpreter finalized). So the first walks read through
 * process_vm_readv, which fails instead of faulting, and check everything they read (thread
 * ids, the interpreter, the type of every code, str and bytes object, offsets inside the
 * code); the walks read memory directly only once one has passed, and never while the
 * runtime finalizes. Each fast walk still checks the thread state's ids and each code
 * object's type; a failure costs that stack its Python frames, counted in a note at exit.
 * A layout that fails: native frames only, one warning in the trace.
 */
#include "python-frames.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <gpuwhy/trace-format.h>

#include "capture-state.h"
#include "clock.h"
#include "intern.h"
#include "modules.h"
#include "python-layouts.h"
#include "trace-writer.h"

enum py_state {
	PY_NONE,      /* no interpreter found (yet): look again when objects are loaded */
	PY_PROBATION, /* found; walks read through process_vm_readv until one passes */
	PY_ACTIVE,    /* a walk passed: direct reads */
	PY_OFF,	      /* off, unsupported or refused: native frames only */
};

/* Frames and shims a walk passes before it gives up (a cycle, or a recursion this deep). */
#define WALK_MAX (4 * GW_PY_MAX_FRAMES)
#define STR_MAX	 1024

static struct {
	_Atomic int state;
	_Atomic uint32_t probed_generation;
	_Atomic bool probing;
	bool disabled;
	const char *force_layout;
	struct gw_py_layout lay;
	uint64_t runtime;				      /* &_PyRuntime */
	uint64_t code_type, frame_type, str_type, bytes_type; /* type objects' addresses */
	uint64_t eval_start, eval_end;			      /* _PyEval_EvalFrameDefault */
	char where[256];				      /* the object that defines it */
	char version_text[32];
	_Atomic uint64_t lost;	    /* fast walks that failed a check */
	_Atomic bool reading_fails; /* process_vm_readv refused: no safe reads at all */
} py;

void gw_python_configure(bool enabled, const char *force_layout)
{
	py.disabled = !enabled;
	py.force_layout = force_layout && *force_layout ? force_layout : NULL;
	atomic_store(&py.state, enabled ? PY_NONE : PY_OFF);
}

static void note(unsigned level, const char *text)
{
	struct gw_rec_note rec = {
		.time_ns = gw_now_ns(),
		.level = level,
		.text = {(const uint8_t *)text, (uint32_t)strlen(text)},
	};

	gw_emit(GW_REC_NOTE, &rec);
}

/* ---- reading memory ---- */

/* An address a user-space pointer can hold: not the null page, below the top of user space
 * (57 bits covers five-level paging). */
static inline bool plausible(uint64_t a)
{
	return a >= 4096 && a < (1ull << 57);
}

/* Reads len bytes at src through the kernel, which fails with EFAULT where a load would
 * fault. */
static bool safe_read(void *dst, uint64_t src, size_t len)
{
	struct iovec local = {dst, len}, remote = {(void *)(uintptr_t)src, len};

	if (!plausible(src))
		return false;
	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len;
}

static inline bool rd(bool safe, void *dst, uint64_t src, size_t len)
{
	if (safe)
		return safe_read(dst, src, len);
	if (!plausible(src))
		return false;
	memcpy(dst, (const void *)(uintptr_t)src, len);
	return true;
}

static inline bool rd64(bool safe, uint64_t src, uint64_t *v)
{
	return rd(safe, v, src, sizeof(*v));
}

/* Whether the len bytes at a can be read: one object is one allocation, so its first and last
 * byte being readable means all of it is. */
static bool readable(bool safe, uint64_t a, size_t len)
{
	uint8_t b;

	if (!len)
		return plausible(a);
	return !safe || (safe_read(&b, a, 1) && safe_read(&b, a + len - 1, 1));
}

/* ---- finding the interpreter ---- */

struct dynsyms {
	uint64_t base;
	const ElfW(Sym) * symtab;
	const char *strtab;
	const uint32_t *gnu_hash, *sysv_hash;
};

/* A d_ptr of the dynamic section: the loader relocates most in place, the vdso's it does not. */
static uint64_t dyn_ptr(uint64_t base, uint64_t p)
{
	return p < base ? p + base : p;
}

static bool dynsyms_of(struct dl_phdr_info *info, struct dynsyms *d)
{
	memset(d, 0, sizeof(*d));
	d->base = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_DYNAMIC)
			continue;
		for (const ElfW(Dyn) *dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
		     dyn->d_tag != DT_NULL; dyn++) {
			uint64_t p = dyn_ptr(d->base, dyn->d_un.d_ptr);

			if (dyn->d_tag == DT_SYMTAB)
				d->symtab = (const ElfW(Sym) *)(uintptr_t)p;
			else if (dyn->d_tag == DT_STRTAB)
				d->strtab = (const char *)(uintptr_t)p;
			else if (dyn->d_tag == DT_GNU_HASH)
				d->gnu_hash = (const uint32_t *)(uintptr_t)p;
			else if (dyn->d_tag == DT_HASH)
				d->sysv_hash = (const uint32_t *)(uintptr_t)p;
		}
	}
	return d->symtab && d->strtab && (d->gnu_hash || d->sysv_hash);
}

static uint32_t gnu_hash_of(const char *name)
{
	uint32_t h = 5381;

	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		h = h * 33 + *c;
	return h;
}

static const ElfW(Sym) * defined(const struct dynsyms *d, uint32_t i, const char *name)
{
	const ElfW(Sym) *s = &d->symtab[i];

	if (s->st_shndx == SHN_UNDEF || !s->st_value || strcmp(d->strtab + s->st_name, name))
		return NULL;
	return s;
}

/* The object's own definition of a dynamic symbol (the loader's lookup, without dlsym: no
 * loader lock, and only this object). */
static const ElfW(Sym) * lookup(const struct dynsyms *d, const char *name)
{
	if (d->gnu_hash) {
		const uint32_t *h = d->gnu_hash, nbuckets = h[0], symoffset = h[1],
			       bloom_size = h[2];
		const ElfW(Addr) *bloom = (const ElfW(Addr) *)(h + 4);
		const uint32_t *buckets = (const uint32_t *)(bloom + bloom_size), *chain;
		uint32_t hash = gnu_hash_of(name), i;

		if (!nbuckets)
			return NULL;
		chain = buckets + nbuckets;
		i = buckets[hash % nbuckets];
		if (i < symoffset)
			return NULL;
		for (;; i++) {
			uint32_t ch = chain[i - symoffset];

			if ((ch | 1) == (hash | 1)) {
				const ElfW(Sym) *s = defined(d, i, name);

				if (s)
					return s;
			}
			if (ch & 1)
				return NULL;
		}
	}
	for (uint32_t i = 0; i < d->sysv_hash[1]; i++) {
		const ElfW(Sym) *s = defined(d, i, name);

		if (s)
			return s;
	}
	return NULL;
}

static uint64_t sym_addr(const struct dynsyms *d, const char *name, uint64_t *size)
{
	const ElfW(Sym) *s = lookup(d, name);

	if (size)
		*size = s ? s->st_size : 0;
	return s ? d->base + s->st_value : 0;
}

/* 3.13's _Py_DebugOffsets, as its header (Include/internal/pycore_runtime.h) lays it out: the
 * first member of _PyRuntime. Stable within 3.13's patch releases only. */
struct debug_offsets_313 {
	char cookie[8];
	uint64_t version, free_threaded;
	struct {
		uint64_t size, finalizing, interpreters_head;
	} runtime_state;
	struct {
		uint64_t size, id, next, threads_head, gc, imports_modules, sysdict, builtins,
			ceval_gil, gil_runtime_state, gil_runtime_state_enabled,
			gil_runtime_state_locked, gil_runtime_state_holder;
	} interpreter_state;
	struct {
		uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id,
			datastack_chunk, status;
	} thread_state;
	struct {
		uint64_t size, previous, executable, instr_ptr, localsplus, owner;
	} interpreter_frame;
	struct {
		uint64_t size, filename, name, qualname, linetable, firstlineno, argcount,
			localsplusnames, localspluskinds, co_code_adaptive;
	} code_object;
	struct {
		uint64_t size, ob_type;
	} pyobject;
	struct {
		uint64_t size, tp_name, tp_repr, tp_flags;
	} type_object;
	struct {
		uint64_t size, ob_item, ob_size;
	} tuple_object, list_object;
	struct {
		uint64_t size, ma_keys, ma_values;
	} dict_object;
	struct {
		uint64_t size, ob_fval;
	} float_object;
	struct {
		uint64_t size, lv_tag, ob_digit;
	} long_object;
	struct {
		uint64_t size, ob_size, ob_sval;
	} bytes_object;
	struct {
		uint64_t size, state, length, asciiobject_size;
	} unicode_object;
	struct {
		uint64_t size, collecting;
	} gc;
};

static bool off32(uint64_t v, uint32_t *out)
{
	if (v > (1u << 20))
		return false;
	*out = (uint32_t)v;
	return true;
}

/* 3.13: every offset the debug offsets publish, over the row from its headers. */
static const char *apply_debug_offsets(uint64_t runtime, uint64_t version_hex)
{
	const struct debug_offsets_313 *d = (const struct debug_offsets_313 *)(uintptr_t)runtime;
	struct gw_py_layout *l = &py.lay;
	bool ok;

	if (memcmp(d->cookie, "xdebugpy", 8) != 0)
		return "its _Py_DebugOffsets have no cookie";
	if (d->version >> 16 != version_hex >> 16)
		return "its _Py_DebugOffsets are of another version";
	if (d->free_threaded)
		return "a free-threaded build (its objects are laid out otherwise)";
	ok = off32(d->runtime_state.finalizing, &l->rt_finalizing) &&
	     off32(d->runtime_state.interpreters_head, &l->rt_interpreters_head) &&
	     off32(d->interpreter_state.next, &l->interp_next) &&
	     off32(d->interpreter_state.threads_head, &l->interp_threads_head) &&
	     off32(d->thread_state.next, &l->ts_next) &&
	     off32(d->thread_state.interp, &l->ts_interp) &&
	     off32(d->thread_state.current_frame, &l->ts_frame) &&
	     off32(d->thread_state.thread_id, &l->ts_thread_id) &&
	     off32(d->thread_state.native_thread_id, &l->ts_native_thread_id) &&
	     off32(d->interpreter_frame.previous, &l->fr_previous) &&
	     off32(d->interpreter_frame.executable, &l->fr_code) &&
	     off32(d->interpreter_frame.instr_ptr, &l->fr_instr) &&
	     off32(d->interpreter_frame.owner, &l->fr_owner) &&
	     off32(d->code_object.filename, &l->co_filename) &&
	     off32(d->code_object.qualname, &l->co_name) &&
	     off32(d->code_object.linetable, &l->co_linetable) &&
	     off32(d->code_object.firstlineno, &l->co_firstlineno) &&
	     off32(d->code_object.co_code_adaptive, &l->co_code) &&
	     off32(d->pyobject.ob_type, &l->ob_type) &&
	     off32(d->bytes_object.ob_size, &l->ob_size) &&
	     off32(d->bytes_object.ob_size, &l->bytes_size) &&
	     off32(d->bytes_object.ob_sval, &l->bytes_sval) &&
	     off32(d->unicode_object.state, &l->str_state) &&
	     off32(d->unicode_object.length, &l->str_length) &&
	     off32(d->unicode_object.asciiobject_size, &l->str_ascii_size);
	if (!ok)
		return "its _Py_DebugOffsets are out of range";
	/* PyCompactUnicodeObject: the ASCII object, then utf8_length and utf8 (3.12 on) */
	l->str_compact_size = l->str_ascii_size + 2 * sizeof(uint64_t);
	return NULL;
}

static const struct gw_py_layout *layout_for(unsigned version)
{
	for (size_t i = 0; i < sizeof(gw_py_layouts) / sizeof(gw_py_layouts[0]); i++)
		if (gw_py_layouts[i].version == version)
			return &gw_py_layouts[i];
	return NULL;
}

struct probe {
	bool found;
	const char *why; /* not NULL: found but refused */
	unsigned version;
};

/* Chooses the layout of the interpreter found in one object; returns why it cannot be read,
 * or NULL. */
static const char *choose(const struct dynsyms *d, uint64_t runtime, unsigned *ret_version)
{
	uint64_t vsym = sym_addr(d, "Py_Version", NULL), hex = 0, eval_size = 0;
	const struct gw_py_layout *l;
	unsigned version;

	if (vsym) {
		/* const unsigned long Py_Version = PY_VERSION_HEX */
		hex = *(const unsigned long *)(uintptr_t)vsym;
		version = (unsigned)(hex >> 16);
		snprintf(py.version_text, sizeof(py.version_text), "%u.%u.%u", version >> 8,
			 version & 0xff, (unsigned)(hex >> 8) & 0xff);
	} else if (sym_addr(d, "PyAIter_Check", NULL)) {
		version = 0x030a; /* PyAIter_Check is new in 3.10, Py_Version in 3.11 */
		snprintf(py.version_text, sizeof(py.version_text), "3.10");
	} else {
		snprintf(py.version_text, sizeof(py.version_text), "before 3.10");
		return "only 3.10 to 3.13 are read";
	}
	*ret_version = version;
	if (py.force_layout) {
		unsigned maj = 0, min = 0;

		if (sscanf(py.force_layout, "%u.%u", &maj, &min) != 2 ||
		    !(l = layout_for(maj << 8 | min)))
			return "GPUWHY_PYTHON_LAYOUT names no known layout";
		py.lay = *l;
	} else {
		if (!(l = layout_for(version)))
			return "only 3.10 to 3.13 are read";
		py.lay = *l;
		if (version >= 0x030d) {
			const char *why = apply_debug_offsets(runtime, hex);

			if (why)
				return why;
		}
	}
	py.runtime = runtime;
	py.code_type = sym_addr(d, "PyCode_Type", NULL);
	py.frame_type = sym_addr(d, "PyFrame_Type", NULL);
	py.str_type = sym_addr(d, "PyUnicode_Type", NULL);
	py.bytes_type = sym_addr(d, "PyBytes_Type", NULL);
	py.eval_start = sym_addr(d, "_PyEval_EvalFrameDefault", &eval_size);
	py.eval_end = py.eval_start + eval_size;
	if (!py.code_type || !py.str_type || !py.bytes_type ||
	    (py.lay.version == 0x030a && !py.frame_type))
		return "its type objects are not exported";
	return NULL;
}

static int probe_one(struct dl_phdr_info *info, size_t size, void *data)
{
	struct probe *p = data;
	struct dynsyms d;
	uint64_t runtime;

	(void)size;
	if (!dynsyms_of(info, &d) || !(runtime = sym_addr(&d, "_PyRuntime", NULL)))
		return 0;
	p->found = true;
	if (info->dlpi_name && *info->dlpi_name)
		snprintf(py.where, sizeof(py.where), "%s", info->dlpi_name);
	else if (readlink("/proc/self/exe", py.where, sizeof(py.where) - 1) <= 0)
		snprintf(py.where, sizeof(py.where), "the program");
	p->why = choose(&d, runtime, &p->version);
	return 1;
}

static void probe(uint32_t generation)
{
	struct probe p = {0};
	char text[512];
	bool expected = false;

	if (!atomic_compare_exchange_strong(&py.probing, &expected, true))
		return;
	if (atomic_load(&py.state) == PY_NONE && atomic_load(&py.probed_generation) != generation &&
	    gw_modules_walk_begin(false)) {
		dl_iterate_phdr(probe_one, &p);
		gw_modules_walk_end();
		atomic_store(&py.probed_generation, generation);
		if (p.found && p.why) {
			snprintf(text, sizeof(text),
				 "CPython %s (%s): %s, so stacks have native frames only",
				 py.version_text, py.where, p.why);
			note(GW_NOTE_WARNING, text);
			atomic_store(&py.state, PY_OFF);
		} else if (p.found) {
			atomic_store(&py.state, PY_PROBATION);
		}
	}
	atomic_store(&py.probing, false);
}

/* ---- the walk ---- */

/* Why a checked walk failed; NULL: it did not (or could not tell: no Python running). */
struct walk {
	const char *refused;
	bool frames; /* a frame was read */
};

static uint64_t thread_state(bool safe, struct walk *w)
{
	const struct gw_py_layout *l = &py.lay;
	struct {
		int initialized;
		unsigned key; /* pthread_key_t */
	} tss;
	uint64_t finalizing;

	if (!rd64(safe, py.runtime + l->rt_finalizing, &finalizing) ||
	    !rd(safe, &tss, py.runtime + l->rt_tss_key, sizeof(tss))) {
		w->refused = "_PyRuntime cannot be read";
		return 0;
	}
	if (finalizing || !tss.initialized)
		return 0; /* finalizing, or not yet initialized: no frames, nothing wrong */
	if (tss.initialized != 1 || tss.key >= PTHREAD_KEYS_MAX) {
		w->refused = "its GIL state's TSS key is not one";
		return 0;
	}
	return (uint64_t)(uintptr_t)pthread_getspecific((pthread_key_t)tss.key);
}

/* The thread state's ids are this thread's; in a checked walk, its interpreter one of the
 * runtime's. */
static bool thread_state_is_ours(bool safe, uint64_t ts, struct walk *w)
{
	const struct gw_py_layout *l = &py.lay;
	uint64_t ptid = 0, tid = 0, interp = 0, it = 0;
	unsigned n = 0;

	if (!rd64(safe, ts + l->ts_thread_id, &ptid) ||
	    ptid != (uint64_t)(uintptr_t)pthread_self() ||
	    (l->ts_native_thread_id &&
	     (!rd64(safe, ts + l->ts_native_thread_id, &tid) || tid != gw_thread_id()))) {
		w->refused = "its thread state is not the thread's";
		return false;
	}
	if (!safe)
		return true;
	if (!rd64(safe, ts + l->ts_interp, &interp) ||
	    !rd64(safe, py.runtime + l->rt_interpreters_head, &it)) {
		w->refused = "its thread state cannot be read";
		return false;
	}
	while (it && it != interp && n++ < 256)
		if (!rd64(safe, it + l->interp_next, &it))
			break;
	if (it != interp || !interp) {
		w->refused = "its thread state's interpreter is not the runtime's";
		return false;
	}
	return true;
}

/* A str object as UTF-8 (compact strings, as the compiler makes them); "" when not one. */
static void str_utf8(bool safe, uint64_t obj, char *out, size_t cap)
{
	const struct gw_py_layout *l = &py.lay;
	uint64_t type = 0, length = 0, data;
	uint32_t state = 0, kind;
	size_t o = 0;

	out[0] = '\0';
	if (!rd64(safe, obj + l->ob_type, &type) || type != py.str_type ||
	    !rd(safe, &state, obj + l->str_state, sizeof(state)) ||
	    !rd64(safe, obj + l->str_length, &length) || !(state >> l->str_compact_bit & 1))
		return;
	kind = state >> l->str_kind_bit & 7;
	if (kind != 1 && kind != 2 && kind != 4)
		return;
	if (length > STR_MAX)
		length = STR_MAX;
	data = obj + (state >> l->str_ascii_bit & 1 ? l->str_ascii_size : l->str_compact_size);
	if (!readable(safe, data, length * kind))
		return;
	for (uint64_t i = 0; i < length; i++) {
		const uint8_t *p = (const uint8_t *)(uintptr_t)data + i * kind;
		uint32_t c = p[0];

		if (kind >= 2)
			c |= (uint32_t)p[1] << 8;
		if (kind == 4)
			c |= (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
		if (o + 5 > cap)
			break;
		if (c < 0x80) {
			out[o++] = (char)c;
		} else if (c < 0x800) {
			out[o++] = (char)(0xc0 | c >> 6);
			out[o++] = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000 && (c < 0xd800 || c > 0xdfff)) {
			out[o++] = (char)(0xe0 | c >> 12);
			out[o++] = (char)(0x80 | (c >> 6 & 0x3f));
			out[o++] = (char)(0x80 | (c & 0x3f));
		} else if (c >= 0x10000 && c <= 0x10ffff) {
			out[o++] = (char)(0xf0 | c >> 18);
			out[o++] = (char)(0x80 | (c >> 12 & 0x3f));
			out[o++] = (char)(0x80 | (c >> 6 & 0x3f));
			out[o++] = (char)(0x80 | (c & 0x3f));
		} else {
			out[o++] = '?'; /* a lone surrogate */
		}
	}
	out[o] = '\0';
}

/* Emits the PYCODE record of a code object seen for the first time. */
static void emit_pycode(bool safe, uint64_t id, uint64_t filename, uint64_t name,
			uint64_t linetable, int first_line)
{
	const struct gw_py_layout *l = &py.lay;
	char file[STR_MAX * 4 + 8], func[STR_MAX + 8];
	uint64_t type = 0, len = 0;
	struct gw_rec_pycode rec = {
		.id = id,
		.version = py.lay.version,
		.first_line = first_line > 0 ? (uint64_t)first_line : 0,
	};

	str_utf8(safe, filename, file, sizeof(file));
	str_utf8(safe, name, func, sizeof(func) < STR_MAX ? sizeof(func) : STR_MAX);
	rec.file_id = file[0] ? gw_intern_string(GW_STRING_PYTHON_FILE, file) : 0;
	rec.function_id = func[0] ? gw_intern_string(GW_STRING_PYTHON_FUNCTION, func) : 0;
	if (rd64(safe, linetable + l->ob_type, &type) && type == py.bytes_type &&
	    rd64(safe, linetable + l->bytes_size, &len)) {
		if (len > GW_PYCODE_TABLE_MAX)
			rec.flags |= GW_PYCODE_TABLE_CUT;
		else if (readable(safe, linetable + l->bytes_sval, len))
			rec.line_table = (struct gw_bytes){
				(const uint8_t *)(uintptr_t)(linetable + l->bytes_sval),
				(uint32_t)len};
	}
	gw_emit(GW_REC_PYCODE, &rec);
}

/*
 * Code ids already seen, by key: a direct-mapped cache in front of the intern table, so that a
 * frame of a code object seen before costs a few loads. An entry is two words, the key and the
 * id, written as a seqlock whose sequence is the key: the writer clears the key, writes the
 * id, then the key; a reader takes the id only when it read the same key before and after it.
 */
#define CODE_CACHE_SLOTS 1024
static struct {
	_Atomic uint64_t key, id;
} code_cache[CODE_CACHE_SLOTS];

static uint64_t cached_code_id(uint64_t key)
{
	typeof(code_cache[0]) *e = &code_cache[(key ^ key >> 21) & (CODE_CACHE_SLOTS - 1)];
	uint64_t id;

	if (atomic_load_explicit(&e->key, memory_order_acquire) != key)
		return 0;
	/* acquire: the key is read again after the id, and an id read from a writer comes
	 * with that writer's cleared key (no fences: ThreadSanitizer does not model them) */
	id = atomic_load_explicit(&e->id, memory_order_acquire);
	return atomic_load_explicit(&e->key, memory_order_relaxed) == key ? id : 0;
}

static void cache_code_id(uint64_t key, uint64_t id)
{
	typeof(code_cache[0]) *e = &code_cache[(key ^ key >> 21) & (CODE_CACHE_SLOTS - 1)];

	/* the key is cleared before the id changes: the id's store releases the cleared key */
	atomic_store_explicit(&e->key, 0, memory_order_relaxed);
	atomic_store_explicit(&e->id, id, memory_order_release);
	atomic_store_explicit(&e->key, key, memory_order_release);
}

/* The id of a code object (checked to be one), its PYCODE record emitted the first time.
 * The key names the objects the code holds as well as its address: a code object freed and
 * another made at its address is a new key, never the old one's frames. */
static uint64_t code_id(bool safe, uint64_t code, struct walk *w)
{
	const struct gw_py_layout *l = &py.lay;
	uint64_t filename = 0, name = 0, linetable = 0, key;
	int first_line = 0;
	uint64_t id;
	bool fresh;

	if (!rd64(safe, code + l->co_filename, &filename) ||
	    !rd64(safe, code + l->co_name, &name) ||
	    !rd64(safe, code + l->co_linetable, &linetable) ||
	    !rd(safe, &first_line, code + l->co_firstlineno, sizeof(first_line))) {
		w->refused = "a code object cannot be read";
		return 0;
	}
	/* products of independent terms, not a chain: the walk is a chain of loads already */
	key = ((code ^ GW_HASH_SEED) * 0x9e3779b97f4a7c15ull) ^
	      ((filename ^ (uint64_t)(uint32_t)first_line << 32) * 0xc2b2ae3d27d4eb4full) ^
	      (name * 0x165667b19e3779f9ull) ^ (linetable * 0xd6e8feb86659fd93ull);
	key = (key ^ key >> 32) * 0x9e3779b97f4a7c15ull;
	key ^= key >> 29;
	key |= 1;
	if ((id = cached_code_id(key)))
		return id;
	id = gw_intern_pycode(key, &fresh);
	if (fresh)
		emit_pycode(safe, id, filename, name, linetable, first_line);
	if (id)
		cache_code_id(key, id);
	return id;
}

/*
 * The thread's Python frames, innermost first, into out (at most cap): returns how many, 0
 * when the thread runs no Python, -1 when a check failed (w->refused says which).
 */
static int walk(bool safe, uint64_t *out, unsigned cap, struct walk *w)
{
	const struct gw_py_layout *l = &py.lay;
	unsigned version = l->version;
	uint64_t ts = thread_state(safe, w), fp = 0;
	unsigned n = 0;

	if (!ts)
		return w->refused ? -1 : 0;
	if (!thread_state_is_ours(safe, ts, w))
		return -1;
	if (!rd64(safe, ts + l->ts_frame, &fp))
		goto unreadable;
	if (version == 0x030b || version == 0x030c) { /* the _PyCFrame of the running loop */
		if (fp && !rd64(safe, fp + l->cframe_current_frame, &fp))
			goto unreadable;
	}
	for (unsigned steps = 0; fp && steps < WALK_MAX && n < cap; steps++) {
		uint64_t code = 0, prev = 0, type = 0, units = 0, offset;
		uint8_t owner = 0, is_entry = 0;
		bool entry;

		if (!rd64(safe, fp + l->fr_previous, &prev) || !rd64(safe, fp + l->fr_code, &code))
			goto unreadable;
		if (version == 0x030a) {
			int lasti = 0;

			if (!rd64(safe, fp + l->ob_type, &type) || type != py.frame_type ||
			    !rd(safe, &lasti, fp + l->fr_instr, sizeof(lasti)))
				goto wrong;
			offset = lasti < 0 ? GW_PYFRAME_NO_OFFSET : (uint64_t)lasti * 2;
			entry = true; /* 3.10 runs every frame in a loop of its own */
		} else {
			uint64_t instr = 0;

			if (!rd(safe, &owner, fp + l->fr_owner, 1))
				goto unreadable;
			if (l->owner_cstack && owner == l->owner_cstack) {
				/* the loop's entry shim: the frame inside it was entered from C */
				if (n)
					out[n - 1] |= GW_PYFRAME_ENTRY;
				fp = prev;
				continue;
			}
			if (l->fr_is_entry && !rd(safe, &is_entry, fp + l->fr_is_entry, 1))
				goto unreadable;
			if (!rd64(safe, fp + l->fr_instr, &instr) ||
			    !rd64(safe, code + l->ob_type, &type) || type != py.code_type ||
			    !rd64(safe, code + l->ob_size, &units))
				goto wrong;
			offset = instr - (code + l->co_code);
			if (instr < code + l->co_code || offset >= units * 2) {
				int first = 0;

				/* a frame being set up has not reached its first instruction */
				if (l->co_first_traceable && owner != l->owner_generator &&
				    rd(safe, &first, code + l->co_first_traceable, sizeof(first)) &&
				    instr < code + l->co_code + (uint64_t)first * 2) {
					fp = prev;
					continue;
				}
				goto wrong;
			}
			entry = is_entry != 0;
		}
		if (version == 0x030a &&
		    (!rd64(safe, code + l->ob_type, &type) || type != py.code_type))
			goto wrong;
		out[n++] = GW_PYFRAME(code_id(safe, code, w), offset, entry);
		if (w->refused)
			return -1;
		w->frames = true;
		fp = prev;
	}
	return (int)n;

unreadable:
	w->refused = "its frames cannot be read";
	return -1;
wrong:
	w->refused = "its frames are not what its version lays out";
	return -1;
}

/* A walk on probation: read safely, checked; the first that reads a frame makes the layout
 * trusted, the first that fails turns Python frames off with one warning. */
static int probation_walk(uint64_t *out, unsigned cap)
{
	struct walk w = {0};
	int n;
	uint8_t b;
	char text[512];
	int expected = PY_PROBATION;

	if (!safe_read(&b, (uint64_t)(uintptr_t)&b, 1)) {
		w.refused = "process_vm_readv cannot read the process's own memory, so the "
			    "interpreter's cannot be checked";
		atomic_store(&py.reading_fails, true);
		n = -1;
	} else {
		n = walk(true, out, cap, &w);
	}
	if (n < 0) {
		if (atomic_compare_exchange_strong(&py.state, &expected, PY_OFF)) {
			snprintf(text, sizeof(text),
				 "CPython %s (%s): %s, so stacks have native frames only",
				 py.version_text, py.where, w.refused);
			note(GW_NOTE_WARNING, text);
		}
		return 0;
	}
	if (w.frames && atomic_compare_exchange_strong(&py.state, &expected, PY_ACTIVE)) {
		snprintf(text, sizeof(text), "CPython %s (%s): stacks carry its Python frames",
			 py.version_text, py.where);
		note(GW_NOTE_INFO, text);
	}
	return n;
}

static int python_frames(uint64_t *out, unsigned cap)
{
	int st = atomic_load_explicit(&py.state, memory_order_acquire);

	if (st == PY_ACTIVE) {
		struct walk w = {0};
		int n = walk(false, out, cap, &w);

		if (n < 0) {
			atomic_fetch_add_explicit(&py.lost, 1, memory_order_relaxed);
			return 0;
		}
		return n;
	}
	if (st == PY_OFF)
		return 0;
	if (st == PY_NONE) {
		uint32_t g = gw_modules_generation();

		if (g == atomic_load_explicit(&py.probed_generation, memory_order_relaxed))
			return 0;
		probe(g);
		st = atomic_load(&py.state);
		if (st != PY_PROBATION)
			return 0;
	}
	if (st == PY_PROBATION)
		return probation_walk(out, cap);
	return python_frames(out, cap);
}

uint32_t gw_python_merge(const uint64_t *native, uint32_t n, uint64_t *out, uint32_t cap)
{
	uint64_t frames[GW_PY_MAX_FRAMES];
	int np = python_frames(frames, GW_PY_MAX_FRAMES);
	uint32_t d = 0, p = 0;

	if (np <= 0)
		return 0;
	for (uint32_t i = 0; i < n && d < cap; i++) {
		if (p < (uint32_t)np && native[i] >= py.eval_start && native[i] < py.eval_end) {
			/* the frames this activation of the loop ran, up to the one it entered at */
			do
				out[d++] = frames[p];
			while (!(frames[p++] & GW_PYFRAME_ENTRY) && p < (uint32_t)np && d < cap);
			continue;
		}
		out[d++] = native[i];
	}
	while (p < (uint32_t)np && d < cap)
		out[d++] = frames[p++];
	return d;
}

void gw_python_exit_notes(void)
{
	uint64_t lost = atomic_load(&py.lost);
	char text[256];

	if (!lost)
		return;
	snprintf(text, sizeof(text),
		 "%llu stacks lost their Python frames to a check that failed (a thread state "
		 "not the thread's, a frame's code not a code object)",
		 (unsigned long long)lost);
	note(GW_NOTE_WARNING, text);
}

void gw_python_fork_child(void)
{
	int st = atomic_load(&py.state);

	atomic_store(&py.lost, 0);
	atomic_store(&py.probing, false);
	for (unsigned i = 0; i < CODE_CACHE_SLOTS; i++)
		atomic_store(&code_cache[i].key, 0);
	/* The child's trace states again what its parent's said. */
	if (st == PY_ACTIVE)
		atomic_store(&py.state, PY_PROBATION);
	else if (st == PY_OFF && !py.disabled)
		atomic_store(&py.state, PY_NONE), atomic_store(&py.probed_generation, 0);
}
