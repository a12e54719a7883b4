"""OpenAPI 3.1 for the REST face, generated from the protos' google.api.http annotations.

    python tools/gen_openapi.py [-o docs/openapi.json]      (run by `make proto`)

Why a script of our own: the maintained generators (grpc-gateway's protoc-gen-openapiv2,
gnostic's protoc-gen-openapi, protoc-gen-connect-openapi) are Go programs published as Go
modules, release binaries or BSR remote plugins, none reachable from the package registries
this project installs from (PyPI, npm); the npm/PyPI packages that claim the job either
wrap 2018-era protoc-gen-swagger (which refuses proto3 `optional` fields) or ignore
google.api.http. So this follows the same rules those tools implement, in a few hundred lines:

* It compiles the contract with grpcio-tools' protoc (the pinned one `make proto` uses) into a
  descriptor set with source info, so every description is the .proto comment.
* Paths and verbs are the HttpRules (additional bindings included). Path variables become path
  parameters; with `body: "*"` the other fields are the JSON body; without a body they become
  query parameters (dotted for nested messages), as gRPC transcoding binds them.
* Schemas follow the proto3 JSON mapping, as Envoy's transcoder prints it: lowerCamelCase
  names, 64-bit integers as strings, enums as their names, maps as objects,
  google.protobuf.Any as an object with "@type".
* Errors: every operation's `default` response is google.rpc.Status (generated from the
  vendored google/rpc/status.proto), whose details carry google.rpc.ErrorInfo, BadRequest and
  accordion.v1.LegalMovesResponse (listed under components as well).
* Security: an operation whose request has a `game_id` needs the game's bearer token (the
  contract's rule: every RPC on an existing game).

The output is deterministic (declaration order, fixed indentation): `make proto-check`
compares it with the committed file.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from google.api import annotations_pb2, http_pb2
from google.protobuf import descriptor_pb2
from grpc_tools import protoc

ROOT = Path(__file__).resolve().parents[1]
PROTO_FILES = ["accordion/v1/accordion.proto"]
# Not imported by the contract but part of its error model (the JSON body of every error).
EXTRA_FILES = ["google/rpc/status.proto", "google/rpc/error_details.proto"]
ERROR_DETAILS = [".google.rpc.ErrorInfo", ".google.rpc.BadRequest", ".accordion.v1.LegalMovesResponse"]

F = descriptor_pb2.FieldDescriptorProto
SCALARS: dict[int, dict[str, Any]] = {
    F.TYPE_DOUBLE: {"type": "number", "format": "double"},
    F.TYPE_FLOAT: {"type": "number", "format": "float"},
    F.TYPE_INT32: {"type": "integer", "format": "int32"},
    F.TYPE_SINT32: {"type": "integer", "format": "int32"},
    F.TYPE_SFIXED32: {"type": "integer", "format": "int32"},
    F.TYPE_UINT32: {"type": "integer", "format": "int64", "minimum": 0},
    F.TYPE_FIXED32: {"type": "integer", "format": "int64", "minimum": 0},
    # proto3 JSON writes 64-bit integers as decimal strings (and reads strings or numbers).
    F.TYPE_INT64: {"type": "string", "format": "int64"},
    F.TYPE_SINT64: {"type": "string", "format": "int64"},
    F.TYPE_SFIXED64: {"type": "string", "format": "int64"},
    F.TYPE_UINT64: {"type": "string", "format": "uint64"},
    F.TYPE_FIXED64: {"type": "string", "format": "uint64"},
    F.TYPE_BOOL: {"type": "boolean"},
    F.TYPE_STRING: {"type": "string"},
    F.TYPE_BYTES: {"type": "string", "format": "byte"},
}
# Well-known types with a special JSON form.
WELL_KNOWN: dict[str, dict[str, Any]] = {
    ".google.protobuf.Any": {
        "type": "object",
        "description": 'Any message, with its type URL in "@type" and its fields beside it.',
        "properties": {"@type": {"type": "string"}},
        "required": ["@type"],
        "additionalProperties": True,
    },
    ".google.protobuf.Duration": {
        "type": "string",
        "description": 'Seconds with an "s" suffix, e.g. "1.5s".',
    },
    ".google.protobuf.Timestamp": {"type": "string", "format": "date-time"},
}


def descriptor_set(include: list[Path]) -> descriptor_pb2.FileDescriptorSet:
    """Compile the contract (plus the error model's files) with comments kept."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "set.pb"
        args = ["protoc", *(f"-I{p}" for p in include)]
        args += [f"-I{Path(protoc.__file__).parent / '_proto'}"]
        args += ["--include_imports", "--include_source_info", f"--descriptor_set_out={out}"]
        if protoc.main([*args, *PROTO_FILES, *EXTRA_FILES]) != 0:
            raise SystemExit("protoc failed")
        fds = descriptor_pb2.FileDescriptorSet()
        fds.ParseFromString(out.read_bytes())
    return fds


def summary(doc: str) -> str:
    """The comment's first sentence, on one line."""
    text = " ".join(doc.split())
    end = text.find(". ")
    return (text if end < 0 else text[:end]).rstrip(".")


def clean(comment: str) -> str:
    lines = [ln[1:] if ln.startswith(" ") else ln for ln in comment.strip("\n").split("\n")]
    return "\n".join(lines).strip()


class Generator:
    def __init__(self, fds: descriptor_pb2.FileDescriptorSet) -> None:
        self.messages: dict[str, descriptor_pb2.DescriptorProto] = {}
        self.enums: dict[str, descriptor_pb2.EnumDescriptorProto] = {}
        self.comments: dict[tuple[str, tuple[int, ...]], str] = {}
        self.paths: dict[str, tuple[str, tuple[int, ...]]] = {}  # type name -> (file, path)
        self.files = {f.name: f for f in fds.file}
        for f in fds.file:
            for loc in f.source_code_info.location:
                if loc.leading_comments:
                    self.comments[(f.name, tuple(loc.path))] = clean(loc.leading_comments)
            prefix = f".{f.package}" if f.package else ""
            for i, m in enumerate(f.message_type):
                self._add_message(f.name, prefix, m, (4, i))
            for i, e in enumerate(f.enum_type):
                self.enums[f"{prefix}.{e.name}"] = e
                self.paths[f"{prefix}.{e.name}"] = (f.name, (5, i))
        self.schemas: dict[str, Any] = {}

    def _add_message(
        self, file: str, prefix: str, m: descriptor_pb2.DescriptorProto, path: tuple[int, ...]
    ) -> None:
        name = f"{prefix}.{m.name}"
        self.messages[name] = m
        self.paths[name] = (file, path)
        for i, nested in enumerate(m.nested_type):
            self._add_message(file, name, nested, (*path, 3, i))
        for i, e in enumerate(m.enum_type):
            self.enums[f"{name}.{e.name}"] = e
            self.paths[f"{name}.{e.name}"] = (file, (*path, 4, i))

    def doc(self, type_name: str, *sub: int) -> str:
        file, path = self.paths[type_name]
        return self.comments.get((file, (*path, *sub)), "")

    # --- schemas -------------------------------------------------------------------------------

    @staticmethod
    def ref(type_name: str) -> dict[str, Any]:
        return {"$ref": f"#/components/schemas/{type_name.lstrip('.')}"}

    def type_schema(self, field: descriptor_pb2.FieldDescriptorProto) -> dict[str, Any]:
        if field.type in SCALARS:
            return dict(SCALARS[field.type])
        if field.type == F.TYPE_ENUM:
            self.enum_schema(field.type_name)
            return self.ref(field.type_name)
        if field.type_name in WELL_KNOWN:
            return dict(WELL_KNOWN[field.type_name])
        self.message_schema(field.type_name)
        return self.ref(field.type_name)

    def field_schema(
        self, msg: descriptor_pb2.DescriptorProto, field: descriptor_pb2.FieldDescriptorProto
    ) -> dict[str, Any]:
        entry = self.map_entry(field)
        if entry is not None:
            schema: dict[str, Any] = {
                "type": "object",
                "additionalProperties": self.type_schema(entry.field[1]),
            }
        elif field.label == F.LABEL_REPEATED:
            schema = {"type": "array", "items": self.type_schema(field)}
        else:
            schema = self.type_schema(field)
        return schema

    def map_entry(self, field: descriptor_pb2.FieldDescriptorProto) -> descriptor_pb2.DescriptorProto | None:
        if field.type != F.TYPE_MESSAGE or field.label != F.LABEL_REPEATED:
            return None
        entry = self.messages.get(field.type_name)
        return entry if entry is not None and entry.options.map_entry else None

    @staticmethod
    def with_doc(schema: dict[str, Any], text: str) -> dict[str, Any]:
        # OpenAPI 3.1 allows a description beside $ref: the field's own words stay with it.
        return {**schema, "description": text} if text else schema

    def message_schema(
        self, type_name: str, skip: frozenset[str] = frozenset(), name: str | None = None
    ) -> str:
        key = name or type_name.lstrip(".")
        if key in self.schemas:
            return key
        msg = self.messages[type_name]
        self.schemas[key] = {}  # reserve (recursive types)
        props: dict[str, Any] = {}
        for i, field in enumerate(msg.field):
            if field.name in skip:
                continue
            text = self.doc(type_name, 2, i)
            if field.HasField("oneof_index") and not field.proto3_optional:
                group = msg.oneof_decl[field.oneof_index].name
                others = [
                    f.json_name
                    for f in msg.field
                    if f.HasField("oneof_index")
                    and f.oneof_index == field.oneof_index
                    and f.name != field.name
                ]
                group_doc = self.doc(type_name, 8, field.oneof_index)
                rule = f"One of `{group}`: set at most one of this and {', '.join(f'`{o}`' for o in others)}."
                text = "\n\n".join(t for t in (text, rule, group_doc) if t)
            props[field.json_name] = self.with_doc(self.field_schema(msg, field), text)
        schema: dict[str, Any] = {"type": "object"}
        if self.doc(type_name):
            schema["description"] = self.doc(type_name)
        schema["properties"] = props
        self.schemas[key] = schema
        return key

    def enum_schema(self, type_name: str) -> None:
        key = type_name.lstrip(".")
        if key in self.schemas:
            return
        enum = self.enums[type_name]
        lines = [self.doc(type_name), ""] if self.doc(type_name) else []
        for i, v in enumerate(enum.value):
            text = self.doc(type_name, 2, i)
            lines.append(f"* `{v.name}`" + (f": {text}" if text else ""))
        self.schemas[key] = {
            "type": "string",
            "description": "\n".join(lines),
            "enum": [v.name for v in enum.value],
        }

    # --- operations ----------------------------------------------------------------------------

    def fields_by_path(self, type_name: str, dotted: str) -> descriptor_pb2.FieldDescriptorProto:
        msg, field = self.messages[type_name], None
        for part in dotted.split("."):
            field = next(f for f in msg.field if f.name == part)
            if field.type == F.TYPE_MESSAGE:
                msg = self.messages[field.type_name]
        assert field is not None
        return field

    def query_params(
        self, type_name: str, skip: set[str], prefix: str = "", depth: int = 0
    ) -> list[dict[str, Any]]:
        msg, out = self.messages[type_name], []
        for i, field in enumerate(msg.field):
            if (prefix + field.name) in skip:
                continue
            if (
                field.type == F.TYPE_MESSAGE
                and field.type_name not in WELL_KNOWN
                and self.map_entry(field) is None
            ):
                if depth < 3 and field.label != F.LABEL_REPEATED:
                    out += self.query_params(field.type_name, skip, f"{prefix}{field.name}.", depth + 1)
                continue
            param: dict[str, Any] = {
                "name": self.json_path(type_name, prefix, field),
                "in": "query",
                "required": False,
            }
            text = self.doc(type_name, 2, i)
            if text:
                param["description"] = text
            param["schema"] = self.field_schema(msg, field)
            out.append(param)
        return out

    def json_path(self, root: str, prefix: str, field: descriptor_pb2.FieldDescriptorProto) -> str:
        if not prefix:
            return field.json_name
        parts, msg, names = prefix.rstrip(".").split("."), self.messages[root], []
        for part in parts:
            f = next(x for x in msg.field if x.name == part)
            names.append(f.json_name)
            msg = self.messages[f.type_name]
        return ".".join([*names, field.json_name])

    def operation(
        self,
        service: descriptor_pb2.ServiceDescriptorProto,
        doc: str,
        method: descriptor_pb2.MethodDescriptorProto,
        rule: http_pb2.HttpRule,
        binding: int,
    ) -> tuple[str, str, dict[str, Any]]:
        verb = rule.WhichOneof("pattern")
        assert verb is not None, f"{method.name}: no HTTP pattern"
        if verb == "custom":
            verb, template = rule.custom.kind.lower(), rule.custom.path
        else:
            template = getattr(rule, verb)
        # {name} or {name=pattern} -> {name}
        variables = re.findall(r"\{([^}=]+)(?:=[^}]*)?\}", template)
        path = re.sub(r"\{([^}=]+)(?:=[^}]*)?\}", r"{\1}", template)
        op: dict[str, Any] = {
            "operationId": f"{service.name}_{method.name}" + (f"_{binding}" if binding else ""),
            "tags": [service.name],
        }
        if doc:
            op["summary"] = summary(doc)
            op["description"] = doc
        params: list[dict[str, Any]] = []
        for var in variables:
            field = self.fields_by_path(method.input_type, var)
            params.append({"name": var, "in": "path", "required": True, "schema": self.type_schema(field)})
        body: dict[str, Any] | None = None
        if rule.body == "*":
            body_name = f"{method.input_type.lstrip('.')}.Body" if variables else None
            key = self.message_schema(method.input_type, frozenset(variables), body_name)
            if variables:
                self.schemas[key]["description"] = (
                    f"{method.input_type.lstrip('.')} without the fields bound from the path "
                    f"({', '.join(variables)})."
                )
            body = {"$ref": f"#/components/schemas/{key}"}
        elif rule.body:
            params += self.query_params(method.input_type, {*variables, rule.body})
            body = self.type_schema(self.fields_by_path(method.input_type, rule.body))
        else:
            params += self.query_params(method.input_type, set(variables))
        if params:
            op["parameters"] = params
        if body is not None:
            op["requestBody"] = {"required": True, "content": {"application/json": {"schema": body}}}
        out_type = method.output_type
        if rule.response_body:
            response_schema = self.type_schema(self.fields_by_path(out_type, rule.response_body))
        elif out_type == ".google.api.HttpBody":
            response_schema = {"type": "string"}
        else:
            self.message_schema(out_type)
            response_schema = self.ref(out_type)
        if out_type == ".google.api.HttpBody":
            # The transcoder answers with the body's bytes and its content_type, not JSON.
            ok = {
                "description": "The raw body (google.api.HttpBody), served with its own content type.",
                "content": {"image/svg+xml": {"schema": {"type": "string"}}},
            }
        elif method.server_streaming:
            ok = {
                "description": (
                    "A stream: one JSON object per line (newline-delimited JSON), as long as the call lasts."
                ),
                "content": {"application/x-ndjson": {"schema": response_schema}},
            }
        else:
            ok = {"description": "OK", "content": {"application/json": {"schema": response_schema}}}
        op["responses"] = {
            "200": ok,
            "default": {
                "description": "An error: the HTTP status follows the gRPC code (INVALID_ARGUMENT and "
                "FAILED_PRECONDITION 400, UNAUTHENTICATED 401, PERMISSION_DENIED 403, NOT_FOUND 404, "
                "ABORTED 409, ...); details[0] is the google.rpc.ErrorInfo with the reason.",
                "content": {"application/json": {"schema": self.ref(".google.rpc.Status")}},
            },
        }
        if any(f.name == "game_id" for f in self.messages[method.input_type].field):
            op["security"] = [{"gameToken": []}]
        return path, verb, op

    def generate(self) -> dict[str, Any]:
        contract = self.files[PROTO_FILES[0]]
        paths: dict[str, dict[str, Any]] = {}
        for s_index, service in enumerate(contract.service):
            for index, method in enumerate(service.method):
                if not method.options.HasExtension(annotations_pb2.http):
                    continue
                doc = self.comments.get((contract.name, (6, s_index, 2, index)), "")
                top = method.options.Extensions[annotations_pb2.http]
                for binding, rule in enumerate([top, *top.additional_bindings]):
                    path, verb, op = self.operation(service, doc, method, rule, binding)
                    paths.setdefault(path, {})[verb] = op
        self.message_schema(".google.rpc.Status")
        for detail in ERROR_DETAILS:
            self.message_schema(detail)
        header = self.comments.get((contract.name, (12,)), "")  # the comment above `syntax`
        service_doc = self.comments.get((contract.name, (6, 0)), "")
        return {
            "openapi": "3.1.0",
            "info": {
                "title": f"{contract.service[0].name} REST API ({contract.package})",
                "version": contract.package.rsplit(".", 1)[-1],
                "description": "\n\n".join(
                    part
                    for part in (
                        service_doc,
                        header,
                        f"Generated from {contract.name} (its google.api.http annotations) by "
                        "tools/gen_openapi.py: run `make proto`, do not edit. Served by Envoy's "
                        "gRPC-JSON transcoder (deploy/envoy/envoy.yaml, `make serve-rest`).",
                    )
                    if part
                ),
            },
            "servers": [{"url": "http://127.0.0.1:8080", "description": "make serve-rest"}],
            "tags": [
                {"name": s.name, "description": self.comments.get((contract.name, (6, i)), "")}
                for i, s in enumerate(contract.service)
            ],
            "paths": paths,
            "components": {
                "schemas": dict(sorted(self.schemas.items())),
                "securitySchemes": {
                    "gameToken": {
                        "type": "http",
                        "scheme": "bearer",
                        "description": "The game's token, returned once by NewGame: "
                        "`authorization: Bearer <token>`. Missing: 401; wrong: 403.",
                    }
                },
            },
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-o", "--output", default=str(ROOT / "docs" / "openapi.json"))
    args = parser.parse_args(argv)
    fds = descriptor_set([ROOT / "proto", ROOT / "proto" / "third_party"])
    spec = Generator(fds).generate()
    Path(args.output).write_text(json.dumps(spec, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
