/* SPDX-License-Identifier: MIT */
/* Offline symbolization of recorded stacks from the trace's module map (elfutils libdwfl). */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize.h"
#include "util.h"

struct gw_sym_module {
	char *path;
	uint64_t bias, start, size;
	bool skip; /* one of ours or the CUDA stack: never a user frame */
};

struct gw_symbolizer {
	Dwfl *dwfl;
	bool reported;
	struct gw_vec modules; /* struct gw_sym_module */
};

static char *debuginfo_path;
static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static bool module_is_skipped(const char *path)
{
	static const char *const skip[] = {"libgpuwhy", "libcudart", "libcupti", "libcuda.",
					   "libcuda-",	"libnvidia", "libgpusim"};
	const char *b = base_name(path);

	if (strstr(path, "/gpusim/"))
		return true;
	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (strncmp(b, skip[i], strlen(skip[i])) == 0)
			return true;
	return false;
}

int gw_symbolizer_new(struct gw_symbolizer **ret)
{
	struct gw_symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->dwfl = dwfl_begin(&offline_callbacks);
	if (s->dwfl)
		dwfl_report_begin(s->dwfl);
	*ret = s;
	return 0;
}

int gw_symbolizer_add_module(struct gw_symbolizer *s, const char *path, uint64_t bias,
			     uint64_t start, uint64_t size)
{
	struct gw_sym_module *m;

	if (!s || !path)
		return 0;
	m = gw_vec_push(&s->modules, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->path = strdup(path);
	if (!m->path) {
		s->modules.len--;
		return -ENOMEM;
	}
	m->bias = bias;
	m->start = start;
	m->size = size;
	m->skip = module_is_skipped(path);
	/* The main program may be recorded with an empty path; vdso and friends have no file. */
	if (s->dwfl && path[0] == '/' && access(path, R_OK) == 0)
		dwfl_report_elf(s->dwfl, base_name(path), path, -1, bias, false);
	return 0;
}

static const struct gw_sym_module *module_of(const struct gw_symbolizer *s, uint64_t ip)
{
	const struct gw_sym_module *mods = s ? s->modules.data : NULL;
	size_t n = s ? s->modules.len : 0;

	for (size_t i = 0; i < n; i++)
		if (ip >= mods[i].start && ip < mods[i].start + mods[i].size)
			return &mods[i];
	return NULL;
}

/* nvcc's and the toolkit's own headers: code there is the CUDA API's, not the user's. */
static bool cuda_header(const char *file)
{
	static const char *const names[] = {"cuda_runtime.h", "cuda_runtime_api.h",
					    "device_functions.h", "host_runtime.h",
					    "cuda_device_runtime_api.h"};
	const char *b = base_name(file);

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(b, names[i]) == 0)
			return true;
	return strstr(file, "/cuda") && strstr(file, "/include/");
}

/* When pc is in code inlined from a CUDA header (cudaMalloc<T> templates), the line that
 * matters is where the user's code called it: the innermost inline call site outside them. */
static void inline_call_site(Dwfl_Module *dm, uint64_t pc, bool any, const char **file, int *line)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(dm, pc, &bias), *scopes = NULL;
	Dwarf_Files *files;
	size_t nfiles;
	int n;

	if (!cu || dwarf_getsrcfiles(cu, &files, &nfiles) != 0)
		return;
	n = dwarf_getscopes(cu, pc - bias, &scopes);
	for (int i = 0; i < n; i++) {
		Dwarf_Attribute at;
		Dwarf_Word fidx, ln;
		const char *f;

		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue;
		if (!dwarf_attr(&scopes[i], DW_AT_call_file, &at) || dwarf_formudata(&at, &fidx))
			continue;
		if (!dwarf_attr(&scopes[i], DW_AT_call_line, &at) || dwarf_formudata(&at, &ln))
			continue;
		f = dwarf_filesrc(files, fidx, NULL, NULL);
		if (f && (any || !cuda_header(f))) {
			*file = f;
			*line = (int)ln;
			break;
		}
	}
	free(scopes);
}

/* The raw symbol name of a frame, or NULL. */
static const char *frame_symbol(struct gw_symbolizer *s, uint64_t ip)
{
	uint64_t pc = ip ? ip - 1 : 0;
	Dwfl_Module *dm = s && s->dwfl ? dwfl_addrmodule(s->dwfl, pc) : NULL;

	return dm ? dwfl_module_addrname(dm, pc) : NULL;
}

/* One frame as text, and field by field in d. */
static char *frame_text(struct gw_symbolizer *s, uint64_t ip, const struct gw_sym_module *m,
			bool after_stub, struct gw_frame_detail *d)
{
	/* Return addresses point after the call; ip - 1 is inside it. */
	uint64_t pc = ip ? ip - 1 : 0;
	Dwfl_Module *dm = s && s->dwfl ? dwfl_addrmodule(s->dwfl, pc) : NULL;
	const char *fn = dm ? dwfl_module_addrname(dm, pc) : NULL;
	const char *file = NULL;
	int line = 0;
	char *dfn = NULL, *text;

	if (dm) {
		Dwfl_Line *l = dwfl_module_getsrc(dm, pc);

		if (l)
			file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
		if (file && (after_stub || cuda_header(file)))
			inline_call_site(dm, pc, after_stub, &file, &line);
	}
	if (fn)
		dfn = gw_demangle(fn);
	if (dfn && file)
		text = gw_strdupf("%s (%s:%d)", dfn, base_name(file), line);
	else if (dfn)
		text = gw_strdupf("%s (%s)", dfn, m ? base_name(m->path) : "?");
	else if (m)
		text = gw_strdupf("%s+0x%" PRIx64, base_name(m->path), ip - m->bias);
	else
		text = gw_strdupf("0x%" PRIx64, ip);
	*d = (struct gw_frame_detail){
		.lang = GW_FRAME_NATIVE,
		.function = dfn,
		.file = file ? strdup(file) : NULL,
		.line = line > 0 ? (unsigned)line : 0,
		.module = m ? strdup(base_name(m->path)) : NULL,
	};
	if (!text || (file && !d->file) || (m && !d->module)) {
		gw_frame_detail_clear(d);
		free(text);
		return NULL;
	}
	return text;
}

int gw_symbolize_frame(struct gw_symbolizer *s, uint64_t ip, char **text, struct gw_frame_detail *d,
		       bool *skipped)
{
	const struct gw_sym_module *m;

	if (s && s->dwfl && !s->reported) {
		dwfl_report_end(s->dwfl, NULL, NULL);
		s->reported = true;
	}
	m = module_of(s, ip);
	*skipped = m && m->skip;
	*text = frame_text(s, ip, m, false, d);
	return *text ? 0 : -ENOMEM;
}

void gw_frame_detail_clear(struct gw_frame_detail *d)
{
	free(d->function);
	free(d->file);
	free(d->module);
	memset(d, 0, sizeof(*d));
}

int gw_symbolize_site(struct gw_symbolizer *s, const uint64_t *ips, unsigned depth,
		      struct gw_site *site)
{
	unsigned first = depth, n = 0;
	bool after_stub = false;

	if (s && s->dwfl && !s->reported) {
		dwfl_report_end(s->dwfl, NULL, NULL);
		s->reported = true;
	}
	for (unsigned i = 0; i < depth; i++) {
		const struct gw_sym_module *m = module_of(s, ips[i]);
		const char *fn;

		if (m && m->skip)
			continue;
		/* nvcc's launch stub, and the kernel's host wrapper that calls it, are generated
		 * code: the user's launch is the frame below them. */
		fn = frame_symbol(s, ips[i]);
		if (fn && strstr(fn, "__device_stub_")) {
			const char *wrapper = i + 1 < depth ? frame_symbol(s, ips[i + 1]) : NULL;

			if (wrapper && wrapper[0] == '_' && strstr(fn, wrapper))
				i++;
			/* The kernel's wrapper is usually inlined into the caller: the frame's
			 * line is the __global__ declaration, its inline call site the launch. */
			after_stub = true;
			continue;
		}
		first = i;
		break;
	}
	if (first == depth) {
		site->text = strdup(depth ? "(inside the CUDA libraries)" : "(no stack)");
		return site->text ? 0 : -ENOMEM;
	}
	/* The first user frame and up to 7 frames below it. */
	n = depth - first < 8 ? depth - first : 8;
	site->frames = calloc(n, sizeof(*site->frames));
	site->details = calloc(n, sizeof(*site->details));
	if (!site->frames || !site->details)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		const struct gw_sym_module *m = module_of(s, ips[first + i]);

		site->frames[i] =
			frame_text(s, ips[first + i], m, i == 0 && after_stub, &site->details[i]);
		if (!site->frames[i])
			return -ENOMEM;
		site->n_frames = i + 1;
	}
	site->lang = GW_FRAME_NATIVE;
	site->line = site->details[0].line;
	site->offset = ips[first] - (module_of(s, ips[first]) ? module_of(s, ips[first])->bias : 0);
	if ((site->details[0].function && !(site->function = strdup(site->details[0].function))) ||
	    (site->details[0].file && !(site->file = strdup(site->details[0].file))) ||
	    (site->details[0].module && !(site->module = strdup(site->details[0].module))))
		return -ENOMEM;
	site->text = strdup(site->frames[0]);
	return site->text ? 0 : -ENOMEM;
}

void gw_symbolizer_free(struct gw_symbolizer *s)
{
	struct gw_sym_module *mods;

	if (!s)
		return;
	mods = s->modules.data;
	for (size_t i = 0; i < s->modules.len; i++)
		free(mods[i].path);
	gw_vec_free(&s->modules);
	if (s->dwfl)
		dwfl_end(s->dwfl);
	free(s);
}

void gw_site_clear(struct gw_site *site)
{
	if (!site)
		return;
	free(site->text);
	free(site->function);
	free(site->file);
	free(site->module);
	free(site->native);
	for (unsigned i = 0; i < site->n_frames; i++) {
		free(site->frames[i]);
		if (site->details)
			gw_frame_detail_clear(&site->details[i]);
	}
	free(site->frames);
	free(site->details);
	memset(site, 0, sizeof(*site));
}
