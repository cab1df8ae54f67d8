#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A CRI client that speaks to a container runtime as the kubelet does: one
call of the runtime.v1 RuntimeService or ImageService per run, over the
runtime's gRPC socket. Methods and messages come from the CRI API proto of the
containerd in use (tests/engines/cri_api.sh), compiled by protoc into
$CRI_PROTO_DIR/api_pb2.py; nothing here restates the API.

usage: CRI_PROTO_DIR=DIR cri_client.py SOCKET METHOD [REQUEST_JSON]

REQUEST_JSON is the request message in the protobuf JSON mapping (field names
as in the proto). Prints the response the same way, with bytes fields (ExecSync's
stdout and stderr) as text, fields at their default included. On a gRPC error prints "METHOD: CODE: message" to
stderr and exits 1, which is what the kubelet reports in a pod's events.
"""
import importlib
import json
import os
import sys

import grpc
from google.protobuf import descriptor, json_format

TIMEOUT_S = 120  # the kubelet's default runtime request timeout (2 min)


def find_method(api, name):
    for service in api.DESCRIPTOR.services_by_name.values():
        if name in service.methods_by_name:
            return service.methods_by_name[name]
    known = sorted(m for s in api.DESCRIPTOR.services_by_name.values() for m in s.methods_by_name)
    sys.exit(f"cri_client: no method {name} in the CRI API; known: {', '.join(known)}")


def as_dict(message):
    """The message as protobuf JSON, bytes fields decoded as text. Fields at their
    default are kept: SANDBOX_READY and exit code 0 are proto3 defaults."""
    out = json_format.MessageToDict(message, preserving_proto_field_name=True, including_default_value_fields=True)
    for field, value in message.ListFields():
        if field.type == descriptor.FieldDescriptor.TYPE_BYTES and field.label != field.LABEL_REPEATED:
            out[field.name] = value.decode("utf-8", "replace")
    return out


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    socket, method_name = sys.argv[1], sys.argv[2]
    request_json = sys.argv[3] if len(sys.argv) == 4 else "{}"
    sys.path.insert(0, os.environ["CRI_PROTO_DIR"])
    api = importlib.import_module("api_pb2")
    method = find_method(api, method_name)
    request_type = getattr(api, method.input_type.name)
    response_type = getattr(api, method.output_type.name)
    request = json_format.Parse(request_json, request_type())

    with grpc.insecure_channel("unix://" + socket) as channel:
        call = channel.unary_unary(f"/{method.containing_service.full_name}/{method.name}",
                                   request_serializer=request_type.SerializeToString,
                                   response_deserializer=response_type.FromString)
        try:
            response = call(request, timeout=TIMEOUT_S)
        except grpc.RpcError as error:
            print(f"{method_name}: {error.code().name}: {error.details()}", file=sys.stderr)
            return 1
    print(json.dumps(as_dict(response), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
