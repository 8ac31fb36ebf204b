//! Where libjvm's exported symbols lie in a process.

use crate::error::JvmError;

/// Where each exported symbol of the `libjvm.so` that process `pid` maps lies in its
/// memory.
pub fn libjvm_symbols(pid: u32) -> Result<impl Fn(&str) -> Option<u64>, JvmError> {
    use causeway_procfs::elf::{Elf, segments};
    let maps = causeway_procfs::maps::read(pid).map_err(|_| JvmError::NotJvm)?;
    let m = maps
        .iter()
        .find(|m| m.path.ends_with("/libjvm.so"))
        .ok_or(JvmError::NotJvm)?;
    let path = m.path.clone();
    // A containerized JVM's libjvm is at a path of its own root: read it through the
    // process.
    let open = causeway_procfs::files::path_now(pid, m).ok_or(JvmError::NotJvm)?;
    let elf = Elf::read(&open).map_err(|_| JvmError::NotJvm)?;
    let base = segments::base_vaddr(elf.segments());
    let bias = segments::first_mapping_bias(&maps, &path, base).ok_or(JvmError::NotJvm)?;
    let (_, syms) = elf.into_tables();
    Ok(move |name: &str| syms.by_name(name).map(|s| s.address.wrapping_add(bias)))
}
