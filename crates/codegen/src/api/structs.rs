//! A struct per structure shape, and its codecs: serde attributes for the
//! JSON protocol, Query parameters in, XML and JSON out.

use super::{Api, missing, option_str};
use crate::emit::Out;
use crate::model::{ModelError, Shape, ShapeRef};
use crate::names::{snake_case, type_name};

impl Api<'_> {
    /// A structure shape's struct and its codecs.
    pub(super) fn structure(&self, out: &mut Out, name: &str) -> Result<(), ModelError> {
        let (shape, _) = self.shape(name)?;
        let members = shape.members()?;
        let input = self.input_reach.contains(name);
        let output = self.output_reach.contains(name);
        let ty = type_name(name);
        let doc = self
            .shape_doc(name)
            .unwrap_or_else(|| format!("The `{name}` shape of {}.", self.spec.title));
        out.line(&format!("/// {doc}"));
        let derives = if self.json() {
            "#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]"
        } else {
            "#[derive(Debug, Clone, Default, PartialEq)]"
        };
        out.line(derives);
        out.line(&format!("pub struct {ty} {{"));
        let mut fields = Vec::new();
        for member in &members {
            let field = Field::new(self, (name, shape), &member.name, &member.target, input)?;
            let doc = self
                .member_doc(name, &member.name, member.target.documentation.as_deref())
                .unwrap_or_else(|| format!("`{}`.", member.name));
            out.line(&format!("    /// {doc}"));
            if self.json() {
                out.line(&format!("    #[serde({})]", field.serde_attrs(self)));
            }
            out.line(&format!(
                "    pub {}: {},",
                field.rust_name, field.rust_type
            ));
            fields.push(field);
        }
        out.line("}");
        out.line("");
        if input {
            self.emit_from_query(out, &ty, &fields);
        }
        if output {
            self.emit_to_xml(out, &ty, &fields);
            self.emit_to_json(out, name, &ty, &fields);
        }
        Ok(())
    }

    fn emit_from_query(&self, out: &mut Out, ty: &str, fields: &[Field]) {
        out.line(&format!("impl crate::wire::FromQuery for {ty} {{"));
        out.line("    fn from_query(");
        out.line("        params: &crate::wire::Params<'_>,");
        out.line("        key: &str,");
        out.line("    ) -> Result<Option<Self>, crate::wire::DecodeError> {");
        if fields.is_empty() {
            out.line("        let _ = (params, key);");
            out.line("        Ok(Some(Self {}))");
        } else {
            out.line("        let Some(prefix) = params.structure_prefix(key) else {");
            out.line("            return Ok(None);");
            out.line("        };");
            out.line("        Ok(Some(Self {");
            for f in fields {
                let decode = match &f.wire {
                    Wire::Scalar | Wire::Structure => format!(
                        "crate::wire::FromQuery::from_query(params, &format!(\"{{prefix}}{}\"))?",
                        f.wire_name
                    ),
                    Wire::List { key } => {
                        format!("params.list(&format!(\"{{prefix}}{key}\"))?")
                    }
                    Wire::Map {
                        key,
                        key_name,
                        value_name,
                    } => format!(
                        "params.map(&format!(\"{{prefix}}{key}\"), \"{key_name}\", \"{value_name}\")?"
                    ),
                };
                out.line(&format!("            {}: {decode},", f.rust_name));
            }
            out.line("        }))");
        }
        out.line("    }");
        out.line("}");
        out.line("");
    }

    fn emit_to_xml(&self, out: &mut Out, ty: &str, fields: &[Field]) {
        out.line(&format!("impl crate::wire::ToXml for {ty} {{"));
        out.line("    fn write_xml_members(&self, out: &mut String) {");
        if fields.is_empty() {
            out.line("        let _ = out;");
        }
        for f in fields {
            let call = match &f.wire {
                Wire::Scalar | Wire::Structure => {
                    format!("crate::wire::xml_value(out, \"{}\", value);", f.wire_name)
                }
                Wire::List { .. } => format!(
                    "crate::wire::xml_list(out, \"{}\", {}, {}, {}, value);",
                    f.wire_name,
                    option_str(f.item_name.as_deref()),
                    f.flattened,
                    f.written_empty
                ),
                Wire::Map {
                    key_name,
                    value_name,
                    ..
                } => format!(
                    "crate::wire::xml_map(out, \"{}\", {}, \"{key_name}\", \"{value_name}\", value);",
                    f.wire_name, f.flattened
                ),
            };
            f.emit_with_value(out, &call);
        }
        out.line("    }");
        out.line("}");
        out.line("");
        out.line(&format!("impl crate::wire::XmlValue for {ty} {{"));
        out.line("    fn write_xml(&self, out: &mut String, name: &str) {");
        out.line("        crate::wire::xml_structure(out, name, self);");
        out.line("    }");
        out.line("}");
        out.line("");
    }

    fn emit_to_json(&self, out: &mut Out, shape: &str, ty: &str, fields: &[Field]) {
        out.line(&format!("impl crate::wire::ToJson for {ty} {{"));
        out.line("    fn write_json(&self, out: &mut Vec<u8>, style: crate::wire::JsonStyle) {");
        let binding = if fields.is_empty() {
            "object"
        } else {
            "mut object"
        };
        out.line(&format!(
            "        let {binding} = crate::wire::JsonObject::open(out, style);"
        ));
        for f in fields {
            let name = match self
                .spec
                .query_json_names
                .iter()
                .find(|(s, m, _)| *s == shape && *m == f.model_name)
            {
                Some((_, _, query_name)) => format!(
                    "if style == crate::wire::JsonStyle::Query {{ \"{query_name}\" }} else {{ \"{}\" }}",
                    f.model_name
                ),
                None => format!("\"{}\"", f.model_name),
            };
            let call = match &f.wire {
                Wire::Map {
                    key_name,
                    value_name,
                    ..
                } => format!("object.map({name}, \"{key_name}\", \"{value_name}\", value);"),
                Wire::List { .. } => {
                    format!("object.list({name}, {}, value);", f.written_empty)
                }
                _ => format!("object.member({name}, value);"),
            };
            f.emit_with_value(out, &call);
        }
        out.line("        object.close();");
        out.line("    }");
        out.line("}");
        out.line("");
    }
}

/// How a member travels on the Query wire.
enum Wire {
    Scalar,
    Structure,
    /// A list: the parameter prefix of its items (`{prefix}` prepended).
    List {
        key: String,
    },
    /// A map: the parameter prefix of its entries, and the names of an
    /// entry's key and value.
    Map {
        key: String,
        key_name: String,
        value_name: String,
    },
}

/// A struct field made from a structure member.
struct Field {
    model_name: String,
    rust_name: String,
    rust_type: String,
    /// `Option<…>`.
    optional: bool,
    /// A collection left out when empty (outputs).
    skip_empty: Option<&'static str>,
    wire_name: String,
    wire: Wire,
    item_name: Option<String>,
    flattened: bool,
    /// Parsed with the batch bound.
    bounded: bool,
    /// A collection written even when empty.
    written_empty: bool,
}

impl Field {
    fn new(
        api: &Api<'_>,
        (structure_name, structure): (&str, &Shape),
        name: &str,
        target: &ShapeRef,
        input: bool,
    ) -> Result<Self, ModelError> {
        let (shape, _) = api.shape(&target.shape)?;
        let wire_name = target
            .location_name
            .clone()
            .or_else(|| shape.location_name.clone())
            .unwrap_or_else(|| name.to_string());
        let flattened = target.flattened.or(shape.flattened).unwrap_or(false);
        let inner = api.rust_type(&target.shape)?;
        let kind = shape.kind.as_str();
        let (wire, item_name) = match kind {
            "structure" => (Wire::Structure, None),
            "list" => {
                let item = shape
                    .member
                    .as_ref()
                    .ok_or_else(|| missing(name, "member"))?;
                let item_name = item.location_name.clone();
                let key = if flattened {
                    item_name.clone().unwrap_or_else(|| wire_name.clone())
                } else {
                    format!("{wire_name}.{}", item_name.as_deref().unwrap_or("member"))
                };
                (Wire::List { key }, item_name)
            }
            "map" => {
                let key = shape.key.as_ref().ok_or_else(|| missing(name, "key"))?;
                let value = shape.value.as_ref().ok_or_else(|| missing(name, "value"))?;
                let entries = if flattened {
                    wire_name.clone()
                } else {
                    format!("{wire_name}.entry")
                };
                (
                    Wire::Map {
                        key: entries,
                        key_name: key.location_name.clone().unwrap_or_else(|| "key".into()),
                        value_name: value
                            .location_name
                            .clone()
                            .unwrap_or_else(|| "value".into()),
                    },
                    None,
                )
            }
            _ => (Wire::Scalar, None),
        };
        let collection = matches!(kind, "list" | "map");
        let required = structure.required.iter().any(|r| r == name);
        // An input's members are all optional, so that a missing one is
        // the action's to refuse with its API's words; an output's
        // collections are left out when empty, as AWS answers (an empty
        // `Failed` list is not written).
        let optional = input || (!collection && !required);
        let omitted = api.spec.omit_empty.contains(&(structure_name, name));
        let written_empty =
            !input && kind == "list" && (required || api.spec.empty_lists_written) && !omitted;
        let skip_empty = (!input && collection && !written_empty).then_some(if kind == "list" {
            "Vec::is_empty"
        } else {
            "std::collections::BTreeMap::is_empty"
        });
        let bounded = input && api.spec.bounded_lists.contains(&target.shape.as_str());
        Ok(Field {
            model_name: name.to_string(),
            rust_name: snake_case(name),
            rust_type: if optional {
                format!("Option<{inner}>")
            } else {
                inner
            },
            optional,
            skip_empty,
            wire_name,
            wire,
            item_name,
            flattened,
            bounded,
            written_empty,
        })
    }

    /// Emits `call`, which reads the member as `value`: only when it is
    /// present, for an optional member.
    fn emit_with_value(&self, out: &mut Out, call: &str) {
        if self.optional {
            out.line(&format!(
                "        if let Some(value) = &self.{} {{",
                self.rust_name
            ));
            out.line(&format!("            {call}"));
            out.line("        }");
        } else {
            out.line(&format!("        let value = &self.{};", self.rust_name));
            out.line(&format!("        {call}"));
        }
    }

    fn serde_attrs(&self, _api: &Api<'_>) -> String {
        let mut attrs = vec![
            format!("rename = \"{}\"", self.model_name),
            "default".into(),
        ];
        if self.optional {
            attrs.push("skip_serializing_if = \"Option::is_none\"".into());
        }
        if let Some(skip) = self.skip_empty {
            attrs.push(format!("skip_serializing_if = \"{skip}\""));
        }
        if self.bounded {
            attrs.push("deserialize_with = \"crate::wire::bounded_entries\"".into());
        }
        attrs.join(", ")
    }
}
