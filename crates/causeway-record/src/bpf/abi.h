/* The interface between the BPF programs and user space: the records sent through the
 * per-CPU ring buffers and the settings user space writes before load. Every type here
 * is kept in the object's BTF (config.h's abi_layouts), so the skeleton generates Rust
 * types and constants from it; src/records.rs and src/config.rs use those, and a test
 * checks the parser's offsets against them. Bump RECORD_ABI on any change. */
#ifndef CAUSEWAY_ABI_H
#define CAUSEWAY_ABI_H

#define RECORD_ABI 6

/* ---- settings, written into read-only data by user space before load ---- */

/* Which processes are recorded (`mode`). */
enum target_mode {
	MODE_FOLLOW = 0, /* tracked map filled by user space (-p, -- CMD), follows fork */
	MODE_COMM = 1, /* any process with target_comm, decided at its first event */
	MODE_ALL = 2, /* system-wide */
};

/* Event groups (`events`, a bit set). */
enum event_group {
	EV_SCHED = 1,
	EV_PROC = 2,
	EV_IRQ = 4,
	EV_SOFTIRQ = 8,
	EV_BLOCK = 16,
	EV_NET = 32,
	EV_SYSCALL = 64,
	EV_SIGNAL = 128, /* signal generate and deliver */
	EV_TIMER = 256, /* hrtimer arm, and expiry of timers a recorded thread armed */
	EV_SOCK = 512, /* sends on sockets, and which socket's data ended a wait */
	EV_GO = 1024, /* goroutines of Go programs: run, park, ready (uprobes) */
};

/* Which user frames a frame-pointer walk keeps (`stack_mode`; Uscope's modes). */
enum stack_scope {
	STACK_NONE = 0,
	STACK_APP = 1,
	STACK_APP_ALL = 2,
	STACK_LIBS = 3,
	STACK_ALL = 4,
};

/* Where stacks are taken (`stack_on`, a bit set). */
enum stack_place {
	STACK_ON_SWITCH = 1,
	STACK_ON_WAKER = 2,
	STACK_ON_SYSCALL = 4,
};

/* Which stacks get kernel frames (`kernel_stacks`). */
enum kernel_stacks {
	KSTACK_NONE = 0,
	KSTACK_AUTO = 1, /* where the kernel side explains the wait: D-state switch-outs,
			  * wakers in interrupt context or kernel threads, samples */
	KSTACK_ALL = 2,
};

/* How user stacks are unwound (`unwind`). */
enum unwind_mode {
	UNWIND_FP = 0, /* walk frame pointers in BPF */
	UNWIND_DWARF = 1, /* copy the stack window; user space unwinds with DWARF CFI */
};

/* ---- records ---- */

/* Sizes both sides use. */
enum abi_sizes {
	MAX_USER_FRAMES = 32,
	MAX_KERNEL_FRAMES = 48,
	MAX_RECORD = 768,
	COMM_LEN = 16,
	IRQ_NAME_LEN = 32,
	PATH_LEN = 128,
	/* Largest user stack window copied for DWARF unwinding (a per-CPU map value holds
	 * the record, and per-CPU values are limited to 32 KiB). */
	MAX_COPY = 16384,
	/* Bytes of a REC_USTACK record before the copied stack. */
	USTACK_HDR = 64,
	/* Stack words an entry of the unwind memo checks (ustack_memo). */
	MEMO_WORDS = 64,
	/* Layout of a CPU's spool (ring.h): where its producer offset, its consumer offset
	 * and its records start, and the room past the end of its records for one that
	 * starts just before it. */
	SPOOL_HEAD = 0,
	SPOOL_TAIL = 64,
	SPOOL_DATA = 128,
	SPOOL_SLACK = USTACK_HDR + MAX_COPY,
	/* Code ranges per process in the range table. */
	MAX_RANGES = 8,
	/* Go binaries whose goroutines can be followed at once (go_layouts slots). */
	GO_MAX_BINARIES = 64,
	/* A go_layout field the binary's runtime does not have. */
	GO_NO_FIELD = 0xffffffff,
	/* Goroutines read from one runtime.injectglist list. */
	GO_MAX_INJECT = 64,
	/* User frames of a goroutine's stack where it parks. */
	GO_PARK_FRAMES = 48,
};

enum rec_type {
	REC_SWITCH = 1,
	REC_WAKING = 2,
	REC_WAKEUP_NEW = 3,
	REC_FORK = 4,
	REC_EXEC = 5,
	REC_EXIT = 6,
	REC_IRQ_ENTRY = 7,
	REC_IRQ_EXIT = 8,
	REC_SOFTIRQ_ENTRY = 9,
	REC_SOFTIRQ_EXIT = 10,
	REC_BLOCK_ISSUE = 11,
	REC_BLOCK_COMPLETE = 12,
	REC_NET_XMIT = 13,
	REC_NET_RECV = 14,
	REC_SYS_ENTER = 15,
	REC_SYS_EXIT = 16,
	REC_TASK = 17,
	REC_MAPS_CHANGED = 18,
	REC_USTACK = 19, /* a copied user stack window; same ts and tid as its record */
	REC_SAMPLE = 20, /* an on-CPU sample: header and stack trailer only */
	REC_SIGNAL_GENERATE = 21, /* header: the sender (0 in interrupt context) */
	REC_SIGNAL_DELIVER = 22, /* header: the receiving thread */
	REC_TIMER_ARM = 23, /* header: the arming thread */
	REC_TIMER_EXPIRE = 24, /* header tid/tgid 0 */
	REC_SOCK_SEND = 25, /* header: the sending thread */
	REC_SOCK_READY = 26, /* follows its REC_WAKING (same ts); header: the current thread */
	REC_GO_RUN = 27, /* header: the thread that starts running the goroutine */
	REC_GO_PARK = 28, /* header: the thread the parking goroutine ran on */
	REC_GO_READY = 29, /* header: the thread whose code readied the goroutine */
	REC_GO_NETWAIT = 30, /* follows its REC_GO_PARK (same ts): the socket it waits on */
	REC_WAKE_READER = 31, /* a header alone, in a BPF ring: the spools filled (ring.h) */
};

/* Who ran the code that woke a thread. */
enum waker_kind {
	WAKER_THREAD = 0,
	WAKER_IRQ = 1,
	WAKER_SOFTIRQ = 2,
	WAKER_TIMER = 3, /* an hrtimer callback (sleep timeouts, timer expiry) */
	WAKER_UNKNOWN = 4,
};

/* Bits of rec_hdr.flags. */
enum rec_flag {
	REC_F_STACK = 1, /* a struct rec_stack and its frames follow the body */
};

/* Every record starts with this header; len covers header, body and stack. */
struct rec_hdr {
	__u64 ts;
	__u16 type;
	__u16 len;
	__u16 flags;
	__u16 pad;
	__u32 tid; /* the thread the record is about (for switch: prev) */
	__u32 tgid;
};

struct rec_switch {
	__u32 next_tid;
	__u32 next_tgid;
	__u32 prev_state; /* raw task __state */
	__u32 prev_exit_state;
	__u8 preempt;
	__u8 pad[7];
};

/* rec_hdr.tid / tgid are the waker (current) */
struct rec_wake {
	__u32 wakee_tid;
	__u32 wakee_tgid;
	__u32 target_cpu;
	__u32 waker_kind;
	__u32 irq_or_vec;
	__u32 pad;
};

/* A socket's two ends from the side of the thread that used it. IP addresses are
 * IPv6 or IPv4-mapped; a Unix socket's ends are keyed hashes of the kernel objects
 * (in the first 8 bytes), never addresses. Ports in host byte order. */
struct rec_flow {
	__u8 local_addr[16];
	__u8 remote_addr[16];
	__u16 local_port;
	__u16 remote_port;
	__u16 family;
	__u16 proto; /* IP protocol, or the socket type for Unix sockets */
};

/* rec_hdr.tid / tgid are the sender */
struct rec_sock_send {
	struct rec_flow flow;
	__u32 bytes;
	__u32 seq; /* TCP: write_seq after the send (valid when has_seq) */
	__u32 has_seq;
	__u32 pad;
};

/* A goroutine starts running on the header's thread (runtime.execute). */
struct rec_go_run {
	__u64 goid;
	__u64 parent_goid; /* 0: unknown (Go before 1.21) */
	__u64 start_pc; /* the goroutine's start function */
};

/* The goroutine running on the header's thread parks (runtime.gopark). */
struct rec_go_park {
	__u64 goid;
	__u32 reason; /* the runtime's waitReason number */
	__u32 slot; /* which binary's layout (names the reasons) */
};

/* A goroutine is made runnable by code on the header's thread (runtime.ready,
 * runtime.injectglist). */
struct rec_go_ready {
	__u64 goid;
	__u64 by_goid; /* the goroutine that thread carries; 0: the scheduler itself */
};

/* The socket a goroutine parked for network reads waits on (its receiving side). */
struct rec_go_netwait {
	struct rec_flow flow;
	__u64 goid;
	__u32 seq; /* TCP: rcv_nxt at the park (valid when has_seq) */
	__u32 has_seq;
};

/* Offsets of the Go runtime's fields in one binary (user space fills one slot per
 * probed binary; the uprobes carry the slot as their cookie). */
struct go_layout {
	__u32 g_goid;
	__u32 g_m;
	__u32 g_startpc;
	__u32 g_parent_goid; /* GO_NO_FIELD: absent */
	__u32 g_schedlink;
	__u32 m_curg;
	__u32 glist_head;
	__u32 pd_fd; /* runtime.pollDesc fields; GO_NO_FIELD: unknown */
	__u32 pd_rg;
	__u32 pd_wg;
	__u32 pd_self;
	__u32 io_wait; /* the "IO wait" reason number; GO_NO_FIELD: unknown */
};

/* rec_hdr.tid / tgid are the thread current when the data arrived */
struct rec_sock_ready {
	struct rec_flow flow;
	__u32 wakee_tid;
	__u32 seq; /* TCP: rcv_nxt (valid when has_seq) */
	__u32 has_seq;
	__u32 pad;
};

struct rec_fork {
	__u32 child_tid;
	__u32 child_tgid;
};

struct rec_exec {
	char comm[COMM_LEN];
	char filename[PATH_LEN];
};

struct rec_irq {
	__u32 irq;
	__s32 ret;
	char name[IRQ_NAME_LEN];
};

struct rec_softirq {
	__u32 vec;
	__u32 pad;
};

struct rec_block {
	__u64 sector;
	__u32 dev; /* major << 20 | minor */
	__u32 bytes;
	__u32 cmd_flags;
	__s32 error;
};

struct rec_net {
	char dev[COMM_LEN];
	__u32 bytes;
	__u32 pad;
};

struct rec_sys_enter {
	__u64 arg0;
	__u64 obj; /* keyed hash of the kernel object behind fd arg0, 0 if none */
	__u32 nr;
	__u32 obj_kind; /* enum obj_kind */
};

enum obj_kind {
	OBJ_NONE = 0,
	OBJ_PIPE = 1,
	OBJ_SOCKET = 2,
	OBJ_ANON = 3, /* eventfd, timerfd, signalfd, epoll: anonymous inodes */
	OBJ_FILE = 4,
};

struct rec_sys_exit {
	__s64 ret;
	__u32 nr;
	__u32 pad;
};

struct rec_signal {
	__u32 target_tid;
	__u32 target_tgid;
	__s32 sig;
	__s32 result; /* enum sig_result of the signal_generate tracepoint */
	__u32 group;
	__u32 pad;
};

struct rec_timer {
	__u64 timer; /* keyed hash of the hrtimer's address */
	__s64 expires; /* CLOCK_MONOTONIC ns, -1 for timers on another clock */
};

struct rec_task {
	char comm[COMM_LEN];
};

struct rec_maps_changed {
	__u32 reason; /* 1 exec, 2 executable mmap, 3 newly tracked */
	__u32 pad;
};

/* What a stack was taken for (the trace format's StackKind codes). */
enum stack_kind {
	STACK_KIND_SWITCH_OUT = 0,
	STACK_KIND_WAKER = 1,
	STACK_KIND_SYSCALL = 2,
	STACK_KIND_SAMPLE = 3,
	/* Any other event's: a signal's sender at the send (the format's Other). */
	STACK_KIND_OTHER = 4,
	/* A waker stack kept as one of a random sample of short waits' (format 1.6). */
	STACK_KIND_WAKER_SAMPLE = 5,
};

/* Trailer of records with REC_F_STACK. Frames: kernel ones first, then user ones. */
struct rec_stack {
	__u8 kind; /* enum stack_kind */
	__u8 flags; /* STK_F_* */
	__u8 n_user;
	__u8 n_kernel;
	__u32 pad;
};

/* Bits of rec_stack.flags. */
enum stack_flag {
	STK_F_USER_TRUNCATED = 1, /* the walk stopped on the budget, not at the stack end */
	STK_F_USER_FAILED = 2, /* no user registers or the first read failed */
	STK_F_SCANNED = 4, /* the first app frame was found by scanning, not by frame pointers */
	STK_F_KERNEL_TRUNCATED = 8,
	STK_F_COPIED = 16, /* the user stack was copied (REC_USTACK) for unwinding in user space */
	STK_F_USER_SKIPPED = 32, /* the ring was over 3/4 full: no copy, so events keep room */
	STK_F_USER_MEMO = 64, /* the user stack is one user space unwound before: a u64 after the
			       * frames holds its memo id (low half) and the copy flags (high) */
};

/* Body of REC_USTACK: the user registers the unwinder starts from, then `size` bytes
 * of the stack from sp up (the record is USTACK_HDR bytes before them). */
struct rec_ustack {
	__u64 ip;
	__u64 sp;
	__u64 bp;
	__u32 size;
	__u32 flags; /* USTK_F_* */
};

/* The unwind memo (map ustack_memo), filled by user space: a copy from this ip and sp
 * unwinds to the stack user space numbered `id` when the words at `off` hold `val`
 * (and, by `check`, rbp is `bp`, and the copy has this length and USTK_F_CUT /
 * USTK_F_TOP bits). An unwind is a function of its start registers, the words it reads
 * and, only where it ran into the copy's end, the copy's extent: so this is exact. */
struct memo_key {
	__u32 tgid;
	__u32 pad;
	__u64 ip;
	__u64 sp;
};

struct memo_val {
	__u32 id;
	__u16 n; /* words to check */
	__u16 span; /* bytes from sp that hold them */
	__u32 len; /* with MEMO_CHECK_EXTENT */
	__u16 flags; /* with MEMO_CHECK_EXTENT: the copy's USTK_F_CUT | USTK_F_TOP bits */
	__u16 check; /* MEMO_CHECK_* */
	__u64 bp; /* with MEMO_CHECK_BP */
	__u16 off[MEMO_WORDS]; /* byte offsets from sp */
	__u64 val[MEMO_WORDS];
};

/* What else than its words a memo entry checks. */
enum memo_check {
	MEMO_CHECK_BP = 1, /* rbp: the unwind read through it */
	MEMO_CHECK_EXTENT = 2, /* the copy's length and flags: the unwind ended at its end */
};

/* Bits of rec_ustack.flags. */
enum copy_flag {
	USTK_F_CUT = 1, /* the window ended before the stack's mapping did */
	USTK_F_NO_VMA = 2, /* the stack's mapping was not found; the window was shrunk to fit */
	USTK_F_RANGE_LOOKUP = 4, /* the stack's mapping was looked up (bpf_find_vma), not kept */
	USTK_F_RANGE_STALE = 8, /* the stack's range did not hold the window: dropped */
	USTK_F_TOP = 16, /* the window ends at the thread's starting stack pointer */
};

#endif
