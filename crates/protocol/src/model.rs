//! The Query-protocol API model, parsed once on first use.

use std::sync::OnceLock;

use serde_json::Value;

const MODEL: &str = include_str!("../../../models/sqs-query-service-2.json");
const EXTENSIONS: &str = include_str!("../../../models/sluice-extensions.json");

fn model() -> &'static Value {
    static PARSED: OnceLock<Value> = OnceLock::new();
    // The model is part of the binary and checked by tests: it always parses.
    PARSED.get_or_init(|| serde_json::from_str(MODEL).unwrap_or(Value::Null))
}

fn extensions() -> &'static Value {
    static PARSED: OnceLock<Value> = OnceLock::new();
    PARSED.get_or_init(|| serde_json::from_str(EXTENSIONS).unwrap_or(Value::Null))
}

/// An operation's definition: an SQS action, or one of sluice's own.
pub fn operation(action: &str) -> Option<&'static Value> {
    model()
        .get("operations")?
        .get(action)
        .or_else(|| extension_operation(action))
}

/// The name of every operation, SQS's and sluice's own.
pub fn operation_names() -> impl Iterator<Item = &'static str> {
    [model(), extensions()]
        .into_iter()
        .filter_map(|m| m.get("operations")?.as_object())
        .flat_map(|operations| operations.keys().map(String::as_str))
}

/// The definition of one of sluice's own actions.
pub fn extension_operation(action: &str) -> Option<&'static Value> {
    extensions().get("operations")?.get(action)
}

/// A shape's definition, from the SQS model or the extensions.
pub fn shape(name: &str) -> Option<&'static Value> {
    model()
        .get("shapes")?
        .get(name)
        .or_else(|| extensions().get("shapes")?.get(name))
}

/// A member reference resolved: its wire name, target shape and whether it
/// is flattened (member traits win over the target shape's).
pub struct Member<'a> {
    /// The member's name in the JSON shape.
    pub name: &'a str,
    /// The element or parameter name on the Query wire.
    pub wire_name: &'a str,
    /// The target shape's definition.
    pub shape: &'static Value,
    /// Flattened list or map.
    pub flattened: bool,
}

/// The members of a structure shape, in model order.
pub fn members(shape_def: &'static Value) -> Vec<Member<'static>> {
    let Some(members) = shape_def.get("members").and_then(Value::as_object) else {
        return Vec::new();
    };
    members
        .iter()
        .filter_map(|(name, reference)| {
            let target = shape(reference.get("shape")?.as_str()?)?;
            let wire_name = reference
                .get("locationName")
                .or_else(|| target.get("locationName"))
                .and_then(Value::as_str)
                .unwrap_or(name);
            let flattened = reference
                .get("flattened")
                .or_else(|| target.get("flattened"))
                .and_then(Value::as_bool)
                .unwrap_or(false);
            Some(Member {
                name,
                wire_name,
                shape: target,
                flattened,
            })
        })
        .collect()
}

/// A shape's type (`structure`, `list`, `map`, `string`, `integer`, …).
pub fn shape_type(shape_def: &Value) -> &str {
    shape_def
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("string")
}

/// For a list shape: the member's target shape and its wire name.
pub fn list_member(shape_def: &'static Value) -> Option<(&'static Value, Option<&'static str>)> {
    let member = shape_def.get("member")?;
    let target = shape(member.get("shape")?.as_str()?)?;
    Some((target, member.get("locationName").and_then(Value::as_str)))
}

/// For a map shape: (key shape, key wire name, value shape, value wire name).
pub fn map_parts(
    shape_def: &'static Value,
) -> Option<(&'static Value, &'static str, &'static Value, &'static str)> {
    let key = shape_def.get("key")?;
    let value = shape_def.get("value")?;
    Some((
        shape(key.get("shape")?.as_str()?)?,
        key.get("locationName")
            .and_then(Value::as_str)
            .unwrap_or("key"),
        shape(value.get("shape")?.as_str()?)?,
        value
            .get("locationName")
            .and_then(Value::as_str)
            .unwrap_or("value"),
    ))
}

/// True when `action` is an SQS action of the API model.
pub fn is_known_action(action: &str) -> bool {
    operation(action).is_some()
}

/// Every action [`is_known_action`] knows, SQS's and sluice's own.
pub fn known_actions() -> impl Iterator<Item = &'static str> {
    operation_names()
}

/// True for one of sluice's own actions (NackMessage, PeekMessages, …),
/// which access rules name `sluice:<Action>`.
pub fn is_sluice_action(action: &str) -> bool {
    extension_operation(action).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// W2: every modelled error's Query code, status and fault are ours.
    #[test]
    fn w2_error_codes_match_the_model() {
        let mut checked = 0;
        for &code in sluice_core::ErrorCode::ALL {
            let Some(error) = shape(code.json_shape()).and_then(|s| s.get("error")) else {
                continue;
            };
            assert_eq!(error["code"], code.query_code(), "{code:?}");
            assert_eq!(error["httpStatusCode"], code.http_status(), "{code:?}");
            assert_eq!(error["senderFault"], code.is_sender_fault(), "{code:?}");
            checked += 1;
        }
        assert_eq!(checked, 13, "every modelled error code was compared");
    }

    #[test]
    fn model_parses_and_has_every_action() {
        assert!(model().is_object());
        assert!(extensions().is_object());
        assert!(extension_operation("NackMessage").is_some());
        assert!(extension_operation("SendMessage").is_none());
        for action in [
            "CreateQueue",
            "SendMessage",
            "ReceiveMessage",
            "DeleteMessageBatch",
            "ListQueues",
            "StartMessageMoveTask",
        ] {
            assert!(operation(action).is_some(), "{action}");
        }
    }
}
