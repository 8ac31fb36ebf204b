//! HotSpot's own description of its structures: the `gHotSpotVMStructs` and
//! `gHotSpotVMTypes` tables that libjvm exports for debuggers (the serviceability
//! agent reads them). Every field offset and static address the walk needs comes from
//! them, so one reader serves every JDK build that exports them, without a table of
//! offsets per version.

use crate::error::JvmError;
use crate::mem::Memory;
use std::collections::HashMap;

/// One field of a HotSpot type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Field {
    /// Offset in its type (non-static fields).
    pub(crate) offset: u64,
    /// Address (static fields).
    pub(crate) address: u64,
}

/// The tables as read from one JVM.
#[derive(Debug, Default)]
pub(crate) struct VmStructs {
    /// By (type name, field name).
    fields: HashMap<(String, String), Field>,
    /// Type sizes by name.
    sizes: HashMap<String, u64>,
}

/// Entries read at most: a guard against a table without its terminating entry.
const MAX_ENTRIES: u64 = 20_000;

impl VmStructs {
    /// Read the tables; `sym` gives the address in the process of each of [`SYMBOLS`].
    pub(crate) fn read(
        mem: &dyn Memory,
        sym: &dyn Fn(&str) -> Option<u64>,
    ) -> Result<VmStructs, JvmError> {
        let var = |name: &'static str| -> Result<u64, JvmError> {
            let at = sym(name).ok_or(JvmError::NoSymbol(name))?;
            mem.u64(at).ok_or(JvmError::Unreadable(name))
        };
        let mut out = VmStructs::default();
        let (base, stride) = (
            var("gHotSpotVMStructs")?,
            var("gHotSpotVMStructEntryArrayStride")?,
        );
        let type_off = var("gHotSpotVMStructEntryTypeNameOffset")?;
        let field_off = var("gHotSpotVMStructEntryFieldNameOffset")?;
        let static_off = var("gHotSpotVMStructEntryIsStaticOffset")?;
        let offset_off = var("gHotSpotVMStructEntryOffsetOffset")?;
        let addr_off = var("gHotSpotVMStructEntryAddressOffset")?;
        if stride == 0 || base == 0 {
            return Err(JvmError::Unreadable("gHotSpotVMStructs"));
        }
        for i in 0..MAX_ENTRIES {
            let e = base + i * stride;
            let tname = mem
                .u64(e + type_off)
                .ok_or(JvmError::Unreadable("a VMStructs entry"))?;
            if tname == 0 {
                break;
            }
            let fname = mem.u64(e + field_off).unwrap_or(0);
            let (Some(t), Some(f)) = (mem.cstr(tname, 256), mem.cstr(fname, 256)) else {
                continue;
            };
            let is_static = mem.u32(e + static_off).unwrap_or(0) != 0;
            let field = Field {
                offset: if is_static {
                    0
                } else {
                    mem.u64(e + offset_off).unwrap_or(0)
                },
                address: if is_static {
                    mem.u64(e + addr_off).unwrap_or(0)
                } else {
                    0
                },
            };
            out.fields.insert((t, f), field);
        }
        let (base, stride) = (
            var("gHotSpotVMTypes")?,
            var("gHotSpotVMTypeEntryArrayStride")?,
        );
        let tname_off = var("gHotSpotVMTypeEntryTypeNameOffset")?;
        let size_off = var("gHotSpotVMTypeEntrySizeOffset")?;
        if stride == 0 || base == 0 {
            return Err(JvmError::Unreadable("gHotSpotVMTypes"));
        }
        for i in 0..MAX_ENTRIES {
            let e = base + i * stride;
            let tname = mem
                .u64(e + tname_off)
                .ok_or(JvmError::Unreadable("a VMTypes entry"))?;
            if tname == 0 {
                break;
            }
            if let Some(t) = mem.cstr(tname, 256) {
                out.sizes.insert(t, mem.u64(e + size_off).unwrap_or(0));
            }
        }
        Ok(out)
    }

    /// A non-static field's offset: the first of `types` that has it (a field moves
    /// between classes across versions: `CompiledMethod::_method` became
    /// `nmethod::_method`).
    pub(crate) fn offset(&self, types: &[&str], field: &str) -> Result<u64, JvmError> {
        types
            .iter()
            .find_map(|t| self.fields.get(&(t.to_string(), field.to_string())))
            .map(|f| f.offset)
            .ok_or_else(|| JvmError::NoField(format!("{}::{field}", types.join("|"))))
    }

    /// A static field's address.
    pub(crate) fn address(&self, ty: &str, field: &str) -> Result<u64, JvmError> {
        self.fields
            .get(&(ty.to_string(), field.to_string()))
            .map(|f| f.address)
            .filter(|&a| a != 0)
            .ok_or_else(|| JvmError::NoField(format!("{ty}::{field}")))
    }

    /// A type's size.
    pub(crate) fn size(&self, ty: &str) -> Result<u64, JvmError> {
        self.sizes
            .get(ty)
            .copied()
            .ok_or_else(|| JvmError::NoField(format!("sizeof({ty})")))
    }
}
