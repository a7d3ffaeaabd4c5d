/* SPDX-License-Identifier: MIT */
/*
 * Prints one row of capture/python-layouts.h: the offsets gpuwhy reads in a CPython 3.10-3.13
 * process, taken from that version's own (internal) headers. (3.13 publishes most of them in
 * _PyRuntime's _Py_DebugOffsets as well, and the capture takes those from the process; its
 * row gives what the debug offsets leave out.) Built by
 * capture/gen-python-layouts.sh once per version, with -DPy_BUILD_CORE and the version's
 * include directory; never linked into gpuwhy. A test builds it against the system's Python
 * headers and checks its row against the committed table.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#if PY_VERSION_HEX >= 0x030b0000
#include <internal/pycore_code.h>
#include <internal/pycore_frame.h>
#else
#include <frameobject.h>
#endif
#include <internal/pycore_interp.h>
#include <internal/pycore_runtime.h>

#if PY_VERSION_HEX < 0x030a0000 || PY_VERSION_HEX >= 0x030e0000
#error "3.10-3.13 only"
#endif

#define OFF(type, member) ((unsigned)offsetof(type, member))

/* The state bit-field's kind, compact and ascii bits, found rather than assumed. */
static unsigned state_bit(int which)
{
	PyASCIIObject o;
	unsigned word = 0, bit = 0;

	memset(&o, 0, sizeof(o));
	if (which == 0)
		o.state.kind = 1;
	else if (which == 1)
		o.state.compact = 1;
	else
		o.state.ascii = 1;
	memcpy(&word, &o.state, sizeof(word));
	while (bit < 32 && !(word >> bit & 1))
		bit++;
	return bit;
}

int main(void)
{
#if PY_VERSION_HEX >= 0x030c0000
	unsigned tss = OFF(_PyRuntimeState, autoTSSkey);
#else
	unsigned tss = OFF(_PyRuntimeState, gilstate.autoTSSkey);
#endif
#if PY_VERSION_HEX >= 0x030d0000
	/* the thread state points at its frame directly again */
	unsigned threads_head = OFF(PyInterpreterState, threads.head);
	unsigned native_thread_id = OFF(PyThreadState, native_thread_id);
	unsigned ts_frame = OFF(PyThreadState, current_frame);
	unsigned cframe_current = 0;
	unsigned fr_previous = OFF(_PyInterpreterFrame, previous);
	unsigned fr_code = OFF(_PyInterpreterFrame, f_executable);
	unsigned fr_instr = OFF(_PyInterpreterFrame, instr_ptr);
	unsigned fr_owner = OFF(_PyInterpreterFrame, owner);
	unsigned co_name = OFF(PyCodeObject, co_qualname);
	unsigned co_code = OFF(PyCodeObject, co_code_adaptive);
	unsigned co_first_traceable = OFF(PyCodeObject, _co_firsttraceable);
	unsigned owner_generator = FRAME_OWNED_BY_GENERATOR;
#elif PY_VERSION_HEX >= 0x030b0000
	unsigned threads_head = OFF(PyInterpreterState, threads.head);
	unsigned native_thread_id = OFF(PyThreadState, native_thread_id);
	unsigned ts_frame = OFF(PyThreadState, cframe);
	unsigned cframe_current = OFF(_PyCFrame, current_frame);
	unsigned fr_previous = OFF(_PyInterpreterFrame, previous);
	unsigned fr_code = OFF(_PyInterpreterFrame, f_code);
	unsigned fr_instr = OFF(_PyInterpreterFrame, prev_instr);
	unsigned fr_owner = OFF(_PyInterpreterFrame, owner);
	unsigned co_name = OFF(PyCodeObject, co_qualname);
	unsigned co_code = OFF(PyCodeObject, co_code_adaptive);
	unsigned co_first_traceable = OFF(PyCodeObject, _co_firsttraceable);
	unsigned owner_generator = FRAME_OWNED_BY_GENERATOR;
#else
	unsigned threads_head = OFF(PyInterpreterState, tstate_head);
	unsigned native_thread_id = 0; /* 3.10 records only the pthread id */
	unsigned ts_frame = OFF(PyThreadState, frame);
	unsigned cframe_current = 0;
	unsigned fr_previous = OFF(PyFrameObject, f_back);
	unsigned fr_code = OFF(PyFrameObject, f_code);
	unsigned fr_instr = OFF(PyFrameObject, f_lasti);
	unsigned fr_owner = 0;
	unsigned co_name = OFF(PyCodeObject, co_name);
	unsigned co_code = OFF(PyCodeObject, co_code); /* a bytes object in 3.10 */
	unsigned co_first_traceable = 0;
	unsigned owner_generator = 0;
#endif
#if PY_VERSION_HEX >= 0x030c0000
	unsigned fr_is_entry = 0;
	unsigned owner_cstack = FRAME_OWNED_BY_CSTACK;
	unsigned compact_size = (unsigned)sizeof(PyCompactUnicodeObject);
#elif PY_VERSION_HEX >= 0x030b0000
	unsigned fr_is_entry = OFF(_PyInterpreterFrame, is_entry);
	unsigned owner_cstack = 0;
	unsigned compact_size = (unsigned)sizeof(PyCompactUnicodeObject);
#else
	unsigned fr_is_entry = 0;
	unsigned owner_cstack = 0;
	unsigned compact_size = (unsigned)sizeof(PyCompactUnicodeObject);
#endif

	printf("\t/* %s, from its headers */\n", PY_VERSION);
	printf("\t{.version = 0x%04x,\n", (unsigned)(PY_VERSION_HEX >> 16));
	printf("\t .rt_finalizing = %u, .rt_interpreters_head = %u, .rt_tss_key = %u,\n",
	       OFF(_PyRuntimeState, _finalizing), OFF(_PyRuntimeState, interpreters.head), tss);
	printf("\t .interp_next = %u, .interp_threads_head = %u,\n", OFF(PyInterpreterState, next),
	       threads_head);
	printf("\t .ts_next = %u, .ts_interp = %u, .ts_frame = %u, .ts_thread_id = %u, "
	       ".ts_native_thread_id = %u, .cframe_current_frame = %u,\n",
	       OFF(PyThreadState, next), OFF(PyThreadState, interp), ts_frame,
	       OFF(PyThreadState, thread_id), native_thread_id, cframe_current);
	printf("\t .fr_previous = %u, .fr_code = %u, .fr_instr = %u, .fr_owner = %u, "
	       ".fr_is_entry = %u,\n",
	       fr_previous, fr_code, fr_instr, fr_owner, fr_is_entry);
	printf("\t .co_filename = %u, .co_name = %u, .co_linetable = %u, .co_firstlineno = %u, "
	       ".co_code = %u, .co_first_traceable = %u,\n",
	       OFF(PyCodeObject, co_filename), co_name, OFF(PyCodeObject, co_linetable),
	       OFF(PyCodeObject, co_firstlineno), co_code, co_first_traceable);
	printf("\t .ob_type = %u, .ob_size = %u,\n", OFF(PyObject, ob_type),
	       OFF(PyVarObject, ob_size));
	printf("\t .str_state = %u, .str_length = %u, .str_ascii_size = %u, "
	       ".str_compact_size = %u, .str_kind_bit = %u, .str_compact_bit = %u, "
	       ".str_ascii_bit = %u,\n",
	       OFF(PyASCIIObject, state), OFF(PyASCIIObject, length),
	       (unsigned)sizeof(PyASCIIObject), compact_size, state_bit(0), state_bit(1),
	       state_bit(2));
	printf("\t .bytes_size = %u, .bytes_sval = %u,\n", OFF(PyBytesObject, ob_base.ob_size),
	       OFF(PyBytesObject, ob_sval));
	printf("\t .owner_generator = %u, .owner_cstack = %u},\n", owner_generator, owner_cstack);
	return 0;
}
