//! Matching in the `MessageBody` scope: the recorded deliveries
//! (recorded-cases.md 201, 203–209), all from LS-FP
//! `TestSNSFilterPolicyBody`, and the developer guide's body examples.

use serde_json::json;

use super::on_body;

/// The bodies `policy` delivers, by index.
fn delivered(policy: &str, bodies: &[serde_json::Value]) -> Vec<usize> {
    let policy = on_body(policy);
    (0..bodies.len())
        .filter(|&i| policy.matches_body(&bodies[i].to_string()))
        .collect()
}

/// Recorded 201: nested keys, `prefix`, `exists: false` at two levels;
/// two bodies delivered, five not, and neither plain text nor a JSON
/// string. LS-FP `test_filter_policy_on_message_body[True|False]` (raw
/// and envelope delivery alike).
#[test]
fn n4_nested_body_policy() {
    let policy = r#"{"object":{"key":[{"prefix":"auto-"},"hardcodedvalue"],"nested_key":[{"exists":false}]},"test":[{"exists":false}]}"#;
    let bodies = [
        json!({"object": {"key": "auto-test"}}),
        json!({"object": {"key": "hardcodedvalue"}}),
        json!({"object": {"key": "test-auto"}}),
        json!({"object": {"key": "auto-test"}, "test": "just-exists"}),
        json!({"object": {"key": "auto-test", "nested_key": "just-exists"}}),
        json!({"object": {"test": "auto-test"}}),
        json!({"test": "auto-test"}),
    ];
    assert_eq!(delivered(policy, &bodies), [0, 1]);
    let parsed = on_body(policy);
    assert!(!parsed.matches_body("Regular string message"));
    assert!(!parsed.matches_body(r#""Regular string message""#));
}

/// Recorded 203: dots in keys flatten, in the policy and in the body.
/// LS-FP `test_filter_policy_on_message_body_dot_attribute`.
#[test]
fn n4_dots_in_keys_are_paths() {
    let bodies = [
        json!({"object": {"nested": "string.value"}}),
        json!({"object.nested": "string.value"}),
        json!({"object": {"nested": "test-auto"}}),
    ];
    assert_eq!(
        delivered(r#"{"object.nested":["string.value"]}"#, &bodies),
        [0, 1]
    );
    let deep = [
        json!({"object": {"nested": {"test": "string.value"}}}),
        json!({"object.nested.test": "string.value"}),
        json!({"object.nested": {"test": "string.value"}}),
        json!({"object": {"nested.test": "string.value"}}),
        json!({"object": {"nested": {"test": "string.notvalue"}}}),
    ];
    assert_eq!(
        delivered(r#"{"object.nested.test":["string.value"]}"#, &deep),
        [0, 1, 2, 3]
    );
}

/// Recorded 204: an array in the body matches if an element does; two
/// subscriptions each get two of four messages. LS-FP
/// `test_filter_policy_on_message_body_array_attributes`.
#[test]
fn n4_arrays_in_the_body_match_by_any_element() {
    let bodies = [
        json!({"headers": {"route-to": ["queue3"]}}),
        json!({"headers": {"route-to": ["queue1"]}}),
        json!({"headers": {"route-to": ["queue2"]}}),
        json!({"headers": {"route-to": ["queue1", "queue2"]}}),
    ];
    assert_eq!(
        delivered(r#"{"headers":{"route-to":["queue1"]}}"#, &bodies),
        [1, 3]
    );
    assert_eq!(
        delivered(r#"{"headers":{"route-to":["queue2"]}}"#, &bodies),
        [2, 3]
    );
}

/// Recorded 205: arrays of objects, and a list inside a list, expose their
/// elements' keys; two of four S3 events delivered. LS-FP
/// `test_filter_policy_on_message_body_array_of_object_attributes`.
#[test]
fn n4_arrays_of_objects_expose_their_keys() {
    let record = |name: &str, key: &str| {
        json!({
            "eventSource": "aws:s3",
            "eventTime": "2022-11-21T03:41:29.743Z",
            "eventName": name,
            "s3": {
                "bucket": {"name": "insurance-bucket-demo", "arn": "arn:aws:s3:::insurance-bucket-demo"},
                "object": {"key": key, "size": 17}
            }
        })
    };
    let multiple = json!({"Records": [
        {"eventSource": "aws:s3", "eventName": "ObjectCreated:Put",
         "s3": {"object": [[{"key": "auto-insurance-2314.xml", "size": 17}]]}},
        {"eventSource": "aws:s3", "eventName": "ObjectRemoved:Delete",
         "s3": {"object": {"key": "home-insurance-2314.xml", "size": 17}}}
    ]});
    let bodies = [
        multiple,
        json!({"Records": [record("ObjectRemoved:Delete", "auto-insurance-2314.xml")]}),
        json!({"Records": [record("ObjectCreated:Put", "home-insurance-2314.xml")]}),
        json!({"Records": [record("ObjectCreated:Put", "auto-insurance-2314.xml")]}),
    ];
    let policy = r#"{"Records":{"s3":{"object":{"key":[{"prefix":"auto-"}]}},"eventName":[{"prefix":"ObjectCreated:"}]}}"#;
    assert_eq!(delivered(policy, &bodies), [0, 3]);
}

/// Recorded 206: `$or` at the top and inside `detail`; five of twelve
/// bodies delivered. LS-FP `test_filter_policy_on_message_body_or_attribute`.
#[test]
fn n4_or_in_the_body() {
    let policy = r#"{"$or":[{"metricName":["CPUUtilization","ReadLatency"]},{"namespace":["AWS/EC2","AWS/ES"]}],
        "detail":{"scope":["Service"],"$or":[{"source":["aws.cloudwatch"]},{"type":["CloudWatch Alarm State Change"]}]}}"#;
    let bodies = [
        json!({"metricName": "CPUUtilization", "detail": {"scope": "aws.cloudwatch", "type": "CloudWatch Alarm State Change"}}),
        json!({"metricName": "CPUUtilization", "detail": {"scope": "Service", "type": "CPUUtilization"}}),
        json!({"metricName": "CPUUtilization", "detail": {"type": "CloudWatch Alarm State Change"}}),
        json!({"metricName": "CPUUtilization", "detail": {"scope": "Service"}}),
        json!({"metricName": "CPUUtilization", "scope": "Service"}),
        json!({"metricName": "AWS/EC2", "detail": {"scope": "Service", "type": "CloudWatch Alarm State Change"}}),
        json!({"namespace": "CPUUtilization", "detail": {"scope": "Service", "type": "CloudWatch Alarm State Change"}}),
        json!({"metricName": "CPUUtilization", "detail": {"scope": "Service", "source": "aws.cloudwatch"}}),
        json!({"metricName": "ReadLatency", "detail": {"scope": "Service", "source": "aws.cloudwatch"}}),
        json!({"namespace": "AWS/EC2", "detail": {"scope": "Service", "source": "aws.cloudwatch"}}),
        json!({"namespace": "AWS/ES", "detail": {"scope": "Service", "source": "aws.cloudwatch"}}),
        json!({"metricName": "CPUUtilization", "detail": {"scope": "Service", "type": "CloudWatch Alarm State Change"}}),
    ];
    assert_eq!(delivered(policy, &bodies), [7, 8, 9, 10, 11]);
}

/// Recorded 207: `""` matches an empty string, and an empty array
/// elsewhere does no harm. LS-FP `test_filter_policy_empty_array_payload`.
#[test]
fn n4_empty_string_and_empty_array() {
    let body = json!({
        "version": "0",
        "id": "3e3c153a-8339-4e30-8c35-687ebef853fe",
        "detail-type": "EC2 Instance Launch Successful",
        "source": "aws.autoscaling",
        "account": "123456789012",
        "time": "2015-11-11T21:31:47Z",
        "region": "my-region",
        "resources": [],
        "detail": {"eventVersion": "", "responseElements": null}
    });
    assert_eq!(
        delivered(r#"{"detail":{"eventVersion":[""]}}"#, &[body]),
        [0]
    );
}

/// Recorded 208: a large (~40 KB) payload with the match deep inside a
/// list is delivered. LS-FP `test_filter_policy_large_complex_payload`;
/// the payload here has the recorded one's shape (`detail.payload.nested.
/// another-level.deep` a list of objects, one with `inside-list:
/// "q-test-value"`) and generated filler instead of its random content.
#[test]
fn n4_large_payload() {
    let filler: serde_json::Map<String, serde_json::Value> = (0..400)
        .map(|i| {
            (
                format!("field{i}"),
                json!({"text": format!("{i:0>60}"), "n": i, "list": [i, {"k": "v"}]}),
            )
        })
        .collect();
    let body = json!({
        "id": "1", "source": "test-source", "detail-type": "test-detail-type",
        "detail": {
            "sourceHostname": "host", "retryCount": 0, "metadata": {},
            "payload": {
                "filler": filler,
                "nested": {
                    "before": {"x": [1, 2, 3]},
                    "another-level": {
                        "a": "b",
                        "deep": [
                            {"inside-list": "q-test-value", "gurT": "hyPIFAsG"},
                            {"Ji": "A"},
                            {"zI": "f"}
                        ]
                    }
                }
            }
        }
    });
    let text = body.to_string();
    assert!(text.len() > 35_000, "payload is {} bytes", text.len());
    let policy = on_body(
        r#"{"detail":{"payload.nested.another-level.deep":{"inside-list":[{"prefix":"q-test"}]}}}"#,
    );
    assert!(policy.matches_body(&text));
}

/// Recorded 209: cidr inside a nested `$or`; 10.0.0.255 and an
/// uncompressed IPv6 address in the block delivered, 10.0.0.256 (no
/// address) and an address outside not. LS-FP
/// `test_filter_policy_ip_address_condition`.
#[test]
fn n4_cidr_in_the_body() {
    let policy = r#"{"detail":{"$or":[{"sourceIPAddress":[{"cidr":"10.0.0.0/24"}]},{"sourceIPAddressV6":[{"cidr":"2001:db8:1234:1a00::/64"}]}]}}"#;
    let event = |id: &str, detail: serde_json::Value| {
        json!({"id": id, "source": "test-source", "detail-type": "test-detail-type", "account": "123456789012",
               "region": "my-region", "time": "2022-07-13T13:48:01Z", "detail": detail})
    };
    let bodies = [
        event("1", json!({"sourceIPAddress": "10.0.0.255"})),
        event("2", json!({"sourceIPAddress": "10.0.0.256"})),
        event(
            "3",
            json!({"sourceIPAddressV6": "2001:0db8:1234:1a00:0000:0000:0000:0000"}),
        ),
        event(
            "4",
            json!({"sourceIPAddressV6": "2001:0db8:123f:1a01:0000:0000:0000:0000"}),
        ),
    ];
    assert_eq!(delivered(policy, &bodies), [0, 2]);
}

/// Docs (numeric and string value matching, key matching) on bodies.
#[test]
fn n4_docs_examples_on_the_body() {
    let equal = r#"{"price_usd":[{"numeric":["=",301.5]}]}"#;
    assert_eq!(
        delivered(
            equal,
            &[json!({"price_usd": 301.5}), json!({"price_usd": 3.015e2})]
        ),
        [0, 1]
    );
    let but = r#"{"price":[{"anything-but":[100,500]}]}"#;
    let prices = [
        json!({"price": 101}),
        json!({"price": 100.1}),
        json!({"price": [100, 50]}),
        json!({"price": 100}),
    ];
    assert_eq!(delivered(but, &prices), [0, 1, 2]);
    let strings = r#"{"customer_interests":[{"anything-but":["rugby","tennis"]}]}"#;
    let interests = [
        json!({"customer_interests": "baseball"}),
        json!({"customer_interests": ["rugby", "baseball"]}),
        json!({"customer_interests": ["rugby"]}),
    ];
    assert_eq!(delivered(strings, &interests), [0, 1]);
    let exists = [
        json!({"store": "fans", "customer_interests": ["baseball", "basketball"]}),
        json!({"customer_interests": ["baseball", "basketball"]}),
    ];
    assert_eq!(delivered(r#"{"store":[{"exists":true}]}"#, &exists), [0]);
    assert_eq!(delivered(r#"{"store":[{"exists":false}]}"#, &exists), [1]);
}

/// `null` matches a JSON null, not a missing key; an empty array or an
/// object is no value, so `exists` sees it absent (the notes' reference
/// implementation and the rule engine; not recorded).
#[test]
fn n4_null_empty_arrays_and_objects_in_the_body() {
    let bodies = [
        json!({"a": null}),
        json!({}),
        json!({"a": []}),
        json!({"a": {"b": 1}}),
    ];
    assert_eq!(delivered(r#"{"a":[null]}"#, &bodies), [0]);
    assert_eq!(delivered(r#"{"a":[{"exists":true}]}"#, &bodies), [0]);
    assert_eq!(delivered(r#"{"a":[{"exists":false}]}"#, &bodies), [1, 2, 3]);
    assert_eq!(delivered(r#"{"a":[{"anything-but":"x"}]}"#, &bodies), [0]);
}

/// Body values keep their JSON types (the rule engine's typing; not
/// recorded), and `equals-ignore-case`, `suffix` see strings.
#[test]
fn n4_body_values_keep_their_type() {
    let bodies = [
        json!({"a": 5}),
        json!({"a": "5"}),
        json!({"a": true}),
        json!({"a": "true"}),
    ];
    assert_eq!(delivered(r#"{"a":[5]}"#, &bodies), [0]);
    assert_eq!(delivered(r#"{"a":["5"]}"#, &bodies), [1]);
    assert_eq!(delivered(r#"{"a":[true]}"#, &bodies), [2]);
    assert_eq!(delivered(r#"{"a":[{"numeric":[">=",5]}]}"#, &bodies), [0]);
    assert_eq!(delivered(r#"{"a":[{"suffix":"ue"}]}"#, &bodies), [3]);
    assert_eq!(
        delivered(r#"{"a":[{"equals-ignore-case":"TRUE"}]}"#, &bodies),
        [3]
    );
}

/// Large integers compare exactly, not through a rounded float.
#[test]
fn n4_large_integers_compare_exactly() {
    let bodies = [
        json!({"account": 123_456_789_012_345_678_u64}),
        json!({"account": 123_456_789_012_345_679_u64}),
    ];
    assert_eq!(
        delivered(r#"{"account":[123456789012345678]}"#, &bodies),
        [0]
    );
}
