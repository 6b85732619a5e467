//! The API's enums: its operations, its requests (each operation's typed
//! input, decoded from either protocol) and its responses (each
//! operation's typed output, written in either protocol).

use super::{Api, input_type, output_type};
use crate::emit::Out;
use crate::model::{ModelError, Operation};
use crate::names::doc_line;

impl Api<'_> {
    pub(super) fn operation_enum(&self, out: &mut Out, operations: &[Operation]) {
        let title = self.spec.title;
        out.line(&format!("/// An operation of {title}."));
        out.line("#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]");
        out.line("pub enum Operation {");
        for op in operations {
            let doc = doc_line(op.documentation.as_deref())
                .or_else(|| {
                    self.spec
                        .docs
                        .and_then(|d| d.operations.get(&op.name))
                        .and_then(|o| o.get("documentation"))
                        .and_then(|d| doc_line(d.as_str()))
                })
                .unwrap_or_else(|| format!("`{}`.", op.name));
            out.line(&format!("    /// {doc}"));
            out.line(&format!("    {},", op.name));
        }
        out.line("}");
        out.line("");
        out.line("impl Operation {");
        out.line("    /// Every operation, in the model's order.");
        out.line("    pub const ALL: &'static [Operation] = &[");
        for op in operations {
            out.line(&format!("        Operation::{},", op.name));
        }
        out.line("    ];");
        out.line("");
        out.line("    /// The operation's name: `Action=` in the Query protocol, the");
        out.line("    /// target's suffix in the JSON protocol.");
        out.line("    pub const fn name(self) -> &'static str {");
        out.line("        match self {");
        for op in operations {
            out.line(&format!("            Operation::{0} => \"{0}\",", op.name));
        }
        out.line("        }");
        out.line("    }");
        out.line("");
        out.line("    /// The operation named `name`.");
        out.line("    pub fn from_name(name: &str) -> Option<Self> {");
        out.line("        Some(match name {");
        for op in operations {
            out.line(&format!("            \"{0}\" => Operation::{0},", op.name));
        }
        out.line("            _ => return None,");
        out.line("        })");
        out.line("    }");
        out.line("");
        out.line("    /// The element that wraps its answer in the Query protocol, for");
        out.line("    /// an operation that answers more than its request id.");
        out.line("    pub const fn result_wrapper(self) -> Option<&'static str> {");
        out.line("        match self {");
        for op in operations {
            match &op.output {
                Some(output) => {
                    let wrapper = output
                        .result_wrapper
                        .clone()
                        .unwrap_or_else(|| format!("{}Result", op.name));
                    out.line(&format!(
                        "            Operation::{} => Some(\"{wrapper}\"),",
                        op.name
                    ));
                }
                None => out.line(&format!("            Operation::{} => None,", op.name)),
            }
        }
        out.line("        }");
        out.line("    }");
        if let Some(prefix) = self.spec.json_target_prefix {
            out.line("");
            out.line("    /// The JSON protocol's `X-Amz-Target` prefix, dot included.");
            out.line(&format!(
                "    pub const TARGET_PREFIX: &'static str = \"{prefix}.\";"
            ));
        }
        out.line("}");
        out.line("");
    }

    pub(super) fn request_enum(
        &self,
        out: &mut Out,
        operations: &[Operation],
    ) -> Result<(), ModelError> {
        let title = self.spec.title;
        out.line(&format!(
            "/// A decoded request of {title}: the operation and its input."
        ));
        out.line("#[derive(Debug, Clone, PartialEq)]");
        out.line("pub enum Request {");
        for op in operations {
            out.line(&format!("    /// {}'s input.", op.name));
            out.line(&format!("    {}({}),", op.name, input_type(op)));
        }
        out.line("}");
        out.line("");
        out.line("impl Request {");
        out.line("    /// The operation requested.");
        out.line("    pub const fn operation(&self) -> Operation {");
        out.line("        match self {");
        for op in operations {
            out.line(&format!(
                "            Request::{0}(_) => Operation::{0},",
                op.name
            ));
        }
        out.line("        }");
        out.line("    }");
        out.line("");
        out.line("    /// Decodes `op`'s input from Query parameters.");
        out.line("    pub fn from_query(");
        out.line("        op: Operation,");
        out.line("        params: &crate::wire::Params<'_>,");
        out.line("    ) -> Result<Self, crate::wire::DecodeError> {");
        out.line("        use crate::wire::FromQuery as _;");
        out.line("        Ok(match op {");
        for op in operations {
            out.line(&format!(
                "            Operation::{0} => Request::{0}({1}::from_query(params, \"\")?.unwrap_or_default()),",
                op.name,
                input_type(op)
            ));
        }
        out.line("        })");
        out.line("    }");
        if self.json() {
            out.line("");
            out.line("    /// Decodes `op`'s input from a JSON-protocol body.");
            out.line(
                "    pub fn from_json(op: Operation, body: &[u8]) -> Result<Self, serde_json::Error> {",
            );
            out.line("        Ok(match op {");
            for op in operations {
                out.line(&format!(
                    "            Operation::{0} => Request::{0}(serde_json::from_slice(body)?),",
                    op.name
                ));
            }
            out.line("        })");
            out.line("    }");
        }
        out.line("}");
        out.line("");
        for op in operations {
            let input = input_type(op);
            out.line(&format!("impl From<{input}> for Request {{"));
            out.line(&format!("    fn from(input: {input}) -> Self {{"));
            out.line(&format!("        Request::{}(input)", op.name));
            out.line("    }");
            out.line("}");
            out.line("");
            if let Some(prefix) = self.spec.json_target_prefix {
                out.line(&format!("impl crate::Call for {input} {{"));
                out.line(&format!("    type Output = {};", output_type(op)));
                out.line(&format!(
                    "    const TARGET: &'static str = \"{prefix}.{}\";",
                    op.name
                ));
                out.line("}");
                out.line("");
            }
        }
        Ok(())
    }

    pub(super) fn response_enum(
        &self,
        out: &mut Out,
        operations: &[Operation],
    ) -> Result<(), ModelError> {
        let title = self.spec.title;
        out.line(&format!("/// A successful answer of {title}."));
        out.line("#[derive(Debug, Clone, PartialEq)]");
        out.line("pub enum Response {");
        for op in operations {
            out.line(&format!("    /// {}'s output.", op.name));
            match &op.output {
                Some(_) => out.line(&format!("    {}({}),", op.name, output_type(op))),
                None => out.line(&format!("    {},", op.name)),
            }
        }
        out.line("}");
        out.line("");
        out.line("impl Response {");
        out.line("    /// The operation answered.");
        out.line("    pub const fn operation(&self) -> Operation {");
        out.line("        match self {");
        for op in operations {
            let pattern = if op.output.is_some() { "(_)" } else { "" };
            out.line(&format!(
                "            Response::{0}{pattern} => Operation::{0},",
                op.name
            ));
        }
        out.line("        }");
        out.line("    }");
        out.line("");
        out.line("    /// Appends the members of the Query answer's result element (none");
        out.line("    /// for an operation without output).");
        out.line("    pub fn write_xml(&self, out: &mut String) {");
        out.line("        use crate::wire::ToXml as _;");
        out.line("        match self {");
        for op in operations {
            match &op.output {
                Some(_) => out.line(&format!(
                    "            Response::{}(output) => output.write_xml_members(out),",
                    op.name
                )),
                None => out.line(&format!("            Response::{} => {{}}", op.name)),
            }
        }
        out.line("        }");
        out.line("    }");
        out.line("");
        out.line("    /// Appends the answer as JSON in `style`: the JSON protocol's");
        out.line("    /// body, or the Query protocol's result rendered in JSON.");
        out.line(
            "    pub fn write_json(&self, out: &mut Vec<u8>, style: crate::wire::JsonStyle) {",
        );
        out.line("        use crate::wire::ToJson as _;");
        out.line("        match self {");
        for op in operations {
            match &op.output {
                Some(_) => out.line(&format!(
                    "            Response::{}(output) => output.write_json(out, style),",
                    op.name
                )),
                None => out.line(&format!(
                    "            Response::{} => {{ let _ = style; out.extend_from_slice(b\"{{}}\") }}",
                    op.name
                )),
            }
        }
        out.line("        }");
        out.line("    }");
        out.line("}");
        out.line("");
        out.line("impl crate::Answer for Response {");
        out.line("    fn operation_name(&self) -> &'static str {");
        out.line("        self.operation().name()");
        out.line("    }");
        out.line("");
        out.line("    fn result_wrapper(&self) -> Option<&'static str> {");
        out.line("        self.operation().result_wrapper()");
        out.line("    }");
        out.line("");
        out.line("    fn write_xml(&self, out: &mut String) {");
        out.line("        Response::write_xml(self, out)");
        out.line("    }");
        out.line("");
        out.line("    fn write_json(&self, out: &mut Vec<u8>, style: crate::wire::JsonStyle) {");
        out.line("        Response::write_json(self, out, style)");
        out.line("    }");
        out.line("}");
        out.line("");
        Ok(())
    }
}
