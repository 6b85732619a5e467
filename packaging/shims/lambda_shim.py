"""Serves an unchanged Lambda handler(event, context) to a sluice push consumer:
python3 lambda_shim.py app.handler   (listens on $HOST:$PORT, default 127.0.0.1:9000)."""
import importlib, json, os, sys, threading, time, traceback, uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

module, _, name = sys.argv[1].rpartition(".")
sys.path.insert(0, os.getcwd())
handler = getattr(importlib.import_module(module), name)
NAME = os.environ.get("AWS_LAMBDA_FUNCTION_NAME", module)
TIMEOUT = int(os.environ.get("AWS_LAMBDA_FUNCTION_TIMEOUT", "30"))  # the consumer's timeout_seconds
one_at_a_time = threading.Lock()  # as a Lambda execution environment runs its events

def context():  # what handlers read of Lambda's context object
    deadline = time.monotonic() + TIMEOUT
    return SimpleNamespace(function_name=NAME, function_version="$LATEST", memory_limit_in_mb=128,
        invoked_function_arn=f"arn:aws:lambda:us-east-1:000000000000:function:{NAME}",
        aws_request_id=str(uuid.uuid4()), log_group_name=f"/aws/lambda/{NAME}", log_stream_name=NAME,
        get_remaining_time_in_millis=lambda: max(0, int((deadline - time.monotonic()) * 1000)))

class Invoke(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: sluice reuses its connections
    def do_POST(self):
        event = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        headers, ctx = {"Content-Type": "application/json"}, context()  # sluice's clock runs from the POST
        try:
            with one_at_a_time:
                body = json.dumps(handler(event, ctx)).encode()
        except Exception as e:  # answered as Lambda's Invoke answers a function error
            traceback.print_exc()
            headers["X-Amz-Function-Error"] = "Unhandled"
            body = json.dumps({"errorMessage": str(e), "errorType": type(e).__name__}).encode()
        self.send_response(200)
        for key, value in {**headers, "Content-Length": str(len(body))}.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

server = ThreadingHTTPServer((os.environ.get("HOST", "127.0.0.1"), int(os.environ.get("PORT", "9000"))), Invoke)
print(f"lambda shim listening on http://{server.server_address[0]}:{server.server_port}", flush=True)
server.serve_forever()
