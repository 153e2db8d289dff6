// SPDX-License-Identifier: GPL-2.0
/*
 * skbt-insn: a QEMU TCG plugin that counts the instructions a guest
 * executes and writes the running count to a file each time the guest
 * executes the marker instruction of skbt-mark (a nop with a
 * displacement no compiler emits).  The rig's service-demand pass puts
 * a mark before and after a transfer in each guest: the difference is
 * what that guest executed in between, whatever the host's timing did
 * to the guest clock.
 *
 *   qemu-system-x86_64 ... -plugin file=skbt-insn.so,out=FILE
 *
 * One line per mark: the count.  Counted per translated block as it is
 * entered (an inline add, cheap); a block left early by an exception
 * counts whole.  One counter for the machine, the sum over its vCPUs:
 * exact with one vCPU, or with several when one host thread runs them
 * all in turn (-accel tcg,thread=single, which -icount implies), since
 * then no two inline adds race.  With more than one vCPU the plugin
 * loads only when told so (single=on); the rig passes it together with
 * thread=single.  Instructions a vCPU spins on a lock held by another
 * count too: the figure is the machine's work, contention included.
 *
 * Built against QEMU's plugin API version 1 (skbt-plugin.h).
 */
#include "skbt-plugin.h"

static uint64_t count;
static FILE *out;

static void mark(unsigned int vcpu_index, void *userdata)
{
	(void)vcpu_index;
	(void)userdata;
	fprintf(out, "%" PRIu64 "\n", count);
	fflush(out);
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);

	(void)id;
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &count, n);
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		skbt_watch_marker(insn, mark);
	}
}

static void at_exit(qemu_plugin_id_t id, void *userdata)
{
	(void)id;
	(void)userdata;
	fclose(out);
}

int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
			int argc, char **argv)
{
	out = skbt_plugin_open("skbt-insn", info, argc, argv, NULL, NULL);
	if (!out)
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
