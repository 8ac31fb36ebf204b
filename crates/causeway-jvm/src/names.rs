//! A Java method's name from its `Method*`, spelled as the JVM's perf map spells it
//! (`void java.lang.Thread.run()`), so an interpreted frame and a compiled frame of
//! the same method read the same in every answer.

use crate::layout::Layout;
use crate::mem::Memory;

/// The text of a HotSpot `Symbol` (modified UTF-8, read lossily).
fn symbol(mem: &dyn Memory, l: &Layout, sym: u64) -> Option<String> {
    if sym == 0 {
        return None;
    }
    let len = mem.u16(sym + l.symbol_length)? as usize;
    let mut b = vec![0u8; len];
    mem.read(sym + l.symbol_body, &mut b)
        .then(|| String::from_utf8_lossy(&b).into_owned())
}

/// The name of the method at `method`: return type, class, name and parameter types.
pub(crate) fn method_name(mem: &dyn Memory, l: &Layout, method: u64) -> Option<String> {
    let cm = mem.u64(method + l.method_const).filter(|&p| p != 0)?;
    let pool = mem.u64(cm + l.const_constants).filter(|&p| p != 0)?;
    let holder = mem.u64(pool + l.pool_holder).filter(|&p| p != 0)?;
    let class = symbol(mem, l, mem.u64(holder + l.klass_name)?)?;
    let entry = |index: u16| mem.u64(pool + l.pool_size + index as u64 * 8);
    let name = symbol(mem, l, entry(mem.u16(cm + l.const_name_index)?)?)?;
    let signature = symbol(mem, l, entry(mem.u16(cm + l.const_signature_index)?)?)?;
    let (params, ret) = java_signature(&signature)?;
    Some(format!(
        "{ret} {}.{name}({})",
        class.replace('/', "."),
        params.join(", ")
    ))
}

/// Parameter types and return type of a method descriptor (`(J[BLjava/lang/String;)V`
/// → `["long", "byte[]", "java.lang.String"]`, `"void"`).
pub(crate) fn java_signature(desc: &str) -> Option<(Vec<String>, String)> {
    let inner = desc.strip_prefix('(')?;
    let (params, ret) = inner.split_once(')')?;
    let mut out = Vec::new();
    let mut rest = params;
    while !rest.is_empty() {
        let (t, tail) = one_type(rest)?;
        out.push(t);
        rest = tail;
    }
    let (r, tail) = one_type(ret)?;
    tail.is_empty().then_some((out, r))
}

/// The first type of a descriptor and what follows it.
fn one_type(s: &str) -> Option<(String, &str)> {
    let mut dims = 0;
    let mut s = s;
    while let Some(t) = s.strip_prefix('[') {
        dims += 1;
        s = t;
    }
    let (base, rest) = match s.as_bytes().first()? {
        b'L' => {
            let (class, rest) = s[1..].split_once(';')?;
            (class.replace('/', "."), rest)
        }
        c => {
            let name = match c {
                b'B' => "byte",
                b'C' => "char",
                b'D' => "double",
                b'F' => "float",
                b'I' => "int",
                b'J' => "long",
                b'S' => "short",
                b'Z' => "boolean",
                b'V' => "void",
                _ => return None,
            };
            (name.to_string(), &s[1..])
        }
    };
    Some((base + &"[]".repeat(dims), rest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::fake::FakeMem;

    #[test]
    fn descriptors_read_as_java_types() {
        assert_eq!(java_signature("()V"), Some((vec![], "void".into())));
        assert_eq!(
            java_signature("(J[BLjava/lang/String;[[I)Ljava/lang/Object;"),
            Some((
                vec![
                    "long".into(),
                    "byte[]".into(),
                    "java.lang.String".into(),
                    "int[][]".into()
                ],
                "java.lang.Object".into()
            ))
        );
        assert_eq!(java_signature("(Q)V"), None);
        assert_eq!(java_signature("(I"), None);
    }

    #[test]
    fn a_method_is_named_from_its_constant_pool() {
        let l = crate::tests::layout();
        let mut m = FakeMem::default();
        let sym = |m: &mut FakeMem, at: u64, s: &str| {
            m.put_u16(at, s.len() as u16);
            m.put(at + 6, s.as_bytes());
        };
        m.put_u64(0x100 + 8, 0x200); // Method -> ConstMethod
        m.put_u64(0x200 + 8, 0x300); // ConstMethod -> ConstantPool
        m.put_u16(0x200 + 34, 2);
        m.put_u16(0x200 + 36, 3);
        m.put_u64(0x300 + 24, 0x400); // pool holder
        m.put_u64(0x300 + 72 + 16, 0x500);
        m.put_u64(0x300 + 72 + 24, 0x600);
        m.put_u64(0x400 + 16, 0x700);
        sym(&mut m, 0x500, "syncLoop");
        sym(&mut m, 0x600, "(Ljava/nio/channels/FileChannel;J)V");
        sym(&mut m, 0x700, "org/example/Commit$Sync");
        assert_eq!(
            method_name(&m, &l, 0x100).as_deref(),
            Some("void org.example.Commit$Sync.syncLoop(java.nio.channels.FileChannel, long)")
        );
        assert_eq!(method_name(&m, &l, 0x180), None, "unreadable method");
    }
}
