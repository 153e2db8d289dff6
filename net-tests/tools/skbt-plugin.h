/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the rig's QEMU TCG plugins (skbt-insn, skbt-cache) share: the
 * declarations of QEMU's plugin API version 1 they use (QEMU 6.0-8.1,
 * Debian 12's 7.2; distributions do not ship qemu-plugin.h), the marker
 * instruction of skbt-mark, and their common options.
 */
#ifndef SKBT_PLUGIN_H
#define SKBT_PLUGIN_H

#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* QEMU plugin API, version 1 (include/qemu/qemu-plugin.h) */
typedef uint64_t qemu_plugin_id_t;
typedef uint32_t qemu_plugin_meminfo_t;
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
struct qemu_plugin_hwaddr;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
enum qemu_plugin_mem_rw {
	QEMU_PLUGIN_MEM_R = 1,
	QEMU_PLUGIN_MEM_W,
	QEMU_PLUGIN_MEM_RW,
};
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index,
					    void *userdata);
typedef void (*qemu_plugin_vcpu_mem_cb_t)(unsigned int vcpu_index,
					  qemu_plugin_meminfo_t info,
					  uint64_t vaddr, void *userdata);
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
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn,
				      qemu_plugin_vcpu_mem_cb_t cb,
				      enum qemu_plugin_cb_flags flags,
				      enum qemu_plugin_mem_rw rw,
				      void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
						 size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
unsigned int qemu_plugin_mem_size_shift(qemu_plugin_meminfo_t info);
struct qemu_plugin_hwaddr *qemu_plugin_get_hwaddr(qemu_plugin_meminfo_t info,
						  uint64_t vaddr);
bool qemu_plugin_hwaddr_is_io(const struct qemu_plugin_hwaddr *haddr);
uint64_t qemu_plugin_hwaddr_phys_addr(const struct qemu_plugin_hwaddr *haddr);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
				    qemu_plugin_udata_cb_t cb, void *userdata);

#define EXPORT __attribute__((visibility("default")))
EXPORT int qemu_plugin_version = 1;
EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
			       int argc, char **argv);

/* nopl 0xdeadbeef(%rax): skbt-mark.c executes exactly these bytes */
static const unsigned char skbt_marker[] = { 0x0f, 0x1f, 0x80, 0xef, 0xbe, 0xad, 0xde };

/* Calls MARK each time the guest executes INSN, if it is the marker. */
static inline void skbt_watch_marker(struct qemu_plugin_insn *insn,
				     qemu_plugin_vcpu_udata_cb_t mark)
{
	if (qemu_plugin_insn_size(insn) == sizeof(skbt_marker) &&
	    !memcmp(qemu_plugin_insn_data(insn), skbt_marker, sizeof(skbt_marker)))
		qemu_plugin_register_vcpu_insn_exec_cb(insn, mark,
						       QEMU_PLUGIN_CB_NO_REGS,
						       NULL);
}

/*
 * The options every rig plugin takes, out=FILE (appended to) and
 * single=on (several vCPUs, run by one host thread in turn), plus
 * KEY=VALUE for one more (KEY NULL: none; *VALUE stays NULL unless
 * given).  One set of counts serves the machine, so several vCPUs need
 * single=on.  Returns OUT opened, or NULL after saying why on stderr.
 */
static inline FILE *skbt_plugin_open(const char *name, const qemu_info_t *info,
				     int argc, char **argv,
				     const char *key, const char **value)
{
	const char *path = NULL;
	size_t klen = key ? strlen(key) : 0;
	bool single = false;
	FILE *out;
	int i;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4))
			path = argv[i] + 4;
		else if (!strcmp(argv[i], "single=on"))
			single = true;
		else if (key && !strncmp(argv[i], key, klen) && argv[i][klen] == '=')
			*value = argv[i] + klen + 1;
	}
	if (!path) {
		fprintf(stderr, "%s: usage: -plugin file=%s.so,out=FILE%s%s%s[,single=on]\n",
			name, name, key ? "[," : "", key ? key : "", key ? "=FILE]" : "");
		return NULL;
	}
	if (!info->system_emulation ||
	    (info->system.max_vcpus != 1 && !single)) {
		fprintf(stderr, "%s: one count for the machine: needs system emulation with one vCPU (-smp 1), or single=on with -accel tcg,thread=single (or -icount)\n",
			name);
		return NULL;
	}
	out = fopen(path, "a");
	if (!out)
		perror(path);
	return out;
}

#endif
