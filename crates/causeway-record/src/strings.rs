//! The recorder's string table: strings numbered in first-seen order.

use causeway_format::StringId;
use std::collections::HashMap;

/// Strings numbered in first-seen order; id 0 is the empty string.
#[derive(Debug)]
pub struct Strings {
    list: Vec<String>,
    ids: HashMap<String, StringId>,
}

impl Default for Strings {
    fn default() -> Self {
        let mut s = Strings {
            list: Vec::new(),
            ids: HashMap::new(),
        };
        s.intern("");
        s
    }
}

impl Strings {
    /// The id of `s`, adding it if new.
    pub fn intern(&mut self, s: &str) -> StringId {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = StringId(self.list.len() as u32);
        self.list.push(s.to_owned());
        self.ids.insert(s.to_owned(), id);
        id
    }

    /// The string with this id.
    pub fn get(&self, id: StringId) -> &str {
        self.list.get(id.0 as usize).map_or("", String::as_str)
    }

    /// All strings, by id.
    pub fn all(&self) -> &[String] {
        &self.list
    }
}
