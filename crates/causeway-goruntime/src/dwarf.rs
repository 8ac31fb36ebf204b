//! Field offsets of the runtime's structures, from the DWARF the Go linker writes
//! (compressed sections are inflated by `object`).

use crate::elf::GoElf;
use crate::error::Error;
use crate::layout::{Layout, PollLayout};
use gimli::{AttributeValue, EndianSlice, LittleEndian, Reader};
use object::{Object, ObjectSection};
use std::borrow::Cow;
use std::collections::HashMap;

/// The structures and fields read, as the DWARF names them.
const WANTED: &[(&str, &[&str])] = &[
    (
        "runtime.g",
        &["goid", "m", "startpc", "parentGoid", "schedlink"],
    ),
    ("runtime.m", &["curg"]),
    ("runtime.gList", &["head"]),
    ("runtime.pollDesc", &["fd", "rg", "wg", "self"]),
];

type Offsets = HashMap<(&'static str, &'static str), u32>;

/// The layout, or `None` if the file has no DWARF for the runtime's structures.
pub(crate) fn layout<'d, R: object::ReadRef<'d>>(
    file: &GoElf<'d, R>,
) -> Result<Option<Layout>, Error> {
    let load = |id: gimli::SectionId| -> Result<Cow<'_, [u8]>, Error> {
        Ok(match file.obj.section_by_name(id.name()) {
            Some(s) => s.uncompressed_data()?,
            None => Cow::Borrowed(&[][..]),
        })
    };
    let sections = gimli::DwarfSections::load(load)?;
    let dwarf = sections.borrow(|s| EndianSlice::new(s, LittleEndian));
    let found = offsets(&dwarf)?;
    let get = |s, f| found.get(&(s, f)).copied();
    let (Some(g_goid), Some(g_m), Some(g_startpc), Some(g_schedlink), Some(m_curg), Some(head)) = (
        get("runtime.g", "goid"),
        get("runtime.g", "m"),
        get("runtime.g", "startpc"),
        get("runtime.g", "schedlink"),
        get("runtime.m", "curg"),
        get("runtime.gList", "head"),
    ) else {
        return Ok(None);
    };
    let poll = match (
        get("runtime.pollDesc", "fd"),
        get("runtime.pollDesc", "rg"),
        get("runtime.pollDesc", "wg"),
        get("runtime.pollDesc", "self"),
    ) {
        (Some(fd), Some(rg), Some(wg), Some(this)) => Some(PollLayout { fd, rg, wg, this }),
        _ => None,
    };
    Ok(Some(Layout {
        g_goid,
        g_m,
        g_startpc,
        g_parent_goid: get("runtime.g", "parentGoid"),
        g_schedlink,
        m_curg,
        glist_head: head,
        poll,
    }))
}

fn offsets<R: Reader>(dwarf: &gimli::Dwarf<R>) -> Result<Offsets, Error> {
    let mut out = Offsets::new();
    let mut units = dwarf.units();
    while let Some(header) = units.next()? {
        let unit = dwarf.unit(header)?;
        let mut entries = unit.entries();
        // The structure being read, while its members follow at depth + 1.
        let mut current: Option<(&'static (&'static str, &'static [&'static str]), isize)> = None;
        while let Some(entry) = entries.next_dfs()? {
            let depth = entry.depth();
            if let Some((_, d)) = current
                && depth <= d
            {
                current = None;
            }
            match entry.tag() {
                gimli::DW_TAG_structure_type => {
                    let Some(name) = entry.attr_value(gimli::DW_AT_name) else {
                        continue;
                    };
                    let name = dwarf.attr_string(&unit, name)?;
                    let name = name.to_string_lossy()?;
                    current = WANTED.iter().find(|(s, _)| *s == name).map(|w| (w, depth));
                }
                gimli::DW_TAG_member => {
                    let Some(((sname, fields), d)) = current else {
                        continue;
                    };
                    if depth != d + 1 {
                        continue;
                    }
                    let Some(name) = entry.attr_value(gimli::DW_AT_name) else {
                        continue;
                    };
                    let name = dwarf.attr_string(&unit, name)?;
                    let name = name.to_string_lossy()?;
                    let Some(&field) = fields.iter().find(|f| **f == name) else {
                        continue;
                    };
                    let off = match entry.attr_value(gimli::DW_AT_data_member_location) {
                        Some(AttributeValue::Udata(v)) => v,
                        Some(AttributeValue::Data1(v)) => v.into(),
                        Some(AttributeValue::Data2(v)) => v.into(),
                        Some(AttributeValue::Data4(v)) => v.into(),
                        Some(AttributeValue::Data8(v)) => v,
                        Some(AttributeValue::Sdata(v)) => v as u64,
                        _ => continue,
                    };
                    if let Ok(off) = u32::try_from(off) {
                        out.entry((sname, field)).or_insert(off);
                    }
                }
                _ => {}
            }
        }
    }
    Ok(out)
}
