//! An API's error codes: one enum variant per error the server answers,
//! each with its Query code, HTTP status, fault and JSON `__type`, from
//! the model's error shapes and the table of what the models leave out
//! (`models/sluice-errors.json`).

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::emit::Out;
use crate::model::{Model, ModelError};
use crate::names::doc_line;

/// The table of errors beside the models: facts a model leaves out of
/// its error shapes, errors every AWS API answers that no model lists,
/// and the modelled errors the server never answers.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorTable {
    /// Facts by variant name, in the order new variants are generated.
    pub errors: serde_json::Map<String, serde_json::Value>,
    /// Modelled error shapes left out of the enum.
    #[serde(default)]
    pub not_answered: Vec<String>,
}

/// One entry of the table.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    http_status_code: Option<u16>,
    #[serde(default)]
    sender_fault: Option<bool>,
    #[serde(default)]
    json_type: Option<String>,
    #[serde(default)]
    documentation: Option<String>,
    /// Why the entry is here, for readers of the table.
    #[serde(default)]
    #[allow(dead_code)]
    source: Option<String>,
}

impl ErrorTable {
    /// Parses the table's text.
    pub fn parse(text: &str) -> Result<Self, ModelError> {
        serde_json::from_str(text)
            .map_err(|e| ModelError(format!("error table does not parse: {e}")))
    }
}

/// What to generate.
pub struct ErrorsSpec<'a> {
    /// The API's name, for doc lines.
    pub title: &'a str,
    /// The model whose error shapes list the modelled errors (the JSON
    /// protocol's, which lists them all).
    pub model: &'a Model,
    /// A model whose error shapes carry Query codes the first lacks.
    pub codes: Option<&'a Model>,
    /// The table beside the models.
    pub table: &'a ErrorTable,
}

/// One generated variant's facts.
struct Variant {
    name: String,
    doc: String,
    code: String,
    status: u16,
    sender_fault: bool,
    json_type: String,
}

/// Generates the `ErrorCode` enum.
pub fn generate(spec: &ErrorsSpec<'_>) -> Result<String, ModelError> {
    let table: BTreeMap<&String, Entry> = spec
        .table
        .errors
        .iter()
        .map(|(name, v)| {
            serde_json::from_value(v.clone())
                .map(|e| (name, e))
                .map_err(|e| ModelError(format!("error entry {name}: {e}")))
        })
        .collect::<Result<_, _>>()?;
    let mut variants = Vec::new();
    for (name, shape) in &spec.model.shapes {
        if !shape.exception || spec.table.not_answered.contains(name) {
            continue;
        }
        let modelled = shape.error.clone().or_else(|| {
            spec.codes
                .and_then(|m| m.shapes.get(name))
                .and_then(|s| s.error.clone())
        });
        let entry = table.get(name);
        let doc = entry
            .and_then(|e| e.documentation.clone())
            .or_else(|| doc_line(shape.documentation.as_deref()))
            .unwrap_or_else(|| format!("`{name}`."));
        variants.push(Variant {
            name: name.clone(),
            doc,
            code: entry
                .and_then(|e| e.code.clone())
                .or_else(|| modelled.as_ref().map(|m| m.code.clone()))
                .unwrap_or_else(|| name.clone()),
            status: entry
                .and_then(|e| e.http_status_code)
                .or(modelled.as_ref().map(|m| m.http_status_code))
                .unwrap_or(400),
            sender_fault: entry
                .and_then(|e| e.sender_fault)
                .or(modelled.as_ref().map(|m| m.sender_fault))
                .unwrap_or(true),
            json_type: entry
                .and_then(|e| e.json_type.clone())
                .unwrap_or_else(|| name.clone()),
        });
    }
    for name in spec.table.not_answered.iter() {
        if !spec.model.shapes.get(name).is_some_and(|s| s.exception) {
            return Err(ModelError(format!(
                "{name} is listed as not answered but is no error of the model"
            )));
        }
    }
    for (name, entry) in spec
        .table
        .errors
        .keys()
        .zip(spec.table.errors.keys().map(|n| &table[n]))
    {
        if spec.model.shapes.get(name).is_some_and(|s| s.exception) {
            continue;
        }
        let (Some(code), Some(status), Some(doc)) =
            (&entry.code, entry.http_status_code, &entry.documentation)
        else {
            return Err(ModelError(format!(
                "{name} is no error of the model: its entry needs code, httpStatusCode and documentation"
            )));
        };
        variants.push(Variant {
            name: name.clone(),
            doc: doc.clone(),
            code: code.clone(),
            status,
            sender_fault: entry.sender_fault.unwrap_or(true),
            json_type: entry.json_type.clone().unwrap_or_else(|| name.clone()),
        });
    }
    Ok(emit(spec.title, &variants))
}

/// A generated method: its doc line, name, type and each variant's value.
type Fact = (
    &'static str,
    &'static str,
    &'static str,
    Box<dyn Fn(&Variant) -> String>,
);

fn emit(title: &str, variants: &[Variant]) -> String {
    let mut out = Out::default();
    out.line("// @generated by sluice-codegen from the API models in models/: do not edit.");
    out.line("");
    out.line(&format!("/// Every error code {title} answers with."));
    out.line("#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]");
    out.line("pub enum ErrorCode {");
    for v in variants {
        out.line(&format!("    /// {}", v.doc));
        out.line(&format!("    {},", v.name));
    }
    out.line("}");
    out.line("");
    out.line("impl ErrorCode {");
    out.line("    /// Every code.");
    out.line("    pub const ALL: &'static [ErrorCode] = &[");
    for v in variants {
        out.line(&format!("        ErrorCode::{},", v.name));
    }
    out.line("    ];");
    out.line("");
    let facts: [Fact; 4] = [
        (
            "The shape name the JSON protocol's `__type` carries.",
            "json_shape",
            "&'static str",
            Box::new(|v| format!("\"{}\"", v.json_type)),
        ),
        (
            "The Query protocol's code, also sent in `x-amzn-query-error`.",
            "query_code",
            "&'static str",
            Box::new(|v| format!("\"{}\"", v.code)),
        ),
        (
            "The HTTP status it is answered with.",
            "http_status",
            "u16",
            Box::new(|v| v.status.to_string()),
        ),
        (
            "True when the caller is at fault (`Sender`), false when the server is.",
            "is_sender_fault",
            "bool",
            Box::new(|v| v.sender_fault.to_string()),
        ),
    ];
    for (doc, name, ty, value) in facts {
        out.line(&format!("    /// {doc}"));
        out.line(&format!("    pub const fn {name}(self) -> {ty} {{"));
        out.line("        match self {");
        for v in variants {
            out.line(&format!(
                "            ErrorCode::{} => {},",
                v.name,
                value(v)
            ));
        }
        out.line("        }");
        out.line("    }");
        out.line("");
    }
    out.line("    /// The code whose Query code is `code`.");
    out.line("    pub fn from_query_code(code: &str) -> Option<Self> {");
    out.line("        Self::ALL.iter().copied().find(|c| c.query_code() == code)");
    out.line("    }");
    out.line("}");
    out.text
}
