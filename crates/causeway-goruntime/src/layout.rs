//! Where the fields the recorder reads sit in the runtime's structures.

/// Byte offsets of the fields the recorder reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// `runtime.g.goid`.
    pub g_goid: u32,
    /// `runtime.g.m`.
    pub g_m: u32,
    /// `runtime.g.startpc`: the goroutine's start function.
    pub g_startpc: u32,
    /// `runtime.g.parentGoid` (Go 1.21+); `None` before.
    pub g_parent_goid: Option<u32>,
    /// `runtime.g.schedlink`: the next goroutine in a `gList`.
    pub g_schedlink: u32,
    /// `runtime.m.curg`: the user goroutine a thread carries.
    pub m_curg: u32,
    /// `runtime.gList.head`.
    pub glist_head: u32,
    /// `runtime.pollDesc`, to find the socket a goroutine waits on in network I/O;
    /// `None` if the DWARF lacks it (then network waits end by the device).
    pub poll: Option<PollLayout>,
}

/// Byte offsets in `runtime.pollDesc`: a goroutine parked for network I/O passes
/// `&pd.rg` (read) or `&pd.wg` (write) to `gopark`; `self` points back at the
/// descriptor, which tells the two apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PollLayout {
    /// `fd`: the file descriptor.
    pub fd: u32,
    /// `rg`: the reader's park word.
    pub rg: u32,
    /// `wg`: the writer's park word.
    pub wg: u32,
    /// `self`: the descriptor's own address.
    pub this: u32,
}
