"""Fidelity cases for HTTP subscriptions: what Subscribe answers, the
confirmation an endpoint gets, confirming by the SubscribeURL (and the
refusals of a broken one), notifications raw and enveloped with SNS's
headers, the unsubscribe confirmation, and the content type a delivery
policy sets. Expected answers are AWS's, as recorded by LocalStack's
test_sns.py (TestSNSSubscriptionHttp): a real endpoint in this process
takes the requests sluice makes, as the recording's endpoint took SNS's."""

import http.server
import json
import threading
import time
import urllib.error
import urllib.request

from fidelity import ACCOUNT, REGION, eq
from sns_common import RECORDED, new_topic, sns, sns_case

CONFIRMATION_KEYS = ["Message", "MessageId", "Signature", "SignatureVersion", "SigningCertURL", "SubscribeURL",
                     "Timestamp", "Token", "TopicArn", "Type"]
NOTIFICATION_KEYS = ["Message", "MessageId", "Signature", "SignatureVersion", "SigningCertURL", "Timestamp",
                     "TopicArn", "Type", "UnsubscribeURL"]
SNS_AGENT = "Amazon Simple Notification Service Agent"
# SNS's default HTTP retry policy, as every EffectiveDeliveryPolicy shows it.
DEFAULT_HEALTHY = {"minDelayTarget": 20, "maxDelayTarget": 20, "numRetries": 3, "numMaxDelayRetries": 0,
                   "numNoDelayRetries": 0, "numMinDelayRetries": 0, "backoffFunction": "linear"}
# What the recording's fixture sets on every HTTP subscription it makes.
FIXTURE_POLICY = {
    "healthyRetryPolicy": {"minDelayTarget": 1, "maxDelayTarget": 1, "numRetries": 0, "numNoDelayRetries": 0,
                           "numMinDelayRetries": 0, "numMaxDelayRetries": 0, "backoffFunction": "linear"},
    "sicklyRetryPolicy": None,
    "throttlePolicy": {"maxReceivesPerSecond": 1000},
    "guaranteed": False,
}


class Endpoint:
    """An HTTP endpoint on a free loopback port: records each POST (path,
    headers, body) and answers 200."""

    def __init__(self):
        got = self.got = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802  (http.server's name)
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length).decode()
                got.append({"path": self.path, "headers": dict(self.headers.items()), "body": body})
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/sns-endpoint"

    def wait(self, n, timeout=10):
        """The first `n` requests, once they came (bounded)."""
        deadline = time.time() + timeout
        while len(self.got) < n:
            assert time.time() < deadline, f"{n} requests expected, got {self.got!r}"
            time.sleep(0.05)
        return self.got[:n]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def header(request, name):
    """A request header, whatever the case its name was sent in."""
    for k, v in request["headers"].items():
        if k.lower() == name.lower():
            return v
    return None


def get(url):
    """A plain GET (as a browser or an endpoint's own code confirms):
    (status, body)."""
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def xml_value(body, tag):
    start = body.find(f"<{tag}>")
    end = body.find(f"</{tag}>")
    return body[start + len(tag) + 2:end] if start >= 0 and end > start else None


def expect_get_error(url, code, message):
    status, body = get(url)
    assert status >= 400, (status, body)
    eq(xml_value(body, "Code"), code, f"code of GET {url}")
    eq(xml_value(body, "Message"), message, f"message of GET {url}")
    eq(xml_value(body, "Type"), "Sender", f"fault of GET {url}")


def http_subscription(raw):
    """The recording's fixture: a topic, an endpoint subscribed to it with
    a one-try delivery policy, raw delivery when asked."""
    endpoint = Endpoint()
    topic = new_topic("http")
    sub = sns.subscribe(TopicArn=topic, Protocol="http", Endpoint=endpoint.url,
                        ReturnSubscriptionArn=True)["SubscriptionArn"]
    sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="DeliveryPolicy",
                                    AttributeValue=json.dumps(FIXTURE_POLICY))
    if raw:
        sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="RawMessageDelivery",
                                        AttributeValue="true")
    return topic, sub, endpoint


def check_confirmation(request, topic):
    payload = json.loads(request["body"])
    eq(sorted(payload), CONFIRMATION_KEYS, "SubscriptionConfirmation fields")
    eq(payload["Type"], "SubscriptionConfirmation", "Type")
    eq(payload["TopicArn"], topic, "TopicArn")
    eq(payload["SignatureVersion"], "1", "SignatureVersion")
    eq(payload["Message"], f"You have chosen to subscribe to the topic {topic}.\n"
                           "To confirm the subscription, visit the SubscribeURL included in this message.", "Message")
    assert "/SimpleNotificationService-" in payload["SigningCertURL"], payload["SigningCertURL"]
    service_url = payload["SubscribeURL"].rsplit("/", 1)[0]
    eq(payload["SubscribeURL"],
       f"{service_url}/?Action=ConfirmSubscription&TopicArn={topic}&Token={payload['Token']}", "SubscribeURL")
    eq(request["path"], "/sns-endpoint", "path")
    for name, value in [("Content-Type", "text/plain; charset=UTF-8"), ("User-Agent", SNS_AGENT),
                        ("Accept-Encoding", "gzip,deflate"), ("x-amz-sns-message-type", "SubscriptionConfirmation"),
                        ("x-amz-sns-message-id", payload["MessageId"]), ("x-amz-sns-topic-arn", topic),
                        ("x-amz-sns-subscription-arn", None), ("x-amz-sns-rawdelivery", None)]:
        eq(header(request, name), value, f"confirmation header {name}")
    return payload, service_url


@sns_case("sns-http", "N6", RECORDED + "TestSNSSubscriptionHttp::test_http_subscription_response")
def http_subscribe_answers_pending_then_the_arn():
    topic = new_topic("httpsub")
    # An endpoint that never confirms (nothing listens there).
    endpoint = "http://127.0.0.1:9/never-confirms"
    out = sns.subscribe(TopicArn=topic, Protocol="http", Endpoint=endpoint, ReturnSubscriptionArn=False)
    eq(out["SubscriptionArn"], "pending confirmation", "without ReturnSubscriptionArn")
    out = sns.subscribe(TopicArn=topic, Protocol="http", Endpoint=endpoint, ReturnSubscriptionArn=True)
    arn = out["SubscriptionArn"]
    assert arn.startswith(f"{topic}:") and len(arn) == len(topic) + 37, arn


def external_endpoint(raw):
    topic, sub, endpoint = http_subscription(raw)
    try:
        (confirmation,) = endpoint.wait(1)
        payload, service_url = check_confirmation(confirmation, topic)
        token = payload["Token"]
        base = f"{service_url}/?Action=ConfirmSubscription"
        expect_get_error(f"{base}&TopicArn=not-an-arn&Token={token}", "InvalidParameter", "Invalid parameter: Topic")
        expect_get_error(f"{base}&TopicArn={topic}&Token=abc123", "InvalidParameter", "Invalid parameter: Token")
        other_region = "eu-central-1" if REGION != "eu-central-1" else "us-east-1"
        expect_get_error(f"{base}&TopicArn={topic.replace(REGION, other_region)}&Token={token}",
                         "InvalidParameter", "Invalid parameter: Topic")
        # A topic that does not exist, in the right region, with a real
        # token: SNS confirms the token's subscription all the same.
        nonexistent = topic[:-1] + ("a" if topic[-1] != "a" else "b")
        status, body = get(f"{base}&TopicArn={nonexistent}&Token={token}")
        eq((status, xml_value(body, "SubscriptionArn")), (200, sub), "confirmed by a token, whatever the topic")
        eq(sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"]["PendingConfirmation"], "false",
           "PendingConfirmation")
        # The SubscribeURL itself, again: idempotent.
        status, body = get(payload["SubscribeURL"])
        eq((status, xml_value(body, "SubscriptionArn")), (200, sub), "ConfirmSubscription again")

        message = "test_external_http_endpoint"
        sns.publish(TopicArn=topic, Message=message)
        notification = endpoint.wait(2)[1]
        expected = [("Content-Type", "text/plain; charset=UTF-8"), ("User-Agent", SNS_AGENT),
                    ("Accept-Encoding", "gzip,deflate"), ("x-amz-sns-message-type", "Notification"),
                    ("x-amz-sns-topic-arn", topic), ("x-amz-sns-subscription-arn", sub),
                    ("x-amz-sns-rawdelivery", "true" if raw else None)]
        if raw:
            eq(notification["body"], message, "raw body")
        else:
            doc = json.loads(notification["body"])
            eq(sorted(doc), NOTIFICATION_KEYS, "Notification fields")
            eq((doc["Type"], doc["Message"], doc["TopicArn"], doc["SignatureVersion"]),
               ("Notification", message, topic, "1"), "Notification")
            eq(doc["UnsubscribeURL"], f"{service_url}/?Action=Unsubscribe&SubscriptionArn={sub}", "UnsubscribeURL")
            expected.append(("x-amz-sns-message-id", doc["MessageId"]))
        for name, value in expected:
            eq(header(notification, name), value, f"notification header {name}")

        status, body = get(f"{service_url}/?Action=Unsubscribe&SubscriptionArn={sub}")
        eq(status, 200, f"GET of the UnsubscribeURL: {body}")
        assert "<UnsubscribeResponse" in body, body
        goodbye = endpoint.wait(3)[2]
        eq(header(goodbye, "x-amz-sns-message-type"), "UnsubscribeConfirmation", "message type")
        doc = json.loads(goodbye["body"])
        eq(sorted(doc), CONFIRMATION_KEYS, "UnsubscribeConfirmation fields")
        eq(doc["Type"], "UnsubscribeConfirmation", "Type")
        eq(doc["Message"], f"You have chosen to deactivate subscription {sub}.\n"
                           "To cancel this operation and restore the subscription, visit the SubscribeURL included "
                           "in this message.", "Message")
        eq(doc["SubscribeURL"],
           f"{service_url}/?Action=ConfirmSubscription&TopicArn={topic}&Token={doc['Token']}", "SubscribeURL")
    finally:
        endpoint.close()


@sns_case("sns-http", "N6", RECORDED + "TestSNSSubscriptionHttp::test_subscribe_external_http_endpoint[True]")
def http_endpoint_confirmed_then_notified_raw():
    external_endpoint(raw=True)


@sns_case("sns-http", "N6", RECORDED + "TestSNSSubscriptionHttp::test_subscribe_external_http_endpoint[False]")
def http_endpoint_confirmed_then_notified_in_the_envelope():
    external_endpoint(raw=False)


def content_type(raw):
    topic, sub, endpoint = http_subscription(raw)
    try:
        if raw:
            sns.set_subscription_attributes(SubscriptionArn=sub, AttributeName="DeliveryPolicy",
                                            AttributeValue=json.dumps({"requestPolicy": {"headerContentType": "text/csv"}}))
            topic_policy = {}
            own = {"healthyRetryPolicy": None, "sicklyRetryPolicy": None, "throttlePolicy": None,
                   "requestPolicy": {"headerContentType": "text/csv"}, "guaranteed": False}
            effective = dict(own, healthyRetryPolicy=DEFAULT_HEALTHY)
            wanted = "text/csv"
            topic_content_type = "text/plain; charset=UTF-8"
        else:
            sns.set_topic_attributes(TopicArn=topic, AttributeName="DeliveryPolicy", AttributeValue=json.dumps(
                {"http": {"defaultRequestPolicy": {"headerContentType": "application/json"}}}))
            topic_policy = {"http": {"disableSubscriptionOverrides": False,
                                     "defaultRequestPolicy": {"headerContentType": "application/json"}}}
            own = dict(FIXTURE_POLICY, requestPolicy=None)
            effective = dict(FIXTURE_POLICY, requestPolicy={"headerContentType": "application/json"})
            wanted = topic_content_type = "application/json"
        attrs = sns.get_topic_attributes(TopicArn=topic)["Attributes"]
        if topic_policy:
            eq(json.loads(attrs["DeliveryPolicy"]), topic_policy, "the topic's DeliveryPolicy")
        else:
            assert "DeliveryPolicy" not in attrs, attrs
        eq(json.loads(attrs["EffectiveDeliveryPolicy"]),
           {"http": {"defaultHealthyRetryPolicy": DEFAULT_HEALTHY, "disableSubscriptionOverrides": False,
                     "defaultRequestPolicy": {"headerContentType": topic_content_type}}},
           "the topic's EffectiveDeliveryPolicy")
        attrs = sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"]
        eq(json.loads(attrs["DeliveryPolicy"]), own, "the subscription's DeliveryPolicy")
        eq(json.loads(attrs["EffectiveDeliveryPolicy"]), effective, "the subscription's EffectiveDeliveryPolicy")
        eq({k: attrs[k] for k in ["ConfirmationWasAuthenticated", "PendingConfirmation", "Protocol",
                                  "RawMessageDelivery", "Owner", "TopicArn", "Endpoint"]},
           {"ConfirmationWasAuthenticated": "false", "PendingConfirmation": "true", "Protocol": "http",
            "RawMessageDelivery": "true" if raw else "false", "Owner": ACCOUNT, "TopicArn": topic,
            "Endpoint": endpoint.url}, "the subscription's attributes")

        (confirmation,) = endpoint.wait(1)
        payload, _ = check_confirmation(confirmation, topic)
        sns.confirm_subscription(TopicArn=topic, Token=payload["Token"])
        sns.publish(TopicArn=topic, Message="test_external_http_endpoint")
        notification = endpoint.wait(2)[1]
        eq(header(notification, "x-amz-sns-message-type"), "Notification", "message type")
        eq(header(notification, "Content-Type"), wanted, "the delivery policy's content type")
    finally:
        endpoint.close()


@sns_case("sns-http", "N6",
          RECORDED + "TestSNSSubscriptionHttp::test_subscribe_external_http_endpoint_content_type[True]")
def http_content_type_from_the_subscription_policy():
    content_type(raw=True)


@sns_case("sns-http", "N6",
          RECORDED + "TestSNSSubscriptionHttp::test_subscribe_external_http_endpoint_content_type[False]")
def http_content_type_from_the_topic_policy():
    content_type(raw=False)
