//! The models in `models/` agree with each other, and what is generated
//! from them is what the wire needs (rules W1, W2).

use std::path::Path;

use sluice_codegen::{ApiSpec, ErrorsSpec, Model, api, errors};

fn model(name: &str) -> Model {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../models")
        .join(name);
    Model::parse(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// W1: the Query model SQS's types are generated from has every
/// operation, shape, member and type of the JSON model SDKs use today,
/// so the JSON protocol is served by the same types.
#[test]
fn w1_the_query_model_agrees_with_the_json_model() {
    let json = model("sqs-service-2.json");
    let query = model("sqs-query-service-2.json");
    let names = |m: &Model| m.operations.keys().cloned().collect::<Vec<_>>();
    let mut a = names(&json);
    let mut b = names(&query);
    a.sort();
    b.sort();
    assert_eq!(a, b, "the same operations");
    for op in json.operations().unwrap() {
        let q = query.operations[&op.name].clone();
        let q: sluice_codegen::model::Operation = serde_json::from_value(q).unwrap();
        assert_eq!(
            op.input.map(|i| i.shape),
            q.input.map(|i| i.shape),
            "{}",
            op.name
        );
        assert_eq!(
            op.output.map(|o| o.shape),
            q.output.map(|o| o.shape),
            "{}",
            op.name
        );
    }
    let mut checked = 0;
    for (name, shape) in &query.shapes {
        if shape.exception {
            continue;
        }
        let Some(other) = json.shapes.get(name) else {
            // Scalar shapes are named differently; structures are not.
            assert!(
                !matches!(shape.kind.as_str(), "structure" | "list" | "map"),
                "{name}"
            );
            continue;
        };
        assert_eq!(shape.kind, other.kind, "{name}");
        // Members by name and type (the two models name some scalar
        // shapes differently: `Integer` and `NullableInteger`).
        let members = |m: &Model, s: &sluice_codegen::model::Shape| {
            s.members()
                .unwrap()
                .into_iter()
                .map(|member| (member.name, m.shapes[&member.target.shape].kind.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(members(&query, shape), members(&json, other), "{name}");
        checked += 1;
    }
    assert!(checked > 80, "{checked} shapes compared");
}

/// W2: every error shape of the JSON model is an error code, unless the
/// table says it is not answered; the table's codes are what AWS answers.
#[test]
fn w2_every_modelled_error_is_a_code() {
    let json = model("sqs-service-2.json");
    let query = model("sqs-query-service-2.json");
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/sluice-errors.json");
    let table = sluice_codegen::ErrorTable::parse(&std::fs::read_to_string(path).unwrap()).unwrap();
    let source = errors::generate(&ErrorsSpec {
        title: "SQS",
        model: &json,
        codes: Some(&query),
        table: &table,
    })
    .unwrap();
    for (name, shape) in &json.shapes {
        if shape.exception && !table.not_answered.contains(name) {
            assert!(source.contains(&format!("    {name},\n")), "{name}");
        }
    }
    assert!(
        source.contains(
            "ErrorCode::QueueDoesNotExist => \"AWS.SimpleQueueService.NonExistentQueue\""
        )
    );
    assert!(
        source.contains("ErrorCode::InvalidParameterValue => \"InvalidParameterValueException\"")
    );
    assert!(source.contains("ErrorCode::InternalFailure => false"));
}

/// W1: two operations sharing an input shape are refused: each
/// operation's input type names its operation.
#[test]
fn w1_operations_have_inputs_of_their_own() {
    let m = Model::parse(
        r#"{"operations": {
            "A": {"name": "A", "input": {"shape": "In"}},
            "B": {"name": "B", "input": {"shape": "In"}}},
           "shapes": {"In": {"type": "structure", "members": {}}}}"#,
    )
    .unwrap();
    let e = api::generate(&ApiSpec {
        title: "T",
        model: &m,
        docs: None,
        base: None,
        json_target_prefix: None,
        bounded_lists: &[],
        query_json_names: &[],
        omit_empty: &[],
        empty_lists_written: false,
    })
    .unwrap_err();
    assert!(e.0.contains("share the input shape In"), "{e}");
}
