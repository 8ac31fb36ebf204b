//! Tracepoint record layouts, from the `format` descriptions the kernel publishes
//! (`/sys/kernel/tracing/events/<system>/<event>/format`) and perf copies into its
//! file (the tracing-data header section), and the fields of one raw record read by
//! name through them.
//!
//! A description reads:
//!
//! ```text
//! name: sched_switch
//! ID: 316
//! format:
//!     field:unsigned short common_type;  offset:0;  size:2;  signed:0;
//!     field:pid_t prev_pid;  offset:24;  size:4;  signed:1;
//!     field:__data_loc char[] name;  offset:12;  size:4;  signed:0;
//! print fmt: ...
//! ```
//!
//! A `__data_loc` field holds a 32-bit word: the string's offset in the record in the
//! low half, its length in the high half.

use std::collections::HashMap;

/// One field of a record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Field {
    pub name: String,
    pub offset: usize,
    pub size: usize,
    /// A `__data_loc` string (offset and length in the record).
    pub data_loc: bool,
    /// A fixed character array (`char comm[16]`).
    pub chars: bool,
}

/// The layout of one tracepoint's records.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Format {
    /// Event name without its system (`sched_switch`).
    pub name: String,
    pub fields: Vec<Field>,
}

impl Format {
    fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// Parse one `field:` line.
fn parse_field(line: &str) -> Option<Field> {
    let mut decl = "";
    let (mut offset, mut size) = (None, None);
    for part in line.trim().split(';') {
        let part = part.trim();
        if let Some(d) = part.strip_prefix("field:") {
            decl = d.trim();
        } else if let Some(o) = part.strip_prefix("offset:") {
            offset = o.trim().parse().ok();
        } else if let Some(s) = part.strip_prefix("size:") {
            size = s.trim().parse().ok();
        }
    }
    // The name is the declaration's last word, without an array suffix.
    let last = decl.split_whitespace().last()?;
    let name = last.split('[').next()?.to_string();
    Some(Field {
        name,
        offset: offset?,
        size: size?,
        data_loc: decl.starts_with("__data_loc"),
        chars: decl.starts_with("char ") && last.contains('['),
    })
}

/// Every description in `text` (one or many, as the tracing-data section holds them),
/// by event id.
pub(crate) fn parse_formats(text: &str) -> HashMap<u64, Format> {
    let mut out = HashMap::new();
    let mut cur: Option<(u64, Format)> = None;
    let mut name = String::new();
    for line in text.lines() {
        if let Some(n) = line.strip_prefix("name: ") {
            if let Some((id, f)) = cur.take() {
                out.insert(id, f);
            }
            name = n.trim().to_string();
        } else if let Some(id) = line.strip_prefix("ID: ") {
            if let Ok(id) = id.trim().parse() {
                cur = Some((
                    id,
                    Format {
                        name: std::mem::take(&mut name),
                        fields: Vec::new(),
                    },
                ));
            }
        } else if line.trim_start().starts_with("field:")
            && let (Some((_, f)), Some(field)) = (cur.as_mut(), parse_field(line))
        {
            f.fields.push(field);
        } else if line.starts_with("print fmt:")
            && let Some((id, f)) = cur.take()
        {
            out.insert(id, f);
        }
    }
    if let Some((id, f)) = cur {
        out.insert(id, f);
    }
    out
}

/// The description of `system:event` from this machine's tracefs, for files whose
/// tracing-data section is missing.
pub(crate) fn from_tracefs(event: &str) -> Option<Format> {
    let (system, name) = event.split_once(':')?;
    ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
        .iter()
        .find_map(|root| {
            std::fs::read_to_string(format!("{root}/events/{system}/{name}/format")).ok()
        })
        .and_then(|t| parse_formats(&t).into_values().next())
}

/// One raw record read through its format.
pub(crate) struct RawRecord<'a> {
    pub data: &'a [u8],
    pub format: &'a Format,
}

impl<'a> RawRecord<'a> {
    fn bytes(&self, f: &Field) -> Option<&'a [u8]> {
        self.data.get(f.offset..f.offset.checked_add(f.size)?)
    }

    /// An integer field (1 to 8 bytes, little-endian), sign-extended if negative
    /// values are wanted by the caller through `i64`.
    pub fn uint(&self, name: &str) -> Option<u64> {
        let f = self.format.field(name)?;
        let b = self.bytes(f)?;
        if b.is_empty() || b.len() > 8 {
            return None;
        }
        let mut v = [0u8; 8];
        v[..b.len()].copy_from_slice(b);
        Some(u64::from_le_bytes(v))
    }

    /// A signed integer field.
    pub fn int(&self, name: &str) -> Option<i64> {
        let f = self.format.field(name)?;
        let v = self.uint(name)?;
        let bits = f.size * 8;
        Some(if bits < 64 && v >> (bits - 1) & 1 == 1 {
            (v | !0u64 << bits) as i64
        } else {
            v as i64
        })
    }

    /// Element `i` of an array of 8-byte integers (`args[6]`).
    pub fn array_u64(&self, name: &str, i: usize) -> Option<u64> {
        let f = self.format.field(name)?;
        let at = f.offset.checked_add(i * 8)?;
        if i * 8 + 8 > f.size {
            return None;
        }
        let b = self.data.get(at..at + 8)?;
        Some(u64::from_le_bytes(b.try_into().ok()?))
    }

    /// A string field (a `__data_loc` string or a character array), up to its NUL.
    pub fn string(&self, name: &str) -> Option<&'a str> {
        let f = self.format.field(name)?;
        let b = if f.data_loc {
            let loc = self.uint(name)? as u32;
            let (off, len) = ((loc & 0xffff) as usize, (loc >> 16) as usize);
            self.data.get(off..off.checked_add(len)?)?
        } else if f.chars {
            self.bytes(f)?
        } else {
            return None;
        };
        let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        std::str::from_utf8(&b[..end]).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SWITCH: &str = "name: sched_switch\nID: 316\nformat:\n\
        \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
        \tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\
        \tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\
        \tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n\
        \tfield:__data_loc char[] name;\toffset:40;\tsize:4;\tsigned:0;\n\
        \nprint fmt: \"prev_comm=%s\"\n\
        name: softirq_entry\nID: 12\nformat:\n\
        \tfield:unsigned int vec;\toffset:8;\tsize:4;\tsigned:0;\n\nprint fmt: \"vec=%u\"\n";

    #[test]
    fn formats_and_fields_are_read() {
        let fm = parse_formats(SWITCH);
        assert_eq!(fm.len(), 2);
        let f = &fm[&316];
        assert_eq!(f.name, "sched_switch");
        assert_eq!(f.fields.len(), 5);
        assert!(f.fields[1].chars && !f.fields[1].data_loc);
        assert!(f.fields[4].data_loc);
        assert_eq!(fm[&12].fields[0].name, "vec");

        let mut data = vec![0u8; 56];
        data[8..12].copy_from_slice(b"bash");
        data[24..28].copy_from_slice(&(-5i32).to_le_bytes());
        data[32..40].copy_from_slice(&0x100u64.to_le_bytes());
        // "eth0" at offset 48, length 5 (with its NUL).
        data[40..44].copy_from_slice(&(48u32 | 5 << 16).to_le_bytes());
        data[48..53].copy_from_slice(b"eth0\0");
        let r = RawRecord {
            data: &data,
            format: f,
        };
        assert_eq!(r.string("prev_comm"), Some("bash"));
        assert_eq!(r.int("prev_pid"), Some(-5));
        assert_eq!(r.uint("prev_state"), Some(0x100));
        assert_eq!(r.string("name"), Some("eth0"));
        assert_eq!(r.uint("missing"), None);
        // A truncated record gives nothing rather than a panic.
        let short = RawRecord {
            data: &data[..20],
            format: f,
        };
        assert_eq!(short.int("prev_pid"), None);
        assert_eq!(short.string("name"), None);
    }
}
