"""A small USD ASCII (usda) reader for the tests: enough of the grammar for
what `skinner frames --format usda` writes and for layers like it (layer
metadata, nested `def`/`over` prims with metadata, typed attributes with
default values or `.timeSamples`, arrays of numbers and tuples, strings,
dictionaries). Numbers are read as Python floats (doubles), as USD's own
parser reads them; a float3 is then rounded to float32 by the caller.

    layer = read(text)
    layer.metadata["timeCodesPerSecond"]
    prim = layer.prims["/Skinned/mesh0_primitive0"]
    prim.attrs["points"].samples[0]   # [(x, y, z), ...]
"""
import re

_TOKEN = re.compile(r'''
    (?P<ws>[ \t\r\n]+|\#(?!usda)[^\n]*)
  | (?P<header>\#usda[ ]+[0-9.]+)
  | (?P<str>"(?:[^"\\\n]|\\.)*")
  | (?P<num>[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?(?![A-Za-z_]))
  | (?P<id>[A-Za-z_][A-Za-z0-9_:.]*(?:\[\])?)
  | (?P<punct>[()\[\]{}=,:])
''', re.X)


class UsdaError(ValueError):
    pass


def tokens(text):
    out, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise UsdaError("cannot read %r at offset %d" % (text[pos:pos + 20], pos))
        pos = m.end()
        kind = m.lastgroup
        if kind == "ws":
            continue
        val = m.group(kind)
        if kind == "str":
            val = bytes(val[1:-1], "utf-8").decode("unicode_escape")
        elif kind == "num":
            val = float(val)
        out.append((kind, val))
    return out


class Attr:
    def __init__(self, type_name, uniform):
        self.type, self.uniform, self.default, self.samples, self.metadata = type_name, uniform, None, None, {}


class Prim:
    def __init__(self, spec, type_name, path):
        self.spec, self.type, self.path, self.metadata, self.attrs = spec, type_name, path, {}, {}


class Layer:
    def __init__(self):
        self.metadata, self.prims, self.order = {}, {}, []


class _Parser:
    def __init__(self, toks):
        self.t, self.i = toks, 0

    def peek(self, k=0):
        return self.t[self.i + k] if self.i + k < len(self.t) else (None, None)

    def take(self, want=None):
        tok = self.peek()
        if tok[0] is None or (want is not None and tok[1] != want):
            raise UsdaError("expected %r, got %r (token %d)" % (want, tok[1], self.i))
        self.i += 1
        return tok

    def value(self):
        kind, v = self.peek()
        if kind in ("num", "str"):
            self.i += 1
            return v
        if kind == "id":  # None, true/false, tokens without quotes
            self.i += 1
            return {"None": None, "true": True, "false": False}.get(v, v)
        if v == "[":
            return self.seq("[", "]", list)
        if v == "(":
            return self.seq("(", ")", tuple)
        if v == "{":
            return self.dictionary()
        raise UsdaError("unexpected %r (token %d)" % (v, self.i))

    def seq(self, open_, close, kind):
        self.take(open_)
        items = []
        while self.peek()[1] != close:
            items.append(self.value())
            if self.peek()[1] == ",":
                self.i += 1
        self.take(close)
        return kind(items)

    def dictionary(self):  # {type name = value ...}
        self.take("{")
        d = {}
        while self.peek()[1] != "}":
            self.take()  # the value's type
            name = self.take()[1]
            self.take("=")
            d[name] = self.value()
        self.take("}")
        return d

    def metadata(self):  # ( name = value ... ) or ( "doc" )
        self.take("(")
        md = {}
        while self.peek()[1] != ")":
            if self.peek()[0] == "str":
                md["doc"] = self.take()[1]
                continue
            name = self.take()[1]
            self.take("=")
            md[name] = self.value()
        self.take(")")
        return md

    def samples(self):  # { t: value, ... }
        self.take("{")
        out = {}
        while self.peek()[1] != "}":
            t = self.take()[1]
            self.take(":")
            out[t] = self.value()
            if self.peek()[1] == ",":
                self.i += 1
        self.take("}")
        return out

    def prim(self, layer, parent):
        spec = self.take()[1]
        type_name = self.take()[1] if self.peek()[0] == "id" else ""
        name = self.take()[1]
        path = parent.rstrip("/") + "/" + name
        if path in layer.prims:
            raise UsdaError("prim %s defined twice" % path)
        p = layer.prims[path] = Prim(spec, type_name, path)
        layer.order.append(path)
        if self.peek()[1] == "(":
            p.metadata = self.metadata()
        self.take("{")
        while self.peek()[1] != "}":
            if self.peek()[1] in ("def", "over", "class"):
                self.prim(layer, path)
                continue
            uniform = self.peek()[1] in ("uniform", "custom")
            if uniform:
                self.i += 1
            type_name = self.take()[1]
            name = self.take()[1]
            base, _, field = name.partition(".")
            a = p.attrs.setdefault(base, Attr(type_name, uniform))
            if self.peek()[1] == "(":
                a.metadata.update(self.metadata())
            if self.peek()[1] == "=":
                self.i += 1
                if field == "timeSamples":
                    a.samples = self.samples()
                elif field:
                    raise UsdaError("unknown attribute field %s" % name)
                else:
                    a.default = self.value()
        self.take("}")


def read(text):
    toks = tokens(text)
    if not toks or toks[0][0] != "header":
        raise UsdaError("not a usda layer: no #usda header")
    p, layer = _Parser(toks[1:]), Layer()
    if p.peek()[1] == "(":
        layer.metadata = p.metadata()
    while p.peek()[0] is not None:
        p.prim(layer, "/")
    return layer
