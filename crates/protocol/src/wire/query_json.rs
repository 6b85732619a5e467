//! Typed answers in the Query protocol's JSON rendering (a Query request
//! with `Accept: application/json`): the XML document's structure as JSON,
//! members under their model names, lists as arrays, maps as arrays of
//! `{key name: key, value name: value}` entries, as on the XML wire.

use std::collections::BTreeMap;

use crate::json_writer::write_str;

/// A value in the Query protocol's JSON rendering.
pub trait ToQueryJson {
    /// Appends the value.
    fn write_query_json(&self, out: &mut Vec<u8>);
}

/// A JSON object being written, member by member.
pub struct JsonObject<'a> {
    out: &'a mut Vec<u8>,
    empty: bool,
}

impl<'a> JsonObject<'a> {
    /// Opens an object.
    pub fn open(out: &'a mut Vec<u8>) -> Self {
        out.push(b'{');
        JsonObject { out, empty: true }
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
    pub fn member<T: ToQueryJson + ?Sized>(&mut self, name: &str, value: &T) {
        self.key(name);
        value.write_query_json(self.out);
    }

    /// Writes a list member, left out when empty.
    pub fn list<T: ToQueryJson>(&mut self, name: &str, items: &[T]) {
        if items.is_empty() {
            return;
        }
        self.key(name);
        self.out.push(b'[');
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            item.write_query_json(self.out);
        }
        self.out.push(b']');
    }

    /// Writes a map member as its list of entries, left out when empty.
    pub fn map<V: ToQueryJson>(
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
        self.out.push(b'[');
        for (i, (key, value)) in entries.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            let mut entry = JsonObject::open(self.out);
            entry.member(key_name, key);
            entry.member(value_name, value);
            entry.close();
        }
        self.out.push(b']');
    }

    /// Closes the object.
    pub fn close(self) {
        self.out.push(b'}');
    }
}

impl ToQueryJson for String {
    fn write_query_json(&self, out: &mut Vec<u8>) {
        write_str(out, self);
    }
}

impl ToQueryJson for str {
    fn write_query_json(&self, out: &mut Vec<u8>) {
        write_str(out, self);
    }
}

impl ToQueryJson for i64 {
    fn write_query_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.to_string().as_bytes());
    }
}

impl ToQueryJson for bool {
    fn write_query_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(if *self { b"true" } else { b"false" });
    }
}

impl ToQueryJson for f64 {
    fn write_query_json(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(super::json::number_text(*self).as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn w7_maps_become_entry_lists() {
        let mut out = Vec::new();
        let mut object = JsonObject::open(&mut out);
        object.member("Id", "a\"b");
        object.list::<String>("Empty", &[]);
        object.map(
            "Attributes",
            "Name",
            "Value",
            &BTreeMap::from([("k".to_string(), "v".to_string())]),
        );
        object.close();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"Id":"a\"b","Attributes":[{"Name":"k","Value":"v"}]}"#
        );
    }
}
