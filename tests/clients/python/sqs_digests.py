"""SQS's digests, computed independently of any server (rule W4), for the
Python client tests: botocore verifies none of them."""

import hashlib
import struct


def md5_hex(data: bytes) -> str:
    """Hex MD5, as in MD5OfMessageBody."""
    return hashlib.md5(data).hexdigest()


def md5_of_attributes(attrs: dict) -> str:
    """MD5OfMessageAttributes: attributes sorted by name, each as
    length-prefixed name and data type, a transport byte (1 String/Number,
    2 Binary) and the length-prefixed value."""
    out = bytearray()

    def lp(b: bytes):
        out.extend(struct.pack(">I", len(b)))
        out.extend(b)

    for name in sorted(attrs):
        a = attrs[name]
        lp(name.encode("utf-8"))
        lp(a["DataType"].encode("utf-8"))
        if a["DataType"].startswith("Binary"):
            out.append(2)
            lp(bytes(a["BinaryValue"]))
        else:
            out.append(1)
            lp(a["StringValue"].encode("utf-8"))
    return md5_hex(bytes(out))
