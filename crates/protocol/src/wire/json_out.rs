//! Typed answers written as JSON, in either of two styles: the JSON
//! protocol's body (maps as objects), and the Query protocol's JSON
//! rendering for a Query request with `Accept: application/json` (the XML
//! document's structure: maps as arrays of `{key name: key, value name:
//! value}` entries, as on the XML wire, and a few members named as AWS
//! names them there). Strings go through the fast escaper of
//! [`crate::json_writer`]: message bodies are most of an answer's bytes.

use std::collections::BTreeMap;

use crate::json_writer::write_str;

/// Which JSON an answer is written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonStyle {
    /// The JSON protocol's body.
    Protocol,
    /// The Query protocol rendered in JSON.
    Query,
}

/// A value written as JSON.
pub trait ToJson {
    /// Appends the value in `style`.
    fn write_json(&self, out: &mut Vec<u8>, style: JsonStyle);
}

/// A JSON object being written, member by member.
pub struct JsonObject<'a> {
    out: &'a mut Vec<u8>,
    style: JsonStyle,
    empty: bool,
}

impl<'a> JsonObject<'a> {
    /// Opens an object.
    pub fn open(out: &'a mut Vec<u8>, style: JsonStyle) -> Self {
        out.push(b'{');
        JsonObject {
            out,
            style,
            empty: true,
        }
    }

    fn key(&mut self, name: &str) {
        if !self.empty {
            self.out.push(b',');
        }
        self.empty = false;
        write_str(self.out, name);
        self.out.push(b':');
    }

    /// Writes a member.
    pub fn member<T: ToJson + ?Sized>(&mut self, name: &str, value: &T) {
        self.key(name);
        value.write_json(self.out, self.style);
    }

    /// Writes a list member, left out when empty unless `written_empty`.
    pub fn list<T: ToJson>(&mut self, name: &str, written_empty: bool, items: &[T]) {
        if items.is_empty() && !written_empty {
            return;
        }
        self.key(name);
        self.out.push(b'[');
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            item.write_json(self.out, self.style);
        }
        self.out.push(b']');
    }

    /// Writes a map member, left out when empty: an object, or in the
    /// Query style the list of its entries.
    pub fn map<V: ToJson>(
        &mut self,
        name: &str,
        key_name: &str,
        value_name: &str,
        entries: &BTreeMap<String, V>,
    ) {
        if entries.is_empty() {
            return;
        }
        self.key(name);
        match self.style {
            JsonStyle::Protocol => {
                let mut object = JsonObject::open(self.out, self.style);
                for (key, value) in entries {
                    object.member(key, value);
                }
                object.close();
            }
            JsonStyle::Query => {
                self.out.push(b'[');
                for (i, (key, value)) in entries.iter().enumerate() {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    let mut entry = JsonObject::open(self.out, self.style);
                    entry.member(key_name, key);
                    entry.member(value_name, value);
                    entry.close();
                }
                self.out.push(b']');
            }
        }
    }

    /// Closes the object.
    pub fn close(self) {
        self.out.push(b'}');
    }
}

impl ToJson for String {
    fn write_json(&self, out: &mut Vec<u8>, _style: JsonStyle) {
        write_str(out, self);
    }
}

impl ToJson for str {
    fn write_json(&self, out: &mut Vec<u8>, _style: JsonStyle) {
        write_str(out, self);
    }
}

impl ToJson for i64 {
    fn write_json(&self, out: &mut Vec<u8>, _style: JsonStyle) {
        out.extend_from_slice(self.to_string().as_bytes());
    }
}

impl ToJson for bool {
    fn write_json(&self, out: &mut Vec<u8>, _style: JsonStyle) {
        out.extend_from_slice(if *self { b"true" } else { b"false" });
    }
}

impl ToJson for f64 {
    fn write_json(&self, out: &mut Vec<u8>, _style: JsonStyle) {
        out.extend_from_slice(super::json::number_text(*self).as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn w7_maps_are_objects_in_the_protocol_and_entry_lists_in_the_query_rendering() {
        let map = BTreeMap::from([("k".to_string(), "v".to_string())]);
        let write = |style| {
            let mut out = Vec::new();
            let mut object = JsonObject::open(&mut out, style);
            object.member("Id", "a\"b");
            object.list::<String>("Empty", false, &[]);
            object.list::<String>("Written", true, &[]);
            object.map("Attributes", "Name", "Value", &map);
            object.member("N", &-3i64);
            object.close();
            String::from_utf8(out).unwrap()
        };
        assert_eq!(
            write(JsonStyle::Query),
            r#"{"Id":"a\"b","Written":[],"Attributes":[{"Name":"k","Value":"v"}],"N":-3}"#
        );
        assert_eq!(
            write(JsonStyle::Protocol),
            r#"{"Id":"a\"b","Written":[],"Attributes":{"k":"v"},"N":-3}"#
        );
    }
}
