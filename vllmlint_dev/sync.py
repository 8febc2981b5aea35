"""Maintainer command: build `schemas/vllm/<version>.json` from vLLM's own source.

    python -m vllmlint_dev.sync 0.29.0 0.31.0 ...

For each release the wheel is downloaded (`pip download --no-deps`), its Python
files are read straight out of the zip and the wheel is deleted. Nothing from
vLLM is imported or executed: the `vllm serve` parser is rebuilt by a small
abstract interpreter over the `ast` of the functions that build it
(`subparser_init` / `make_arg_parser` / `EngineArgs.add_cli_args` ...), and the
dataclass-driven `get_kwargs(SomeConfig)` of newer releases is emulated from the
dataclass annotations. Whatever cannot be known statically stays unknown.

Not imported by the linter at run time (the runtime side is `vllmlint.catalog`).
"""
from __future__ import annotations

import argparse
import ast
import builtins
import json
import re
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vllmlint.vllm.release import version_key

# --------------------------------------------------------------------------- values


class _Unknown:
    """A value the abstract interpreter cannot determine."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self):
        return "UNKNOWN"

    def __bool__(self):  # never use UNKNOWN as a truth value by accident
        raise TypeError("truth value of UNKNOWN")


UNKNOWN = _Unknown()


def known(value: Any) -> bool:
    return value is not UNKNOWN


@dataclass(frozen=True)
class Ext:
    """Something outside vLLM (stdlib, builtins, third party), by dotted name."""

    name: str


@dataclass(frozen=True)
class Opaque:
    """The result of calling something we did not interpret (e.g. `optional_type(int)`)."""

    func: str
    args: tuple = ()


@dataclass(eq=False)
class ModuleVal:
    name: str


@dataclass(eq=False)
class ClassVal:
    module: "Module"
    node: ast.ClassDef

    @property
    def name(self) -> str:
        return self.node.name


@dataclass(eq=False)
class FuncVal:
    module: "Module"
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
    owner: ClassVal | None = None      # class the function is defined in
    bound: Any = None                  # self / cls to pass as first argument
    closure: dict | None = None

    @property
    def name(self) -> str:
        return getattr(self.node, "name", "<lambda>")


@dataclass(eq=False)
class InstanceVal:
    cls: ClassVal


@dataclass(eq=False)
class SuperVal:
    owner: ClassVal
    bound: Any


@dataclass(eq=False)
class EnumMember:
    name: str
    value: Any


@dataclass(frozen=True)
class LiteralType:
    values: tuple


@dataclass(frozen=True)
class UnionType:
    members: tuple


@dataclass(frozen=True)
class GenericType:
    origin: str          # list, dict, tuple, set, type, ...
    args: tuple = ()


@dataclass(frozen=True)
class AnnotatedType:
    inner: Any
    bounds: tuple = ()   # (("minimum", 0), ("exclusiveMinimum", 0), ...)


@dataclass(eq=False)
class ParserVal:
    """An argparse parser or argument group; `collect` is False for parsers other than `serve`."""

    collect: bool


@dataclass(eq=False)
class SubparsersVal:
    pass


@dataclass
class Recorded:
    flags: list
    kwargs: dict


class PartialList(list):
    """`["auto", "cpu"] + <something unknown>`: the known head of a list whose tail is unknown."""


class _Return(Exception):
    pass


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


_BUILTIN_TYPES = {"int", "float", "str", "bool", "dict", "list", "tuple", "set", "bytes", "object", "type", "frozenset"}
_TYPING_NAMES = {"Optional", "Union", "Literal", "Annotated", "Any", "List", "Dict", "Tuple", "Set",
                 "Callable", "Type", "ClassVar", "Sequence", "Mapping", "Iterable", "TypeAlias", "Final"}
_SAFE_METHODS = {
    str: {"replace", "lower", "upper", "strip", "split", "join", "startswith", "endswith", "format",
          "removeprefix", "removesuffix", "capitalize", "title", "rstrip", "lstrip", "rsplit"},
    dict: {"get", "pop", "items", "keys", "values", "update", "copy", "setdefault"},
    list: {"append", "extend", "copy", "index", "count", "insert", "remove"},
    tuple: {"index", "count"},
    set: {"add", "update", "copy", "union"},
}

# --------------------------------------------------------------------------- modules


class Tree:
    """The `vllm/` Python sources of one wheel, read lazily."""

    def __init__(self, files: dict[str, str]):
        self.files = files
        self._modules: dict[str, Module | None] = {}

    def module(self, name: str) -> "Module | None":
        if name not in self._modules:
            path = name.replace(".", "/")
            mod = None
            for candidate, is_pkg in ((path + ".py", False), (path + "/__init__.py", True)):
                if candidate in self.files:
                    try:
                        mod = Module(self, name, ast.parse(self.files[candidate]), is_pkg)
                    except SyntaxError:
                        mod = None
                    break
            self._modules[name] = mod
        return self._modules[name]

    def is_module(self, name: str) -> bool:
        path = name.replace(".", "/")
        return path + ".py" in self.files or path + "/__init__.py" in self.files


class Module:
    def __init__(self, tree: Tree, name: str, node: ast.Module, is_package: bool):
        self.tree, self.name, self.node, self.is_package = tree, name, node, is_package
        self.bindings: dict[str, tuple] = {}      # what the code sees at run time
        self.tc_bindings: dict[str, tuple] = {}   # what a type checker sees (`if TYPE_CHECKING:` imports)
        self.star_imports: list[str] = []         # `from .types import *`
        self._values: dict[tuple, Any] = {}
        self._resolving: set[tuple] = set()
        self._collect(node.body)

    def _bind(self, name: str, binding: tuple, fallback: bool = False, type_checking: bool = False):
        if type_checking:
            self.tc_bindings[name] = binding
        # Module code runs top to bottom, so the last binding is the runtime value. Names bound only
        # under `if TYPE_CHECKING:` are kept as a fallback (string annotations still refer to them).
        if fallback or type_checking:
            self.bindings.setdefault(name, binding)
        else:
            self.bindings[name] = binding

    def _collect(self, body, fallback: bool = False, tc: bool = False):
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._bind(stmt.name, ("def", stmt), fallback, tc)
            elif isinstance(stmt, ast.ClassDef):
                self._bind(stmt.name, ("class", stmt), fallback, tc)
            elif isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        self._bind(target.id, ("assign", stmt.value), fallback, tc)
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
                self._bind(stmt.target.id, ("assign", stmt.value), fallback, tc)
            elif type(stmt).__name__ == "TypeAlias":
                self._bind(stmt.name.id, ("assign", stmt.value), fallback, tc)
            elif isinstance(stmt, ast.ImportFrom):
                base = self._absolute(stmt.module, stmt.level)
                for alias in stmt.names:
                    if alias.name != "*":
                        self._bind(alias.asname or alias.name, ("import", base, alias.name), fallback, tc)
                    else:
                        self.star_imports.append(base)
            elif isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.asname:
                        self._bind(alias.asname, ("import", alias.name, None), fallback, tc)
                    else:
                        top = alias.name.split(".")[0]
                        self._bind(top, ("import", top, None), fallback, tc)
            elif isinstance(stmt, ast.If):
                if "TYPE_CHECKING" in ast.unparse(stmt.test):
                    self._collect(stmt.orelse, fallback, tc)
                    self._collect(stmt.body, fallback=True, tc=True)
                else:
                    self._collect(stmt.body, fallback, tc)
                    self._collect(stmt.orelse, fallback=True, tc=tc)
            elif isinstance(stmt, ast.Try):
                self._collect(stmt.body, fallback, tc)
                for handler in stmt.handlers:   # the except branch runs only if the body failed
                    self._collect(handler.body, fallback=True, tc=tc)

    def _absolute(self, module: str | None, level: int) -> str:
        if level == 0:
            return module or ""
        parts = self.name.split(".")
        if not self.is_package:
            parts = parts[:-1]
        if level > 1:
            parts = parts[: len(parts) - (level - 1)]
        return ".".join(parts + ([module] if module else []))

    def lookup(self, name: str, interp: "Interp") -> Any:
        view = interp.type_checking and name in self.tc_bindings
        key = (view, name)
        if key in self._values:
            return self._values[key]
        if key in self._resolving:
            return UNKNOWN
        binding = self.tc_bindings[name] if view else self.bindings.get(name)
        if binding is None:
            for star in self.star_imports:
                source = self.tree.module(star)
                if source is not None and source is not self and (name in source.bindings or source.star_imports):
                    value = source.lookup(name, interp)
                    if known(value):
                        return value
            if name in _BUILTIN_TYPES or hasattr(builtins, name):
                return Ext(name)
            return UNKNOWN
        self._resolving.add(key)
        try:
            kind = binding[0]
            if kind == "def":
                value = FuncVal(self, binding[1])
            elif kind == "class":
                value = ClassVal(self, binding[1])
            elif kind == "assign":
                value = interp.eval(binding[1], Frame(self))
            else:
                value = interp.import_value(binding[1], binding[2])
        finally:
            self._resolving.discard(key)
        self._values[key] = value
        return value


# --------------------------------------------------------------------------- interpreter


@dataclass
class Frame:
    module: Module
    locals: dict = field(default_factory=dict)
    owner: ClassVal | None = None
    self_value: Any = None
    returned: Any = UNKNOWN


class Interp:
    """Abstract interpreter just big enough to replay vLLM's parser construction."""

    MAX_DEPTH = 14

    def __init__(self, tree: Tree):
        self.tree = tree
        self.recorded: list[Recorded] = []
        self.depth = 0
        self.get_kwargs_source = ""
        self.parse_type_kvs = False   # parse_type(json.loads) falls back to key=value pairs (nullable_kvs)
        # False: names as the running code sees them. True: as a type checker sees them; used only for
        # values vLLM documents but does not enforce (`QuantizationMethods = Any` at run time).
        self.type_checking = False

    # ---- imports
    def import_value(self, module: str, attr: str | None) -> Any:
        if not module.startswith("vllm"):
            return Ext(module + ("." + attr if attr else ""))
        if attr is None:
            return ModuleVal(module)
        mod = self.tree.module(module)
        if mod is not None and attr in mod.bindings:
            return mod.lookup(attr, self)
        if self.tree.is_module(module + "." + attr):
            return ModuleVal(module + "." + attr)
        if mod is not None and mod.star_imports:
            return mod.lookup(attr, self)
        if mod is not None and "__getattr__" in mod.bindings:
            return UNKNOWN  # lazily re-exported name; cannot resolve statically
        return UNKNOWN

    def attribute(self, obj: Any, attr: str) -> Any:
        if isinstance(obj, ModuleVal):
            return self.import_value(obj.name, attr)
        if isinstance(obj, Ext):
            return Ext(f"{obj.name}.{attr}")
        if isinstance(obj, ClassVal):
            return self.class_attribute(obj, attr, bound=obj)
        if isinstance(obj, InstanceVal):
            return self.class_attribute(obj.cls, attr, bound=obj)
        if isinstance(obj, SuperVal):
            for base in self.mro(obj.owner)[1:]:
                value = self.class_attribute(base, attr, bound=obj.bound, inherit=False)
                if known(value):
                    return value
            return UNKNOWN
        if isinstance(obj, EnumMember):
            return {"value": obj.value, "name": obj.name}.get(attr, UNKNOWN)
        if isinstance(obj, (ParserVal, SubparsersVal)):
            return ("method", obj, attr)
        if isinstance(obj, (str, dict, list, tuple, set)) and attr in _SAFE_METHODS.get(type(obj), ()):
            return ("pymethod", obj, attr)
        return UNKNOWN

    def bases(self, cls: ClassVal) -> list[ClassVal]:
        out = []
        for base in cls.node.bases:
            value = self.eval(base, Frame(cls.module))
            if isinstance(value, GenericType):
                continue
            if isinstance(value, ClassVal):
                out.append(value)
        return out

    def mro(self, cls: ClassVal) -> list[ClassVal]:
        seen, order = set(), []

        def visit(c):
            if id(c.node) in seen:
                return
            seen.add(id(c.node))
            order.append(c)
            for b in self.bases(c):
                visit(b)

        visit(cls)
        return order

    def class_attribute(self, cls: ClassVal, attr: str, bound: Any, inherit: bool = True) -> Any:
        if attr == "__name__":
            return cls.name
        if attr == "__doc__":
            return ast.get_docstring(cls.node)
        for klass in (self.mro(cls) if inherit else [cls]):
            for stmt in klass.node.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == attr:
                    decorators = {getattr(d, "id", getattr(d, "attr", None)) for d in stmt.decorator_list}
                    if "staticmethod" in decorators:
                        return FuncVal(klass.module, stmt, owner=klass)
                    if "property" in decorators:
                        return UNKNOWN
                    if "classmethod" in decorators:
                        receiver = bound.cls if isinstance(bound, InstanceVal) else bound
                        return FuncVal(klass.module, stmt, owner=klass, bound=receiver)
                    return FuncVal(klass.module, stmt, owner=klass,
                                   bound=bound if isinstance(bound, InstanceVal) else None)
                target = None
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    target, value = stmt.target.id, stmt.value
                elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                    target, value = stmt.targets[0].id, stmt.value
                if target == attr:
                    if value is None:
                        return UNKNOWN
                    if self.is_enum(klass):
                        return EnumMember(attr, self.eval(value, Frame(klass.module)))
                    return self.field_default(value, klass.module)[0]
        return UNKNOWN

    def is_enum(self, cls: ClassVal) -> bool:
        for base in cls.node.bases:
            text = ast.unparse(base)
            if "Enum" in text or text in ("str, Enum",):
                return True
        return any(self.is_enum(b) for b in self.bases(cls))

    def enum_members(self, cls: ClassVal) -> list[EnumMember]:
        members = []
        for stmt in cls.node.body:
            if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name) and not stmt.targets[0].id.startswith("_"):
                value = self.eval(stmt.value, Frame(cls.module))
                if isinstance(value, Opaque) and value.func.endswith("auto"):
                    value = stmt.targets[0].id.lower()
                members.append(EnumMember(stmt.targets[0].id, value))
        return members

    def field_default(self, value: ast.expr, module: Module) -> tuple[Any, dict]:
        """Default of a dataclass field plus pydantic bounds from `Field(gt=..)`."""
        bounds = {}
        if isinstance(value, ast.Call) and ast.unparse(value.func).split(".")[-1] in ("field", "Field"):
            default = UNKNOWN
            if value.args and not isinstance(value.args[0], ast.Starred):
                default = self.eval(value.args[0], Frame(module))
            for kw in value.keywords:
                if kw.arg == "default":
                    default = self.eval(kw.value, Frame(module))
                elif kw.arg == "default_factory":
                    factory = kw.value
                    if isinstance(factory, ast.Lambda):
                        default = self.eval(factory.body, Frame(module))
                    elif isinstance(factory, ast.Name) and factory.id in ("list", "dict", "set"):
                        default = {"list": [], "dict": {}, "set": []}[factory.id]
                    else:
                        default = UNKNOWN
                elif kw.arg in ("gt", "ge", "lt", "le"):
                    bound = self.eval(kw.value, Frame(module))
                    if isinstance(bound, (int, float)) and not isinstance(bound, bool):
                        bounds[kw.arg] = bound
            if isinstance(default, (Opaque, InstanceVal, ClassVal)):
                default = UNKNOWN
            return default, bounds
        return self.eval(value, Frame(module)), bounds

    # ---- expressions
    def eval(self, node: ast.expr, frame: Frame) -> Any:
        try:
            return self._eval(node, frame)
        except (_Return, _Break, _Continue):
            raise
        except RecursionError:
            return UNKNOWN
        except Exception:
            return UNKNOWN

    def lookup(self, name: str, frame: Frame) -> Any:
        if name in frame.locals:
            return frame.locals[name]
        if name in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[name]
        return frame.module.lookup(name, self)

    def _eval(self, node: ast.expr, frame: Frame) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self.lookup(node.id, frame)
        if isinstance(node, ast.Attribute):
            obj = self.eval(node.value, frame)
            if not known(obj):
                return UNKNOWN
            return self.attribute(obj, node.attr)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            items = []
            for elt in node.elts:
                if isinstance(elt, ast.Starred):
                    inner = self.iterate(self.eval(elt.value, frame))
                    if inner is None:
                        return UNKNOWN
                    items.extend(inner)
                else:
                    items.append(self.eval(elt, frame))
            return tuple(items) if isinstance(node, ast.Tuple) else items
        if isinstance(node, ast.Dict):
            out = {}
            for k, v in zip(node.keys, node.values, strict=False):
                if k is None:
                    inner = self.eval(v, frame)
                    if not isinstance(inner, dict):
                        return UNKNOWN
                    out.update(inner)
                    continue
                key = self.eval(k, frame)
                if not known(key) or not _hashable(key):
                    return UNKNOWN
                out[key] = self.eval(v, frame)
            return out
        if isinstance(node, ast.JoinedStr):
            parts = []
            for value in node.values:
                if isinstance(value, ast.Constant):
                    parts.append(str(value.value))
                else:
                    inner = self.eval(value.value, frame)
                    if not isinstance(inner, (str, int, float)) or isinstance(inner, bool):
                        return UNKNOWN
                    parts.append(str(inner))
            return "".join(parts)
        if isinstance(node, ast.BinOp):
            left, right = self.eval(node.left, frame), self.eval(node.right, frame)
            if isinstance(node.op, ast.BitOr) and (_is_type(left) or _is_type(right)):
                return UnionType(tuple(_union_members(left) + _union_members(right)))
            if isinstance(node.op, ast.Add) and isinstance(left, list) and _plain(list(left)) \
                    and not (_plain(right) and isinstance(right, list)):
                return PartialList(left)   # e.g. choices=["auto", "cpu"] + [current_platform.device_type]
            if not (known(left) and known(right)) or not _plain(left) or not _plain(right):
                return UNKNOWN
            return _binop(node.op, left, right)
        if isinstance(node, ast.UnaryOp):
            operand = self.eval(node.operand, frame)
            if isinstance(node.op, ast.Not):
                return UNKNOWN if not _plain(operand) else not operand
            if not isinstance(operand, (int, float)):
                return UNKNOWN
            return {ast.USub: lambda x: -x, ast.UAdd: lambda x: x, ast.Invert: lambda x: ~x}[type(node.op)](operand)
        if isinstance(node, ast.BoolOp):
            values = [self.eval(v, frame) for v in node.values]
            if not all(_plain(v) for v in values):
                return UNKNOWN
            if isinstance(node.op, ast.And):
                result = True
                for v in values:
                    result = v
                    if not v:
                        break
                return result
            result = False
            for v in values:
                result = v
                if v:
                    break
            return result
        if isinstance(node, ast.Compare):
            left = self.eval(node.left, frame)
            for op, comp in zip(node.ops, node.comparators, strict=False):
                right = self.eval(comp, frame)
                if not (_plain(left) and _plain(right)):
                    return UNKNOWN
                ok = _compare(op, left, right)
                if ok is UNKNOWN or not ok:
                    return ok
                left = right
            return True
        if isinstance(node, ast.IfExp):
            test = self.eval(node.test, frame)
            if _plain(test):
                return self.eval(node.body if test else node.orelse, frame)
            return UNKNOWN
        if isinstance(node, ast.Subscript):
            return self.subscript(node, frame)
        if isinstance(node, ast.Call):
            return self.call_node(node, frame)
        if isinstance(node, ast.Lambda):
            return FuncVal(frame.module, node, closure=dict(frame.locals))
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            return self.comprehension(node, frame)
        return UNKNOWN

    def subscript(self, node: ast.Subscript, frame: Frame) -> Any:
        base = self.eval(node.value, frame)
        if isinstance(base, Ext):
            short = base.name.split(".")[-1]
            if short in ("SkipValidation", "Required", "NotRequired", "ReadOnly", "InitVar"):
                return self.eval_type(node.slice, frame)   # validation wrappers: the type inside counts
            if short in _TYPING_NAMES or short in _BUILTIN_TYPES:
                return self.type_subscript(short, node.slice, frame)
        if isinstance(base, ClassVal):
            return GenericType(base.name, ())
        index = self.eval(node.slice, frame)
        if not known(base) or not known(index):
            return UNKNOWN
        if isinstance(base, (dict, list, tuple, str)):
            if isinstance(node.slice, ast.Slice):
                return UNKNOWN
            try:
                return base[index]
            except Exception:
                return UNKNOWN
        return UNKNOWN

    def type_subscript(self, name: str, slice_node: ast.expr, frame: Frame) -> Any:
        elts = slice_node.elts if isinstance(slice_node, ast.Tuple) else [slice_node]
        if name == "Literal":
            values = []
            for elt in elts:
                value = self.eval(elt, frame)
                if isinstance(value, LiteralType):
                    values.extend(value.values)
                elif isinstance(value, EnumMember):
                    values.append(value.value)
                else:
                    values.append(value)
            return LiteralType(tuple(values))
        args = tuple(self.eval_type(elt, frame) for elt in elts)
        if name == "Optional":
            return UnionType(tuple(_union_members(args[0])) + (None,))
        if name == "Union":
            members = []
            for a in args:
                members.extend(_union_members(a))
            return UnionType(tuple(members))
        if name == "Annotated":
            bounds = []
            for meta in elts[1:]:
                if isinstance(meta, ast.Call):
                    fname = ast.unparse(meta.func).split(".")[-1]
                    for kw in meta.keywords:
                        if kw.arg in ("gt", "ge", "lt", "le"):
                            v = self.eval(kw.value, frame)
                            if isinstance(v, (int, float)):
                                bounds.append((kw.arg, v))
                    if fname in ("Gt", "Ge", "Lt", "Le") and meta.args:
                        v = self.eval(meta.args[0], frame)
                        if isinstance(v, (int, float)):
                            bounds.append((fname.lower(), v))
            return AnnotatedType(args[0], tuple(bounds))
        if name in ("ClassVar", "Final"):
            return GenericType(name, args)
        origin = {"List": "list", "Dict": "dict", "Tuple": "tuple", "Set": "set", "Type": "type",
                  "Sequence": "list", "Mapping": "dict", "Iterable": "list"}.get(name, name)
        return GenericType(origin, args)

    def eval_type(self, node: ast.expr, frame: Frame) -> Any:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                node = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                return UNKNOWN
        if isinstance(node, ast.Constant) and node.value is None:
            return None
        return self.eval(node, frame)

    def comprehension(self, node, frame: Frame) -> Any:
        if len(node.generators) != 1:
            return UNKNOWN
        gen = node.generators[0]
        iterable = self.iterate(self.eval(gen.iter, frame))
        if iterable is None:
            return UNKNOWN
        out_list, out_dict = [], {}
        inner = Frame(frame.module, dict(frame.locals), frame.owner, frame.self_value)
        for item in iterable:
            if not self.bind_target(gen.target, item, inner):
                return UNKNOWN
            conditions = [self.eval(c, inner) for c in gen.ifs]
            if not all(_plain(c) for c in conditions):
                return UNKNOWN
            if not all(conditions):
                continue
            if isinstance(node, ast.DictComp):
                key = self.eval(node.key, inner)
                if not _hashable(key):
                    return UNKNOWN
                out_dict[key] = self.eval(node.value, inner)
            else:
                out_list.append(self.eval(node.elt, inner))
        return out_dict if isinstance(node, ast.DictComp) else out_list

    def iterate(self, value: Any) -> list | None:
        if isinstance(value, (list, tuple, str)):
            return list(value)
        if isinstance(value, dict):
            return list(value)
        if isinstance(value, (type({}.items()), type({}.keys()), type({}.values()))):
            return list(value)
        if isinstance(value, set):
            return sorted(value, key=repr)
        if isinstance(value, ClassVal) and self.is_enum(value):
            return self.enum_members(value)
        if isinstance(value, LiteralType):
            return list(value.values)
        return None

    def bind_target(self, target: ast.expr, value: Any, frame: Frame) -> bool:
        if isinstance(target, ast.Name):
            frame.locals[target.id] = value
            return True
        if isinstance(target, (ast.Tuple, ast.List)):
            if not isinstance(value, (tuple, list)) or len(value) != len(target.elts):
                for elt in target.elts:
                    self.bind_target(elt, UNKNOWN, frame)
                return False
            return all(self.bind_target(t, v, frame) for t, v in zip(target.elts, value, strict=False))
        return False

    # ---- calls
    def call_node(self, node: ast.Call, frame: Frame) -> Any:
        func = self.eval(node.func, frame)
        args, kwargs = [], {}
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                inner = self.eval(arg.value, frame)
                if isinstance(inner, (list, tuple)):
                    args.extend(inner)
                else:
                    args.append(("*unknown",))
            else:
                args.append(self.eval(arg, frame))
        for kw in node.keywords:
            if kw.arg is None:
                inner = self.eval(kw.value, frame)
                if isinstance(inner, dict):
                    kwargs.update(inner)
                else:
                    kwargs["**unknown"] = True
            else:
                kwargs[kw.arg] = self.eval(kw.value, frame)
        if isinstance(node.func, ast.Name) and node.func.id == "super":
            if frame.owner is not None:
                return SuperVal(frame.owner, frame.self_value)
            return UNKNOWN
        return self.call(func, args, kwargs, frame)

    def call(self, func: Any, args: list, kwargs: dict, frame: Frame) -> Any:
        if isinstance(func, tuple) and func and func[0] == "method":
            return self.parser_method(func[1], func[2], args, kwargs)
        if isinstance(func, tuple) and func and func[0] == "pymethod":
            _, obj, name = func
            if not all(known(a) for a in args) or any(not known(v) for v in kwargs.values()):
                if name in ("pop", "get") and isinstance(obj, dict) and args and known(args[0]):
                    pass
                else:
                    return UNKNOWN
            try:
                return getattr(obj, name)(*args, **kwargs)
            except Exception:
                return UNKNOWN
        if isinstance(func, FuncVal):
            if func.name in ("get_kwargs", "_compute_kwargs") and args and isinstance(args[0], ClassVal):
                return self.get_kwargs(args[0])
            result = self.invoke(func, args, kwargs)
            if isinstance(result, FuncVal) and result.closure is not None:
                # A factory such as optional_type(int): keep who made it and from what.
                return Opaque(func.name, tuple(a if _plain_or_ref(a) else UNKNOWN for a in args))
            return result
        if isinstance(func, ClassVal):
            if func.name in ("FlexibleArgumentParser", "ArgumentParser"):
                return ParserVal(collect=False)
            if self.is_enum(func) and args:
                for member in self.enum_members(func):
                    if member.value == args[0]:
                        return member
            return InstanceVal(func)
        if isinstance(func, Ext):
            return self.call_external(func, args, kwargs)
        return UNKNOWN

    def call_external(self, func: Ext, args: list, kwargs: dict) -> Any:
        short = func.name.split(".")[-1]
        plain_args = all(_plain(a) for a in args) and all(_plain(v) for v in kwargs.values())
        if short in ("ArgumentParser", "FlexibleArgumentParser"):
            return ParserVal(collect=False)
        if short in ("permutations", "product", "combinations", "chain") and plain_args and "itertools" in func.name:
            import itertools
            try:
                return [tuple(x) if isinstance(x, tuple) else x
                        for x in getattr(itertools, short)(*args, **kwargs)][:5000]
            except Exception:
                return UNKNOWN
        if short == "get_args" and args and isinstance(args[0], LiteralType):
            return args[0].values
        if short == "get_args" and args and isinstance(args[0], UnionType):
            return args[0].members
        if short in ("list", "tuple", "sorted", "set", "dict", "len", "str", "int", "float", "bool", "min", "max",
                     "deepcopy", "copy", "abs", "round", "repr") and plain_args:
            if short in ("list", "tuple", "sorted", "set") and args:
                items = self.iterate(args[0])
                if items is None:
                    return UNKNOWN
                args = [items] + list(args[1:])
            try:
                if short in ("deepcopy", "copy"):
                    import copy as _copy
                    return _copy.deepcopy(args[0])
                if short == "set":
                    return list(dict.fromkeys(args[0])) if args else []
                return getattr(builtins, short)(*args, **kwargs)
            except Exception:
                return UNKNOWN
        return Opaque(func.name, tuple(a if _plain_or_ref(a) else UNKNOWN for a in args))

    def parser_method(self, obj: Any, name: str, args: list, kwargs: dict) -> Any:
        if isinstance(obj, SubparsersVal):
            if name == "add_parser":
                return ParserVal(collect=(not args) or args[0] == "serve" or not known(args[0]))
            return UNKNOWN
        if name in ("add_argument_group", "add_mutually_exclusive_group"):
            return ParserVal(obj.collect)
        if name == "add_subparsers":
            return SubparsersVal()
        if name == "add_argument":
            if obj.collect:
                flags = [a for a in args if isinstance(a, str)]
                if any(not isinstance(a, str) for a in args):
                    kwargs = dict(kwargs, **{"*unknown_flags": True})
                self.recorded.append(Recorded(flags, dict(kwargs)))
            return UNKNOWN
        return UNKNOWN

    def invoke(self, func: FuncVal, args: list, kwargs: dict) -> Any:
        if self.depth >= self.MAX_DEPTH:
            return UNKNOWN
        node = func.node
        frame = Frame(func.module, dict(func.closure or {}), func.owner)
        params = node.args
        positional = [a.arg for a in params.posonlyargs + params.args]
        values = list(args)
        if func.bound is not None:
            values = [func.bound] + values
        if positional and positional[0] in ("self", "cls") and func.bound is not None:
            frame.self_value = func.bound
        defaults = params.defaults
        for i, name in enumerate(positional):
            if i < len(values):
                frame.locals[name] = values[i]
            elif name in kwargs:
                frame.locals[name] = kwargs.pop(name)
            else:
                d = i - (len(positional) - len(defaults))
                frame.locals[name] = self.eval(defaults[d], Frame(func.module)) if d >= 0 else UNKNOWN
        if params.vararg:
            frame.locals[params.vararg.arg] = tuple(values[len(positional):])
        for arg, default in zip(params.kwonlyargs, params.kw_defaults, strict=False):
            if arg.arg in kwargs:
                frame.locals[arg.arg] = kwargs.pop(arg.arg)
            else:
                frame.locals[arg.arg] = self.eval(default, Frame(func.module)) if default is not None else UNKNOWN
        if params.kwarg:
            frame.locals[params.kwarg.arg] = dict(kwargs)
        if isinstance(node, ast.Lambda):
            return self.eval(node.body, frame)
        self.depth += 1
        try:
            self.exec_block(node.body, frame)
        except _Return:
            pass
        finally:
            self.depth -= 1
        return frame.returned

    # ---- statements
    def exec_block(self, body: list, frame: Frame) -> None:
        for stmt in body:
            self.exec_stmt(stmt, frame)

    def exec_stmt(self, stmt: ast.stmt, frame: Frame) -> None:
        if isinstance(stmt, ast.Expr):
            self.eval(stmt.value, frame)
        elif isinstance(stmt, ast.Assign):
            value = self.eval(stmt.value, frame)
            for target in stmt.targets:
                self.assign(target, value, frame)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                self.assign(stmt.target, self.eval(stmt.value, frame), frame)
        elif isinstance(stmt, ast.AugAssign):
            current = self.eval(stmt.target, frame)
            value = self.eval(stmt.value, frame)
            if _plain(current) and _plain(value):
                self.assign(stmt.target, _binop(stmt.op, current, value), frame)
            else:
                self.assign(stmt.target, UNKNOWN, frame)
        elif isinstance(stmt, ast.Return):
            frame.returned = self.eval(stmt.value, frame) if stmt.value is not None else None
            raise _Return()
        elif isinstance(stmt, ast.If):
            test = self.eval(stmt.test, frame)
            if _plain(test):
                self.exec_block(stmt.body if test else stmt.orelse, frame)
            else:
                # Unknown condition: options added on either side are accepted in some setup.
                for branch in (stmt.body, stmt.orelse):
                    try:
                        self.exec_block(branch, frame)
                    except _Return:
                        pass
        elif isinstance(stmt, ast.For):
            items = self.iterate(self.eval(stmt.iter, frame))
            if items is None:
                return
            for item in items[:2000]:
                self.bind_target(stmt.target, item, frame)
                try:
                    self.exec_block(stmt.body, frame)
                except _Break:
                    break
                except _Continue:
                    continue
        elif isinstance(stmt, ast.Try):
            self.exec_block(stmt.body, frame)
            self.exec_block(stmt.finalbody, frame)
        elif isinstance(stmt, ast.With):
            self.exec_block(stmt.body, frame)
        elif isinstance(stmt, ast.Delete):
            for target in stmt.targets:
                if isinstance(target, ast.Subscript):
                    container = self.eval(target.value, frame)
                    key = self.eval(target.slice, frame)
                    if isinstance(container, dict) and known(key) and _hashable(key):
                        container.pop(key, None)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            frame.locals[stmt.name] = FuncVal(frame.module, stmt, closure=frame.locals)
        elif isinstance(stmt, ast.ImportFrom):
            base = frame.module._absolute(stmt.module, stmt.level)
            for alias in stmt.names:
                if alias.name != "*":
                    frame.locals[alias.asname or alias.name] = self.import_value(base, alias.name)
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                name = alias.asname or alias.name.split(".")[0]
                frame.locals[name] = self.import_value(alias.name if alias.asname else name, None)
        elif isinstance(stmt, ast.Break):
            raise _Break()
        elif isinstance(stmt, ast.Continue):
            raise _Continue()

    def assign(self, target: ast.expr, value: Any, frame: Frame) -> None:
        if isinstance(target, ast.Name):
            frame.locals[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            self.bind_target(target, value, frame)
        elif isinstance(target, ast.Subscript):
            container = self.eval(target.value, frame)
            key = self.eval(target.slice, frame)
            if isinstance(container, (dict, list)) and known(key) and _hashable(key):
                try:
                    container[key] = value
                except Exception:
                    pass
        # attribute assignment (parser.epilog = ...) is irrelevant for options

    # ---- dataclass fields and get_kwargs emulation
    def dataclass_fields(self, cls: ClassVal) -> dict[str, dict]:
        """Fields of a (pydantic) dataclass with annotation, default, bounds and attribute docstring."""
        out: dict[str, dict] = {}
        for klass in reversed(self.mro(cls)):
            body = klass.node.body
            for i, stmt in enumerate(body):
                if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                    continue
                ann_text = ast.unparse(stmt.annotation)
                if "ClassVar" in ann_text or "InitVar" in ann_text:
                    continue
                frame = Frame(klass.module)
                annotation = self.eval_type(stmt.annotation, frame)
                default, bounds = (self.field_default(stmt.value, klass.module) if stmt.value is not None
                                   else (UNKNOWN, {}))
                doc = ""
                if i + 1 < len(body) and isinstance(body[i + 1], ast.Expr) and isinstance(body[i + 1].value, ast.Constant) \
                        and isinstance(body[i + 1].value.value, str):
                    doc = body[i + 1].value.value
                out[stmt.target.id] = {"annotation": annotation, "default": default, "bounds": bounds, "doc": doc}
        return out

    def get_kwargs(self, cls: ClassVal) -> dict:
        src = self.get_kwargs_source
        dataclass_is_json = "is_dataclass(th)" in src or "is_dataclass(" in src
        bool_or_str = "{bool, str, type(None)}" in src
        metavar_if_str = '"metavar" if contains_type(type_hints, str)' in src
        literal_elements = '.get("type")) is Literal' in src
        dict_subclass_is_dict = "is_dict_subclass(th)" in src
        sorted_choices = "sorted(options)" in src or "sorted(get_args(" in src
        kwargs = {}
        for name, info in self.dataclass_fields(cls).items():
            hints, bounds = _flatten_hints(info["annotation"])
            if dict_subclass_is_dict:
                hints = {(GenericType("dict") if isinstance(h, ClassVal) and self.is_dict_subclass(h) else h): None
                         for h in hints}
            bounds = dict(bounds, **info["bounds"])
            entry = {"default": info["default"], "help": " ".join(info["doc"].split()), "_bounds": bounds}
            atoms = {h for h in hints if isinstance(h, str)}
            literals = [h for h in hints if isinstance(h, LiteralType)]
            dataclasses = [h for h in hints if isinstance(h, ClassVal) and self.is_dataclass(h)]
            generics = {h.origin: h for h in hints if isinstance(h, GenericType)}
            if not known(info["annotation"]):
                entry["type"] = UNKNOWN
            elif dataclass_is_json and dataclasses:
                entry["type"] = Ext("json.loads")
                entry["_json_class"] = dataclasses[0]
                entry["_json_parser"] = "dataclass"   # parse_dataclass: from_cli or TypeAdapter.validate_json
            elif bool_or_str and atoms == {"bool", "str", "None"} and not literals and not generics:
                entry.update(type=Ext("str"), nargs="?", const=True)
            elif "bool" in atoms:
                entry["action"] = Ext("argparse.BooleanOptionalAction")
            elif literals:
                values = [v for lit in literals for v in lit.values]
                if sorted_choices and all(isinstance(v, str) for v in values):
                    values = sorted(values)
                if metavar_if_str and "str" in atoms:
                    entry["_known_values"] = values   # argparse shows them but accepts any string
                else:
                    entry["choices"] = values
                entry["type"] = Ext(type(values[0]).__name__) if values else Ext("str")
            elif "tuple" in generics or "tuple" in atoms:
                entry["type"] = _element_type(generics.get("tuple"))
                entry["nargs"] = "+"
            elif "list" in generics or "list" in atoms or "set" in generics or "set" in atoms:
                generic = generics.get("list") or generics.get("set")
                entry["type"] = _element_type(generic)
                entry["nargs"] = "+"
                element = generic.args[0] if generic is not None and generic.args else None
                if literal_elements and isinstance(element, LiteralType):
                    values = list(element.values)
                    entry["choices"] = sorted(values) if sorted_choices else values
            elif "int" in atoms:
                entry["type"] = Ext("int")
            elif "float" in atoms:
                entry["type"] = Ext("float")
            elif "dict" in generics or "dict" in atoms:
                entry["type"] = Ext("json.loads")
                entry["_json_parser"] = self.dict_parser(hints)
            else:
                entry["type"] = Ext("str")
            if "None" in atoms and "bool" not in atoms and entry.get("choices"):
                entry["choices"] = list(entry["choices"]) + ["None"]
            if "choices" not in entry and "_known_values" not in entry:
                static_literals, static_classes = self.type_checking_hints(cls, name)
                if static_literals:
                    entry["_known_values"] = static_literals
                if static_classes and entry.get("type") == Ext("json.loads") and "_json_class" not in entry:
                    entry["_json_class"] = static_classes[0]
            kwargs[name] = entry
        return kwargs

    def dict_parser(self, hints: dict) -> str:
        """How get_kwargs parses a dict-typed field: `union_dict_and_str` (any text that is not `{...}` stays
        a string) when the hints also hold str or a non-builtin type, else `parse_type(json.loads)`, which
        falls back to `key=value` pairs (nullable_kvs) in some releases."""
        src = self.get_kwargs_source
        builtin = {"dict", "None", "int", "float", "bool", "list", "tuple", "set"}
        other = any(not (isinstance(h, str) and h in builtin) and not (isinstance(h, GenericType)
                                                                      and h.origin in builtin) for h in hints)
        if "union_dict_and_str" in src and ("str" in hints or other and "is_not_builtin" in src):
            return "dict-or-str"
        return "json-or-kvs" if self.parse_type_kvs else "json"

    def type_checking_hints(self, cls: ClassVal, field_name: str) -> tuple[list, list]:
        """Literal values and dataclasses in a field's annotation as a type checker sees it."""
        self.type_checking = True
        try:
            info = self.dataclass_fields(cls).get(field_name)
        finally:
            self.type_checking = False
        if info is None:
            return [], []
        hints, _ = _flatten_hints(info["annotation"])
        literals = [v for h in hints if isinstance(h, LiteralType) for v in h.values if _plain(v)]
        classes = [h for h in hints if isinstance(h, ClassVal) and self.is_dataclass(h)]
        return list(dict.fromkeys(literals)), classes

    def is_dict_subclass(self, cls: ClassVal) -> bool:
        for klass in self.mro(cls):
            if any(ast.unparse(b).split("[")[0] in ("dict", "Dict", "typing.Dict") for b in klass.node.bases):
                return True
        return False

    def is_dataclass(self, cls: ClassVal) -> bool:
        for klass in self.mro(cls):
            for deco in klass.node.decorator_list:
                text = ast.unparse(deco)
                if "dataclass" in text or text in ("config", "config()") or text.startswith("config("):
                    return True
            if any("BaseModel" in ast.unparse(b) for b in klass.node.bases):
                return True
        return False


def _element_type(generic: GenericType | None) -> Any:
    if generic is None or not generic.args:
        return Ext("str")
    first = generic.args[0]
    hints, _ = _flatten_hints(first)
    for atom in ("int", "float", "str"):
        if atom in hints:
            return Ext(atom)
    if any(isinstance(h, LiteralType) for h in hints):
        return Ext("str")
    return Ext("str")


def _flatten_hints(annotation: Any) -> tuple[dict, dict]:
    """Turn an evaluated annotation into a set of atoms ('int', 'None', LiteralType, ClassVal, GenericType)."""
    hints: dict = {}   # an ordered set: the output must not depend on hash randomisation
    bounds: dict = {}

    def visit(t):
        if isinstance(t, UnionType):
            for m in t.members:
                visit(m)
        elif isinstance(t, AnnotatedType):
            bounds.update(dict(t.bounds))
            visit(t.inner)
        elif t is None or (isinstance(t, Ext) and t.name in ("None", "NoneType", "types.NoneType")):
            hints.setdefault("None", None)
        elif isinstance(t, Ext):
            short = t.name.split(".")[-1]
            hints.setdefault(short if short in _BUILTIN_TYPES else "other", None)
        elif isinstance(t, GenericType):
            if t.origin in _BUILTIN_TYPES:
                hints.setdefault(t, None)
            else:
                hints.setdefault("other", None)
        elif isinstance(t, (LiteralType, ClassVal)):
            hints.setdefault(t, None)
        else:
            hints.setdefault("unknown", None)

    visit(annotation)
    return hints, bounds


def _is_type(value: Any) -> bool:
    return isinstance(value, (Ext, ClassVal, LiteralType, UnionType, GenericType, AnnotatedType)) or value is None


def _union_members(value: Any) -> list:
    if isinstance(value, UnionType):
        return list(value.members)
    return [value]


def _hashable(value: Any) -> bool:
    try:
        hash(value)
        return True
    except TypeError:
        return False


def _plain(value: Any) -> bool:
    """A real Python value we may compute with (not UNKNOWN, not a symbolic reference)."""
    if value is UNKNOWN or isinstance(value, PartialList):
        return False
    if isinstance(value, (str, int, float, bool, type(None))):
        return True
    if isinstance(value, (list, tuple, set)):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(_plain(k) and _plain(v) for k, v in value.items())
    return False


def _plain_or_ref(value: Any) -> bool:
    return _plain(value) or isinstance(value, (Ext, Opaque, FuncVal, ClassVal))


def _binop(op: ast.operator, a: Any, b: Any) -> Any:
    ops = {ast.Add: lambda x, y: x + y, ast.Sub: lambda x, y: x - y, ast.Mult: lambda x, y: x * y,
           ast.Div: lambda x, y: x / y, ast.FloorDiv: lambda x, y: x // y, ast.Mod: lambda x, y: x % y,
           ast.Pow: lambda x, y: x ** y, ast.LShift: lambda x, y: x << y, ast.RShift: lambda x, y: x >> y,
           ast.BitOr: lambda x, y: x | y, ast.BitAnd: lambda x, y: x & y}
    try:
        if isinstance(op, ast.Pow) and isinstance(b, int) and b > 64:
            return UNKNOWN
        if isinstance(op, ast.Mult) and (isinstance(a, (str, list)) or isinstance(b, (str, list))):
            return UNKNOWN
        return ops[type(op)](a, b)
    except Exception:
        return UNKNOWN


def _compare(op: ast.cmpop, a: Any, b: Any) -> Any:
    ops = {ast.Eq: lambda x, y: x == y, ast.NotEq: lambda x, y: x != y, ast.Lt: lambda x, y: x < y,
           ast.LtE: lambda x, y: x <= y, ast.Gt: lambda x, y: x > y, ast.GtE: lambda x, y: x >= y,
           ast.In: lambda x, y: x in y, ast.NotIn: lambda x, y: x not in y,
           ast.Is: lambda x, y: x is y, ast.IsNot: lambda x, y: x is not y}
    try:
        return ops[type(op)](a, b)
    except Exception:
        return UNKNOWN


# --------------------------------------------------------------------------- option normalisation

_NO_VALUE_ACTIONS = {"store_true", "store_false", "store_const", "count", "help", "version",
                     "append_const", "BooleanOptionalAction"}
_INT_PARSERS = {"int", "human_readable_int", "human_readable_int_or_auto"}
_FLOAT_PARSERS = {"float"}
_JSON_PARSERS = {"json.loads", "loads", "parse_dataclass", "union_dict_and_str", "model_validate_json",
                 "validate_json", "from_cli", "from_json"}
_STR_PARSERS = {"str", "nullable_str", "nullable_kvs", "optional_str"}


def _callable_name(value: Any) -> str | None:
    if isinstance(value, Ext):
        return value.name.removeprefix("builtins.")
    if isinstance(value, (FuncVal, ClassVal)):
        return value.name
    return None


def value_type(type_value: Any) -> str:
    """Map an argparse `type=` to int/float/str/json/bool/unknown."""
    seen = 0
    while isinstance(type_value, Opaque) and seen < 5:
        seen += 1
        short = type_value.func.split(".")[-1]
        if short in ("optional_type", "parse_type") and type_value.args:
            type_value = type_value.args[0]
        elif short in _JSON_PARSERS:
            return "json"
        else:
            return "unknown"
    if isinstance(type_value, FuncVal) and type_value.name == "_optional_type":
        return "unknown"
    name = _callable_name(type_value)
    if name is None:
        return "unknown"
    if isinstance(type_value, FuncVal) and getattr(type_value.node, "returns", None) is not None \
            and name.split(".")[-1] not in _INT_PARSERS | _FLOAT_PARSERS | _JSON_PARSERS:
        # a vLLM-defined converter: trust its return annotation (str / int / float / dict)
        returns = ast.unparse(type_value.node.returns).replace("Optional[", "").replace(" | None", "").strip("'\"")
        for prefix, kind in (("str", "str"), ("int", "int"), ("float", "float"), ("dict", "json")):
            if returns == prefix or returns.startswith(prefix + "["):
                return kind
    short = name.split(".")[-1]
    if name in ("json.loads",) or short in _JSON_PARSERS:
        return "json"
    if short in _INT_PARSERS:
        return "int"
    if short in _FLOAT_PARSERS:
        return "float"
    if short in _STR_PARSERS:
        return "str"
    if short == "bool":
        return "bool"
    return "unknown"


def _short_help(text: Any) -> str:
    if not isinstance(text, str):
        return ""
    text = " ".join(text.replace("%%", "%").split())
    first = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    return first if len(first) <= 200 else first[:197] + "..."


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
        return _plain(value)
    except (TypeError, ValueError):
        return False


@dataclass
class ReleaseFeatures:
    allow_abbrev: bool = True
    underscore_to_dash: bool = False
    dotted_keys: bool = False
    o_shorthand: bool = False
    o_target: str | None = None
    inverse_prefixes: dict = field(default_factory=dict)
    deprecation_notes: dict = field(default_factory=dict)


# "[DEPRECATED] ...", "(Deprecated) ...", "... is deprecated", "... will be removed in v0.12" -- but not
# "Enable deprecated Prometheus metrics" or "allow deprecated quantization methods".
_DEPRECATED_HELP = re.compile(r"^\s*[\[(]?deprecated\b|\b(?:is|are|has been|now) deprecated\b|\bwill be removed in v?\d",
                              re.I)


def normalise(rec: Recorded, interp: Interp, feats: ReleaseFeatures, literal_hints: dict) -> tuple[str, dict] | None:
    kw = rec.kwargs
    flags = list(dict.fromkeys(rec.flags))
    if not flags:
        return None
    positional = not flags[0].startswith("-")
    action = kw.get("action")
    action_name = action if isinstance(action, str) else (_callable_name(action) or "")
    action_short = action_name.split(".")[-1]
    accepted = list(flags)
    if action_short in ("BooleanOptionalAction", "EnableDisableAction") or (
            isinstance(action, ClassVal) and any(b.name == "BooleanOptionalAction" for b in interp.mro(action)[1:])):
        action_short = "BooleanOptionalAction"
        for flag in flags:
            if flag.startswith("--"):
                accepted.append("--no-" + flag[2:])
        if feats.inverse_prefixes:
            for flag in flags:
                for prefix, inverse in feats.inverse_prefixes.items():
                    if flag.startswith(prefix):
                        accepted.append(inverse + flag[len(prefix):])
    accepted = list(dict.fromkeys(accepted))
    if positional:
        canonical = flags[0]
    else:
        longs = [f for f in flags if f.startswith("--")]
        canonical = (longs or flags)[0].lstrip("-")
    nargs = kw.get("nargs")
    takes_value = not (action_short in _NO_VALUE_ACTIONS or nargs == 0)
    if action_short in ("BooleanOptionalAction", "store_true", "store_false"):
        typ = "bool"
    elif not takes_value:
        typ = "bool" if action_short in ("store_const",) and isinstance(kw.get("const"), bool) else "none"
    elif "type" in kw:
        typ = value_type(kw["type"])
    elif isinstance(action, ClassVal) and action_short not in ("StoreBoolean",):
        typ = "unknown"   # a custom action parses the value itself
    else:
        typ = "str"       # argparse's default
    if action_short == "StoreBoolean":
        typ = "bool"
    dest = kw.get("dest") if isinstance(kw.get("dest"), str) else canonical.replace("-", "_")
    choices = kw.get("choices")
    info: dict[str, Any] = {"flags": accepted, "takes_value": takes_value, "type": typ}
    if positional:
        info["positional"] = True
    if nargs is not None and _plain(nargs):
        info["nargs"] = nargs
    partial_choices = None
    if isinstance(choices, PartialList):
        partial_choices, choices = [c for c in choices if _plain(c)], UNKNOWN
    if isinstance(choices, (list, tuple)):
        choices = [c.value if isinstance(c, EnumMember) else c for c in choices]
    if isinstance(choices, (list, tuple)) and choices and all(_plain(c) for c in choices):
        # argparse compares the converted value; a None choice is what nullable_str makes of "None"
        info["choices"] = ["None" if c is None else c for c in choices]
        info["choices_enforced"] = True
    elif choices is not None and "choices" in kw:
        info["choices_enforced"] = True
        info["choices_unknown"] = True   # computed at run time (e.g. a plugin registry)
    if partial_choices:
        info["known_values"] = partial_choices   # the rest depends on the machine vLLM runs on
    literal = kw.get("_known_values") or literal_hints.get(dest)
    if literal and "choices" not in info:
        info["known_values"] = literal
        info["choices_enforced"] = False
    if "default" in kw and _jsonable(kw["default"]):
        info["default"] = kw["default"]
    elif "default" not in kw and action_short == "store_true":
        info["default"] = False
    help_text = kw.get("help")
    deprecated = kw.get("deprecated") is True
    note = feats.deprecation_notes.get(canonical if positional else "--" + canonical)
    if isinstance(help_text, str) and _DEPRECATED_HELP.search(help_text):
        deprecated = True
        note = note or " ".join(help_text.split())[:300]
    if note:
        deprecated = True
        info["deprecation"] = note
    info["deprecated"] = deprecated
    info["help"] = _short_help(help_text)
    bounds = kw.get("_bounds") or {}
    if bounds:
        info["bounds"] = bounds
    json_cls = kw.get("_json_class")
    if typ == "json":
        info["json"] = True
        info["json_parser"] = kw.get("_json_parser") or json_parser(kw.get("type"), interp)
        if json_cls is None:
            json_cls = _guess_config_class(interp, canonical)
        if json_cls is not None:
            interp.type_checking = True   # documented keys and values, as a type checker sees them
            try:
                fields = interp.dataclass_fields(json_cls)
            finally:
                interp.type_checking = False
            info["json_keys"] = sorted(k for k in fields if not k.startswith("_"))
            values = {}
            for key, finfo in fields.items():
                hints, _ = _flatten_hints(finfo["annotation"])
                lits = [v for h in hints if isinstance(h, LiteralType) for v in h.values if _plain(v)]
                if lits and not key.startswith("_"):
                    values[key] = lits
            if values:
                info["json_key_values"] = values
    if kw.get("*unknown_flags") or kw.get("**unknown"):
        info["incomplete"] = True
    return canonical, info


def _guess_config_class(interp: Interp, canonical: str) -> ClassVal | None:
    """`--speculative-config` -> class SpeculativeConfig, looked up where vLLM keeps its configs."""
    if not canonical.endswith("-config"):
        return None
    class_name = "".join(part.capitalize() for part in canonical.split("-"))
    candidates = ["vllm.config", "vllm.config." + canonical.removesuffix("-config").replace("-", "_")]
    for mod_name in candidates:
        mod = interp.tree.module(mod_name)
        if mod is None:
            continue
        for name, _binding in mod.bindings.items():
            if name.lower() == class_name.lower():
                value = mod.lookup(name, interp)
                if isinstance(value, ClassVal):
                    return value
    return None


# --------------------------------------------------------------------------- release-level facts


def _find_class(interp: Interp, module: str, name: str) -> ClassVal | None:
    mod = interp.tree.module(module)
    if mod is None or name not in mod.bindings:
        return None
    value = mod.lookup(name, interp)
    return value if isinstance(value, ClassVal) else None


def release_features(interp: Interp) -> ReleaseFeatures:
    feats = ReleaseFeatures()
    parser_cls = _find_class(interp, "vllm.engine.arg_utils", "FlexibleArgumentParser")
    if parser_cls is None:
        return feats
    source = ast.unparse(parser_cls.node)
    parse_args = next((s for s in parser_cls.node.body if isinstance(s, ast.FunctionDef) and s.name == "parse_args"), None)
    pa_source = ast.unparse(parse_args) if parse_args else ""
    feats.underscore_to_dash = ".replace('_', '-')" in pa_source
    feats.dotted_keys = ".split('.')" in pa_source
    feats.o_shorthand = "startswith('-O')" in pa_source
    if feats.o_shorthand:
        feats.o_target = "--optimization-level" if "'--optimization-level'" in pa_source else "-O"
    # allow_abbrev=False anywhere on the way to the serve parser switches prefix matching off
    for mod_name in ("vllm.entrypoints.cli.main", "vllm.entrypoints.cli.serve", "vllm.scripts"):
        mod = interp.tree.module(mod_name)
        if mod is not None and "allow_abbrev=False" in ast.unparse(mod.node):
            feats.allow_abbrev = False
    if "allow_abbrev=False" in source:
        feats.allow_abbrev = False
    # A registered replacement for BooleanOptionalAction that adds --disable-x for --enable-x (0.33)
    for node in ast.walk(parser_cls.node):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "register" \
                and len(node.args) == 3 and ast.unparse(node.args[1]).endswith("BooleanOptionalAction"):
            action_cls = interp.eval(node.args[2], Frame(parser_cls.module))
            if isinstance(action_cls, ClassVal):
                prefixes = interp.class_attribute(action_cls, "_inverse_prefixes", bound=action_cls)
                if isinstance(prefixes, dict):
                    feats.inverse_prefixes = prefixes
    for node in ast.walk(parser_cls.node):
        if isinstance(node, ast.Call):
            text = "".join(a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str))
            match = re.search(r"argument '(--[\w-]+)' is deprecated", text)
            if match:
                feats.deprecation_notes[match.group(1)] = " ".join(text.split())
    feats.deprecation_notes = {**_deprecation_messages(interp.tree), **feats.deprecation_notes}
    return feats


_DEPRECATED_SENTENCE = re.compile(
    r"[`'\"]?(--[a-z0-9][a-z0-9-]*)[`'\"]?(?: option| flag| argument)? (?:is|are|has been|was) (?:now )?deprecated")


def _deprecation_messages(tree: Tree) -> dict[str, str]:
    """`"--x is deprecated ..."` warnings vLLM prints after parsing (not visible to argparse)."""
    notes: dict[str, str] = {}
    prefixes = ("vllm/engine/", "vllm/entrypoints/", "vllm/config", "vllm/utils/argparse")
    for path, text in sorted(tree.files.items()):
        if not path.startswith(prefixes) or "deprecated" not in text:
            continue
        try:
            module = ast.parse(text)
        except SyntaxError:
            continue
        for node in ast.walk(module):
            if isinstance(node, ast.JoinedStr):
                string = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                string = node.value
            else:
                continue
            for match in _DEPRECATED_SENTENCE.finditer(string):
                sentence = " ".join(string[match.start():].split())
                notes.setdefault(match.group(1), sentence[:300].strip("`'\" "))
    return notes


def _env_type(lambda_src: str, annotation: str | None) -> str:
    if annotation:
        ann = annotation.replace("Optional[", "").replace(" | None", "")
        for name in ("bool", "int", "float", "str"):
            if ann.startswith(name):
                return name
        if ann.startswith("Literal"):
            return "choices"
        if ann.startswith("list"):
            return "list"
    if "int(" in lambda_src:
        return "int"
    if "float(" in lambda_src:
        return "float"
    if "bool(" in lambda_src or "in ('1', 'true')" in lambda_src or "== '1'" in lambda_src:
        return "bool"
    return "str" if ("getenv" in lambda_src or "environ" in lambda_src) else "unknown"


def extract_env(interp: Interp) -> dict:
    mod = interp.tree.module("vllm.envs")
    if mod is None:
        return {}
    annotations = {}
    for node in ast.walk(mod.node):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id.startswith("VLLM_"):
            annotations.setdefault(node.target.id, ast.unparse(node.annotation))
    table = None
    for node in ast.walk(mod.node):
        targets = []
        if isinstance(node, ast.Assign):
            targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            targets = [node.target.id]
        if "environment_variables" in targets and isinstance(node.value, ast.Dict):
            table = node.value
            break
    if table is None:
        return {}
    out = {}
    for key, value in zip(table.keys, table.values, strict=False):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            continue
        src = ast.unparse(value)
        entry: dict[str, Any] = {"type": _env_type(src, annotations.get(key.value))}
        lit = re.match(r"Literal\[(.*)\]", annotations.get(key.value, "").replace("Optional[", ""))
        choices = None
        for call in ast.walk(value):
            if isinstance(call, ast.Call) and "choices" in ast.unparse(call.func) and len(call.args) >= 3:
                evaluated = interp.eval(call.args[2], Frame(mod))
                if isinstance(evaluated, (list, tuple)) and all(isinstance(c, str) for c in evaluated):
                    choices = list(evaluated)
        if choices is None and lit:
            try:
                choices = list(ast.literal_eval("[" + lit.group(1) + "]"))
            except (ValueError, SyntaxError):
                choices = None
        if choices:
            entry["choices"] = choices
        out[key.value] = entry
    return out


_METRIC_KINDS = ("histogram", "counter", "gauge", "summary", "info")


def extract_metrics(tree: Tree) -> dict:
    out: dict[str, str] = {}
    for path, text in tree.files.items():
        if "vllm:" not in text or not path.endswith(".py"):
            continue
        try:
            module = ast.parse(text)
        except SyntaxError:
            continue
        for node in ast.walk(module):
            if not isinstance(node, ast.Call):
                continue
            candidates = [a for a in node.args[:1]] + [k.value for k in node.keywords if k.arg == "name"]
            names = [c.value for c in candidates if isinstance(c, ast.Constant) and isinstance(c.value, str)
                     and re.fullmatch(r"vllm:[a-zA-Z0-9_]+", c.value)]
            if not names:
                continue
            # only metric constructors (prometheus_client.Gauge, self._counter_cls, ...): this skips
            # torch custom ops ("vllm::...") and other "vllm:" strings
            func = ast.unparse(node.func).lower()
            kind = next((k for k in _METRIC_KINDS if k in func), None)
            if kind is None:
                continue
            for name in names:
                out.setdefault(name, kind)
    return dict(sorted(out.items()))


# Options whose valid values live in a plugin registry filled at import time. The names are read from
# `@Manager.register_module("name")` decorators and the `_..._TO_REGISTER = {"name": ...}` tables of lazy
# registration; plugins can add more, so these are known values, never an enforced enum.
_REGISTRY_OPTIONS = {"tool-call-parser": "ToolParserManager", "reasoning-parser": "ReasoningParserManager"}


def extract_registries(tree: Tree) -> dict[str, list[str]]:
    names: dict[str, list[str]] = {manager: [] for manager in _REGISTRY_OPTIONS.values()}
    table_names = {"ToolParserManager": "_TOOL_PARSERS_TO_REGISTER",
                   "ReasoningParserManager": "_REASONING_PARSERS_TO_REGISTER"}
    for _path, text in sorted(tree.files.items()):
        if not any(m in text for m in names):
            continue
        try:
            module = ast.parse(text)
        except SyntaxError:
            continue
        for node in ast.walk(module):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "register_module" and isinstance(node.func.value, ast.Name) \
                    and node.func.value.id in names and node.args:
                arg = node.args[0]
                values = arg.elts if isinstance(arg, (ast.List, ast.Tuple)) else [arg]
                names[node.func.value.id] += [v.value for v in values
                                              if isinstance(v, ast.Constant) and isinstance(v.value, str)]
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
                for manager, table in table_names.items():
                    if any(isinstance(t, ast.Name) and t.id == table for t in node.targets):
                        names[manager] += [k.value for k in node.value.keys
                                           if isinstance(k, ast.Constant) and isinstance(k.value, str)]
    return {option: sorted(set(names[manager])) for option, manager in _REGISTRY_OPTIONS.items()
            if names[manager]}


# --------------------------------------------------------------------------- the serve parser


def _literal_hints(interp: Interp) -> dict:
    """dest -> Literal values from EngineArgs/FrontendArgs fields: values vLLM knows but may not enforce."""
    hints: dict[str, list] = {}
    for module, name in (("vllm.engine.arg_utils", "EngineArgs"), ("vllm.engine.arg_utils", "AsyncEngineArgs"),
                         ("vllm.entrypoints.openai.cli_args", "FrontendArgs")):
        cls = _find_class(interp, module, name)
        if cls is None:
            continue
        interp.type_checking = True
        try:
            fields = interp.dataclass_fields(cls)
        finally:
            interp.type_checking = False
        for fname, info in fields.items():
            found, _ = _flatten_hints(info["annotation"])
            values = [v for h in found if isinstance(h, LiteralType) for v in h.values if _plain(v)]
            if values:
                hints.setdefault(fname, list(dict.fromkeys(values)))
    return hints


def _get_kwargs_source(interp: Interp) -> str:
    mod = interp.tree.module("vllm.engine.arg_utils")
    if mod is None:
        return ""
    parts = []
    for name in ("get_kwargs", "_compute_kwargs", "literal_to_kwargs"):
        binding = mod.bindings.get(name)
        if binding and binding[0] == "def":
            parts.append(ast.unparse(binding[1]))
    return "\n".join(parts).replace("'", '"')


def replay_serve_parser(interp: Interp) -> str:
    """Run the code that builds `vllm serve`'s parser; returns which entry point was used."""
    serve = interp.tree.module("vllm.entrypoints.cli.serve")
    if serve is not None:
        for name, binding in serve.bindings.items():
            if binding[0] == "class":
                cls = serve.lookup(name, interp)
                method = interp.class_attribute(cls, "subparser_init", bound=InstanceVal(cls))
                if isinstance(method, FuncVal) and method.owner is cls:
                    interp.invoke(method, [SubparsersVal()], {})
                    return f"vllm.entrypoints.cli.serve.{name}.subparser_init"
    scripts = interp.tree.module("vllm.scripts")
    if scripts is not None and "main" in scripts.bindings:
        interp.invoke(scripts.lookup("main", interp), [], {})
        return "vllm.scripts.main"
    cli_args = interp.tree.module("vllm.entrypoints.openai.cli_args")
    interp.invoke(cli_args.lookup("make_arg_parser", interp), [ParserVal(collect=True)], {})
    return "vllm.entrypoints.openai.cli_args.make_arg_parser"


def extract_release(files: dict[str, str], version: str) -> dict:
    """Build the JSON Schema document for one release from its `vllm/**.py` sources."""
    interp = Interp(Tree(files))
    interp.get_kwargs_source = _get_kwargs_source(interp)
    interp.parse_type_kvs = _parse_type_falls_back_to_kvs(interp)
    feats = release_features(interp)
    entry = replay_serve_parser(interp)
    interp.recorded.insert(0, Recorded(["-h", "--help"], {"action": "help", "help": "show this help message and exit"}))
    literal_hints = _literal_hints(interp)
    options: dict[str, dict] = {}
    for rec in interp.recorded:
        result = normalise(rec, interp, feats, literal_hints)
        if result is None:
            continue
        canonical, info = result
        if canonical in options:   # the same option added on two code paths: merge spellings
            merged = options[canonical]
            merged["flags"] = list(dict.fromkeys(merged["flags"] + info["flags"]))
            continue
        options[canonical] = info
    for option, values in extract_registries(interp.tree).items():
        info = options.get(option)
        if info is not None and not info.get("choices"):
            info["known_values"] = values
            info["known_values_source"] = "registry"
            info.setdefault("choices_enforced", False)
    properties = {name.lstrip("-"): _schema_property(info) for name, info in options.items()}
    gmu = options.get("gpu-memory-utilization", {}).get("default")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"vllmlint:vllm/{version}",
        "title": f"vllm serve {version}: parsed command line",
        "type": "object",
        "additionalProperties": False,
        "properties": properties,
        "x-vllm-release": {
            "version": version,
            "entry_point": entry,
            "allow_abbrev": feats.allow_abbrev,
            "underscore_to_dash": feats.underscore_to_dash,
            "dotted_keys": feats.dotted_keys,
            "o_shorthand": feats.o_shorthand,
            "o_target": feats.o_target,
            "default_gpu_memory_utilization": gmu,
            "env": extract_env(interp),
            "metrics": extract_metrics(interp.tree),
        },
    }


_SCHEMA_TYPES = {"int": "integer", "float": "number", "str": "string", "bool": "boolean"}
_BOUND_KEYS = {"gt": "exclusiveMinimum", "ge": "minimum", "lt": "exclusiveMaximum", "le": "maximum"}


def _schema_property(info: dict) -> dict:
    prop: dict[str, Any] = {}
    typ = info["type"]
    if typ in _SCHEMA_TYPES:
        prop["type"] = _SCHEMA_TYPES[typ]
        if info.get("nargs") in ("+", "*") or isinstance(info.get("nargs"), int) and info["nargs"] > 1:
            prop = {"type": "array", "items": prop}
    elif typ == "json":
        prop["type"] = ["object", "array", "string"]
    if info.get("choices_enforced") and info.get("choices") and typ != "unknown":
        # (with a custom converter, argparse checks choices after conversion: no enum on the raw text)
        choices = info["choices"]
        target = prop["items"] if prop.get("type") == "array" else prop
        target["enum"] = choices
        target.pop("type", None)
    for key, value in (info.get("bounds") or {}).items():
        if key in _BOUND_KEYS and typ in ("int", "float"):
            prop[_BOUND_KEYS[key]] = value
    if info.get("deprecated"):
        prop["deprecated"] = True
    x = {k: v for k, v in info.items() if k not in ("bounds",)}
    prop["x-vllm"] = x
    return prop


# --------------------------------------------------------------------------- index and command line


def build_index(schema_dir: Path) -> dict:
    """For every spelling, env var and metric: first and last release, and releases missing in between."""
    releases = sorted((p.stem for p in schema_dir.glob("*.json") if p.stem != "index"), key=version_key)
    present: dict[str, dict[str, list]] = {"flags": {}, "env": {}, "metrics": {}}
    details: dict[str, dict] = {}
    for version in releases:
        doc = json.loads((schema_dir / f"{version}.json").read_text())
        for canonical, prop in doc["properties"].items():
            x = prop["x-vllm"]
            for spelling in x["flags"] or [canonical]:
                present["flags"].setdefault(spelling, []).append(version)
                row = details.setdefault(spelling, {})
                row.update(canonical=canonical, help=x.get("help", ""))
                if x.get("deprecated"):
                    row.setdefault("deprecated_in", version)
                    if x.get("deprecation"):
                        row["deprecation"] = x["deprecation"]
                else:
                    row.pop("deprecated_in", None)   # deprecated once, then not (or revived)
                    row.pop("deprecation", None)
        for name in doc["x-vllm-release"]["env"]:
            present["env"].setdefault(name, []).append(version)
        for name in doc["x-vllm-release"]["metrics"]:
            present["metrics"].setdefault(name, []).append(version)
    position = {v: i for i, v in enumerate(releases)}
    index: dict[str, Any] = {"releases": releases}
    for table, rows in present.items():
        out = {}
        for key, versions in rows.items():
            first, last = versions[0], versions[-1]
            row = {"first": first, "last": last}
            span = releases[position[first]: position[last] + 1]
            if len(span) != len(versions):
                row["missing"] = [v for v in span if v not in set(versions)]
            if table == "flags":
                row.update(details[key])
            out[key] = row
        index[table] = dict(sorted(out.items()))
    return index


def read_wheel_sources(wheel: Path) -> dict[str, str]:
    files = {}
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            if name.startswith("vllm/") and name.endswith(".py"):
                files[name] = zf.read(name).decode("utf-8", errors="replace")
    return files


def read_dir_sources(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text(errors="replace") for p in (root / "vllm").rglob("*.py")}


def download_sources(version: str) -> dict[str, str]:
    with tempfile.TemporaryDirectory(prefix="vllm-wheel-") as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                        f"vllm=={version}", "-d", tmp], check=True)
        wheel = next(Path(tmp).glob("vllm-*.whl"))
        try:
            return read_wheel_sources(wheel)
        finally:
            wheel.unlink()


def write_json(path: Path, doc: Any) -> int:
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    path.write_text(text + "\n", encoding="utf-8")
    return len(text) + 1


def default_schema_dir() -> Path:
    from vllmlint.data import schemas_dir
    return schemas_dir() / "vllm"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vllmlint_dev.sync", description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="*", help="vLLM releases to (re)extract, e.g. 0.29.0 0.31.0")
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: schemas/vllm)")
    parser.add_argument("--source-dir", type=Path, default=None,
                        help="read sources from DIR/<version>/vllm instead of downloading (offline re-runs)")
    parser.add_argument("--index-only", action="store_true", help="only rebuild index.json")
    args = parser.parse_args(argv)
    out = args.out or default_schema_dir()
    out.mkdir(parents=True, exist_ok=True)
    if not args.index_only:
        for version in args.versions:
            if args.source_dir and (args.source_dir / version / "vllm").is_dir():
                files = read_dir_sources(args.source_dir / version)
            else:
                files = download_sources(version)
            doc = extract_release(files, version)
            size = write_json(out / f"{version}.json", doc)
            rel = doc["x-vllm-release"]
            print(f"{version}: {len(doc['properties'])} options, {len(rel['env'])} env vars, "
                  f"{len(rel['metrics'])} metrics, {size} bytes", flush=True)
    size = write_json(out / "index.json", build_index(out))
    total = sum(p.stat().st_size for p in out.glob("*.json"))
    print(f"index.json: {size} bytes; catalog total {total} bytes")
    return 0


def _parse_type_falls_back_to_kvs(interp: Interp) -> bool:
    """`optional_type(json.loads)` (0.8.x) or `parse_type(json.loads)` (0.9.x) hands text that is not
    `{...}` to nullable_kvs; later releases parse it with json.loads alone."""
    for mod_name in ("vllm.engine.arg_utils", "vllm.utils.argparse_utils", "vllm.utils"):
        mod = interp.tree.module(mod_name)
        for name in ("parse_type", "optional_type"):
            binding = mod.bindings.get(name) if mod is not None else None
            if binding and binding[0] == "def" and "nullable_kvs(" in ast.unparse(binding[1]):
                return True
    return False


def json_parser(type_value: Any, interp: Interp) -> str:
    """How an option's JSON value is parsed, for `x-vllm.json_parser`: `json` (json.loads, a pydantic
    validate_json: any other text is an error), `json-or-kvs` (also `key=value,...` pairs), `dict-or-str`
    (text that is not `{...}` is kept as a string), `dataclass` (get_kwargs' parse_dataclass),
    `from-cli` (a config class's own `from_cli`), or `unknown`."""
    seen = 0
    while isinstance(type_value, Opaque) and seen < 5:
        seen += 1
        short = type_value.func.split(".")[-1]
        if short in ("optional_type", "parse_type") and type_value.args:
            inner = type_value.args[0]
            if _callable_name(inner) in ("json.loads", "loads") and interp.parse_type_kvs:
                return "json-or-kvs"
            type_value = inner
        else:
            break
    name = _callable_name(type_value) if not isinstance(type_value, Opaque) else type_value.func
    short = (name or "").split(".")[-1]
    if short in ("loads", "model_validate_json", "validate_json"):
        return "json"
    if short == "union_dict_and_str":
        return "dict-or-str"
    if short == "parse_dataclass":
        return "dataclass"
    if short in ("from_cli", "from_json"):
        return "from-cli"
    return "unknown"


if __name__ == "__main__":
    sys.exit(main())
