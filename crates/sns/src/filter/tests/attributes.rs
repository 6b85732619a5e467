//! Matching in the `MessageAttributes` scope: the recorded deliveries
//! (recorded-cases.md 125, 197–200, 202) and the developer guide's
//! examples for attributes.

use super::super::{Attribute, FilterPolicy, Message, MessageAttributes, Scope};
use super::{array, number, on_attributes, string};

/// Recorded 197: a numeric range on a `Number` attribute, 99 delivered and
/// 111 not. LS-FP `TestSNSFilterPolicyAttributes::test_filter_policy`.
#[test]
fn n4_numeric_range_on_a_number_attribute() {
    let policy = on_attributes(r#"{"attr1":[{"numeric":[">",0,"<=",100]}]}"#);
    assert!(policy.matches_attributes(&[number("attr1", "99")]));
    assert!(!policy.matches_attributes(&[number("attr1", "111")]));
}

/// Recorded 125: the same policy delivers Number 99.12. LS
/// `TestSNSSubscriptionSQS::test_subscribe_sqs_queue`.
#[test]
fn n4_numeric_range_takes_decimals() {
    let policy = on_attributes(r#"{"attr1":[{"numeric":[">",0,"<=",100]}]}"#);
    assert!(policy.matches_attributes(&[number("attr1", "99.12")]));
}

/// Recorded 202: PublishBatch entries are filtered one by one like
/// Publish, Number 99 delivered and 111 not (each entry is its own
/// message here). LS-FP `TestSNSFilterPolicyBody::test_filter_policy_for_batch`.
#[test]
fn n4_batch_entries_are_filtered_one_by_one() {
    let policy = on_attributes(r#"{"attr1":[{"numeric":[">",0,"<=",100]}]}"#);
    let entries = [[number("attr1", "99")], [number("attr1", "111")]];
    let delivered: Vec<bool> = entries
        .iter()
        .map(|e| policy.matches_attributes(e))
        .collect();
    assert_eq!(delivered, [true, false]);
}

/// Recorded 198: a message without attributes matches neither `null` nor
/// `anything-but`. LS-FP `test_filter_policy` (the null part).
#[test]
fn n4_a_missing_attribute_matches_neither_null_nor_anything_but() {
    let policy = on_attributes(r#"{"attr1":[null,{"anything-but":"whatever"}]}"#);
    assert!(!policy.matches_attributes(&[]));
}

/// Recorded 199: `exists: true` and `exists: false`. LS-FP
/// `TestSNSFilterPolicyAttributes::test_exists_filter_policy`.
#[test]
fn n4_exists_on_attributes() {
    let present = on_attributes(r#"{"store":[{"exists":true}]}"#);
    assert!(present.matches_attributes(&[number("store", "99"), number("def", "99")]));
    assert!(!present.matches_attributes(&[number("attr1", "111")]));
    let absent = on_attributes(r#"{"store":[{"exists":false}]}"#);
    assert!(absent.matches_attributes(&[number("def", "99")]));
    assert!(!absent.matches_attributes(&[number("store", "99"), number("def", "99")]));
}

/// Recorded 200: a `String.Array` matches if any element does. LS-FP
/// `test_exists_filter_policy_attributes_array`.
#[test]
fn n4_string_array_matches_by_any_element() {
    let policy = on_attributes(r#"{"store":["value1"]}"#);
    assert!(policy.matches_attributes(&[string("store", "value1")]));
    assert!(policy.matches_attributes(&[array("store", r#"["value1","value2"]"#)]));
    assert!(!policy.matches_attributes(&[array("store", r#"["value2","value3"]"#)]));
}

/// Docs (string value matching): exact, prefix, anything-but with a list
/// (a `String.Array` passes if one element is not excluded), anything-but
/// with a prefix, and cidr.
#[test]
fn n4_docs_string_examples_on_attributes() {
    let exact = on_attributes(r#"{"customer_interests":["rugby","tennis"]}"#);
    assert!(exact.matches_attributes(&[string("customer_interests", "rugby")]));
    assert!(!exact.matches_attributes(&[string("customer_interests", "baseball")]));

    let prefix = on_attributes(r#"{"customer_interests":[{"prefix":"bas"}]}"#);
    assert!(prefix.matches_attributes(&[string("customer_interests", "basketball")]));
    assert!(!prefix.matches_attributes(&[string("customer_interests", "rugby")]));

    let but = on_attributes(r#"{"customer_interests":[{"anything-but":["rugby","tennis"]}]}"#);
    assert!(but.matches_attributes(&[string("customer_interests", "football")]));
    assert!(but.matches_attributes(&[array("customer_interests", r#"["rugby","baseball"]"#)]));
    assert!(!but.matches_attributes(&[string("customer_interests", "rugby")]));

    let but_prefix = on_attributes(r#"{"event":[{"anything-but":{"prefix":"order-"}}]}"#);
    assert!(but_prefix.matches_attributes(&[string("event", "order_number")]));
    assert!(!but_prefix.matches_attributes(&[string("event", "order-cancelled")]));

    let cidr = on_attributes(r#"{"source_ip":[{"cidr":"10.0.0.0/24"}]}"#);
    assert!(cidr.matches_attributes(&[string("source_ip", "10.0.0.255")]));
    assert!(!cidr.matches_attributes(&[string("source_ip", "10.1.1.0")]));
}

/// Docs (numeric value matching): `=` compares values (301.5 is 3.015e2),
/// numeric anything-but, ranges.
#[test]
fn n4_docs_numeric_examples_on_attributes() {
    let equal = on_attributes(r#"{"price_usd":[{"numeric":["=",301.5]}]}"#);
    assert!(equal.matches_attributes(&[number("price_usd", "301.5")]));
    assert!(equal.matches_attributes(&[number("price_usd", "3.015e2")]));

    let but = on_attributes(r#"{"price":[{"anything-but":[100,500]}]}"#);
    assert!(but.matches_attributes(&[number("price", "101")]));
    assert!(but.matches_attributes(&[number("price", "100.1")]));
    let number_array = Attribute {
        name: "price",
        data_type: "Number.Array",
        value: "[100, 50]",
    };
    assert!(but.matches_attributes(&[number_array]));
    assert!(!but.matches_attributes(&[number("price", "100")]));

    let negative = on_attributes(r#"{"price_usd":[{"numeric":["<",0]}]}"#);
    assert!(negative.matches_attributes(&[number("price_usd", "-0.5")]));
    assert!(!negative.matches_attributes(&[number("price_usd", "0")]));

    let range = on_attributes(r#"{"price_usd":[{"numeric":[">",0,"<=",150]}]}"#);
    assert!(range.matches_attributes(&[number("price_usd", "150")]));
    assert!(!range.matches_attributes(&[number("price_usd", "150.00001")]));
    assert!(!range.matches_attributes(&[number("price_usd", "0")]));
}

/// Docs (AND/OR logic): keys AND, values OR; the docs' example message.
#[test]
fn n4_docs_and_across_keys_or_within_a_key() {
    let policy = on_attributes(
        r#"{"customer_interests":["rugby","football","baseball"],"price_usd":[{"numeric":[">",100]}]}"#,
    );
    let interests = array("customer_interests", r#"["soccer", "rugby", "hockey"]"#);
    assert!(policy.matches_attributes(&[interests, number("price_usd", "210.75")]));
    assert!(!policy.matches_attributes(&[interests, number("price_usd", "99")]));
    assert!(!policy.matches_attributes(&[number("price_usd", "210.75")]));
}

/// Docs: "Amazon SNS ignores message attributes with the Binary data
/// type" for values; the notes count it present for `exists` ("presence
/// means the attribute was sent (any type)").
#[test]
fn n4_binary_attributes_match_no_value_rule() {
    let binary = Attribute {
        name: "blob",
        data_type: "Binary",
        value: "YWJj",
    };
    assert!(!on_attributes(r#"{"blob":["YWJj"]}"#).matches_attributes(&[binary]));
    assert!(!on_attributes(r#"{"blob":[{"anything-but":"x"}]}"#).matches_attributes(&[binary]));
    assert!(on_attributes(r#"{"blob":[{"exists":true}]}"#).matches_attributes(&[binary]));
}

/// Values keep their type (the rule engine's typing; not recorded): a
/// `String` "100" is not the number 100 and a `Number` is no string for
/// prefix; anything-but lets a value of another type through.
#[test]
fn n4_attribute_values_keep_their_type() {
    let hundred = on_attributes(r#"{"a":[100]}"#);
    assert!(hundred.matches_attributes(&[number("a", "100.0")]));
    assert!(!hundred.matches_attributes(&[string("a", "100")]));
    let text = on_attributes(r#"{"a":["100"]}"#);
    assert!(text.matches_attributes(&[string("a", "100")]));
    assert!(!text.matches_attributes(&[number("a", "100")]));
    assert!(!on_attributes(r#"{"a":[{"prefix":"1"}]}"#).matches_attributes(&[number("a", "100")]));
    assert!(
        !on_attributes(r#"{"a":[{"numeric":[">",1]}]}"#).matches_attributes(&[string("a", "100")])
    );
    assert!(
        on_attributes(r#"{"a":[{"anything-but":["100"]}]}"#)
            .matches_attributes(&[number("a", "100")])
    );
    let elements = on_attributes(r#"{"a":[true, null, 5]}"#);
    assert!(elements.matches_attributes(&[array("a", "[false, true]")]));
    assert!(elements.matches_attributes(&[array("a", r#"["x", null]"#)]));
    assert!(elements.matches_attributes(&[array("a", "[5.0]")]));
    assert!(!elements.matches_attributes(&[array("a", r#"["true", "null", "5"]"#)]));
}

/// `$or` across attributes, and an attribute name with dots is one name.
#[test]
fn n4_or_and_dotted_names_on_attributes() {
    let policy = on_attributes(r#"{"$or":[{"a.b":["x"]},{"c":[{"exists":true}]}]}"#);
    assert!(policy.matches_attributes(&[string("a.b", "x")]));
    assert!(policy.matches_attributes(&[string("c", "anything")]));
    assert!(!policy.matches_attributes(&[string("a.b", "y")]));
}

/// One read of the attributes serves many policies, and `matches` reads a
/// message in each policy's scope.
#[test]
fn n4_one_message_is_matched_against_many_policies() {
    let attributes = [string("kind", "order"), number("total", "42")];
    let message = Message::new(&attributes, r#"{"kind":"refund"}"#);
    let by_attribute = on_attributes(r#"{"kind":["order"]}"#);
    let by_body = FilterPolicy::parse(r#"{"kind":["order"]}"#, Scope::MessageBody);
    assert!(by_attribute.matches(&message));
    assert!(by_body.is_ok_and(|p| !p.matches(&message)));
    let read = MessageAttributes::new(&attributes);
    assert!(on_attributes(r#"{"total":[{"numeric":["=",42]}]}"#).matches_message_attributes(&read));
}

/// Docs (example filter policies): the same policy works on the example
/// message's attributes and on its body; the rejecting policy rejects both
/// (an absent key, `encrypted`, fails whatever its values).
#[test]
fn n4_docs_example_policies_in_both_scopes() {
    let attributes = [
        array("customer_interests", r#"["soccer", "rugby", "hockey"]"#),
        string("store", "example_corp"),
        string("event", "order_placed"),
        number("price_usd", "210.75"),
    ];
    let body = r#"{"customer_interests":["soccer","rugby","hockey"],"store":"example_corp","event":"order_placed","price_usd":210.75}"#;
    let accepting = r#"{"store":["example_corp"],"event":[{"anything-but":"order_cancelled"}],
        "customer_interests":["rugby","football","baseball"],"price_usd":[{"numeric":[">=",100]}]}"#;
    let rejecting = r#"{"store":["example_corp"],"event":["order_cancelled"],"encrypted":[false],
        "customer_interests":["basketball","baseball"]}"#;
    for scope in [Scope::MessageAttributes, Scope::MessageBody] {
        let message = Message::new(&attributes, body);
        let accept = FilterPolicy::parse(accepting, scope).map(|p| p.matches(&message));
        let reject = FilterPolicy::parse(rejecting, scope).map(|p| p.matches(&message));
        assert_eq!((accept, reject), (Ok(true), Ok(false)), "{scope:?}");
    }
}

/// Docs (filter policy constraints, attribute-based filtering): double
/// quotes and backslashes in an attribute value must be "double escaped"
/// in the policy or it does not match. In the body scope they are not.
#[test]
fn n4_quotes_and_backslashes_are_double_escaped_on_attributes() {
    let quoted = [string("a", r#"say "hi""#)];
    assert!(on_attributes(r#"{"a":["say \\\"hi\\\""]}"#).matches_attributes(&quoted));
    assert!(!on_attributes(r#"{"a":["say \"hi\""]}"#).matches_attributes(&quoted));
    let path = [string("a", r"C:\dir")];
    assert!(on_attributes(r#"{"a":["C:\\\\dir"]}"#).matches_attributes(&path));
    assert!(!on_attributes(r#"{"a":["C:\\dir"]}"#).matches_attributes(&path));
    let elements = [array("a", r#"["say \"hi\""]"#)];
    assert!(on_attributes(r#"{"a":["say \\\"hi\\\""]}"#).matches_attributes(&elements));
    let body = r#"{"a":"say \"hi\""}"#;
    assert!(super::on_body(r#"{"a":["say \"hi\""]}"#).matches_body(body));
}
