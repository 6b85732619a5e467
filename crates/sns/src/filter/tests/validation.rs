//! Recorded validation messages of rules and structure (recorded-cases.md
//! §R, 154–190), each compared with the first line of AWS's answer (the
//! part LocalStack's snapshot normalises, before the Jackson location).
//! All were answers to Subscribe (protocol sms) with the policy as the
//! `FilterPolicy` attribute, so the whole message starts
//! `Invalid parameter: Attributes Reason: FilterPolicy: `.

use super::super::Scope;
use super::{accepted, message, refusal};

/// Recorded 154: a list inside the list. LS-FP
/// `TestSNSFilterPolicyConditions::test_validate_policy` (error-condition-list).
#[test]
fn n4_a_list_in_a_rule_list_is_refused() {
    assert_eq!(
        message(r#"{"key":[["value"]]}"#),
        "Match value must be String, number, true, false, or null"
    );
}

/// Recorded 155: an unknown operator. LS-FP `test_validate_policy`
/// (error-condition-operator).
#[test]
fn n4_an_unknown_operator_is_refused() {
    assert_eq!(
        message(r#"{"key":[{"wrong-operator":true}]}"#),
        "Unrecognized match type wrong-operator"
    );
}

/// Recorded 156: two operators in one match expression. LS-FP
/// `test_validate_policy` (error-condition-two-operators).
#[test]
fn n4_a_match_expression_has_one_key() {
    assert_eq!(
        message(r#"{"key":[{"suffix":"value","prefix":"value2"}]}"#),
        "Only one key allowed in match expression"
    );
}

/// Recorded 157: an empty rule list. LS-FP
/// `test_validate_policy_string_operators` (error-condition-empty-array).
#[test]
fn n4_an_empty_rule_list_is_refused() {
    assert_eq!(message(r#"{"key":[]}"#), "Empty arrays are not allowed");
}

/// Recorded 158, 159, 161, 162: `suffix` takes a string, not a number,
/// `null`, an empty list or a list. LS-FP
/// `test_validate_policy_string_operators` (error-condition-is-numeric,
/// -is-none, -empty-list, -list-wrong-type).
#[test]
fn n4_suffix_takes_a_string() {
    for policy in [
        r#"{"key":[{"suffix":100}]}"#,
        r#"{"key":[{"suffix":null}]}"#,
        r#"{"key":[{"suffix":[]}]}"#,
        r#"{"key":[{"suffix":["test","test2"]}]}"#,
    ] {
        assert_eq!(
            message(policy),
            "suffix match pattern must be a string",
            "{policy}"
        );
    }
}

/// Recorded 160 and 163: an operator written without the list is read as a
/// nested key, and in the attributes scope the compiler's message comes
/// before the nesting one. LS-FP `test_validate_policy_string_operators`
/// (error-condition-is-not-list-and-operator, -is-not-list-two-ops).
#[test]
fn n4_an_operator_outside_a_list_is_a_nested_key() {
    assert_eq!(
        message(r#"{"key":{"suffix":"value"}}"#),
        r#""suffix" must be an object or an array"#
    );
    assert_eq!(
        message(r#"{"key":{"suffix":"value","prefix":"value"}}"#),
        r#""suffix" must be an object or an array"#
    );
}

/// Recorded 164: any nested scalar. LS-FP
/// `test_validate_policy_string_operators`
/// (error-condition-is-not-list-and-no-operator).
#[test]
fn n4_a_nested_scalar_is_refused() {
    assert_eq!(
        message(r#"{"key":{"not-an-operator":"value"}}"#),
        r#""not-an-operator" must be an object or an array"#
    );
}

/// Recorded 165: `cidr` with a list; AWS's message names `prefix`. LS-FP
/// `test_validate_policy_string_operators` (error-condition-bad-type).
#[test]
fn n4_cidr_with_a_list_is_refused_naming_prefix() {
    assert_eq!(
        message(r#"{"key":[{"cidr":["bad-filter"]}]}"#),
        "prefix match pattern must be a string"
    );
}

/// Recorded 166–170: malformed CIDR blocks. LS-FP
/// `test_validate_policy_string_operators` (error-condition-bad-cidr-str,
/// -str-slash, -str-slash-2, -v4, -v6).
#[test]
fn n4_malformed_cidr_blocks_are_refused() {
    let cases = [
        ("bad-filter", "Malformed CIDR, one '/' required"),
        ("bad-filter/64", "Nonstandard IP address: bad-filter"),
        (
            "bad-/64filter",
            "Malformed CIDR, mask bits must be an integer",
        ),
        ("xx.11.xx/8", "Nonstandard IP address: xx.11.xx"),
        (
            "xxxx:db8:1234:1a00::/64",
            "Nonstandard IP address: xxxx:db8:1234:1a00::",
        ),
    ];
    for (block, expected) in cases {
        let policy = format!(r#"{{"key":[{{"cidr":"{block}"}}]}}"#);
        assert_eq!(message(&policy), expected, "{block}");
    }
}

/// Recorded 171–184: every numeric message, in the order the terms are
/// read. LS-FP `test_validate_policy_numeric_operator` (error-numeric-*).
#[test]
fn n4_numeric_expressions_are_checked_term_by_term() {
    let cases = [
        (r#"[]"#, "Invalid member in numeric match: ]"),
        (
            r#"["operator"]"#,
            "Unrecognized numeric range operator: operator",
        ),
        (r#"[1,"<="]"#, "Invalid member in numeric match: 1"),
        (r#"["=","000"]"#, "Value of equals must be numeric"),
        (r#"[">="]"#, "Value of >= must be numeric"),
        (
            r#"["<",100,">",10]"#,
            "Too many elements in numeric expression",
        ),
        (r#"[">=",1,">",2]"#, "Bad numeric range operator: >"),
        (r#"[">",3,"<",1]"#, "Bottom must be less than top"),
        (r#"[">",20,"<="]"#, "Value of <= must be numeric"),
        (r#"[">",20,30]"#, "Bad value in numeric range: 30"),
        (r#"[">",20,"test"]"#, "Bad numeric range operator: test"),
        (r#"[">","20","<","30"]"#, "Value of > must be numeric"),
        (r#"[">",20,"<","30"]"#, "Value of < must be numeric"),
        (
            r#"[">",20,"<",30,"<",50]"#,
            "Too many terms in numeric range expression",
        ),
    ];
    for (terms, expected) in cases {
        let policy = format!(r#"{{"key":[{{"numeric":{terms}}}]}}"#);
        assert_eq!(message(&policy), expected, "{terms}");
    }
}

/// Recorded 185: `exists` takes a boolean, and the message ends with a
/// period. LS-FP `test_validate_policy_exists_operator`
/// (error-condition-none, -string).
#[test]
fn n4_exists_takes_true_or_false() {
    for policy in [
        r#"{"key":[{"exists":null}]}"#,
        r#"{"key":[{"exists":"no"}]}"#,
    ] {
        assert_eq!(
            message(policy),
            "exists match pattern must be either true or false.",
            "{policy}"
        );
    }
}

/// Recorded 186–189: `anything-but` takes only `prefix` inside, with a
/// string. LS-FP `test_validate_policy_nested_anything_but_operator`.
#[test]
fn n4_anything_but_takes_only_a_prefix_inside() {
    let cases = [
        (
            r#"{"wrong-operator":null}"#,
            "Unsupported anything-but pattern: wrong-operator",
        ),
        (
            r#"{"suffix":"test"}"#,
            "Unsupported anything-but pattern: suffix",
        ),
        (
            r#"{"exists":false}"#,
            "Unsupported anything-but pattern: exists",
        ),
        (
            r#"{"prefix":false}"#,
            "prefix match pattern must be a string",
        ),
    ];
    for (inner, expected) in cases {
        let policy = format!(r#"{{"key":[{{"anything-but":{inner}}}]}}"#);
        assert_eq!(message(&policy), expected, "{inner}");
    }
}

/// Recorded 190: a prefix, a list of strings and a single string are
/// accepted inside `anything-but` (the first on Subscribe, the others on
/// SetSubscriptionAttributes). LS-FP
/// `test_validate_policy_nested_anything_but_operator` (positive part).
#[test]
fn n4_anything_but_accepts_prefix_list_and_string() {
    for policy in [
        r#"{"key":[{"anything-but":{"prefix":"test-"}}]}"#,
        r#"{"key":[{"anything-but":["test","test2"]}]}"#,
        r#"{"key":[{"anything-but":"test"}]}"#,
    ] {
        let parsed = accepted(policy, Scope::MessageAttributes);
        assert_eq!(parsed.scope(), Scope::MessageAttributes);
    }
}

/// Recorded 154–190 were answers to Subscribe: the whole message carries
/// `Attributes Reason: FilterPolicy: `. Checked on case 155.
#[test]
fn n4_subscribe_prefixes_attributes_reason() {
    let error = refusal(
        r#"{"key":[{"wrong-operator":true}]}"#,
        Scope::MessageAttributes,
    );
    assert_eq!(
        error.subscribe_message(),
        "Invalid parameter: Attributes Reason: FilterPolicy: Unrecognized match type wrong-operator"
    );
    assert!(error.names_attribute());
}

/// Not recorded; the rule engine's messages for other malformed
/// expressions (event-ruler's `JsonRuleCompiler`), which sluice gives so
/// that no malformed policy is accepted.
#[test]
fn n4_unrecorded_malformed_expressions_get_the_engines_words() {
    let cases = [
        (r#"{"key":[{}]}"#, "Match expression name not found"),
        (
            r#"{"key":[{"numeric":5}]}"#,
            "Value of numeric must be an array.",
        ),
        (
            r#"{"key":[{"numeric":["=",5],"x":1}]}"#,
            "Too many elements in numeric expression",
        ),
        (
            r#"{"key":[{"prefix":"a","x":1}]}"#,
            "Only one key allowed in match expression",
        ),
        (
            r#"{"key":[{"anything-but":{}}]}"#,
            "Anything-But expression name not found",
        ),
        (
            r#"{"key":[{"anything-but":{"prefix":""}}]}"#,
            "Null prefix not allowed",
        ),
        (
            r#"{"key":[{"anything-but":true}]}"#,
            "Value of anything-but must be an array or single string/number value.",
        ),
        (
            r#"{"key":[{"anything-but":[null]}]}"#,
            "Inside anything but list, start|null|boolean is not supported.",
        ),
        (
            r#"{"key":[{"anything-but":["a",1]}]}"#,
            "Inside anything but list, either all values are number or string, mixed type is not supported",
        ),
        (
            r#"{"key":[{"equals-ignore-case":1}]}"#,
            "equals-ignore-case match pattern must be a string",
        ),
        (
            r#"{"key":[{"wildcard":"a*"}]}"#,
            "Unrecognized match type wildcard",
        ),
        (
            r#"{"key":[{"cidr":"10.0.0.256/24"}]}"#,
            "Invalid IP address: 10.0.0.256",
        ),
        (
            r#"{"key":[{"cidr":"10.0.0.0/-1"}]}"#,
            "Malformed CIDR, mask bits must not be negative",
        ),
        (
            r#"{"key":[{"cidr":"10.0.0.0/32"}]}"#,
            "IPv4 mask bits must be < 32",
        ),
        (
            r#"{"key":[{"cidr":"::/128"}]}"#,
            "IPv6 mask bits must be < 128",
        ),
        (r#"{"key":{}}"#, "Empty objects are not allowed"),
        (r#"{}"#, "Empty objects are not allowed"),
        (r#"[]"#, "Filter is not an object"),
    ];
    for (policy, expected) in cases {
        assert_eq!(message(policy), expected, "{policy}");
    }
}

/// The first error in document order wins, the value of an expression
/// before its "one key" rule (the engine reads tokens in order; recorded
/// 156 shows the one-key check after a valid `suffix`).
#[test]
fn n4_the_first_error_in_document_order_wins() {
    assert_eq!(
        message(r#"{"key":[{"suffix":100,"prefix":"a"}]}"#),
        "suffix match pattern must be a string"
    );
    assert_eq!(
        message(r#"{"a":[{"prefix":1}],"b":"x"}"#),
        "prefix match pattern must be a string"
    );
    assert_eq!(
        message(r#"{"b":"x","a":[{"prefix":1}]}"#),
        r#""b" must be an object or an array"#
    );
}
