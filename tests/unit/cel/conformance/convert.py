#!/usr/bin/env python3
"""Converts cel-spec's simple conformance files (tests/simple/testdata/*.textproto) into the
JSON tables tests/unit/cel/cel_conformance_test.cc reads.

    tests/unit/cel/conformance/convert.py CEL_SPEC_CHECKOUT

Each output file holds the tests of one input file: the expression, whether it is type-checked,
the declared variables and their values, and the expected value or error. Tests that use what
the evaluator does not support are kept with a "skip" reason, and whole sections that are out of
scope are listed under "skipped_sections" with the reason (SKIP_SECTIONS below).
"""

import json
import os
import re
import sys

FILES = [
    "basic", "comparisons", "conversions", "fields", "fp_math", "integer_math", "lists", "logic",
    "macros", "parse", "plumbing", "string", "string_ext", "bindings_ext",
]

# Sections out of scope, with the reason.
SKIP_SECTIONS = {
    ("basic", "functions"): "type values (type(), int as a value)",
    ("comparisons", "eq_wrapper"): "protobuf wrapper types",
    ("conversions", "type"): "type values",
    ("conversions", "identity"): "timestamps and durations",
    ("string_ext", "format"): "strings.format is not in the supported subset",
    ("string_ext", "format_errors"): "strings.format is not in the supported subset",
    ("string_ext", "quote"): "strings.quote is not in the supported subset",
    ("string_ext", "reverse"): "reverse is strings extension version 3 (the Kubernetes "
                               "environment has version 2)",
    ("string_ext", "value_errors"): "exercises strings extension versions other than 2",
    ("string_ext", "type_errors"): "exercises strings extension versions other than 2",
}

UNSUPPORTED_EXPR = [
    (re.compile(r"\btype\(|\btype\b|google\.protobuf|\bTestAllTypes\b|\bNestedTestAllTypes\b"),
     "type values and protobuf messages"),
    (re.compile(r"\btimestamp\(|\bduration\("), "timestamps and durations"),
    (re.compile(r"\boptional\.|\.\?|\[\?|\borValue\(|\bhasValue\("), "optional types"),
    (re.compile(r"\bformat\(|strings\.quote|\.reverse\("), "strings.format, quote, reverse"),
    (re.compile(r"`"), "escaped identifiers"),
]

# ---- textproto --------------------------------------------------------------------------------

TOKEN = re.compile(r"""
    (?P<ws>\s+|\#[^\n]*) |
    (?P<str>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*') |
    (?P<num>-?(?:inf|nan|\d+\.?\d*(?:[eE][+-]?\d+)?[fF]?|\.\d+(?:[eE][+-]?\d+)?)) |
    (?P<id>[A-Za-z_][A-Za-z0-9_./]*) |
    (?P<punct>[{}\[\]<>:,;])
""", re.X)


def unescape(body):
    out = bytearray()
    i = 0
    b = body.encode("utf-8")
    while i < len(b):
        c = b[i]
        if c != 0x5C:
            out.append(c)
            i += 1
            continue
        n = chr(b[i + 1])
        simple = {"n": 10, "t": 9, "r": 13, "a": 7, "b": 8, "f": 12, "v": 11, "\\": 92, "'": 39,
                  '"': 34, "?": 63}
        if n in simple:
            out.append(simple[n])
            i += 2
        elif n in "01234567":
            j = i + 1
            digits = ""
            while j < len(b) and len(digits) < 3 and chr(b[j]) in "01234567":
                digits += chr(b[j])
                j += 1
            out.append(int(digits, 8))
            i = j
        elif n in "xX":
            j = i + 2
            digits = ""
            while j < len(b) and len(digits) < 2 and chr(b[j]) in "0123456789abcdefABCDEF":
                digits += chr(b[j])
                j += 1
            out.append(int(digits, 16))
            i = j
        elif n in "uU":
            k = 4 if n == "u" else 8
            out += chr(int(b[i + 2:i + 2 + k], 16)).encode("utf-8")
            i += 2 + k
        else:
            raise ValueError("escape \\" + n)
    return bytes(out)


def tokenize(text):
    pos = 0
    toks = []
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m:
            raise ValueError("bad textproto at %r" % text[pos:pos + 40])
        pos = m.end()
        kind = m.lastgroup
        if kind == "ws":
            continue
        toks.append((kind, m.group(kind)))
    return toks


class Parser:
    def __init__(self, toks):
        self.toks = toks
        self.i = 0

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else (None, None)

    def take(self):
        t = self.toks[self.i]
        self.i += 1
        return t

    def message(self, close=None):
        fields = []
        while True:
            kind, val = self.peek()
            if kind is None or (kind == "punct" and val == close):
                if close:
                    self.take()
                return fields
            if kind == "punct" and val in ",;":
                self.take()
                continue
            _, name = self.take()
            kind, val = self.peek()
            if kind == "punct" and val == ":":
                self.take()
                kind, val = self.peek()
            fields.append((name, self.value()))

    def value(self):
        kind, val = self.take()
        if kind == "punct" and val in "{<":
            return self.message("}" if val == "{" else ">")
        if kind == "punct" and val == "[":
            items = []
            while True:
                k, v = self.peek()
                if k == "punct" and v == "]":
                    self.take()
                    return items
                if k == "punct" and v == ",":
                    self.take()
                    continue
                items.append(self.value())
        if kind == "str":
            data = unescape(val[1:-1])
            while self.peek()[0] == "str":
                data += unescape(self.take()[1][1:-1])
            return ("str", data)
        if kind == "num":
            return ("num", val)
        return ("id", val)


def get(fields, name, default=None):
    for n, v in fields:
        if n == name:
            return v
    return default


def get_all(fields, name):
    return [v for n, v in fields if n == name]


def text(v):
    return v[1].decode("utf-8")


# ---- values and types -------------------------------------------------------------------------

class Unsupported(Exception):
    pass


def number(v):
    s = v[1]
    if s.lower() in ("inf", "-inf", "nan", "-nan"):
        return s.lower()
    return s.rstrip("fF")


def convert_value(fields):
    if not fields:
        raise Unsupported("empty value")
    name, v = fields[0]
    if name == "null_value":
        return {"null": True}
    if name == "bool_value":
        return {"bool": v[1] == "true"}
    if name == "int64_value":
        return {"int": number(v)}
    if name == "uint64_value":
        return {"uint": number(v)}
    if name == "double_value":
        return {"double": number(v)}
    if name == "string_value":
        return {"string": text(v)}
    if name == "bytes_value":
        return {"bytes": v[1].hex()}
    if name == "list_value":
        return {"list": [convert_value(x) for x in get_all(v, "values")]}
    if name == "map_value":
        entries = []
        for e in get_all(v, "entries"):
            entries.append([convert_value(get(e, "key")), convert_value(get(e, "value"))])
        return {"map": entries}
    raise Unsupported(name)


PRIMITIVES = {"BOOL": "bool", "INT64": "int", "UINT64": "uint", "DOUBLE": "double",
              "STRING": "string", "BYTES": "bytes"}


def convert_type(fields):
    name, v = fields[0]
    if name == "primitive":
        return PRIMITIVES[v[1]]
    if name == "dyn":
        return "dyn"
    if name == "null":
        return "null"
    if name == "list_type":
        return {"list": convert_type(get(v, "elem_type"))}
    if name == "map_type":
        return {"map": [convert_type(get(v, "key_type")), convert_type(get(v, "value_type"))]}
    raise Unsupported("type " + name)


def code_only(expr):
    """The expression with the contents of its string and bytes literals removed."""
    out = []
    i = 0
    while i < len(expr):
        c = expr[i]
        if c in "'\"":
            j = i - 1
            raw = False
            while j >= 0 and expr[j] in "rRbB":
                raw = raw or expr[j] in "rR"
                j -= 1
            quote = expr[i:i + 3] if expr[i:i + 3] == c * 3 else c
            i += len(quote)
            while i < len(expr) and expr[i:i + len(quote)] != quote:
                i += 2 if (expr[i] == "\\" and not raw) else 1
            i += len(quote)
            out.append('""')
            continue
        out.append(c)
        i += 1
    return "".join(out)


def convert_test(file, section, t):
    out = {"name": text(get(t, "name")), "expr": text(get(t, "expr"))}
    out["check"] = not (get(t, "disable_check") == ("id", "true"))
    try:
        if get(t, "container") is not None:
            raise Unsupported("containers")
        if get(t, "check_only") == ("id", "true"):
            raise Unsupported("check-only")
        for pattern, reason in UNSUPPORTED_EXPR:
            if pattern.search(code_only(out["expr"])):
                raise Unsupported(reason)
        decls = {}
        for d in get_all(t, "type_env"):
            ident = get(d, "ident")
            if ident is None:
                raise Unsupported("function declarations")
            decls[text(get(d, "name"))] = convert_type(get(ident, "type"))
        if decls:
            out["decls"] = decls
        bindings = {}
        for b in get_all(t, "bindings"):
            expr_value = get(b, "value")
            value = get(expr_value, "value")
            if value is None:
                raise Unsupported("unknown or error bindings")
            bindings[text(get(b, "key"))] = convert_value(value)
        if bindings:
            out["bindings"] = bindings
        value = get(t, "value")
        typed = get(t, "typed_result")
        if typed is not None:
            value = get(typed, "result")
        err = get(t, "eval_error")
        if value is not None:
            out["value"] = convert_value(value)
        elif err is not None:
            msgs = [text(get(e, "message", ("str", b""))) for e in get_all(err, "errors")]
            out["error"] = "; ".join(msgs)
        elif get(t, "unknown") is not None or get(t, "any_unknowns") is not None:
            raise Unsupported("unknowns")
        elif get(t, "any_eval_errors") is not None:
            out["error"] = "any"
        else:
            out["value"] = {"bool": True}
    except Unsupported as e:
        out["skip"] = str(e)
    return out


def main():
    spec = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    for name in FILES:
        path = os.path.join(spec, "tests", "simple", "testdata", name + ".textproto")
        with open(path, encoding="utf-8") as f:
            fields = Parser(tokenize(f.read())).message()
        result = {"file": name, "sections": [], "skipped_sections": []}
        for s in get_all(fields, "section"):
            sname = text(get(s, "name"))
            reason = SKIP_SECTIONS.get((name, sname))
            if reason:
                result["skipped_sections"].append({"section": sname, "reason": reason})
                continue
            tests = [convert_test(name, sname, t) for t in get_all(s, "test")]
            result["sections"].append({"name": sname, "tests": tests})
        with open(os.path.join(here, name + ".json"), "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1, ensure_ascii=False)
            f.write("\n")


if __name__ == "__main__":
    main()
