//! The AWS API model files (botocore's `service-2.json` form), read into
//! types: operations, shapes and the traits the wire needs (location
//! names, flattened lists and maps, result wrappers, error codes).

use std::collections::BTreeMap;

use serde::Deserialize;

/// One model file.
#[derive(Debug, Clone, Deserialize)]
pub struct Model {
    /// The service's metadata (`xmlNamespace`, `targetPrefix`, …).
    #[serde(default)]
    pub metadata: serde_json::Map<String, serde_json::Value>,
    /// Operations by name, in the file's order.
    pub operations: serde_json::Map<String, serde_json::Value>,
    /// Shapes by name.
    pub shapes: BTreeMap<String, Shape>,
}

/// An operation: its input and output shapes.
#[derive(Debug, Clone, Deserialize)]
pub struct Operation {
    /// The operation's name (`Action=` and the JSON target).
    pub name: String,
    /// Its input shape.
    #[serde(default)]
    pub input: Option<ShapeRef>,
    /// Its output shape and Query result wrapper.
    #[serde(default)]
    pub output: Option<ShapeRef>,
    /// HTML documentation.
    #[serde(default)]
    pub documentation: Option<String>,
}

/// A reference to a shape, with the traits a member or list item adds.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShapeRef {
    /// The target shape's name.
    pub shape: String,
    /// The element or parameter name on the Query wire.
    #[serde(default)]
    pub location_name: Option<String>,
    /// A flattened list or map.
    #[serde(default)]
    pub flattened: Option<bool>,
    /// An operation output's Query result wrapper.
    #[serde(default)]
    pub result_wrapper: Option<String>,
    /// HTML documentation of a member.
    #[serde(default)]
    pub documentation: Option<String>,
}

/// A shape definition.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Shape {
    /// `structure`, `list`, `map`, `string`, `integer`, …
    #[serde(rename = "type")]
    pub kind: String,
    /// A structure's members, in model order.
    #[serde(default)]
    pub members: Option<serde_json::Map<String, serde_json::Value>>,
    /// A structure's required members.
    #[serde(default)]
    pub required: Vec<String>,
    /// A list's item.
    #[serde(default)]
    pub member: Option<ShapeRef>,
    /// A map's key.
    #[serde(default)]
    pub key: Option<ShapeRef>,
    /// A map's value.
    #[serde(default)]
    pub value: Option<ShapeRef>,
    /// A flattened list or map.
    #[serde(default)]
    pub flattened: Option<bool>,
    /// The element name a shape gives itself.
    #[serde(default)]
    pub location_name: Option<String>,
    /// An error shape.
    #[serde(default)]
    pub exception: bool,
    /// An error shape's Query code, HTTP status and fault.
    #[serde(default)]
    pub error: Option<ErrorTrait>,
    /// HTML documentation.
    #[serde(default)]
    pub documentation: Option<String>,
}

/// An error shape's wire facts.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorTrait {
    /// The Query error code.
    pub code: String,
    /// The HTTP status.
    pub http_status_code: u16,
    /// Whether the caller is at fault (absent: the server is).
    #[serde(default)]
    pub sender_fault: bool,
}

/// A structure member, resolved.
#[derive(Debug, Clone)]
pub struct Member {
    /// Its name in the model (the JSON protocol's member name).
    pub name: String,
    /// Its target and traits.
    pub target: ShapeRef,
}

/// What can go wrong reading a model.
#[derive(Debug)]
pub struct ModelError(pub String);

impl std::fmt::Display for ModelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ModelError {}

impl Model {
    /// Parses a model file's text.
    pub fn parse(text: &str) -> Result<Self, ModelError> {
        serde_json::from_str(text).map_err(|e| ModelError(format!("model does not parse: {e}")))
    }

    /// The operations, in the file's order.
    pub fn operations(&self) -> Result<Vec<Operation>, ModelError> {
        self.operations
            .values()
            .map(|v| {
                serde_json::from_value(v.clone())
                    .map_err(|e| ModelError(format!("operation does not parse: {e}")))
            })
            .collect()
    }
}

impl Shape {
    /// A structure's members, in model order.
    pub fn members(&self) -> Result<Vec<Member>, ModelError> {
        let Some(members) = &self.members else {
            return Ok(Vec::new());
        };
        members
            .iter()
            .map(|(name, v)| {
                let target: ShapeRef = serde_json::from_value(v.clone())
                    .map_err(|e| ModelError(format!("member {name} does not parse: {e}")))?;
                Ok(Member {
                    name: name.clone(),
                    target,
                })
            })
            .collect()
    }
}
