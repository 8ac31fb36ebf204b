//! The user call site of a stack.

use causeway_format::{FrameSpace, StackId, Tables};

/// Name of the call site of a user stack (see the crate documentation), or
/// `[no stack]`.
pub fn call_site(tables: &Tables, user: Option<StackId>) -> String {
    let Some(stack) = user.and_then(|u| tables.stack(u)) else {
        return "[no stack]".to_string();
    };
    let named = |f: &causeway_format::Frame| {
        let s = tables.string(f.symbol);
        (!s.is_empty()).then(|| s.to_string())
    };
    let frames = stack.frames.iter().filter_map(|&f| tables.frame(f));
    let in_program = frames.clone().find(|f| {
        let FrameSpace::User { tgid } = f.space else {
            return false;
        };
        let module = tables.string(f.module);
        !module.is_empty()
            && tables
                .processes
                .iter()
                .any(|p| p.tgid == tgid && tables.string(p.exe) == module)
    });
    in_program
        .and_then(named)
        .or_else(|| frames.clone().find_map(named))
        .unwrap_or_else(|| "[unnamed]".to_string())
}
