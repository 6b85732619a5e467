"""Fidelity cases for SNS subscriptions of queues: Subscribe (idempotency,
validation), their attributes, listing, Unsubscribe, ConfirmSubscription's
refusals. Expected answers are AWS's, as recorded by LocalStack's
test_sns.py (see sns_common)."""

import json

from botocore.config import Config

from fidelity import ACCOUNT, REGION, eq, unique
from sns_common import (
    RECORDED,
    expect_sns_error,
    make_sns,
    new_topic,
    sns,
    sns_case,
    sqs_target,
    subscribe_queue,
)

SUB_ATTRS = [
    "ConfirmationWasAuthenticated", "Endpoint", "Owner", "PendingConfirmation", "Protocol",
    "RawMessageDelivery", "SubscriptionArn", "SubscriptionPrincipal", "TopicArn",
]


def check_queue_sub_attrs(attrs, sub_arn, topic_arn, q_arn, raw):
    """The attributes AWS answers for a confirmed queue subscription."""
    eq(sorted(attrs), sorted(SUB_ATTRS), "subscription attribute names")
    eq(attrs["ConfirmationWasAuthenticated"], "true", "ConfirmationWasAuthenticated")
    eq(attrs["Endpoint"], q_arn, "Endpoint")
    eq(attrs["Owner"], ACCOUNT, "Owner")
    eq(attrs["PendingConfirmation"], "false", "PendingConfirmation")
    eq(attrs["Protocol"], "sqs", "Protocol")
    eq(attrs["RawMessageDelivery"], "true" if raw else "false", "RawMessageDelivery")
    eq(attrs["SubscriptionArn"], sub_arn, "SubscriptionArn")
    assert attrs["SubscriptionPrincipal"].startswith(f"arn:aws:iam::{ACCOUNT}:"), attrs["SubscriptionPrincipal"]
    eq(attrs["TopicArn"], topic_arn, "TopicArn")


def topic_and_queue():
    topic = new_topic("st")
    _, q_arn = sqs_target()
    return topic, q_arn


@sns_case("sns-subscriptions", "N1", RECORDED + "TestSNSSubscriptionCrud::test_subscribe_with_invalid_protocol")
def sns_subscribe_unknown_protocol():
    topic = new_topic("st")
    expect_sns_error(sns.subscribe, TopicArn=topic, Protocol="test-protocol", Endpoint="someone@example.com",
                     code="InvalidParameter",
                     message="Invalid parameter: Amazon SNS does not support this protocol string: test-protocol")


@sns_case("sns-subscriptions", "N1", RECORDED + "TestSNSSubscriptionCrud::test_create_subscriptions_with_attributes")
def sns_subscribe_with_attributes():
    topic, q_arn = topic_and_queue()
    expect_sns_error(sns.subscribe, TopicArn=topic, Protocol="sqs", Endpoint=q_arn, ReturnSubscriptionArn=True,
                     Attributes={"RawMessageDelivery": "wrongvalue", "FilterPolicyScope": "MessageBody",
                                 "FilterPolicy": ""},
                     code="InvalidParameter",
                     message="Invalid parameter: Attributes Reason: RawMessageDelivery: Invalid value [wrongvalue]. "
                             "Must be true or false.")
    sub = sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=q_arn, ReturnSubscriptionArn=True,
                        Attributes={"RawMessageDelivery": "TrUe", "FilterPolicyScope": "MessageBody",
                                    "FilterPolicy": ""})["SubscriptionArn"]
    assert sub.startswith(topic + ":"), sub
    attrs = sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"]
    check_queue_sub_attrs(attrs, sub, topic, q_arn, raw=True)
    expect_sns_error(sns.get_subscription_attributes, SubscriptionArn=sub[:-8] + "abcdefgh", code="NotFound",
                     message="Subscription does not exist", status=404)


@sns_case("sns-subscriptions", "N1", RECORDED + "TestSNSSubscriptionCrud::test_not_found_error_on_set_subscription_attributes")
def sns_unsubscribe_then_set_attributes_is_not_found():
    topic, q_arn = topic_and_queue()
    sub = sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=q_arn)["SubscriptionArn"]
    check_queue_sub_attrs(sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"], sub, topic, q_arn,
                          raw=False)
    eq(sns.list_subscriptions_by_topic(TopicArn=topic)["Subscriptions"],
       [{"SubscriptionArn": sub, "Owner": ACCOUNT, "Protocol": "sqs", "Endpoint": q_arn, "TopicArn": topic}],
       "ListSubscriptionsByTopic")
    sns.unsubscribe(SubscriptionArn=sub)
    expect_sns_error(sns.set_subscription_attributes, SubscriptionArn=sub, AttributeName="RawMessageDelivery",
                     AttributeValue="true", code="NotFound", message="Subscription does not exist", status=404)
    eq(sns.list_subscriptions_by_topic(TopicArn=topic)["Subscriptions"], [], "after Unsubscribe")


@sns_case("sns-subscriptions", "N1, N4", RECORDED + "TestSNSSubscriptionCrud::test_validate_set_sub_attributes")
def sns_set_subscription_attributes_refusals():
    topic, q_arn = topic_and_queue()
    sub = subscribe_queue(topic, q_arn)

    def refused(name, value, message, prefix=False):
        err = expect_sns_error(sns.set_subscription_attributes, SubscriptionArn=sub, AttributeName=name,
                               AttributeValue=value, code="InvalidParameter",
                               message=None if prefix else message)
        if prefix:
            assert err["Message"].startswith(message), err

    refused("FakeAttribute", "test-value", "Invalid parameter: AttributeName")
    refused("RawMessageDelivery", "test-ValUe",
            "Invalid parameter: RawMessageDelivery: Invalid value [test-ValUe]. Must be true or false.")
    refused("RawMessageDelivery", "", "Invalid parameter: RawMessageDelivery: Invalid value []. Must be true or false.")
    refused("RedrivePolicy", json.dumps({"deadLetterTargetArn": "fake-arn"}),
            "Invalid parameter: RedrivePolicy: deadLetterTargetArn is an invalid arn")
    refused("RedrivePolicy", "{invalidjson}", "Invalid parameter: RedrivePolicy: failed to parse JSON.", prefix=True)
    refused("FilterPolicy", "{invalidjson}", "Invalid parameter: FilterPolicy: failed to parse JSON.", prefix=True)


@sns_case("sns-subscriptions", "N1", RECORDED + "TestSNSSubscriptionCrud::test_sns_confirm_subscription_wrong_token")
def sns_confirm_subscription_bad_tokens():
    topic = new_topic("st")
    token = "51b2ff3edb475b7d91550e0ab6edf0c1de2a34e6ebaf6c2262a001bcb7e051c4" * 2
    expect_sns_error(sns.confirm_subscription, TopicArn=topic[:-1] + "i", Token=token,
                     code="InvalidParameter", message="Invalid parameter: Token")
    # Not hex digits, as every token is: "Invalid token" (a hex one that is
    # no token is "Invalid parameter: Token": test_subscribe_external_http_endpoint).
    expect_sns_error(sns.confirm_subscription, TopicArn=topic, Token="randomtoken", code="InvalidParameter",
                     message="Invalid token")
    expect_sns_error(sns.confirm_subscription, TopicArn=topic, Token=token,
                     code="InvalidParameter", message="Invalid parameter: Token")


@sns_case("sns-subscriptions", "N1", RECORDED + "TestSNSSubscriptionCrud::test_subscribe_idempotency")
def sns_subscribe_idempotency():
    topic, q_arn = topic_and_queue()

    def again(attributes=None):
        kw = {} if attributes is None else {"Attributes": attributes}
        return sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=q_arn, ReturnSubscriptionArn=True,
                             **kw)["SubscriptionArn"]

    sub = again({"RawMessageDelivery": "True"})
    check_queue_sub_attrs(sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"], sub, topic, q_arn,
                          raw=True)
    for attrs in ({"RawMessageDelivery": "true"},
                  {"RawMessageDelivery": "true", "FilterPolicyScope": "MessageAttributes"},
                  None, {}, {"FilterPolicyScope": "MessageAttributes"}):
        eq(again(attrs), sub, f"Subscribe again with {attrs}")
    expect_sns_error(again, {"RawMessageDelivery": "false", "FilterPolicyScope": "MessageBody"},
                     code="InvalidParameter",
                     message="Invalid parameter: Attributes Reason: Subscription already exists with different "
                             "attributes")


@sns_case("sns-subscriptions", "N1", RECORDED + "TestSNSSubscriptionCrud::test_unsubscribe_idempotency")
def sns_unsubscribe_twice():
    topic, q_arn = topic_and_queue()
    sub = subscribe_queue(topic, q_arn)
    for n in (1, 2):
        eq(sns.unsubscribe(SubscriptionArn=sub)["ResponseMetadata"]["HTTPStatusCode"], 200, f"Unsubscribe #{n}")


@sns_case("sns-subscriptions", "N1", RECORDED + "TestSNSSubscriptionCrud::test_unsubscribe_from_non_existing_subscription")
def sns_unsubscribe_unknown_subscription():
    topic = new_topic("st")
    eq(sns.unsubscribe(SubscriptionArn=topic + ":00000000-1111-2222-3333-444444444444")["ResponseMetadata"]
       ["HTTPStatusCode"], 200, "Unsubscribe status")


@sns_case("sns-subscriptions", "N1", RECORDED + "TestSNSSubscriptionCrud::test_unsubscribe_wrong_arn_format")
def sns_unsubscribe_malformed_arns():
    raw = make_sns_unvalidated()
    expect_sns_error(raw.unsubscribe, SubscriptionArn="randomstring", code="InvalidParameter",
                     message="Invalid parameter: SubscriptionArn Reason: An ARN must have at least 6 elements, not 1")
    expect_sns_error(raw.unsubscribe, SubscriptionArn="arn:aws:sns:us-east-1:random", code="InvalidParameter",
                     message="Invalid parameter: SubscriptionArn Reason: An ARN must have at least 6 elements, not 5")
    expect_sns_error(raw.unsubscribe, SubscriptionArn=f"arn:aws:sns:us-east-1:{ACCOUNT}:random",
                     code="InvalidParameter", message="Invalid parameter: SubscriptionId")
    expect_sns_error(raw.unsubscribe, code="InvalidParameter",
                     message="Invalid parameter: SubscriptionArn Reason: no value for required parameter")


def make_sns_unvalidated():
    """An SNS client that sends what it is given (no client-side checks)."""
    import boto3

    from fidelity import ENDPOINT

    return boto3.client(
        "sns", endpoint_url=ENDPOINT, region_name=REGION, aws_access_key_id="AKIDSLUICEFIDELITY",
        aws_secret_access_key="sluice-fidelity-secret",
        config=Config(retries={"total_max_attempts": 1}, parameter_validation=False),
    )


@sns_case("sns-subscriptions", "N1", RECORDED + "TestSNSSubscriptionCrud::test_subscribe_with_invalid_topic")
def sns_subscribe_to_malformed_or_missing_topic():
    expect_sns_error(sns.subscribe, TopicArn="randomstring", Protocol="sqs",
                     Endpoint=f"arn:aws:sqs:{REGION}:{ACCOUNT}:q", code="InvalidParameter",
                     message="Invalid parameter: TopicArn Reason: An ARN must have at least 6 elements, not 1")
    expect_sns_error(sns.subscribe, TopicArn="arn:aws:sns:us-east-1:random", Protocol="sqs",
                     Endpoint=f"arn:aws:sqs:{REGION}:{ACCOUNT}:q", code="InvalidParameter",
                     message="Invalid parameter: TopicArn Reason: An ARN must have at least 6 elements, not 5")
    topic = new_topic("st")
    expect_sns_error(sns.subscribe, TopicArn=topic + "aaa", Protocol="sqs",
                     Endpoint=f"arn:aws:sqs:{REGION}:{ACCOUNT}:q", code="NotFound", message="Topic does not exist",
                     status=404)


@sns_case("sns-subscriptions", "N1", RECORDED + "TestSNSSubscriptionCrudV2::test_subscribe_unknown_topic")
def sns_subscribe_unknown_topic():
    _, q_arn = sqs_target()
    expect_sns_error(sns.subscribe, TopicArn=f"arn:aws:sns:{REGION}:{ACCOUNT}:{unique('nope')}", Protocol="sqs",
                     Endpoint=q_arn, code="NotFound", message="Topic does not exist")


@sns_case("sns-subscriptions", "N1", RECORDED + "TestSNSSubscriptionCrudV2::test_subscribe_unknown_sqs_queue")
def sns_subscribe_unknown_queue_or_bad_endpoint():
    topic = new_topic("st")
    sub = sns.subscribe(TopicArn=topic, Protocol="sqs",
                        Endpoint=f"arn:aws:sqs:{REGION}:{ACCOUNT}:{unique('unknown')}")["SubscriptionArn"]
    assert sub.startswith(topic + ":"), sub
    expect_sns_error(sns.subscribe, TopicArn=topic, Protocol="sqs", Endpoint="unknown",
                     code="InvalidParameter", message="Invalid parameter: SQS endpoint ARN")


@sns_case("sns-subscriptions", "N1", RECORDED + "TestSNSSubscriptionCrudV2::test_subscribe_sqs_queue_url")
def sns_subscribe_queue_by_url_is_refused():
    topic = new_topic("st")
    url, _ = sqs_target()
    expect_sns_error(sns.subscribe, TopicArn=topic, Protocol="sqs", Endpoint=url,
                     code="InvalidParameter", message="Invalid parameter: SQS endpoint ARN")


@sns_case("sns-subscriptions", "N1", RECORDED + "TestSNSSubscriptionCrudV2::test_double_subscription")
def sns_subscribe_twice_same_arn():
    topic, q_arn = topic_and_queue()
    first = sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=q_arn, ReturnSubscriptionArn=True)
    second = sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=q_arn, ReturnSubscriptionArn=True)
    eq(second["SubscriptionArn"], first["SubscriptionArn"], "second Subscribe")


@sns_case("sns-subscriptions", "N1", RECORDED + "TestSNSSubscriptionCrudV2::test_getting_subscriptions_by_topic")
def sns_list_subscriptions_by_topic():
    topic, q_arn = topic_and_queue()
    sub = sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=q_arn)["SubscriptionArn"]
    eq(sns.list_subscriptions_by_topic(TopicArn=topic)["Subscriptions"],
       [{"SubscriptionArn": sub, "Owner": ACCOUNT, "Protocol": "sqs", "Endpoint": q_arn, "TopicArn": topic}],
       "ListSubscriptionsByTopic")


@sns_case("sns-subscriptions", "N1", RECORDED + "TestSNSSubscriptionCrudV2::test_subscribe_attributes")
def sns_queue_subscription_default_attributes():
    topic, q_arn = topic_and_queue()
    sub = sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=q_arn)["SubscriptionArn"]
    check_queue_sub_attrs(sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"], sub, topic, q_arn,
                          raw=False)


@sns_case("sns-subscriptions", "N1", RECORDED + "TestSNSSubscriptionCrudV2::test_creating_subscription_with_attributes")
def sns_queue_subscription_raw_at_subscribe():
    topic, q_arn = topic_and_queue()
    sub = sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=q_arn,
                        Attributes={"RawMessageDelivery": "true"})["SubscriptionArn"]
    check_queue_sub_attrs(sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"], sub, topic, q_arn,
                          raw=True)


@sns_case("sns-subscriptions", "N1", RECORDED + "TestSNSSubscriptionCrudV2::test_set_subscription_attributes")
def sns_set_raw_delivery_later():
    topic, q_arn = topic_and_queue()
    sub = sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=q_arn)["SubscriptionArn"]
    sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="RawMessageDelivery", AttributeValue="true")
    check_queue_sub_attrs(sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"], sub, topic, q_arn,
                          raw=True)


@sns_case("sns-subscriptions", "N1", RECORDED + "TestSNSSubscriptionCrudV2::test_get_subscription_attributes_error_not_exists")
def sns_get_attributes_of_unknown_subscription():
    topic = new_topic("st")
    expect_sns_error(sns.get_subscription_attributes,
                     SubscriptionArn=topic + ":00000000-1111-2222-3333-444444444444",
                     code="NotFound", message="Subscription does not exist", status=404)


@sns_case("sns-subscriptions", "N1, N4", RECORDED + "TestSNSSubscriptionCrudV2::test_subscribe_invalid_filter_policy "
          "(recorded with an e-mail endpoint; the refusal is the filter policy's)")
def sns_subscribe_with_unparsable_filter_policy():
    topic, q_arn = topic_and_queue()
    err = expect_sns_error(sns.subscribe, TopicArn=topic, Protocol="sqs", Endpoint=q_arn,
                           Attributes={"FilterPolicy": "invalid-json"}, code="InvalidParameter")
    want = ("Invalid parameter: Attributes Reason: FilterPolicy: failed to parse JSON. Unrecognized token 'invalid': "
            "was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')")
    assert err["Message"].startswith(want), err


@sns_case("sns-subscriptions", "N1", RECORDED + "TestSNSSubscriptionSQS::test_sqs_topic_subscription_confirmation")
def sns_queue_subscription_is_confirmed_at_once():
    topic, q_arn = topic_and_queue()
    sub = subscribe_queue(topic, q_arn)
    attrs = sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"]
    eq(attrs["PendingConfirmation"], "false", "PendingConfirmation")
    eq(attrs["ConfirmationWasAuthenticated"], "true", "ConfirmationWasAuthenticated")


@sns_case("sns-subscriptions", "N1", RECORDED + "TestSNSSubscriptionCrud::test_list_subscriptions_by_topic_pagination "
          "(recorded with 101 SMS endpoints; here 101 queues that need not exist)")
def sns_list_subscriptions_by_topic_pages_by_100():
    import base64

    topic = new_topic("sp")
    for i in range(101):
        sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=f"arn:aws:sqs:{REGION}:{ACCOUNT}:{unique('p')}-{i}")
    first = sns.list_subscriptions_by_topic(TopicArn=topic)
    eq(len(first["Subscriptions"]), 100, "first page")
    assert first.get("NextToken"), first.keys()
    assert base64.b64decode(first["NextToken"]), first["NextToken"]
    second = sns.list_subscriptions_by_topic(TopicArn=topic, NextToken=first["NextToken"])
    eq(len(second["Subscriptions"]), 1, "second page")
    assert "NextToken" not in second, second.keys()
    page1 = {s["SubscriptionArn"] for s in first["Subscriptions"]}
    assert second["Subscriptions"][0]["SubscriptionArn"] not in page1, "the last one was on the first page too"
    everyone = sns.list_subscriptions()
    assert "NextToken" in everyone and len(everyone["Subscriptions"]) <= 100, everyone.keys()
