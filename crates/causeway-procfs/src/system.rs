//! Facts about the machine's devices and kernel: block device names, network link
//! speeds, IRQ handler names, which tracepoints it has.

/// Block device names by `major:minor` (`254:0` -> `vda`), from `/sys/dev/block`.
pub fn block_devices() -> std::collections::BTreeMap<String, String> {
    let Ok(dir) = std::fs::read_dir("/sys/dev/block") else {
        return Default::default();
    };
    dir.filter_map(Result::ok)
        .filter_map(|e| {
            let target = std::fs::read_link(e.path()).ok()?;
            let name = target.file_name()?.to_string_lossy().into_owned();
            Some((e.file_name().to_string_lossy().into_owned(), name))
        })
        .collect()
}

/// The machine's IP addresses (`interface address`, loopback left out), as
/// `getifaddrs` lists them in this network namespace: what a trace keeps so that
/// several hosts' recordings can be told apart and their flows read.
pub fn host_addresses() -> Vec<String> {
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list it allocated, freed below.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut cur = head;
    while !cur.is_null() {
        // SAFETY: `cur` is a node of the list getifaddrs returned, not yet freed.
        let ifa = unsafe { &*cur };
        cur = ifa.ifa_next;
        if ifa.ifa_addr.is_null() || ifa.ifa_flags & libc::IFF_LOOPBACK as u32 != 0 {
            continue;
        }
        // SAFETY: ifa_addr points to a sockaddr whose family says which kind it is.
        let ip = unsafe {
            match i32::from((*ifa.ifa_addr).sa_family) {
                libc::AF_INET => {
                    let a = &*(ifa.ifa_addr as *const libc::sockaddr_in);
                    std::net::IpAddr::from(u32::from_be(a.sin_addr.s_addr).to_be_bytes())
                }
                libc::AF_INET6 => {
                    let a = &*(ifa.ifa_addr as *const libc::sockaddr_in6);
                    std::net::IpAddr::from(a.sin6_addr.s6_addr)
                }
                _ => continue,
            }
        };
        // SAFETY: ifa_name is a NUL-terminated string owned by the list.
        let name = unsafe { std::ffi::CStr::from_ptr(ifa.ifa_name) };
        out.push(format!("{} {ip}", name.to_string_lossy()));
    }
    // SAFETY: `head` came from getifaddrs and is freed once.
    unsafe { libc::freeifaddrs(head) };
    out.sort();
    out.dedup();
    out
}

/// Link speed of a network interface in Mbit/s, if it has one (virtual devices such as
/// `lo` do not).
pub fn link_mbps(dev: &str) -> Option<u64> {
    if dev.contains('/') || dev.contains("..") {
        return None;
    }
    let s = std::fs::read_to_string(format!("/sys/class/net/{dev}/speed")).ok()?;
    s.trim()
        .parse::<i64>()
        .ok()
        .filter(|&v| v > 0)
        .map(|v| v as u64)
}

/// Names of IRQ handlers, from `/sys/kernel/irq/N/actions`.
pub fn irq_names() -> Vec<(u32, String)> {
    let Ok(rd) = std::fs::read_dir("/sys/kernel/irq") else {
        return Vec::new();
    };
    rd.filter_map(|e| {
        let e = e.ok()?;
        let irq: u32 = e.file_name().to_str()?.parse().ok()?;
        let name = std::fs::read_to_string(e.path().join("actions")).ok()?;
        let name = name.trim();
        (!name.is_empty()).then(|| (irq, name.to_string()))
    })
    .collect()
}

/// Whether the kernel has these tracepoints (`group/name`; the socket ones came with
/// Linux 6.5): without one a recording still works, with less in it (wake-ups by the
/// network stack keep their device as waker; reclaim is not timed). Asked of tracefs
/// where it is mounted, else of the kernel's version (`since`).
pub fn has_tracepoints(names: &[&str], since: (u32, u32)) -> bool {
    let roots = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];
    for r in roots {
        let events = std::path::Path::new(r).join("events");
        if events.is_dir() {
            return names.iter().all(|n| events.join(n).exists());
        }
    }
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut parts = release.trim().split(['.', '-']);
    let major: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let minor: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    (major, minor) >= since
}
