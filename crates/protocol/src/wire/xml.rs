//! Typed answers written as the Query protocol's XML: each value as the
//! API model lays it out (a structure's members in model order, lists
//! flattened or under `member`, maps as `entry`s of key and value).

use std::collections::BTreeMap;

use crate::xml::{close, element, open};

/// A structure whose members are written as XML elements.
pub trait ToXml {
    /// Appends the members, in model order, those present only.
    fn write_xml_members(&self, out: &mut String);
}

/// A value written as the XML element `name`.
pub trait XmlValue {
    /// Appends `<name>…</name>`.
    fn write_xml(&self, out: &mut String, name: &str);
}

/// Appends `value` as the element `name`.
pub fn xml_value<T: XmlValue + ?Sized>(out: &mut String, name: &str, value: &T) {
    value.write_xml(out, name);
}

/// Appends a structure as the element `name` holding its members.
pub fn xml_structure<T: ToXml + ?Sized>(out: &mut String, name: &str, value: &T) {
    open(out, name);
    value.write_xml_members(out);
    close(out, name);
}

/// Appends a list: flattened, each item as an element of its own (named
/// `item_name`, or `name`); otherwise the items under `name`, each named
/// `item_name` or `member`. An empty list is left out, unless
/// `written_empty` (then an empty element, when not flattened).
pub fn xml_list<T: XmlValue>(
    out: &mut String,
    name: &str,
    item_name: Option<&str>,
    flattened: bool,
    written_empty: bool,
    items: &[T],
) {
    if items.is_empty() && !written_empty {
        return;
    }
    if flattened {
        let item_name = item_name.unwrap_or(name);
        for item in items {
            item.write_xml(out, item_name);
        }
    } else {
        open(out, name);
        for item in items {
            item.write_xml(out, item_name.unwrap_or("member"));
        }
        close(out, name);
    }
}

/// Appends a map: its entries (`entry`, or `name` when flattened) of a
/// key and a value element. An empty map is left out.
pub fn xml_map<V: XmlValue>(
    out: &mut String,
    name: &str,
    flattened: bool,
    key_name: &str,
    value_name: &str,
    entries: &BTreeMap<String, V>,
) {
    if entries.is_empty() {
        return;
    }
    if !flattened {
        open(out, name);
    }
    let entry_name = if flattened { name } else { "entry" };
    for (key, value) in entries {
        open(out, entry_name);
        element(out, key_name, key);
        value.write_xml(out, value_name);
        close(out, entry_name);
    }
    if !flattened {
        close(out, name);
    }
}

impl XmlValue for String {
    fn write_xml(&self, out: &mut String, name: &str) {
        element(out, name, self);
    }
}

impl XmlValue for i64 {
    fn write_xml(&self, out: &mut String, name: &str) {
        element(out, name, &self.to_string());
    }
}

impl XmlValue for bool {
    fn write_xml(&self, out: &mut String, name: &str) {
        element(out, name, if *self { "true" } else { "false" });
    }
}

impl XmlValue for f64 {
    fn write_xml(&self, out: &mut String, name: &str) {
        element(out, name, &super::json::number_text(*self));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn w1_lists_and_maps_as_the_model_lays_them_out() {
        let mut out = String::new();
        xml_list(
            &mut out,
            "QueueUrls",
            Some("QueueUrl"),
            true,
            false,
            &["a".to_string(), "b".to_string()],
        );
        assert_eq!(out, "<QueueUrl>a</QueueUrl><QueueUrl>b</QueueUrl>");
        out.clear();
        xml_list(&mut out, "Topics", None, false, false, &["t".to_string()]);
        assert_eq!(out, "<Topics><member>t</member></Topics>");
        out.clear();
        xml_list::<String>(&mut out, "Topics", None, false, false, &[]);
        assert_eq!(out, "");
        xml_list::<String>(&mut out, "Topics", None, false, true, &[]);
        assert_eq!(out, "<Topics></Topics>");
        out.clear();
        let map = BTreeMap::from([("k".to_string(), "v & w".to_string())]);
        out.clear();
        xml_map(&mut out, "Attribute", true, "Name", "Value", &map);
        assert_eq!(
            out,
            "<Attribute><Name>k</Name><Value>v &amp; w</Value></Attribute>"
        );
        out.clear();
        xml_map(&mut out, "Attributes", false, "key", "value", &map);
        assert_eq!(
            out,
            "<Attributes><entry><key>k</key><value>v &amp; w</value></entry></Attributes>"
        );
        out.clear();
        1.5f64.write_xml(&mut out, "T");
        2.0f64.write_xml(&mut out, "T");
        assert_eq!(out, "<T>1.5</T><T>2.0</T>");
    }
}
