"""Fidelity cases for SNS filter policies: the refusals of a policy that
cannot be (with SNS's words), and which messages a policy lets through, on
message attributes and on the JSON body. Expected answers are AWS's, as
recorded by LocalStack's test_sns_filter_policy.py (see sns_common).

AWS follows some refusals with the parser's position (`\n at [Source: ...;
line: 1, column: N]`); the recording keeps the first line apart as the
normalized message, and that first line is what is compared here."""

import copy
import json

from fidelity import eq
from sns_common import (
    RECORDED_FILTER,
    drain,
    envelope,
    expect_sns_error,
    new_topic,
    nothing_more,
    sns,
    sns_case,
    sqs_target,
    subscribe_queue,
)

# (recorded test, recorded answer, policy given to Subscribe, first line of AWS's refusal)
REFUSED_AT_SUBSCRIBE = [
    ("validate_policy", "error-condition-list", {"key": [["value"]]},
     'Invalid parameter: Attributes Reason: FilterPolicy: Match value must be String, number, true, false, or null'),
    ("validate_policy", "error-condition-operator", {"key": [{"wrong-operator": True}]},
     'Invalid parameter: Attributes Reason: FilterPolicy: Unrecognized match type wrong-operator'),
    ("validate_policy", "error-condition-two-operators", {"key": [{"suffix": "value", "prefix": "value2"}]},
     'Invalid parameter: Attributes Reason: FilterPolicy: Only one key allowed in match expression'),
    ("validate_policy_string_operators", "error-condition-empty-array", {"key": []},
     'Invalid parameter: Attributes Reason: FilterPolicy: Empty arrays are not allowed'),
    ("validate_policy_string_operators", "error-condition-is-numeric", {"key": [{"suffix": 100}]},
     'Invalid parameter: Attributes Reason: FilterPolicy: suffix match pattern must be a string'),
    ("validate_policy_string_operators", "error-condition-is-none", {"key": [{"suffix": None}]},
     'Invalid parameter: Attributes Reason: FilterPolicy: suffix match pattern must be a string'),
    ("validate_policy_string_operators", "error-condition-is-not-list-and-operator", {"key": {"suffix": "value"}},
     'Invalid parameter: Attributes Reason: FilterPolicy: "suffix" must be an object or an array'),
    ("validate_policy_string_operators", "error-condition-empty-list", {"key": [{"suffix": []}]},
     'Invalid parameter: Attributes Reason: FilterPolicy: suffix match pattern must be a string'),
    ("validate_policy_string_operators", "error-condition-list-wrong-type", {"key": [{"suffix": ["test", "test2"]}]},
     'Invalid parameter: Attributes Reason: FilterPolicy: suffix match pattern must be a string'),
    ("validate_policy_string_operators", "error-condition-is-not-list-two-ops", {"key": {"suffix": "value", "prefix": "value"}},
     'Invalid parameter: Attributes Reason: FilterPolicy: "suffix" must be an object or an array'),
    ("validate_policy_string_operators", "error-condition-is-not-list-and-no-operator", {"key": {"not-an-operator": "value"}},
     'Invalid parameter: Attributes Reason: FilterPolicy: "not-an-operator" must be an object or an array'),
    ("validate_policy_string_operators", "error-condition-bad-type", {"key": [{"cidr": ["bad-filter"]}]},
     'Invalid parameter: Attributes Reason: FilterPolicy: prefix match pattern must be a string'),
    ("validate_policy_string_operators", "error-condition-bad-cidr-str", {"key": [{"cidr": "bad-filter"}]},
     "Invalid parameter: Attributes Reason: FilterPolicy: Malformed CIDR, one '/' required"),
    ("validate_policy_string_operators", "error-condition-bad-cidr-str-slash", {"key": [{"cidr": "bad-filter/64"}]},
     'Invalid parameter: Attributes Reason: FilterPolicy: Nonstandard IP address: bad-filter'),
    ("validate_policy_string_operators", "error-condition-bad-cidr-str-slash-2", {"key": [{"cidr": "bad-/64filter"}]},
     'Invalid parameter: Attributes Reason: FilterPolicy: Malformed CIDR, mask bits must be an integer'),
    ("validate_policy_string_operators", "error-condition-bad-cidr-v4", {"key": [{"cidr": "xx.11.xx/8"}]},
     'Invalid parameter: Attributes Reason: FilterPolicy: Nonstandard IP address: xx.11.xx'),
    ("validate_policy_string_operators", "error-condition-bad-cidr-v6", {"key": [{"cidr": "xxxx:db8:1234:1a00::/64"}]},
     'Invalid parameter: Attributes Reason: FilterPolicy: Nonstandard IP address: xxxx:db8:1234:1a00::'),
    ("validate_policy_numeric_operator", "error-numeric-empty", {"key": [{"numeric": []}]},
     'Invalid parameter: Attributes Reason: FilterPolicy: Invalid member in numeric match: ]'),
    ("validate_policy_numeric_operator", "error-numeric-wrong-operator", {"key": [{"numeric": ["operator"]}]},
     'Invalid parameter: Attributes Reason: FilterPolicy: Unrecognized numeric range operator: operator'),
    ("validate_policy_numeric_operator", "error-numeric-operator-order", {"key": [{"numeric": [1, "<="]}]},
     'Invalid parameter: Attributes Reason: FilterPolicy: Invalid member in numeric match: 1'),
    ("validate_policy_numeric_operator", "error-numeric-type", {"key": [{"numeric": ["=", "000"]}]},
     'Invalid parameter: Attributes Reason: FilterPolicy: Value of equals must be numeric'),
    ("validate_policy_numeric_operator", "error-numeric-missing-value", {"key": [{"numeric": [">="]}]},
     'Invalid parameter: Attributes Reason: FilterPolicy: Value of >= must be numeric'),
    ("validate_policy_numeric_operator", "error-numeric-wrong-range-order", {"key": [{"numeric": ["<", 100, ">", 10]}]},
     'Invalid parameter: Attributes Reason: FilterPolicy: Too many elements in numeric expression'),
    ("validate_policy_numeric_operator", "error-numeric-wrong-range-operators", {"key": [{"numeric": [">=", 1, ">", 2]}]},
     'Invalid parameter: Attributes Reason: FilterPolicy: Bad numeric range operator: >'),
    ("validate_policy_numeric_operator", "error-numeric-wrong-value-order", {"key": [{"numeric": [">", 3, "<", 1]}]},
     'Invalid parameter: Attributes Reason: FilterPolicy: Bottom must be less than top'),
    ("validate_policy_numeric_operator", "error-numeric-missing-range-value", {"key": [{"numeric": [">", 20, "<="]}]},
     'Invalid parameter: Attributes Reason: FilterPolicy: Value of <= must be numeric'),
    ("validate_policy_numeric_operator", "error-numeric-missing-range-operator", {"key": [{"numeric": [">", 20, 30]}]},
     'Invalid parameter: Attributes Reason: FilterPolicy: Bad value in numeric range: 30'),
    ("validate_policy_numeric_operator", "error-numeric-wrong-second-range-operator", {"key": [{"numeric": [">", 20, "test"]}]},
     'Invalid parameter: Attributes Reason: FilterPolicy: Bad numeric range operator: test'),
    ("validate_policy_numeric_operator", "error-numeric-wrong-range-value-1-type", {"key": [{"numeric": [">", "20", "<", "30"]}]},
     'Invalid parameter: Attributes Reason: FilterPolicy: Value of > must be numeric'),
    ("validate_policy_numeric_operator", "error-numeric-wrong-range-value-2-type", {"key": [{"numeric": [">", 20, "<", "30"]}]},
     'Invalid parameter: Attributes Reason: FilterPolicy: Value of < must be numeric'),
    ("validate_policy_numeric_operator", "error-numeric-too-many-range", {"key": [{"numeric": [">", 20, "<", 30, "<", 50]}]},
     'Invalid parameter: Attributes Reason: FilterPolicy: Too many terms in numeric range expression'),
    ("validate_policy_exists_operator", "error-condition-none", {"key": [{"exists": None}]},
     'Invalid parameter: Attributes Reason: FilterPolicy: exists match pattern must be either true or false.'),
    ("validate_policy_exists_operator", "error-condition-string", {"key": [{"exists": "no"}]},
     'Invalid parameter: Attributes Reason: FilterPolicy: exists match pattern must be either true or false.'),
    ("validate_policy_nested_anything_but_operator", "error-condition-wrong-operator", {"key": [{"anything-but": {"wrong-operator": None}}]},
     'Invalid parameter: Attributes Reason: FilterPolicy: Unsupported anything-but pattern: wrong-operator'),
    ("validate_policy_nested_anything_but_operator", "error-condition-anything-but-suffix", {"key": [{"anything-but": {"suffix": "test"}}]},
     'Invalid parameter: Attributes Reason: FilterPolicy: Unsupported anything-but pattern: suffix'),
    ("validate_policy_nested_anything_but_operator", "error-condition-anything-but-exists", {"key": [{"anything-but": {"exists": False}}]},
     'Invalid parameter: Attributes Reason: FilterPolicy: Unsupported anything-but pattern: exists'),
    ("validate_policy_nested_anything_but_operator", "error-condition-anything-but-prefix-wrong-type", {"key": [{"anything-but": {"prefix": False}}]},
     'Invalid parameter: Attributes Reason: FilterPolicy: prefix match pattern must be a string'),
]

COMPLEX = "Invalid parameter: Attributes Reason: FilterPolicy: Filter policy is too complex"


def first_line(message):
    return (message or "").split("\n")[0]


def refused_at_subscribe(topic, q_arn, policy, want, scope=None):
    """Subscribe with `policy` must fail with `want` as its first line."""
    attrs = {"FilterPolicy": json.dumps(policy)}
    if scope:
        attrs["FilterPolicyScope"] = scope
    err = expect_sns_error(sns.subscribe, TopicArn=topic, Protocol="sqs", Endpoint=q_arn, Attributes=attrs,
                           code="InvalidParameter")
    eq(first_line(err["Message"]), want, f"refusal of {json.dumps(policy)[:80]}")


def refusals_of(test):
    topic = new_topic("fp")
    _, q_arn = sqs_target()
    problems = []
    for t, _key, policy, want in REFUSED_AT_SUBSCRIBE:
        if t != test:
            continue
        try:
            refused_at_subscribe(topic, q_arn, policy, want)
        except AssertionError as e:
            problems.append(str(e))
    assert not problems, "; ".join(problems)


# The recorded refusals were answered to subscriptions of another protocol
# (SMS); a filter policy is checked the same way whatever the endpoint.
@sns_case("sns-filter", "N4", RECORDED_FILTER + "TestSNSFilterPolicyConditions::test_validate_policy")
def sns_filter_refusals_basic():
    refusals_of("validate_policy")


@sns_case("sns-filter", "N4", RECORDED_FILTER + "TestSNSFilterPolicyConditions::test_validate_policy_string_operators")
def sns_filter_refusals_string_operators():
    refusals_of("validate_policy_string_operators")


@sns_case("sns-filter", "N4", RECORDED_FILTER + "TestSNSFilterPolicyConditions::test_validate_policy_numeric_operator")
def sns_filter_refusals_numeric_operator():
    refusals_of("validate_policy_numeric_operator")


@sns_case("sns-filter", "N4", RECORDED_FILTER + "TestSNSFilterPolicyConditions::test_validate_policy_exists_operator")
def sns_filter_refusals_exists_operator():
    refusals_of("validate_policy_exists_operator")


@sns_case("sns-filter", "N4", RECORDED_FILTER + "TestSNSFilterPolicyConditions::test_validate_policy_nested_anything_but_operator")
def sns_filter_refusals_anything_but():
    refusals_of("validate_policy_nested_anything_but_operator")
    topic = new_topic("fp")
    _, q_arn = sqs_target()
    sub = sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=q_arn, ReturnSubscriptionArn=True,
                        Attributes={"FilterPolicy": json.dumps({"key": [{"anything-but": {"prefix": "test-"}}]})}
                        )["SubscriptionArn"]
    for policy in ({"key": [{"anything-but": ["test", "test2"]}]}, {"key": [{"anything-but": "test"}]}):
        sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="FilterPolicy",
                                        AttributeValue=json.dumps(policy))


@sns_case("sns-filter", "N4", RECORDED_FILTER + "TestSNSFilterPolicyConditions::test_policy_complexity")
def sns_filter_complexity_limits():
    topic = new_topic("fp")
    _, q_arn = sqs_target()
    refused_at_subscribe(topic, q_arn, {"key": [f"value{i}" for i in range(151)]}, COMPLEX)
    refused_at_subscribe(topic, q_arn, {"key1": [f"value{i}" for i in range(100)],
                                        "key2": [f"value{i}" for i in range(51)]}, COMPLEX)
    refused_at_subscribe(topic, q_arn, {f"key{i}": [f"value{i}"] for i in range(1, 7)},
                         "Invalid parameter: Attributes Reason: FilterPolicy: Filter policy can not have more than 5 keys")


@sns_case("sns-filter", "N4", RECORDED_FILTER + "TestSNSFilterPolicyConditions::test_policy_complexity_with_or")
def sns_filter_complexity_with_or():
    topic = new_topic("fp")
    _, q_arn = sqs_target()
    # 4*6 + 4*4*4 + 4*4*4 = 152 combinations
    refused_at_subscribe(topic, q_arn, {
        "source": ["aws.cloudwatch", "aws.events", "aws.test", "aws.test2"],
        "$or": [
            {"metricName": ["CPUUtilization", "ReadLatency", "t1", "t2", "t3", "t4"]},
            {"metricType": ["MetricType", "TestType", "TestType2", "TestType3"],
             "$or": [{"metricId": [1234, 4321, 5678, 9012]}, {"spaceId": [1, 2, 3, 4]}]},
        ],
    }, COMPLEX, scope="MessageAttributes")
    # 3*4*2 + 3*4*6 + 2*4*2 + 2*4*6 = 160 combinations
    refused_at_subscribe(topic, q_arn, {
        "$or": [{"metricName": ["CPUUtilization", "ReadLatency", "TestValue"]}, {"namespace": ["AWS/EC2", "AWS/ES"]}],
        "detail": {"scope": ["Service", "Test"],
                   "$or": [{"source": ["aws.cloudwatch"]},
                           {"type": ["CloudWatch Alarm State Change", "TestValue", "TestValue2"]}]},
    }, COMPLEX, scope="MessageBody")
    # 3*6 + 3*4*4 + 3*4*7 = 150 combinations: at the limit, accepted
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=q_arn, Attributes={
        "FilterPolicyScope": "MessageAttributes",
        "FilterPolicy": json.dumps({
            "source": ["aws.cloudwatch", "aws.events", "aws.test"],
            "$or": [
                {"metricName": ["CPUUtilization", "ReadLatency", "TestVal", "TestVal2", "TestVal3", "TestVal4"]},
                {"metricType": ["MetricType", "TestType", "TestType2", "TestType3"],
                 "$or": [{"metricId": [1234, 4321, 5678, 9012]}, {"spaceId": [1, 2, 3, 4, 5, 6, 7]}]},
            ],
        })})


# ---- policies on a subscription ---------------------------------------------------

@sns_case("sns-filter", "N4", RECORDED_FILTER + "TestSNSFilterPolicyCrud::test_set_subscription_filter_policy_scope")
def sns_filter_policy_scope_shown_with_a_policy():
    topic = new_topic("fp")
    _, q_arn = sqs_target()
    sub = subscribe_queue(topic, q_arn)
    attrs = sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"]
    assert "FilterPolicyScope" not in attrs, attrs
    sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="FilterPolicyScope", AttributeValue="MessageBody")
    attrs = sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"]
    assert "FilterPolicyScope" not in attrs, f"FilterPolicyScope shown without a policy: {attrs}"
    expect_sns_error(sns.set_subscription_attributes, SubscriptionArn=sub, AttributeName="FilterPolicyScope",
                     AttributeValue="RandomValue", code="InvalidParameter",
                     message="Invalid parameter: FilterPolicyScope: Invalid value [RandomValue]. Please use either "
                             "MessageBody or MessageAttributes")
    sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="FilterPolicy",
                                    AttributeValue=json.dumps({"attr": ["match-this"]}))
    attrs = sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"]
    eq(attrs.get("FilterPolicyScope"), "MessageBody", "FilterPolicyScope")
    eq(json.loads(attrs["FilterPolicy"]), {"attr": ["match-this"]}, "FilterPolicy")


@sns_case("sns-filter", "N4", RECORDED_FILTER + "TestSNSFilterPolicyCrud::test_sub_filter_policy_nested_property")
def sns_filter_nested_policy_needs_body_scope():
    topic = new_topic("fp")
    _, q_arn = sqs_target()
    sub = subscribe_queue(topic, q_arn)
    nested = {"object": {"key": [{"prefix": "auto-"}]}}
    expect_sns_error(sns.set_subscription_attributes, SubscriptionArn=sub, AttributeName="FilterPolicy",
                     AttributeValue=json.dumps(nested), code="InvalidParameter",
                     message="Invalid parameter: Filter policy scope MessageAttributes does not support nested "
                             "filter policy")
    sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="FilterPolicyScope", AttributeValue="MessageBody")
    sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="FilterPolicy", AttributeValue=json.dumps(nested))
    attrs = sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"]
    eq(json.loads(attrs["FilterPolicy"]), nested, "FilterPolicy")
    eq(attrs.get("FilterPolicyScope"), "MessageBody", "FilterPolicyScope")


@sns_case("sns-filter", "N4", RECORDED_FILTER + "TestSNSFilterPolicyCrud::test_sub_filter_policy_nested_property_constraints")
def sns_filter_nested_policy_limits():
    topic = new_topic("fp")
    _, q_arn = sqs_target()
    sub = subscribe_queue(topic, q_arn)
    sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="FilterPolicyScope", AttributeValue="MessageBody")

    def refused(policy, want):
        err = expect_sns_error(sns.set_subscription_attributes, SubscriptionArn=sub, AttributeName="FilterPolicy",
                               AttributeValue=json.dumps(policy), code="InvalidParameter")
        eq(first_line(err["Message"]), want, "refusal")

    refused({"key_a": {"key_b": {"key_c": ["value_one", "value_two", "value_three", "value_four"]}},
             "key_d": {"key_e": ["value_one", "value_two", "value_three"]},
             "key_f": ["value_one", "value_two", "value_three"]},
            "Invalid parameter: FilterPolicy: Filter policy is too complex")
    refused({k: [f"value_{n}"] for n, k in enumerate(["key_a", "key_b", "key_c", "key_d", "key_e", "key_f"])},
            "Invalid parameter: FilterPolicy: Filter policy can not have more than 5 keys")
    refused({"key_a": "value_one"}, 'Invalid parameter: FilterPolicy: "key_a" must be an object or an array')


# ---- matching on message attributes ------------------------------------------------

def filtered_queue(policy, scope=None, raw=False):
    topic = new_topic("fm")
    url, q_arn = sqs_target()
    attrs = {"FilterPolicy": json.dumps(policy)}
    if scope:
        attrs["FilterPolicyScope"] = scope
    sub = subscribe_queue(topic, q_arn, raw=raw, attributes=attrs)
    return topic, url, sub


def bodies(url, expect, raw):
    msgs = drain(url, expect, wait=1)
    return sorted(m["Body"] if raw else envelope(m)["Message"] for m in msgs)


@sns_case("sns-filter", "N4", RECORDED_FILTER + "TestSNSFilterPolicyAttributes::test_filter_policy")
def sns_filter_numeric_range_null_and_removal():
    topic, url, sub = filtered_queue({"attr1": [{"numeric": [">", 0, "<=", 100]}]})
    sns.publish(TopicArn=topic, Message="This is a test message",
                MessageAttributes={"attr1": {"DataType": "Number", "StringValue": "99"}})
    sns.publish(TopicArn=topic, Message="This is another test message",
                MessageAttributes={"attr1": {"DataType": "Number", "StringValue": "111"}})
    eq(bodies(url, 2, raw=False), ["This is a test message"], "delivered with attr1 in (0, 100]")
    policy = json.dumps({"attr1": [None, {"anything-but": "whatever"}]})
    sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="FilterPolicy", AttributeValue=policy)
    eq(sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"]["FilterPolicy"], policy, "FilterPolicy")
    sns.publish(TopicArn=topic, Message="This the test message for null")
    nothing_more(url)
    sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="FilterPolicy", AttributeValue="")
    assert "FilterPolicy" not in sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"]
    sns.publish(TopicArn=topic, Message="This the test message for null")
    eq(bodies(url, 1, raw=False), ["This the test message for null"], "delivered once the policy is removed")


@sns_case("sns-filter", "N4", RECORDED_FILTER + "TestSNSFilterPolicyAttributes::test_exists_filter_policy")
def sns_filter_exists_true_and_false():
    topic, url, sub = filtered_queue({"store": [{"exists": True}]})
    num = {"DataType": "Number", "StringValue": "99"}
    sns.publish(TopicArn=topic, Message="message-1", MessageAttributes={"store": num, "def": num})
    sns.publish(TopicArn=topic, Message="message-2",
                MessageAttributes={"attr1": {"DataType": "Number", "StringValue": "111"}})
    eq(bodies(url, 2, raw=False), ["message-1"], "exists: true")
    sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="FilterPolicy",
                                    AttributeValue=json.dumps({"store": [{"exists": False}]}))
    sns.publish(TopicArn=topic, Message="message-3", MessageAttributes={"def": num})
    sns.publish(TopicArn=topic, Message="message-4", MessageAttributes={"store": num, "def": num})
    eq(bodies(url, 2, raw=False), ["message-3"], "exists: false")


@sns_case("sns-filter", "N4", RECORDED_FILTER + "TestSNSFilterPolicyAttributes::test_exists_filter_policy_attributes_array")
def sns_filter_string_array_attribute():
    topic, url, _ = filtered_queue({"store": ["value1"]}, scope="MessageAttributes")
    sns.publish(TopicArn=topic, Message="message-1",
                MessageAttributes={"store": {"DataType": "String", "StringValue": "value1"}})
    sns.publish(TopicArn=topic, Message="message-2",
                MessageAttributes={"store": {"DataType": "String.Array", "StringValue": json.dumps(["value1", "value2"])}})
    sns.publish(TopicArn=topic, Message="message-3",
                MessageAttributes={"store": {"DataType": "String.Array", "StringValue": json.dumps(["value2", "value3"])}})
    eq(bodies(url, 3, raw=False), ["message-1", "message-2"], "delivered")


@sns_case("sns-filter", "N4", RECORDED_FILTER + "TestSNSFilterPolicyBody::test_filter_policy_for_batch")
def sns_filter_applies_to_publish_batch():
    topic = new_topic("fm")
    url_f, arn_f = sqs_target()
    url_n, arn_n = sqs_target()
    subscribe_queue(topic, arn_f, attributes={"FilterPolicy": json.dumps({"attr1": [{"numeric": [">", 0, "<=", 100]}]})})
    subscribe_queue(topic, arn_n)
    sns.publish_batch(TopicArn=topic, PublishBatchRequestEntries=[{
        "Id": "1", "Message": "This is a test message",
        "MessageAttributes": {"attr1": {"DataType": "Number", "StringValue": "99"}}}])
    sns.publish_batch(TopicArn=topic, PublishBatchRequestEntries=[{
        "Id": "1", "Message": "This is another test message",
        "MessageAttributes": {"attr1": {"DataType": "Number", "StringValue": "111"}}}])
    eq(bodies(url_n, 2, raw=False), ["This is a test message", "This is another test message"], "no filter")
    eq(bodies(url_f, 2, raw=False), ["This is a test message"], "with the filter")


# ---- matching on the message body --------------------------------------------------

def sns_filter_body(raw):
    policy = {"object": {"key": [{"prefix": "auto-"}, "hardcodedvalue"], "nested_key": [{"exists": False}]},
              "test": [{"exists": False}]}
    topic, url, _ = filtered_queue(policy, scope="MessageBody", raw=raw)
    passing = [{"object": {"key": "auto-test"}}, {"object": {"key": "hardcodedvalue"}}]
    failing = [{"object": {"key": "test-auto"}}, {"object": {"key": "auto-test"}, "test": "just-exists"},
               {"object": {"key": "auto-test", "nested_key": "just-exists"}}, {"object": {"test": "auto-test"}},
               {"test": "auto-test"}]
    for m in passing + failing:
        sns.publish(TopicArn=topic, Message=json.dumps(m))
    sns.publish(TopicArn=topic, Message="Regular string message")
    sns.publish(TopicArn=topic, Message=json.dumps("Regular string message"))
    eq(bodies(url, 9, raw), sorted(json.dumps(m) for m in passing), "delivered")


@sns_case("sns-filter", "N4", RECORDED_FILTER + "TestSNSFilterPolicyBody::test_filter_policy_on_message_body[True]")
def sns_filter_body_raw():
    sns_filter_body(True)


@sns_case("sns-filter", "N4", RECORDED_FILTER + "TestSNSFilterPolicyBody::test_filter_policy_on_message_body[False]")
def sns_filter_body_envelope():
    sns_filter_body(False)


@sns_case("sns-filter", "N4", RECORDED_FILTER + "TestSNSFilterPolicyBody::test_filter_policy_on_message_body_dot_attribute")
def sns_filter_body_dotted_keys():
    topic, url, sub = filtered_queue({"object.nested": ["string.value"]}, scope="MessageBody")
    ok = [{"object": {"nested": "string.value"}}, {"object.nested": "string.value"}]
    for m in ok + [{"object": {"nested": "test-auto"}}]:
        sns.publish(TopicArn=topic, Message=json.dumps(m))
    eq(bodies(url, 3, raw=False), sorted(json.dumps(m) for m in ok), "one dotted level")
    sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="FilterPolicy",
                                    AttributeValue=json.dumps({"object.nested.test": ["string.value"]}))
    ok = [{"object": {"nested": {"test": "string.value"}}}, {"object.nested.test": "string.value"},
          {"object.nested": {"test": "string.value"}}, {"object": {"nested.test": "string.value"}}]
    for m in ok + [{"object": {"nested": {"test": "string.notvalue"}}}]:
        sns.publish(TopicArn=topic, Message=json.dumps(m))
    eq(bodies(url, 5, raw=False), sorted(json.dumps(m) for m in ok), "two dotted levels")


def body_filtered_raw_queue(topic, policy):
    url, q_arn = sqs_target()
    subscribe_queue(topic, q_arn, raw=True,
                    attributes={"FilterPolicyScope": "MessageBody", "FilterPolicy": json.dumps(policy)})
    return url


@sns_case("sns-filter", "N4", RECORDED_FILTER + "TestSNSFilterPolicyBody::test_filter_policy_on_message_body_array_attributes")
def sns_filter_body_arrays_route():
    topic = new_topic("fm")
    q1 = body_filtered_raw_queue(topic, {"headers": {"route-to": ["queue1"]}})
    q2 = body_filtered_raw_queue(topic, {"headers": {"route-to": ["queue2"]}})
    for route in (["queue3"], ["queue1"], ["queue2"], ["queue1", "queue2"]):
        sns.publish(TopicArn=topic, Message=json.dumps({"headers": {"route-to": route}}))
    for url, want in [(q1, [["queue1", "queue2"], ["queue1"]]), (q2, [["queue1", "queue2"], ["queue2"]])]:
        eq(bodies(url, 3, raw=True), sorted(json.dumps({"headers": {"route-to": r}}) for r in want), "routed")


@sns_case("sns-filter", "N4", RECORDED_FILTER + "TestSNSFilterPolicyBody::test_filter_policy_on_message_body_array_of_object_attributes")
def sns_filter_body_arrays_of_objects():
    topic = new_topic("fm")
    url = body_filtered_raw_queue(topic, {"Records": {"s3": {"object": {"key": [{"prefix": "auto-"}]}},
                                                      "eventName": [{"prefix": "ObjectCreated:"}]}})
    created = {"Records": [{"eventSource": "aws:s3", "eventTime": "2022-11-21T03:41:29.743Z",
                            "eventName": "ObjectCreated:Put",
                            "s3": {"bucket": {"name": "insurance-bucket-demo",
                                              "arn": "arn:aws:s3:::insurance-bucket-demo"},
                                   "object": {"key": "auto-insurance-2314.xml", "size": 17}}}]}
    removed = copy.deepcopy(created)
    removed["Records"][0]["eventName"] = "ObjectRemoved:Delete"
    home = copy.deepcopy(created)
    home["Records"][0]["s3"]["object"]["key"] = "home-insurance-2314.xml"
    multiple = {"Records": [
        {"eventSource": "aws:s3", "eventName": "ObjectCreated:Put",
         "s3": {"object": [[{"key": "auto-insurance-2314.xml", "size": 17}]]}},
        {"eventSource": "aws:s3", "eventName": "ObjectRemoved:Delete",
         "s3": {"object": {"key": "home-insurance-2314.xml", "size": 17}}}]}
    for m in (multiple, removed, home, created):
        sns.publish(TopicArn=topic, Message=json.dumps(m))
    eq(bodies(url, 4, raw=True), sorted(json.dumps(m) for m in (multiple, created)), "delivered")


@sns_case("sns-filter", "N4", RECORDED_FILTER + "TestSNSFilterPolicyBody::test_filter_policy_on_message_body_or_attribute")
def sns_filter_body_or():
    topic = new_topic("fm")
    url = body_filtered_raw_queue(topic, {
        "$or": [{"metricName": ["CPUUtilization", "ReadLatency"]}, {"namespace": ["AWS/EC2", "AWS/ES"]}],
        "detail": {"scope": ["Service"],
                   "$or": [{"source": ["aws.cloudwatch"]}, {"type": ["CloudWatch Alarm State Change"]}]},
    })
    failing = [
        {"metricName": "CPUUtilization", "detail": {"scope": "aws.cloudwatch", "type": "CloudWatch Alarm State Change"}},
        {"metricName": "CPUUtilization", "detail": {"scope": "Service", "type": "CPUUtilization"}},
        {"metricName": "CPUUtilization", "detail": {"type": "CloudWatch Alarm State Change"}},
        {"metricName": "CPUUtilization", "detail": {"scope": "Service"}},
        {"metricName": "CPUUtilization", "scope": "Service"},
        {"metricName": "AWS/EC2", "detail": {"scope": "Service", "type": "CloudWatch Alarm State Change"}},
        {"namespace": "CPUUtilization", "detail": {"scope": "Service", "type": "CloudWatch Alarm State Change"}},
    ]
    passing = [
        {"metricName": "CPUUtilization", "detail": {"scope": "Service", "source": "aws.cloudwatch"}},
        {"metricName": "ReadLatency", "detail": {"scope": "Service", "source": "aws.cloudwatch"}},
        {"namespace": "AWS/EC2", "detail": {"scope": "Service", "source": "aws.cloudwatch"}},
        {"namespace": "AWS/ES", "detail": {"scope": "Service", "source": "aws.cloudwatch"}},
        {"metricName": "CPUUtilization", "detail": {"scope": "Service", "type": "CloudWatch Alarm State Change"}},
    ]
    for m in failing + passing:
        sns.publish(TopicArn=topic, Message=json.dumps(m))
    eq(bodies(url, 12, raw=True), sorted(json.dumps(m) for m in passing), "delivered")


@sns_case("sns-filter", "N4", RECORDED_FILTER + "TestSNSFilterPolicyBody::test_filter_policy_empty_array_payload")
def sns_filter_body_empty_string_and_empty_array():
    topic = new_topic("fm")
    url = body_filtered_raw_queue(topic, {"detail": {"eventVersion": [""]}})
    message = {"version": "0", "id": "3e3c153a-8339-4e30-8c35-687ebef853fe",
               "detail-type": "EC2 Instance Launch Successful", "source": "aws.autoscaling",
               "account": "123456789012", "time": "2015-11-11T21:31:47Z", "region": "my-region", "resources": [],
               "detail": {"eventVersion": "", "responseElements": None}}
    sns.publish(TopicArn=topic, Message=json.dumps(message))
    eq(bodies(url, 1, raw=True), [json.dumps(message)], "delivered")


@sns_case("sns-filter", "N4", RECORDED_FILTER + "TestSNSFilterPolicyBody::test_filter_policy_ip_address_condition")
def sns_filter_body_cidr():
    topic = new_topic("fm")
    url = body_filtered_raw_queue(topic, {"detail": {"$or": [
        {"sourceIPAddress": [{"cidr": "10.0.0.0/24"}]},
        {"sourceIPAddressV6": [{"cidr": "2001:db8:1234:1a00::/64"}]}]}})
    base = {"source": "test-source", "detail-type": "test-detail-type", "account": "123456789012",
            "region": "my-region", "time": "2022-07-13T13:48:01Z"}
    msgs = [dict(base, id="1", detail={"sourceIPAddress": "10.0.0.255"}),
            dict(base, id="2", detail={"sourceIPAddress": "10.0.0.256"}),
            dict(base, id="3", detail={"sourceIPAddressV6": "2001:0db8:1234:1a00:0000:0000:0000:0000"}),
            dict(base, id="4", detail={"sourceIPAddressV6": "2001:0db8:123f:1a01:0000:0000:0000:0000"})]
    for m in msgs:
        sns.publish(TopicArn=topic, Message=json.dumps(m))
    eq(bodies(url, 4, raw=True), sorted(json.dumps(m) for m in (msgs[0], msgs[2])), "delivered")
