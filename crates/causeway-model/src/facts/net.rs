//! Per-device network traffic (wPerf's NIC pseudo threads need how busy each device was
//! and which threads sent on it).

use causeway_format::Tid;
use std::collections::BTreeMap;

/// Traffic of one network device over the recording.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NetTraffic {
    /// Bytes handed to the device for transmission, by sending thread.
    pub tx_by_tid: BTreeMap<Tid, u64>,
    /// Bytes received.
    pub rx_bytes: u64,
}
