//! Recorded limits and whole-policy checks: JSON errors (recorded-cases.md
//! 51, 67), complexity (191, 192, 194–196), the key count (193, 196),
//! nesting and the scope (196), and the whole messages of both actions.

use super::super::complexity::combinations;
use super::super::{FilterPolicy, FilterPolicyError, MAX_POLICY_BYTES, Scope};
use super::{accepted, message, on_body, refusal};

/// A JSON array of `n` distinct strings.
fn values(n: usize) -> String {
    let items: Vec<String> = (0..n).map(|i| format!("\"value{i}\"")).collect();
    format!("[{}]", items.join(","))
}

/// Recorded 51: Subscribe with `FilterPolicy=invalid-json`; the first line
/// of AWS's message. LS `TestSNSSubscriptionCrud::test_subscribe_invalid_filter_policy`.
#[test]
fn n4_subscribe_with_text_that_is_not_json() {
    let error = refusal("invalid-json", Scope::MessageAttributes);
    assert_eq!(
        error.subscribe_message(),
        "Invalid parameter: Attributes Reason: FilterPolicy: failed to parse JSON. Unrecognized token 'invalid': \
         was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')"
    );
}

/// Recorded 67: SetSubscriptionAttributes with `FilterPolicy={invalidjson}`.
/// LS `test_validate_set_sub_attributes`.
#[test]
fn n4_set_subscription_attributes_with_an_unquoted_name() {
    let error = refusal("{invalidjson}", Scope::MessageAttributes);
    assert_eq!(
        error.set_subscription_attributes_message(),
        "Invalid parameter: FilterPolicy: failed to parse JSON. Unexpected character ('i' (code 105)): \
         was expecting double-quote to start field name"
    );
}

/// Not recorded: other JSON errors in Jackson's words (Jackson 2's
/// `ReaderBasedJsonParser`), the location in AWS's newer redacted form.
#[test]
fn n4_unrecorded_json_errors_get_jacksons_words() {
    let at = |column: u32| {
        format!(
            "[Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: 1, column: {column}]"
        )
    };
    let cases = [
        (r#"{"a":1,}"#.to_string(), "Unexpected character ('}' (code 125)): was expecting double-quote to start field name".to_string()),
        (r#"{"a" 1}"#.to_string(), "Unexpected character ('1' (code 49)): was expecting a colon to separate field name and value".to_string()),
        (r#"{"a":["b"] "c":1}"#.to_string(), "Unexpected character ('\"' (code 34)): was expecting comma to separate Object entries".to_string()),
        (r#"{"a":["b" "c"]}"#.to_string(), "Unexpected character ('\"' (code 34)): was expecting comma to separate Array entries".to_string()),
        (r#"{"a":}"#.to_string(), "Unexpected character ('}' (code 125)): expected a value".to_string()),
        (r#"{"a":[tru]}"#.to_string(), "Unrecognized token 'tru': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')".to_string()),
        (r#"{"a":[01]}"#.to_string(), "Invalid numeric value: Leading zeroes not allowed".to_string()),
        (r#"{"a":["b"]]"#.to_string(), format!("Unexpected close marker ']': expected '}}' (for Object starting at {})", at(1))),
        (r#"  {"a":["b"]"#.to_string(), format!("Unexpected end-of-input: expected close marker for Object (start marker at {})", at(3))),
        (r#"{"a":["b\q"]}"#.to_string(), "Unrecognized character escape 'q' (code 113)".to_string()),
        ("{\"a\":[\"b\u{1}\"]}".to_string(), "Illegal unquoted character ((CTRL-CHAR, code 1)): has to be escaped using backslash to be included in string value".to_string()),
        ("   ".to_string(), "No content to map due to end-of-input".to_string()),
    ];
    for (policy, expected) in cases {
        assert_eq!(
            message(&policy),
            format!("failed to parse JSON. {expected}"),
            "{policy}"
        );
    }
}

/// Jackson's `readTree` stops after the first value, so what follows it
/// is not read (Jackson's default; not recorded).
#[test]
fn n4_content_after_the_policy_is_not_read() {
    let policy = accepted(r#"{"a":["b"]} trailing"#, Scope::MessageAttributes);
    assert!(policy.matches_attributes(&[super::string("a", "b")]));
}

/// Recorded 191: 151 values under one key (1 × 151). LS-FP
/// `test_policy_complexity` (error-complexity-in-one-condition).
#[test]
fn n4_151_values_are_too_complex() {
    let policy = format!(r#"{{"key":{}}}"#, values(151));
    assert_eq!(message(&policy), "Filter policy is too complex");
    let policy = format!(r#"{{"key":{}}}"#, values(150));
    accepted(&policy, Scope::MessageAttributes);
}

/// Recorded 192: 100 × 51 values. LS-FP `test_policy_complexity`
/// (error-complexity-in-two-conditions).
#[test]
fn n4_combinations_multiply_across_keys() {
    let policy = format!(r#"{{"key1":{},"key2":{}}}"#, values(100), values(51));
    assert_eq!(message(&policy), "Filter policy is too complex");
}

/// Recorded 193 (Subscribe) and 196 (SetSubscriptionAttributes, scope
/// MessageBody): six keys. LS-FP `test_policy_complexity`
/// (error-complexity-too-many-fields) and
/// `TestSNSFilterPolicyCrud::test_sub_filter_policy_nested_property_constraints`.
#[test]
fn n4_a_policy_has_at_most_five_keys() {
    let six = r#"{"key_a":["value_one"],"key_b":["value_two"],"key_c":["value_three"],"key_d":["value_four"],"key_e":["value_five"],"key_f":["value_six"]}"#;
    for scope in [Scope::MessageAttributes, Scope::MessageBody] {
        let error = refusal(six, scope);
        assert_eq!(error, FilterPolicyError::TooManyKeys);
        assert_eq!(
            error.set_subscription_attributes_message(),
            "Invalid parameter: FilterPolicy: Filter policy can not have more than 5 keys"
        );
    }
    accepted(
        r#"{"a":["1"],"b":["2"],"c":["3"],"d":["4"],"e":{"f":["5"],"g":["6"],"h":["7"]}}"#,
        Scope::MessageBody,
    );
}

/// Recorded 194: `$or` in the attributes scope, (4·6)+(4·4·4)+(4·4·4) =
/// 152 is refused, (3·6)+(3·4·4)+(3·4·7) = 150 accepted. LS-FP
/// `test_policy_complexity_with_or` (error-complexity-or-flat and the
/// accepted policy).
#[test]
fn n4_or_branches_add_up() {
    let refused = r#"{"source":["aws.cloudwatch","aws.events","aws.test","aws.test2"],
        "$or":[{"metricName":["CPUUtilization","ReadLatency","t1","t2","t3","t4"]},
               {"metricType":["MetricType","TestType","TestType2","TestType3"],
                "$or":[{"metricId":[1234,4321,5678,9012]},{"spaceId":[1,2,3,4]}]}]}"#;
    assert_eq!(message(refused), "Filter policy is too complex");
    let allowed = r#"{"source":["aws.cloudwatch","aws.events","aws.test"],
        "$or":[{"metricName":["CPUUtilization","ReadLatency","TestVal","TestVal2","TestVal3","TestVal4"]},
               {"metricType":["MetricType","TestType","TestType2","TestType3"],
                "$or":[{"metricId":[1234,4321,5678,9012]},{"spaceId":[1,2,3,4,5,6,7]}]}]}"#;
    accepted(allowed, Scope::MessageAttributes);
    let tree = |text: &str| match serde_json::from_str(text) {
        Ok(serde_json::Value::Object(map)) => map,
        other => panic!("{other:?}"),
    };
    assert_eq!(combinations(&tree(refused), true), 152);
    assert_eq!(combinations(&tree(allowed), true), 150);
}

/// Recorded 195: nested `$or` in the body scope, (3+2) × (2·2) ×
/// (2·1 + 2·3) = 160, refused. LS-FP `test_policy_complexity_with_or`
/// (error-complexity-or-nested).
#[test]
fn n4_nested_or_branches_are_counted_at_their_depth() {
    let policy = r#"{"$or":[{"metricName":["CPUUtilization","ReadLatency","TestValue"]},{"namespace":["AWS/EC2","AWS/ES"]}],
        "detail":{"scope":["Service","Test"],
                  "$or":[{"source":["aws.cloudwatch"]},{"type":["CloudWatch Alarm State Change","TestValue","TestValue2"]}]}}"#;
    assert_eq!(
        refusal(policy, Scope::MessageBody),
        FilterPolicyError::TooComplex
    );
}

/// Recorded 196: a nested policy where depth multiplies, (3·4)·(2·3)·(1·3)
/// = 216, refused on SetSubscriptionAttributes in the body scope. LS-FP
/// `test_sub_filter_policy_nested_property_constraints`.
#[test]
fn n4_nested_keys_multiply_by_their_depth() {
    let policy = r#"{"key_a":{"key_b":{"key_c":["value_one","value_two","value_three","value_four"]}},
        "key_d":{"key_e":["value_one","value_two","value_three"]},
        "key_f":["value_one","value_two","value_three"]}"#;
    let error = refusal(policy, Scope::MessageBody);
    assert_eq!(
        error.set_subscription_attributes_message(),
        "Invalid parameter: FilterPolicy: Filter policy is too complex"
    );
}

/// Docs (filter policy constraints): the nested example is 3·4 × 2·3 = 72.
#[test]
fn n4_the_docs_nested_example_is_72() {
    let policy = r#"{"key_a":{"key_b":{"key_c":["value_one","value_two","value_three","value_four"]}},
        "key_d":{"key_e":["value_one","value_two","value_three"]}}"#;
    let Ok(serde_json::Value::Object(tree)) = serde_json::from_str(policy) else {
        panic!("not an object");
    };
    assert_eq!(combinations(&tree, true), 72);
    on_body(policy);
}

/// Recorded 196: on SetSubscriptionAttributes a nested policy in the
/// attributes scope is refused without `FilterPolicy: `, and accepted once
/// the scope is MessageBody. LS-FP
/// `TestSNSFilterPolicyCrud::test_sub_filter_policy_nested_property`.
#[test]
fn n4_nesting_needs_the_body_scope() {
    let nested = r#"{"object":{"key":[{"prefix":"auto-"}]}}"#;
    let error = refusal(nested, Scope::MessageAttributes);
    assert_eq!(error, FilterPolicyError::NestedInAttributeScope);
    assert!(!error.names_attribute());
    assert_eq!(
        error.set_subscription_attributes_message(),
        "Invalid parameter: Filter policy scope MessageAttributes does not support nested filter policy"
    );
    // Not recorded on Subscribe; the Subscribe form of the other errors.
    assert_eq!(
        error.subscribe_message(),
        "Invalid parameter: Attributes Reason: Filter policy scope MessageAttributes does not support nested filter policy"
    );
    assert_eq!(on_body(nested).scope(), Scope::MessageBody);
}

/// Recorded 196: a scalar value, on SetSubscriptionAttributes; AWS's
/// message starts so (a Jackson location follows). LS-FP
/// `test_sub_filter_policy_nested_property_constraints` (sub-filter-policy-rule-no-list).
#[test]
fn n4_a_key_needs_a_list_or_an_object() {
    let error = refusal(r#"{"key_a":"value_one"}"#, Scope::MessageBody);
    assert_eq!(
        error.set_subscription_attributes_message(),
        r#"Invalid parameter: FilterPolicy: "key_a" must be an object or an array"#
    );
}

/// Recorded 69: `{"attr":["match-this"]}` is accepted in the body scope.
/// LS-FP `TestSNSFilterPolicyCrud::test_set_subscription_filter_policy_scope`.
#[test]
fn n4_a_flat_policy_is_accepted_in_the_body_scope() {
    let policy = on_body(r#"{"attr":["match-this"]}"#);
    assert!(policy.matches_body(r#"{"attr":"match-this"}"#));
}

/// Docs: a policy is at most 256 KB (the refusal's wording is sluice's).
#[test]
fn n4_a_policy_is_at_most_256_kb() {
    let padding = " ".repeat(MAX_POLICY_BYTES);
    let text = format!(r#"{{"a":["b"]}}{padding}"#);
    assert_eq!(
        FilterPolicy::parse(&text, Scope::MessageAttributes).map(|_| ()),
        Err(FilterPolicyError::TooLarge)
    );
    let text = format!(r#"{{"a":["b"]}}{}"#, &padding[..MAX_POLICY_BYTES - 11]);
    accepted(&text, Scope::MessageAttributes);
}

/// `$or` is the OR operator only with 2+ objects that use no operator
/// names (event-ruler's README; not recorded); otherwise it is a key.
#[test]
fn n4_or_that_cannot_be_the_operator_is_a_key() {
    // An object value: the key `$or` with nesting.
    let nested = on_body(r#"{"source":["a"],"$or":{"metricType":["MetricType"]}}"#);
    assert!(nested.matches_body(r#"{"source":"a","$or":{"metricType":"MetricType"}}"#));
    assert!(!nested.matches_body(r#"{"source":"a","metricType":"MetricType"}"#));
    // Operator names in the branches: a rule list of the key `$or`.
    let rules = on_body(r#"{"detail":{"$or":[{"numeric":[">",0,"<=",5]},{"numeric":[">",10]}]}}"#);
    assert!(rules.matches_body(r#"{"detail":{"$or":3}}"#));
    assert!(!rules.matches_body(r#"{"detail":{"$or":7}}"#));
    // One branch: as a key its list holds a match expression named after
    // the branch's key, which the engine does not know.
    assert_eq!(
        message(r#"{"$or":[{"a":["b"]}]}"#),
        "Unrecognized match type a"
    );
}
