//! Facts about the machine's devices: block device names, network link speeds, IRQ
//! handler names.

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
