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
 * Built against QEMU's plugin API version 1 (QEMU 6.0-8.1, Debian 12's
 * 7.2); the few declarations it needs are below, since distributions
 * do not ship qemu-plugin.h.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* QEMU plugin API, version 1 (include/qemu/qemu-plugin.h) */
typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t {
	const char *target_name;
	struct {
		int min;
		int cur;
	} version;
	bool system_emulation;
	union {
		struct {
			int smp_vcpus;
			int max_vcpus;
		} system;
	};
} qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_simple_cb_t)(qemu_plugin_id_t id);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index,
					    void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id,
					       struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
					      enum qemu_plugin_op op,
					      void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    qemu_plugin_vcpu_udata_cb_t cb,
					    enum qemu_plugin_cb_flags flags,
					    void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
						 size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
				    qemu_plugin_udata_cb_t cb, void *userdata);

#define EXPORT __attribute__((visibility("default")))
EXPORT int qemu_plugin_version = 1;
EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
			       int argc, char **argv);

/* nopl 0xdeadbeef(%rax): skbt-mark.c executes exactly these bytes */
static const unsigned char marker[] = { 0x0f, 0x1f, 0x80, 0xef, 0xbe, 0xad, 0xde };

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

		if (qemu_plugin_insn_size(insn) == sizeof(marker) &&
		    !memcmp(qemu_plugin_insn_data(insn), marker, sizeof(marker)))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, mark,
							       QEMU_PLUGIN_CB_NO_REGS,
							       NULL);
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
	const char *path = NULL;
	bool single = false;
	int i;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4))
			path = argv[i] + 4;
		else if (!strcmp(argv[i], "single=on"))
			single = true;
	}
	if (!path) {
		fprintf(stderr, "skbt-insn: usage: -plugin file=skbt-insn.so,out=FILE[,single=on]\n");
		return -1;
	}
	if (!info->system_emulation ||
	    (info->system.max_vcpus != 1 && !single)) {
		fprintf(stderr, "skbt-insn: one counter for the machine: needs system emulation with one vCPU (-smp 1), or single=on with -accel tcg,thread=single (or -icount)\n");
		return -1;
	}
	out = fopen(path, "a");
	if (!out) {
		perror(path);
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
