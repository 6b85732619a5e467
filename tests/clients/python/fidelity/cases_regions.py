"""Fidelity cases: queues are regional (rule W3). A client signs for a
region; the same name in two regions is two queues, each listed, found and
addressed only in its own region, with its region in its ARN."""

import json

from fidelity import _created, case, eq, expect_error, make_client, unique

SOURCE = "AWS recorded answer, LocalStack test_sqs.py::test_list_queues_multi_region_* and ::TestSqsQueryApi::test_endpoint_strategy_with_multi_region"


def regional(name, *regions):
    """Creates `name` in each region; returns [(client, url)]."""
    out = []
    for region in regions:
        c = make_client(region)
        url = c.create_queue(QueueName=name)["QueueUrl"]
        _created.append((c, url))
        out.append((c, url))
    return out


@case("core", "W3", SOURCE)
def regions_keep_same_named_queues_apart():
    name = unique("rg")
    (west, west_url), (north, north_url) = regional(name, "us-west-1", "eu-north-1")
    assert west_url != north_url, west_url
    for c, url, region in [(west, west_url, "us-west-1"), (north, north_url, "eu-north-1")]:
        eq(c.list_queues(QueueNamePrefix=name).get("QueueUrls"), [url], f"ListQueues in {region}")
        eq(c.get_queue_url(QueueName=name)["QueueUrl"], url, f"GetQueueUrl in {region}")
        arn = c.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        assert arn.startswith(f"arn:aws:sqs:{region}:") and arn.endswith(f":{name}"), arn
    west.send_message(QueueUrl=west_url, MessageBody="west")
    eq(north.receive_message(QueueUrl=north_url).get("Messages", []), [], "the other region's queue")
    got = west.receive_message(QueueUrl=west_url, WaitTimeSeconds=1).get("Messages", [])
    eq([m["Body"] for m in got], ["west"], "own region's queue")


@case("core", "W3", SOURCE)
def regions_a_queue_is_not_found_in_another_region():
    name = unique("rg")
    regional(name, "us-west-1")
    expect_error(
        make_client("eu-north-1").get_queue_url,
        QueueName=name,
        code="AWS.SimpleQueueService.NonExistentQueue",
        json_type="QueueDoesNotExist",
    )


@case("dlq", "W3, R1", "AWS API reference, RedrivePolicy: the dead-letter queue is in the same region as its source")
def regions_dead_letter_queue_stays_in_its_region():
    name = unique("rg")
    ((west, dlq_url),) = regional(name + "-dlq", "us-west-1")
    arn = west.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    policy = json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 1})
    ((_, src_url),) = regional(name, "us-west-1")
    west.set_queue_attributes(QueueUrl=src_url, Attributes={"RedrivePolicy": policy})
    west.send_message(QueueUrl=src_url, MessageBody="poison")
    eq(len(west.receive_message(QueueUrl=src_url, VisibilityTimeout=0, WaitTimeSeconds=1).get("Messages", [])), 1, "first receive")
    eq(west.receive_message(QueueUrl=src_url).get("Messages", []), [], "moved on the second receive")
    dead = west.receive_message(QueueUrl=dlq_url, WaitTimeSeconds=1, AttributeNames=["All"]).get("Messages", [])
    eq([m["Body"] for m in dead], ["poison"], "in the DLQ")
    eq(dead[0]["Attributes"]["DeadLetterQueueSourceArn"], arn.replace("-dlq", ""), "source ARN")


@case("core", "W3", "AWS-validated assertion, LocalStack test_sqs.py::test_list_queues_multi_region_with_endpoint_strategy_standard and ::test_get_queue_url_multi_region")
def regions_default_region_and_another():
    # The default region is a region like any other: its queues are listed,
    # found and named with their region, and the other region's are not.
    name = unique("rg")
    (east, east_url), (central, central_url) = regional(name, "us-east-1", "eu-central-1")
    assert east_url != central_url, east_url
    assert "eu-central-1" in central_url and "us-east-1" not in central_url, central_url
    assert "eu-central-1" not in east_url, east_url
    east_all, central_all = east.list_queues().get("QueueUrls", []), central.list_queues().get("QueueUrls", [])
    assert east_url in east_all and central_url not in east_all, east_all
    assert central_url in central_all and east_url not in central_all, central_all
    eq(east.get_queue_url(QueueName=name)["QueueUrl"], east_url, "GetQueueUrl in us-east-1")
    eq(central.get_queue_url(QueueName=name)["QueueUrl"], central_url, "GetQueueUrl in eu-central-1")
