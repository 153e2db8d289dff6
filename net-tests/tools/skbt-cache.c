// SPDX-License-Identifier: GPL-2.0
/*
 * skbt-cache: a QEMU TCG plugin that runs every data access of the
 * guest (loads and stores, kernel and user) through a simulated cache
 * and writes the running counts to a file each time the guest executes
 * the marker instruction of skbt-mark, as skbt-insn does for
 * instructions.  The difference between two marks is what the guest's
 * accesses between them would have missed in that cache.
 *
 *   qemu-system-x86_64 ... -plugin file=skbt-cache.so,out=FILE
 *
 * One line per mark: "ACCESSES L1D_MISSES L2_MISSES", running totals.
 * With pcs=FILE also, at each mark, where the accesses since the
 * previous mark came from: "mark N" and then one "PC ACCESSES L1D L2"
 * line per guest instruction address that accessed memory (a study's
 * tool: symbolise PC with the guest's /proc/kallsyms).
 *
 * The model is the data side of an AMD Zen 4 core (EPYC 9004): L1D
 * 32 KiB, 8-way; L2 1 MiB, 8-way, unified but fed only data here; 64-byte
 * lines; both indexed by guest physical address (as the hardware's L2
 * is; Zen 4's L1D is virtually indexed but its index bits lie within the
 * 4 KiB page offset, so it is the same).  Replacement is true LRU (the
 * hardware's is a pseudo-LRU); write-allocate; an L1D miss looks up L2,
 * and a line is filled into both (no inclusion or victim traffic
 * modelled, no prefetcher: a streaming access pattern misses where real
 * hardware would prefetch).  An access that crosses a line counts
 * once per line.  Accesses to MMIO are not counted.  Instruction
 * fetches are not modelled.
 *
 * One model for the machine: exact with one vCPU, or with several run
 * by one host thread in turn (single=on with -accel tcg,thread=single),
 * as for skbt-insn.  Its known answer (guest program skbt-walk, the
 * kernel group's cache-plugin-known-answer) is a buffer walked line by
 * line: inside L1D nothing misses, between L1D and L2 every access
 * misses L1D only, past L2 every access misses both.
 *
 * Built against QEMU's plugin API version 1 (skbt-plugin.h).
 */
#include <stdlib.h>

#include "skbt-plugin.h"

#define LINE_SHIFT	6
#define WAYS		8
#define L1_SETS		(32 * 1024 / 64 / WAYS)		/* 64 */
#define L2_SETS		(1024 * 1024 / 64 / WAYS)	/* 2048 */

/*
 * A set holds its lines' numbers (address >> LINE_SHIFT) + 1, most
 * recently used first; 0 is an empty way.
 */
struct cache {
	unsigned int sets;
	uint64_t (*line)[WAYS];
};

static uint64_t l1_lines[L1_SETS][WAYS];
static uint64_t l2_lines[L2_SETS][WAYS];
static struct cache l1 = { L1_SETS, l1_lines };
static struct cache l2 = { L2_SETS, l2_lines };
static uint64_t accesses, l1_misses, l2_misses;
static FILE *out, *pcs;
static unsigned long marks;

/* pcs=FILE: the counts of one translated instruction */
struct insn_counts {
	uint64_t pc, accesses, l1_misses, l2_misses;
};
static struct insn_counts **insns;
static size_t n_insns, max_insns;

/* Looks LINE up in C, makes it the set's most recent; true on a hit. */
static bool cache_access(struct cache *c, uint64_t line)
{
	uint64_t *set = c->line[line % c->sets];
	uint64_t tag = line + 1;
	unsigned int i;
	bool hit;

	for (i = 0; i < WAYS - 1 && set[i] != tag; i++)
		;
	/* i: the hit's way, or the last (least recent) way on a miss */
	hit = set[i] == tag;

	memmove(&set[1], &set[0], i * sizeof(set[0]));
	set[0] = tag;
	return hit;
}

static void line_access(uint64_t line, struct insn_counts *c)
{
	accesses++;
	if (c)
		c->accesses++;
	if (cache_access(&l1, line))
		return;
	l1_misses++;
	if (c)
		c->l1_misses++;
	if (cache_access(&l2, line))
		return;
	l2_misses++;
	if (c)
		c->l2_misses++;
}

static void mem_access(unsigned int vcpu_index, qemu_plugin_meminfo_t info,
		       uint64_t vaddr, void *userdata)
{
	struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, vaddr);
	uint64_t addr = vaddr, first, last;

	(void)vcpu_index;
	if (hw) {
		if (qemu_plugin_hwaddr_is_io(hw))
			return;
		addr = qemu_plugin_hwaddr_phys_addr(hw);
	}
	first = addr >> LINE_SHIFT;
	last = (addr + (1u << qemu_plugin_mem_size_shift(info)) - 1) >> LINE_SHIFT;
	line_access(first, userdata);
	if (last != first)
		line_access(last, userdata);
}

static void mark(unsigned int vcpu_index, void *userdata)
{
	(void)vcpu_index;
	(void)userdata;
	fprintf(out, "%" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
		accesses, l1_misses, l2_misses);
	fflush(out);
	if (!pcs)
		return;
	fprintf(pcs, "mark %lu\n", ++marks);
	for (size_t i = 0; i < n_insns; i++) {
		struct insn_counts *c = insns[i];

		if (!c->accesses)
			continue;
		fprintf(pcs, "%" PRIx64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
			c->pc, c->accesses, c->l1_misses, c->l2_misses);
		c->accesses = c->l1_misses = c->l2_misses = 0;
	}
	fflush(pcs);
}

/* pcs=FILE: a counter for INSN (one per translation), or NULL */
static struct insn_counts *insn_counts(struct qemu_plugin_insn *insn)
{
	struct insn_counts *c;

	if (!pcs)
		return NULL;
	if (n_insns == max_insns) {
		size_t n = max_insns ? 2 * max_insns : 65536;
		struct insn_counts **p = realloc(insns, n * sizeof(*p));

		if (!p)
			return NULL;
		insns = p;
		max_insns = n;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->pc = qemu_plugin_insn_vaddr(insn);
	insns[n_insns++] = c;
	return c;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);

	(void)id;
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		qemu_plugin_register_vcpu_mem_cb(insn, mem_access,
						 QEMU_PLUGIN_CB_NO_REGS,
						 QEMU_PLUGIN_MEM_RW,
						 insn_counts(insn));
		skbt_watch_marker(insn, mark);
	}
}

static void at_exit(qemu_plugin_id_t id, void *userdata)
{
	(void)id;
	(void)userdata;
	fclose(out);
	if (pcs)
		fclose(pcs);
}

int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
			int argc, char **argv)
{
	const char *pcs_path = NULL;

	out = skbt_plugin_open("skbt-cache", info, argc, argv, "pcs", &pcs_path);
	if (!out)
		return -1;
	if (pcs_path) {
		pcs = fopen(pcs_path, "a");
		if (!pcs) {
			perror(pcs_path);
			return -1;
		}
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
