"""Fidelity cases for SNS topics: create (names, idempotency), attributes,
tags, permissions, delete. Expected answers are AWS's, as recorded by
LocalStack's test_sns.py (see sns_common)."""

import json

from fidelity import ACCOUNT, eq, unique
from sns_common import RECORDED, expect_sns_error, make_sns, new_topic, sns, sns_case, track_topic

DEFAULT_EFFECTIVE_DELIVERY_POLICY = {
    "http": {
        "defaultHealthyRetryPolicy": {
            "minDelayTarget": 20,
            "maxDelayTarget": 20,
            "numRetries": 3,
            "numMaxDelayRetries": 0,
            "numNoDelayRetries": 0,
            "numMinDelayRetries": 0,
            "backoffFunction": "linear",
        },
        "disableSubscriptionOverrides": False,
        "defaultRequestPolicy": {"headerContentType": "text/plain; charset=UTF-8"},
    }
}
DEFAULT_ACTIONS = [
    "SNS:GetTopicAttributes",
    "SNS:SetTopicAttributes",
    "SNS:AddPermission",
    "SNS:RemovePermission",
    "SNS:DeleteTopic",
    "SNS:Subscribe",
    "SNS:ListSubscriptionsByTopic",
    "SNS:Publish",
]


def default_policy(arn):
    """The policy AWS gives every new topic."""
    return {
        "Version": "2008-10-17",
        "Id": "__default_policy_ID",
        "Statement": [
            {
                "Sid": "__default_statement_ID",
                "Effect": "Allow",
                "Principal": {"AWS": "*"},
                "Action": DEFAULT_ACTIONS,
                "Resource": arn,
                "Condition": {"StringEquals": {"AWS:SourceOwner": ACCOUNT}},
            }
        ],
    }


def attrs_of(arn, client=None):
    return (client or sns).get_topic_attributes(TopicArn=arn)["Attributes"]


def check_standard_attrs(attrs, arn, display_name=""):
    eq(sorted(attrs), sorted([
        "DisplayName", "EffectiveDeliveryPolicy", "Owner", "Policy",
        "SubscriptionsConfirmed", "SubscriptionsDeleted", "SubscriptionsPending", "TopicArn",
    ]), "attribute names of a standard topic")
    eq(attrs["DisplayName"], display_name, "DisplayName")
    eq(json.loads(attrs["EffectiveDeliveryPolicy"]), DEFAULT_EFFECTIVE_DELIVERY_POLICY, "EffectiveDeliveryPolicy")
    eq(attrs["Owner"], ACCOUNT, "Owner")
    eq(json.loads(attrs["Policy"]), default_policy(arn), "Policy")
    for k in ("SubscriptionsConfirmed", "SubscriptionsDeleted", "SubscriptionsPending"):
        eq(attrs[k], "0", k)
    eq(attrs["TopicArn"], arn, "TopicArn")


@sns_case("sns-topics", "N1", RECORDED + "TestSNSTopicCrud::test_create_topic_test_arn")
def sns_topic_default_attributes_and_delete():
    arn = new_topic("tc")
    assert arn.startswith(f"arn:aws:sns:us-east-1:{ACCOUNT}:"), arn
    check_standard_attrs(attrs_of(arn), arn)
    eq(sns.delete_topic(TopicArn=arn)["ResponseMetadata"]["HTTPStatusCode"], 200, "DeleteTopic status")
    expect_sns_error(sns.get_topic_attributes, TopicArn=arn, code="NotFound", message="Topic does not exist", status=404)


@sns_case("sns-topics", "N1, N7", RECORDED + "TestSNSTopicCrud::test_create_topic_with_attributes")
def sns_fifo_topic_attributes():
    arn = new_topic("tf", fifo=True, attributes={"DisplayName": "TestTopic", "SignatureVersion": "2"})
    attrs = attrs_of(arn)
    eq(attrs.get("FifoTopic"), "true", "FifoTopic")
    eq(attrs.get("ContentBasedDeduplication"), "false", "ContentBasedDeduplication")
    eq(attrs.get("SignatureVersion"), "2", "SignatureVersion")
    eq(attrs.get("DisplayName"), "TestTopic", "DisplayName")
    eq(json.loads(attrs["Policy"]), default_policy(arn), "Policy")
    eq(json.loads(attrs["EffectiveDeliveryPolicy"]), DEFAULT_EFFECTIVE_DELIVERY_POLICY, "EffectiveDeliveryPolicy")


@sns_case("sns-topics", "N1", RECORDED + "TestSNSTopicCrud::test_create_topic_with_attributes")
def sns_get_attributes_of_missing_and_malformed_topic():
    arn = new_topic("tm")
    expect_sns_error(sns.get_topic_attributes, TopicArn=arn + "-gone", code="NotFound",
                     message="Topic does not exist", status=404)
    expect_sns_error(sns.get_topic_attributes, TopicArn="test-topic", code="InvalidParameter",
                     message="Invalid parameter: TopicArn Reason: An ARN must have at least 6 elements, not 1",
                     status=400)


@sns_case("sns-topics", "N1", RECORDED + "TestSNSTopicCrud::test_tags")
def sns_topic_tags_lifecycle():
    arn = new_topic("tt")
    expect_sns_error(sns.tag_resource, ResourceArn=arn,
                     Tags=[{"Key": "k1", "Value": "v1"}, {"Key": "k2", "Value": "v2"}, {"Key": "k2", "Value": "v2"}],
                     code="InvalidParameter", message="Invalid parameter: Duplicated keys are not allowed.")
    sns.tag_resource(ResourceArn=arn, Tags=[{"Key": "k1", "Value": "v1"}, {"Key": "k2", "Value": "v2"}])
    tags = sorted(sns.list_tags_for_resource(ResourceArn=arn)["Tags"], key=lambda t: t["Key"])
    eq(tags, [{"Key": "k1", "Value": "v1"}, {"Key": "k2", "Value": "v2"}], "tags after TagResource")
    sns.untag_resource(ResourceArn=arn, TagKeys=["k1"])
    eq(sns.list_tags_for_resource(ResourceArn=arn)["Tags"], [{"Key": "k2", "Value": "v2"}], "after UntagResource")
    sns.tag_resource(ResourceArn=arn, Tags=[{"Key": "k2", "Value": "v2b"}])
    eq(sns.list_tags_for_resource(ResourceArn=arn)["Tags"], [{"Key": "k2", "Value": "v2b"}], "after retagging")


@sns_case("sns-topics", "N1", RECORDED + "TestSNSTopicCrud::test_tags_removed_after_deletion")
def sns_topic_tags_gone_with_topic():
    name = unique("tg")
    arn = track_topic(sns.create_topic(Name=name)["TopicArn"])
    sns.tag_resource(ResourceArn=arn, Tags=[{"Key": "k1", "Value": "v1"}, {"Key": "k2", "Value": "v2"}])
    sns.delete_topic(TopicArn=arn)
    arn2 = track_topic(sns.create_topic(Name=name)["TopicArn"])
    eq(arn2, arn, "same name, same ARN")
    eq(sns.list_tags_for_resource(ResourceArn=arn2)["Tags"], [], "tags of the re-created topic")


@sns_case("sns-topics", "N1", RECORDED + "TestSNSTopicCrud::test_create_duplicate_topic_with_more_tags")
def sns_create_topic_again_with_new_tags_is_refused():
    name = unique("td")
    track_topic(sns.create_topic(Name=name)["TopicArn"])
    expect_sns_error(sns.create_topic, Name=name, Tags=[{"Key": "key1", "Value": "value1"}],
                     code="InvalidParameter",
                     message="Invalid parameter: Tags Reason: Topic already exists with different tags")


@sns_case("sns-topics", "N1", RECORDED + "TestSNSTopicCrud::test_create_duplicate_topic_check_idempotency")
def sns_create_topic_again_with_same_fewer_or_no_tags():
    name = unique("ti")
    tags = [{"Key": "a", "Value": "1"}, {"Key": "b", "Value": "2"}]
    arn = track_topic(sns.create_topic(Name=name, Tags=tags)["TopicArn"])
    for again in (tags, [tags[0]], []):
        eq(sns.create_topic(Name=name, Tags=again)["TopicArn"], arn, f"CreateTopic again with tags {again}")


@sns_case("sns-topics", "N1", RECORDED + "TestSNSTopicCrud::test_create_topic_after_delete_with_new_tags")
def sns_create_topic_after_delete_takes_new_tags():
    name = unique("tn")
    arn = sns.create_topic(Name=name, Tags=[{"Key": "Name", "Value": "pqr"}])["TopicArn"]
    sns.delete_topic(TopicArn=arn)
    arn2 = track_topic(sns.create_topic(Name=name, Tags=[{"Key": "Name", "Value": "abc"}])["TopicArn"])
    eq(arn2, arn, "ARN of the re-created topic")


@sns_case("sns-topics", "N1", RECORDED + "TestSNSTopicCrud::test_delete_topic_idempotency")
def sns_delete_topic_twice():
    arn = new_topic("tx")
    sns.delete_topic(TopicArn=arn)
    eq(sns.delete_topic(TopicArn=arn)["ResponseMetadata"]["HTTPStatusCode"], 200, "second DeleteTopic")


@sns_case("sns-topics", "N1", RECORDED + "TestSNSTopicCrudV2::test_delete_non_existent_topic")
def sns_delete_topic_never_created():
    arn = f"arn:aws:sns:us-east-1:{ACCOUNT}:{unique('never')}"
    eq(sns.delete_topic(TopicArn=arn)["ResponseMetadata"]["HTTPStatusCode"], 200, "DeleteTopic status")


@sns_case("sns-topics", "N1", RECORDED + "TestSNSTopicCrudV2::test_create_topic_should_be_idempotent")
def sns_create_topic_idempotent_keeps_attributes():
    name = unique("tk")
    arn = track_topic(sns.create_topic(Name=name, Attributes={"DisplayName": "AlreadySet"})["TopicArn"])
    eq(sns.create_topic(Name=name, Attributes={"DisplayName": "AlreadySet"})["TopicArn"], arn, "again, same attributes")
    check_standard_attrs(attrs_of(arn), arn, display_name="AlreadySet")


@sns_case("sns-topics", "N1", RECORDED + "TestSNSTopicCrudV2::test_create_topic_different_attrs")
def sns_create_topic_again_with_different_attributes():
    name = unique("ta")
    arn = track_topic(sns.create_topic(Name=name, Attributes={"DisplayName": "Value1"})["TopicArn"])
    eq(sns.create_topic(Name=name)["TopicArn"], arn, "again with no attributes")
    check_standard_attrs(attrs_of(arn), arn, display_name="Value1")
    eq(sns.create_topic(Name=name, Attributes={"DisplayName": "Value1"})["TopicArn"], arn, "again, same attributes")
    eq(sns.create_topic(Name=name, Attributes={"FifoTopic": "false"})["TopicArn"], arn, "again with FifoTopic=false")
    differ = "Invalid parameter: Attributes Reason: Topic already exists with different attributes"
    expect_sns_error(sns.create_topic, Name=name, Attributes={"DisplayName": "Value2"},
                     code="InvalidParameter", message=differ)
    expect_sns_error(sns.create_topic, Name=name, Attributes={"FifoTopic": "true"},
                     code="InvalidParameter", message="Invalid parameter: Topic Name")
    expect_sns_error(sns.create_topic, Name=name, Attributes={"SignatureVersion": "2"},
                     code="InvalidParameter", message=differ)
    expect_sns_error(sns.create_topic, Name=name, Attributes={"SignatureVersion": "2", "DisplayName": "Value1"},
                     code="InvalidParameter", message=differ)


@sns_case("sns-topics", "N1", RECORDED + "TestSNSTopicCrudV2::test_create_topic_name_constraints")
def sns_topic_name_constraints():
    longest = "a" * 256
    arn = sns.create_topic(Name=longest)["TopicArn"]
    track_topic(arn)
    assert arn.endswith(":" + longest), arn
    bad = "Invalid parameter: Topic Name"
    for name, attrs in [("", {}), ("a" * 257, {}), ("test.fifo", {}), (unique("nofifo"), {"FifoTopic": "true"})]:
        expect_sns_error(sns.create_topic, Name=name, Attributes=attrs, code="InvalidParameter", message=bad)
    for c in [":", ";", "!", "@", "|", "^", "%", " "]:
        expect_sns_error(sns.create_topic, Name=f"bad{c}name", code="InvalidParameter", message=bad)


@sns_case("sns-topics", "N1", RECORDED + "TestSNSTopicCrudV2::test_topic_get_attributes_with_fifo_false")
def sns_fifo_false_topic_is_standard():
    arn = new_topic("tsf", attributes={"FifoTopic": "false"})
    check_standard_attrs(attrs_of(arn), arn)
    expect_sns_error(sns.set_topic_attributes, TopicArn=arn, AttributeName="FifoTopic", AttributeValue="false",
                     code="InvalidParameter", message="Invalid parameter: AttributeName")


@sns_case("sns-topics", "N1", RECORDED + "TestSNSTopicCrudV2::test_create_topic_in_multiple_regions")
def sns_topics_are_regional():
    name = unique("tr")
    east, west = make_sns("us-east-1"), make_sns("us-west-2")
    a = track_topic(east.create_topic(Name=name)["TopicArn"], east)
    b = track_topic(west.create_topic(Name=name)["TopicArn"], west)
    assert a.startswith("arn:aws:sns:us-east-1:") and b.startswith("arn:aws:sns:us-west-2:"), (a, b)
    for c, arn in [(east, a), (west, b)]:
        listed = [t["TopicArn"] for t in c.list_topics()["Topics"] if t["TopicArn"].endswith(":" + name)]
        eq(listed, [arn], "ListTopics in the topic's region")
        check_standard_attrs(attrs_of(arn, c), arn)


@sns_case("sns-topics", "N1", RECORDED + "TestSNSTopicCrudV2::test_topic_add_permission")
def sns_add_permission_adds_a_statement():
    arn = new_topic("tp")
    sns.add_permission(TopicArn=arn, Label="test", AWSAccountId=[ACCOUNT], ActionName=["Publish"])
    policy = json.loads(attrs_of(arn)["Policy"])
    want = default_policy(arn)
    want["Statement"].append({
        "Sid": "test", "Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"},
        "Action": "SNS:Publish", "Resource": arn,
    })
    eq(policy, want, "Policy after AddPermission")


@sns_case("sns-topics", "N1", RECORDED + "TestSNSTopicCrudV2::test_topic_add_multiple_permissions")
def sns_add_permission_with_two_actions():
    arn = new_topic("tp")
    sns.add_permission(TopicArn=arn, Label="test", AWSAccountId=[ACCOUNT], ActionName=["Publish", "Subscribe"])
    stmt = json.loads(attrs_of(arn)["Policy"])["Statement"][1]
    eq(stmt["Action"], ["SNS:Publish", "SNS:Subscribe"], "Action of the added statement")
    eq(stmt["Principal"], {"AWS": f"arn:aws:iam::{ACCOUNT}:root"}, "Principal")


@sns_case("sns-topics", "N1", RECORDED + "TestSNSTopicCrudV2::test_topic_remove_permission")
def sns_remove_permission_restores_default_policy():
    arn = new_topic("tp")
    sns.add_permission(TopicArn=arn, Label="test", AWSAccountId=[ACCOUNT], ActionName=["Publish"])
    sns.remove_permission(TopicArn=arn, Label="test")
    eq(json.loads(attrs_of(arn)["Policy"]), default_policy(arn), "Policy after RemovePermission")


@sns_case("sns-topics", "N1", RECORDED + "TestSNSTopicCrudV2::test_add_permission_errors")
def sns_add_permission_errors():
    arn = new_topic("tp")
    sns.add_permission(TopicArn=arn, Label="test", AWSAccountId=[ACCOUNT], ActionName=["Publish"])
    expect_sns_error(sns.add_permission, TopicArn=arn, Label="test", AWSAccountId=[ACCOUNT],
                     ActionName=["AddPermission"], code="InvalidParameter",
                     message="Invalid parameter: Statement already exists")
    expect_sns_error(sns.add_permission, TopicArn=arn + "-not-existing", Label="test-2", AWSAccountId=[ACCOUNT],
                     ActionName=["AddPermission"], code="NotFound", message="Topic does not exist")
    expect_sns_error(sns.add_permission, TopicArn=arn, Label="test-2", AWSAccountId=[ACCOUNT],
                     ActionName=["InvalidAction"], code="InvalidParameter",
                     message="Invalid parameter: Policy statement action out of service scope!")


@sns_case("sns-topics", "N1", RECORDED + "TestSNSTopicCrudV2::test_remove_permission_errors")
def sns_remove_permission_of_missing_topic():
    arn = new_topic("tp")
    sns.add_permission(TopicArn=arn, Label="test", AWSAccountId=[ACCOUNT], ActionName=["Publish"])
    expect_sns_error(sns.remove_permission, TopicArn=arn + "-not-existing", Label="test",
                     code="NotFound", message="Topic does not exist")


@sns_case("sns-topics", "N1", RECORDED + "TestSNSMultiRegions::test_cross_region_access")
def sns_topic_is_not_reached_from_another_region():
    arn = new_topic("tr")
    west = make_sns("us-west-2")
    bad = "Invalid parameter: TopicArn"
    expect_sns_error(west.set_topic_attributes, TopicArn=arn, AttributeName="DisplayName", AttributeValue="xenon",
                     code="InvalidParameter", message=bad)
    expect_sns_error(west.get_topic_attributes, TopicArn=arn, code="InvalidParameter", message=bad)
    expect_sns_error(west.publish, TopicArn=arn, Message="hello world", code="InvalidParameter", message=bad)
    expect_sns_error(west.subscribe, TopicArn=arn, Protocol="sqs",
                     Endpoint=f"arn:aws:sqs:us-west-2:{ACCOUNT}:{unique('q')}", code="InvalidParameter", message=bad)
    expect_sns_error(west.list_subscriptions_by_topic, TopicArn=arn, code="InvalidParameter", message=bad)
    expect_sns_error(west.delete_topic, TopicArn=arn, code="InvalidParameter", message=bad)
    eq(attrs_of(arn)["TopicArn"], arn, "the topic, still there in its region")


@sns_case("sns-topics", "N1, N6", RECORDED + "TestSNSTopicCrud::test_topic_delivery_policy_crud")
def sns_topic_delivery_policy_lifecycle():
    arn = new_topic("tdp", fifo=True, attributes={
        "DisplayName": "TestTopic", "SignatureVersion": "2",
        "DeliveryPolicy": json.dumps({"http": {"defaultRequestPolicy": {"headerContentType": "application/json"}}})})
    attrs = attrs_of(arn)
    eq(json.loads(attrs["DeliveryPolicy"]),
       {"http": {"disableSubscriptionOverrides": False, "defaultRequestPolicy": {"headerContentType": "application/json"}}},
       "DeliveryPolicy as created")
    want = json.loads(json.dumps(DEFAULT_EFFECTIVE_DELIVERY_POLICY))
    want["http"]["defaultRequestPolicy"]["headerContentType"] = "application/json"
    eq(json.loads(attrs["EffectiveDeliveryPolicy"]), want, "EffectiveDeliveryPolicy as created")

    sns.set_topic_attributes(TopicArn=arn, AttributeName="DeliveryPolicy", AttributeValue=json.dumps(
        {"http": {"defaultHealthyRetryPolicy": {"minDelayTarget": 5, "maxDelayTarget": 6, "numRetries": 1}}}))
    attrs = attrs_of(arn)
    eq(json.loads(attrs["DeliveryPolicy"]),
       {"http": {"defaultHealthyRetryPolicy": {"minDelayTarget": 5, "maxDelayTarget": 6, "numRetries": 1},
                 "disableSubscriptionOverrides": False}}, "DeliveryPolicy after update")
    want = json.loads(json.dumps(DEFAULT_EFFECTIVE_DELIVERY_POLICY))
    want["http"]["defaultHealthyRetryPolicy"].update(minDelayTarget=5, maxDelayTarget=6, numRetries=1)
    eq(json.loads(attrs["EffectiveDeliveryPolicy"]), want, "EffectiveDeliveryPolicy after update")

    sns.set_topic_attributes(TopicArn=arn, AttributeName="DeliveryPolicy",
                             AttributeValue=json.dumps({"http": {"defaultHealthyRetryPolicy": None}}))
    attrs = attrs_of(arn)
    eq(json.loads(attrs["DeliveryPolicy"]), {"http": {"disableSubscriptionOverrides": False}}, "after a null policy")
    eq(json.loads(attrs["EffectiveDeliveryPolicy"]), DEFAULT_EFFECTIVE_DELIVERY_POLICY, "effective after a null policy")

    sns.set_topic_attributes(TopicArn=arn, AttributeName="DeliveryPolicy", AttributeValue="")
    attrs = attrs_of(arn)
    assert "DeliveryPolicy" not in attrs, attrs
    eq(json.loads(attrs["EffectiveDeliveryPolicy"]), DEFAULT_EFFECTIVE_DELIVERY_POLICY, "effective after removal")


@sns_case("sns-topics", "N1", RECORDED + "TestSNSTopicCrudV2::test_data_protection_policy_crud")
def sns_topic_data_protection_policy():
    arn = new_topic("tdpp")
    check_standard_attrs(attrs_of(arn), arn)
    doc = {"Name": "data_protection_policy", "Description": "Test Policy", "Version": "2021-06-01",
           "Statement": [{"Sid": "test-statement", "DataDirection": "Inbound", "Principal": ["*"],
                          "DataIdentifier": ["arn:aws:dataprotection:us-east-1::data-identifier/EmailAddress"],
                          "Operation": {"Deny": {}}}]}
    sns.put_data_protection_policy(ResourceArn=arn, DataProtectionPolicy=json.dumps(doc))
    eq(json.loads(sns.get_data_protection_policy(ResourceArn=arn)["DataProtectionPolicy"]), doc,
       "GetDataProtectionPolicy")
    check_standard_attrs(attrs_of(arn), arn)
