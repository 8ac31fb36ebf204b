// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Configuration the user space sets before load, and the record layouts kept in BTF.
 * Part of recorder.bpf.c, included there in order; not a standalone header. */
#ifndef CAUSEWAY_CONFIG_H
#define CAUSEWAY_CONFIG_H

/* ---- configuration, set by user space before load ---- */





const volatile __u32 self_tgid = 0;
const volatile __u32 mode = MODE_FOLLOW;
const volatile char target_comm[COMM_LEN] = {};
const volatile __u32 events = 0;
const volatile __u32 stack_mode = STACK_APP_ALL;
const volatile __u32 stack_depth = 8;
const volatile __u32 stack_on = STACK_ON_SWITCH | STACK_ON_WAKER | STACK_ON_SYSCALL;
const volatile __u32 kernel_stacks = KSTACK_AUTO;
const volatile __u64 obj_key = 0;
const volatile __u32 unwind = UNWIND_FP;
/* Look copied stacks up in the unwind memo (ustack_memo) before sending them. */
const volatile __u32 unwind_memo = 0;
/* Waker stacks of short waits (wake_sampling.h): a wake-up ending a wait shorter than
 * waker_sample_min_ns keeps its user stack one time in waker_sample_one_in; a
 * threshold of 0 keeps every one. */
const volatile __u64 waker_sample_min_ns = 0;
const volatile __u32 waker_sample_one_in = 1;
/* Bytes of each CPU's BPF ring buffer (all the same size): one query less per record. */
const volatile __u64 ring_bytes = 1 << 22;
/* Bytes of records each CPU's spool holds (a power of two; 0: no spools, every record
 * goes to the BPF ring buffers). */
const volatile __u64 spool_bytes = 0;

/* Every record layout, kept in the object's BTF (and so in the generated Rust
 * skeleton's types) though no program reads it: the user-space parser in records.rs
 * is tested against these sizes and field offsets, so the two sides cannot drift. */
struct abi_layouts {
	struct rec_hdr hdr;
	struct rec_switch switch_;
	struct rec_wake wake;
	struct rec_fork fork;
	struct rec_exec exec;
	struct rec_irq irq;
	struct rec_softirq softirq;
	struct rec_block block;
	struct rec_net net;
	struct rec_sys_enter sys_enter;
	struct rec_sys_exit sys_exit;
	struct rec_task task;
	struct rec_signal signal;
	struct rec_timer timer;
	struct rec_sock_send sock_send;
	struct rec_sock_ready sock_ready;
	struct rec_go_run go_run;
	struct rec_go_park go_park;
	struct rec_go_ready go_ready;
	struct rec_go_netwait go_netwait;
	struct rec_maps_changed maps_changed;
	struct rec_stack stack;
	struct rec_ustack ustack;
	struct memo_key memo_key;
	struct memo_val memo_val;
	/* The enums, so their values reach the skeleton's types too. */
	enum rec_type rec_type;
	enum waker_kind waker_kind;
	enum obj_kind obj_kind;
	enum stack_kind stack_kind;
	enum target_mode target_mode;
	enum event_group event_group;
	enum stack_scope stack_scope;
	enum stack_place stack_place;
	enum kernel_stacks kernel_stacks_mode;
	enum unwind_mode unwind_mode;
	enum abi_sizes abi_sizes;
	enum rec_flag rec_flag;
	enum stack_flag stack_flag;
	enum copy_flag copy_flag;
	enum memo_check memo_check;
};
const volatile struct abi_layouts abi_layouts __attribute__((used)) = {};
const volatile __u32 stack_window = 8192; /* bytes, a power of two <= MAX_COPY */
#endif
